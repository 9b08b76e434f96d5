"""The package's floors as a reader sees them (docs/architecture.md): the import contracts
themselves are checked by `lint-imports` in scripts/check.sh; what import-linter cannot see is
checked here."""

from __future__ import annotations

import ast
from pathlib import Path

import passbench

PACKAGE = Path(passbench.__file__).resolve().parent
FLOORS = ("core", "stages", "analysis", "apps")


def test_every_module_lives_on_a_floor() -> None:
    stray = sorted(
        path.name
        for path in PACKAGE.iterdir()
        if path.name not in {"__init__.py", "py.typed", "__pycache__", *FLOORS}
    )
    assert stray == []


def test_no_module_imports_the_root_package() -> None:
    """`passbench/__init__.py` is the public API; a module importing it would import the whole
    API (and could import itself in a circle)."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            imported = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                imported = [node.module or ""]
            if "passbench" in imported:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []
