"""The command line's files: standard streams guarded (``io.py``) and every output file checked
before a run and written whole (``outfiles.py``)."""
