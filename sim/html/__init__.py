"""What a person opens in a browser: a run's timeline and a sweep's report, each one self-contained
HTML file (no network: the script and style sheet beside these modules are inlined).

- ``timeline.py``: one run as swimlanes (a lane per actor, messages as arrows at their virtual
  times, faults and crashes marked, a record's fields on click), its violations linked to the
  records their oracles cite; pure: records in, a page out.
- ``report.py``: ``explore --report`` and ``--save-failures``' pages: violations by invariant and
  fault kind, probe hits, detection figures, each failing seed's repro and shrunk timeline.
- ``timeline.js`` / ``timeline.css``: drawing, zoom, pan and filter, drawn lazily for the visible
  window so a 1,000-child run stays smooth.
"""
