"""Which files of a repository are test machinery: what decides how tests run and are counted.

A patch must not resolve an instance by changing how its tests are run instead of the code they
test: a ``conftest.py`` that sets every report to passed resolves pallets__flask-5014 under the
official harness (SWE-bench issue #631). The SWE-bench integration restores every file this
module calls test machinery to its state before the patch (the base commit plus the
instance's ``test_patch``) before it runs the tests, and flags the patch. Pure functions on
repository-relative paths (``a/``/``b/`` prefixes of a diff already removed) and file texts;
nothing here touches a disk or runs anything.

The rules are data (the tables below), each with the reason it is there:

- ``MACHINERY_NAMES``: a file of that name anywhere in the tree (pytest finds configuration
  and conftests in any folder on the way to the tests);
- ``MACHINERY_SUFFIXES``: a file name ending so;
- ``MACHINERY_FOLDERS``: any file below a folder whose name ends so (installed metadata,
  compiled bytecode);
- ``MACHINERY_PATHS``: exact paths of the test runners of the repositories SWE-bench covers.

For configuration files that also hold much else (``setup.cfg``, ``tox.ini``,
``pyproject.toml``), ``machinery_changed`` compares only what pytest reads from them: the pylint
gold patch of pylint-dev__pylint-4661 edits ``setup.cfg``'s ``install_requires`` and isort
settings, which is no change to the test machinery. Every other machinery file counts whole.
Against the data (Verified, Lite test and dev): no gold ``patch`` touches a file these rules
call machinery except that ``setup.cfg`` (whose pytest sections it leaves alone); two
``test_patch`` files do (``testing/conftest.py`` of pytest-dev__pytest-5787,
``tests/runtests.py`` of django__django-13344), which the restore keeps since it restores to
base commit plus test patch.

Not covered, by design:

- pytest-dev/pytest itself: its ``src/_pytest/`` is the code under test (gold patches edit it in
  most of its instances) and also the machinery that runs its tests, so nothing can be restored;
  a patch there can change how its own tests are counted. The channel plugin runs inside that
  same patched pytest.
- Helper modules the tests import (``sympy/utilities/randtest.py``, ``django/test/testcases.py``
  and its assertions, a repository's ``testing/`` utilities): they are library code that gold
  patches do change (randtest in the data), so restoring them would break honest patches. A patch
  that weakens an assertion helper is not caught here.
- Anything outside the working copy (the environment is read-only in the sandbox).
"""

from __future__ import annotations

import re
import sys
from pathlib import PurePosixPath
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: File names that are test machinery wherever they are.
MACHINERY_NAMES: dict[str, str] = {
    "conftest.py": "pytest imports it before the tests it governs; its hooks can rewrite reports",
    "pytest.ini": "pytest configuration (addopts, -p plugins, python_files, markers)",
    ".pytest.ini": "pytest configuration (pytest >= 8.1 reads it like pytest.ini)",
    "pytest.toml": "pytest configuration (pytest >= 9)",
    ".pytest.toml": "pytest configuration (pytest >= 9)",
    "tox.ini": "its [pytest] section configures pytest",
    "setup.cfg": "its [tool:pytest] section configures pytest; options.entry_points pytest11 "
    "registers plugins",
    "pyproject.toml": "[tool.pytest.ini_options] / [tool.pytest] configure pytest; pytest11 "
    "entry points register plugins",
    "setup.py": "run by install steps; its entry_points can register pytest11 plugins",
    "sitecustomize.py": "imported by every Python process at start-up",
    "usercustomize.py": "imported by every Python process at start-up",
}
#: File name endings that are test machinery.
MACHINERY_SUFFIXES: dict[str, str] = {
    ".pth": "lines starting with 'import' run at start-up in a site folder",
    ".pyc": "compiled bytecode that Python may run instead of its source (an unchecked-hash "
    ".pyc is never compared with the source)",
    ".pyo": "compiled bytecode (old Pythons)",
}
#: Folder name endings: every file below such a folder is test machinery.
MACHINERY_FOLDERS: dict[str, str] = {
    ".egg-info": "installed metadata: its entry_points.txt registers pytest11 plugins when the "
    "working copy is on sys.path (a develop install)",
    ".dist-info": "installed metadata: its entry_points.txt registers pytest11 plugins",
    "__pycache__": "compiled bytecode that Python may run instead of its source",
}
#: Repository-relative paths of the test runners of repositories SWE-bench covers.
MACHINERY_PATHS: dict[str, str] = {
    "bin/test": "sympy's test runner script (the official test command)",
    "sympy/testing/runtests.py": "sympy's test runner: runs the tests and prints their outcomes",
    "sympy/utilities/runtests.py": "sympy's test runner before sympy 1.6",
    "sympy/testing/pytest.py": "sympy's raises/XFAIL/skip: how its runner counts a test",
    "sympy/utilities/pytest.py": "sympy's raises/XFAIL/skip before sympy 1.6",
    "tests/runtests.py": "django's test runner script (the official test command)",
    "django/test/runner.py": "django's DiscoverRunner, which runs the tests and reports them",
}

