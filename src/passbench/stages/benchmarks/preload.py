"""Which modules a warm worker should import once, before forking a child per sample.

Importing pandas, matplotlib or scikit-learn costs a second or more per process; a worker that
has them imported forks children that start with them for free. Only libraries that are safe to
import before `fork()` are listed: TensorFlow, Keras and PyTorch start thread pools and reserve
memory at import, which forked children inherit in a broken state, so tasks import them fresh.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable

from passbench.core.records import Task

#: Top-level packages (import names, as BigCodeBench's `libs` lists them) worth preloading.
FORK_SAFE_HEAVY = frozenset(
    {
        "numpy",
        "pandas",
        "matplotlib",
        "seaborn",
        "scipy",
        "sklearn",
        "statsmodels",
        "nltk",
        "requests",
        "bs4",
        "PIL",
        "dateutil",
        "pytz",
        "sympy",
        "cv2",
    }
)

#: Submodules that cost the most and that tasks reach indirectly (pandas plotting imports pyplot).
_ALSO = {"matplotlib": ("matplotlib.pyplot",)}


def imported_modules(source: str) -> set[str]:
    """Absolute module names that `import` statements in `source` name.

    A code prompt ends in a bare `def` line and does not parse as a whole; then each import
    line is parsed on its own.
    """
    try:
        with warnings.catch_warnings():
            # task code has escapes like "\d" in plain strings; not ours to warn about
            warnings.simplefilter("ignore")
            trees = [ast.parse(source)]
    except (SyntaxError, ValueError):
        trees = []
        for line in source.splitlines():
            if line.lstrip().startswith(("import ", "from ")):
                try:
                    trees.append(ast.parse(line.strip()))
                except (SyntaxError, ValueError):
                    continue
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    return names


def heavy_libs(task: Task) -> tuple[str, ...]:
    """A task's preloadable libraries from its `libs` alone (cheap: no parsing)."""
    wanted = {lib for lib in task.libs if lib in FORK_SAFE_HEAVY}
    return _with_extras(wanted)


def preload_modules(tasks: Iterable[Task]) -> tuple[str, ...]:
    """Heavy fork-safe modules these tasks use: their `libs`, plus the submodules their code
    prompts and tests import. Sorted, so the same tasks always give the same tuple."""
    wanted: set[str] = set()
    for task in tasks:
        wanted.update(lib for lib in task.libs if lib in FORK_SAFE_HEAVY)
        for text in (task.code_prompt, task.test):
            wanted.update(
                name for name in imported_modules(text) if name.split(".")[0] in FORK_SAFE_HEAVY
            )
    return _with_extras(wanted)


def _with_extras(wanted: set[str]) -> tuple[str, ...]:
    for top, extra in _ALSO.items():
        if top in wanted:
            wanted.update(extra)
    return tuple(sorted(wanted))
