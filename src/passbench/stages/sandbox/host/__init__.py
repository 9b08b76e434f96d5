"""The local backend: what runs on this machine around the sandbox.

Bubblewrap or rlimit launchers (`launch.py`, chosen by `isolation.py`), warm workers (`worker.py`)
in their cgroups (`cgroups.py`) with disk-backed scratch folders (`workdirs.py`), scheduled by
`local.py`.
"""
