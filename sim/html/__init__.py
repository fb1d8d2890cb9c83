"""What a person opens in a browser: a run's timeline and a sweep's report, each one self-contained
HTML file (no network: the script and style sheet beside these modules are inlined).

- ``timeline.py``: one run as swimlanes (a lane per actor, messages as arrows at their virtual
  times, faults and crashes marked, a record's fields on click), its violations linked to the
  records their oracles cite; pure: records in, a page out. ``runs.py``: child runs and
  delivery attempts as bars.
- ``compare.py``: two runs aligned on one page, their first difference marked
  (``replay --compare``).
- ``report.py``: ``explore --report`` and ``--save-failures``' pages: violations by invariant and
  fault kind, fault kinds' rates among passing and failing seeds, probe hits, detection figures,
  each distinct message with its seeds, repro, shrunk timeline and unshrunk run's page.
- ``timeline.js`` / ``timeline.css``: drawing, zoom, pan and filter, the event list, a run's
  summary and registry row, the branch-here commands; drawn lazily for the visible window so a
  1,000-child run stays smooth.
"""
