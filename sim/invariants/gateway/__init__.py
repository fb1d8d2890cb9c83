"""Gateway oracles: transcript mirrors (``mirrors``: DEL-8), routes as configured (``routes``:
DEL-4, DEL-5), session-control permissions (``permissions``: DEL-17).
"""
