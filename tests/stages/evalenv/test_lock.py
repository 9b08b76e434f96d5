"""Lock files: the shipped lock is complete and exact; malformed locks are refused."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from passbench.core.errors import InputError
from passbench.stages.evalenv.lock import normalize_name, packaged_lock_path, parse_lock, read_lock
from passbench.stages.evalenv.specs import get_spec

LOCKS = Path(__file__).resolve().parents[3] / "src" / "passbench" / "stages" / "evalenv" / "locks"


#: Every lock the bigcodebench spec ships, one per Python minor version.
BIGCODEBENCH_LOCKS = sorted(get_spec("bigcodebench").locks.values())


def test_both_python_versions_have_a_lock() -> None:
    assert BIGCODEBENCH_LOCKS == ["bigcodebench-py310.txt", "bigcodebench-py311.txt"]


@pytest.mark.parametrize("lock_file", BIGCODEBENCH_LOCKS)
def test_packaged_lock_pins_every_line_exactly(lock_file: str) -> None:
    path = packaged_lock_path(lock_file)
    lock = read_lock(path)
    lines = [
        line.split("#", 1)[0].strip()
        for line in path.read_text().splitlines()
        if line.split("#", 1)[0].strip()
    ]
    assert len(lines) == len(lock.pins) > 100
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9.+!_-]+", line) for line in lines)
    keys = [pin.key for pin in lock.pins]
    assert len(keys) == len(set(keys))
    assert lock.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("lock_file", BIGCODEBENCH_LOCKS)
def test_packaged_lock_keeps_every_top_level_choice(lock_file: str) -> None:
    """Each pin of the hand-written .in file appears in the lock with the same version."""
    choices = LOCKS / lock_file.replace(".txt", ".in")
    wanted = parse_lock(choices.read_text(), path=str(choices))
    locked = read_lock(LOCKS / lock_file).versions()
    mismatched = {
        pin.name: (pin.version, locked.get(pin.key))
        for pin in wanted.pins
        if locked.get(pin.key) != pin.version
    }
    assert mismatched == {}


def test_the_libraries_that_decide_verdicts_are_at_the_chosen_versions() -> None:
    versions = read_lock(packaged_lock_path("bigcodebench-py311.txt")).versions()
    # numpy < 1.24 keeps the np.float/np.int aliases; scipy 1.9 gives NaN for task 276.
    assert versions["numpy"].startswith("1.23.")
    assert versions["scipy"] != "1.9.3"
    assert versions["pandas"] == "2.0.3"
    assert "torch" not in versions


def test_the_310_lock_keeps_the_official_pins_that_decide_verdicts() -> None:
    versions = read_lock(packaged_lock_path("bigcodebench-py310.txt")).versions()
    # numpy 1.21 fills masked heatmap cells (task 111); scipy 1.7 gives 0, not NaN (task 276).
    assert versions["numpy"] == "1.21.2"
    assert versions["scipy"] == "1.7.2"
    assert versions["scikit-image"] == "0.18.0"
    assert versions["keras"] == "2.11.0"
    assert versions["numba"] == "0.55.0"
    # python-Levenshtein-wheels would install its own `Levenshtein` over Levenshtein 0.25.
    assert "python-levenshtein-wheels" not in versions
    assert "torch" not in versions


def test_the_locks_differ_only_where_python_311_forces_it() -> None:
    """Top-level choices the two locks share are at the same versions, except the listed ones."""
    py310 = parse_lock((LOCKS / "bigcodebench-py310.in").read_text()).versions()
    py311 = parse_lock((LOCKS / "bigcodebench-py311.in").read_text()).versions()
    differing = {name for name in py310.keys() & py311.keys() if py310[name] != py311[name]}
    forced = {"numpy", "scipy", "tensorflow-cpu", "keras", "numba", "scikit-image", "networkx"}
    assert differing == forced


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("numpy>=1.23\n", "expected 'name==version'"),
        ("numpy==1.*\n", "expected 'name==version'"),
        ("-r other.txt\n", "expected 'name==version'"),
        ("numpy==1.23.5 --hash=sha256:00\n", "expected 'name==version'"),
        ("pandas[excel]==2.0.3\n", "expected 'name==version'"),
        ("numpy==1.23.5 ; python_version<'3.12'\n", "expected 'name==version'"),
        ("Flask_Login==0.6.3\nflask-login==0.6.2\n", "pinned twice (first on line 1)"),
        ("# nothing\n\n", "pins no package"),
    ],
)
def test_malformed_locks_are_refused_with_the_line(text: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        parse_lock(text, path="demo.txt")
    assert str(caught.value).startswith("demo.txt")


def test_comments_and_blank_lines_are_allowed() -> None:
    lock = parse_lock("# header\n\nnumpy==1.23.5  # why\nPyYAML==6.0.1\n")
    assert [str(pin) for pin in lock.pins] == ["numpy==1.23.5", "PyYAML==6.0.1"]
    assert [pin.line for pin in lock.pins] == [3, 4]
    assert lock.versions() == {"numpy": "1.23.5", "pyyaml": "6.0.1"}


def test_names_are_normalized_as_pip_does() -> None:
    assert normalize_name("Flask_Login") == "flask-login"
    assert normalize_name("zope.interface") == "zope-interface"
    assert normalize_name("ruamel__yaml") == "ruamel-yaml"


def test_a_lock_that_cannot_be_read_names_its_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read lock file"):
        read_lock(tmp_path / "absent.txt")