# what pytest reads from the shared configuration files (section names as written)
_INI_SECTIONS = {
    "setup.cfg": ("tool:pytest", "pytest"),
    "tox.ini": ("pytest", "tool:pytest"),
}
_ENTRY_POINT_SECTIONS = ("options.entry_points", "entry_points")
_PLUGIN_GROUP = "pytest11"
_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]\s*(?:[#;].*)?$")
_KEY = re.compile(r"^(?P<key>[^\s=:#;][^=:]*?)\s*[=:]")


def _parts(path: str) -> tuple[str, ...]:
    parts = PurePosixPath(path.strip()).parts
    return tuple(part for part in parts if part not in ("/", "."))


def machinery_reason(path: str) -> str | None:
    """Why the repository-relative `path` is test machinery, or None if it is not."""
    parts = _parts(path)
    if not parts:
        return None
    relative = "/".join(parts)
    if relative in MACHINERY_PATHS:
        return MACHINERY_PATHS[relative]
    name = parts[-1]
    if name in MACHINERY_NAMES:
        return MACHINERY_NAMES[name]
    for suffix, why in MACHINERY_SUFFIXES.items():
        if name.endswith(suffix):
            return why
    for folder in parts[:-1]:
        for ending, why in MACHINERY_FOLDERS.items():
            if folder.endswith(ending):
                return why
    return None


def is_test_machinery(path: str) -> bool:
    """Whether the repository-relative `path` can hold test machinery (see the tables)."""
    return machinery_reason(path) is not None


def machinery_changed(path: str, before: str | None, after: str | None) -> bool:
    """Whether changing `path` from `before` to `after` (None: absent) changes test machinery.

    Machinery files count whole, except the pytest parts of `setup.cfg`, `tox.ini` and
    `pyproject.toml`. A file that does not parse counts whole (a broken file is no reason to
    look away)."""
    if before == after or not is_test_machinery(path):
        return False
    name = _parts(path)[-1]
    try:
        if name in _INI_SECTIONS:
            return _ini_machinery(name, before) != _ini_machinery(name, after)
        if name == "pyproject.toml":
            return _toml_machinery(before) != _toml_machinery(after)
    except (ValueError, tomllib.TOMLDecodeError):
        return True
    return True


def _ini_sections(text: str) -> dict[str, list[str]]:
    """Section name -> its lines (comments and blank lines dropped); duplicates concatenated."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header is not None:
            current = sections.setdefault(header["name"].strip(), [])
            continue
        stripped = line.strip()
        if current is None or not stripped or stripped[0] in "#;":
            continue
        current.append(line.rstrip())
    return sections


def _ini_value(lines: list[str], key: str) -> list[str]:
    """The lines of `key` (its own and its indented continuations) within one section."""
    kept: list[str] = []
    inside = False
    for line in lines:
        if line[:1].isspace():
            if inside:
                kept.append(line.strip())
            continue
        found = _KEY.match(line)
        inside = found is not None and found["key"].strip() == key
        if inside:
            kept.append(line.strip())
    return kept


def _ini_machinery(name: str, text: str | None) -> tuple[tuple[str, ...], ...]:
    sections = _ini_sections(text or "")  # an absent file configures nothing
    parts = [tuple(sections.get(section, ())) for section in _INI_SECTIONS[name]]
    if name == "setup.cfg":
        for section in _ENTRY_POINT_SECTIONS:
            parts.append(tuple(_ini_value(sections.get(section, []), _PLUGIN_GROUP)))
    return tuple(parts)


def _toml_machinery(text: str | None) -> tuple[Any, ...]:
    data = tomllib.loads(text or "")  # an absent file configures nothing
    return (
        _dig(data, "tool", "pytest"),
        _dig(data, "project", "entry-points", _PLUGIN_GROUP),
        _dig(data, "tool", "poetry", "plugins", _PLUGIN_GROUP),
    )


def _dig(data: Any, *keys: str) -> Any:
    """data[k1][k2]..., None where a level is missing; a level that is not a table is
    returned as it is (so that changing it still counts)."""
    for key in keys:
        if not isinstance(data, dict):
            return data
        data = data.get(key)
    return data


__all__ = [
    "MACHINERY_FOLDERS",
    "MACHINERY_NAMES",
    "MACHINERY_PATHS",
    "MACHINERY_SUFFIXES",
    "is_test_machinery",
    "machinery_changed",
    "machinery_reason",
]
