"""Where the shared benchmark data is: PASSBENCH_DATA_DIR, else ../shared/datasets beside the
repository (never relative to the folder pytest was started in).

For module-level code (parametrize lists, constants); tests take the `data_dir` fixture
(tests/conftest.py), which also fails the run when the data is missing."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(
    os.environ.get("PASSBENCH_DATA_DIR") or REPO / ".." / "shared" / "datasets"
).resolve()
