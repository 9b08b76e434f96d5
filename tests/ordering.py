"""The order the suite's test files go to pytest-xdist's workers: the slowest first.

`--dist loadfile` hands each worker whole files, in the order they were collected (check.sh
passes `--no-loadscope-reorder`; xdist would otherwise order them by how many tests they hold).
Collected alphabetically, a long file that comes late (the Ray and container suites under
tests/stages/sandbox/) runs alone at the end while the other worker idles. Longest first, the
workers finish within about one short file of each other.

The seconds per file come from a run's JUnit XML (`scripts/test_durations.py build/junit.xml
--write tests/durations.json`); a stale or missing figure only costs wall time: a file not
listed goes after the listed ones, in collection order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

DURATIONS_FILE = Path(__file__).with_name("durations.json")


def load_durations(path: Path = DURATIONS_FILE) -> dict[str, float]:
    """Seconds per test file (`tests/x/test_y.py`), or nothing when the file is absent."""
    if not path.is_file():
        return {}
    return {str(name): float(seconds) for name, seconds in json.loads(path.read_text()).items()}


def file_of(nodeid: str) -> str:
    """`tests/x/test_y.py` from `tests/x/test_y.py::TestClass::test_z[case]`."""
    return nodeid.split("::", 1)[0]


def slowest_files_first(nodeids: Sequence[str], durations: Mapping[str, float]) -> list[int]:
    """The positions of `nodeids` reordered so the slowest files come first; each file's tests
    keep their order and stay together (module fixtures are set up once)."""
    first_seen: dict[str, int] = {}
    for position, nodeid in enumerate(nodeids):
        first_seen.setdefault(file_of(nodeid), position)

    def key(position: int) -> tuple[float, int, int]:
        name = file_of(nodeids[position])
        return (-durations.get(name, 0.0), first_seen[name], position)

    return sorted(range(len(nodeids)), key=key)
