"""``python as_user.py UID ARGS...``: ``handoff ARGS`` as user ``UID``.

The interpreter and its packages may live where an unprivileged user cannot go (here under
``/root``, mode 700), so the process starts as root, imports every module a command may import
lazily, then drops to ``UID`` (groups, group, user: for good, as ``setpriv`` would) before the
command reads or writes any of the user's files.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys

import actors
import sim

for package in (sim, actors):
    for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if module.name.startswith(("sim.bench", "sim.__main__")):
            continue
        importlib.import_module(module.name)
for name in ("rich.progress", "rich.table", "rich.console", "ctypes", "concurrent.futures.process",
             "multiprocessing.popen_fork", "multiprocessing.queues", "multiprocessing.synchronize",
             "encodings.idna", "encodings.utf_16_le", "encodings.utf_16", "tempfile",
             "importlib.metadata", "importlib.readers", "importlib.resources.readers"):
    importlib.import_module(name)

from sim.world import core  # noqa: E402

core.versions()  # reads the installed package's metadata, under the venv: before the drop
uid = int(sys.argv[1])
os.setgroups([])
os.setgid(uid)
os.setuid(uid)
assert os.geteuid() == uid and os.getuid() == uid
from sim.cli.root import main  # noqa: E402

main(sys.argv[2:], prog_name="handoff")
