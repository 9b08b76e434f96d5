"""Which modules a warm worker should import once, before forking a child per sample.

Importing pandas, matplotlib or scikit-learn costs a second or more per process; a worker that
has them imported forks children that start with them for free. Only libraries that are safe to
import before `fork()` are listed: TensorFlow, Keras and PyTorch start thread pools and reserve
memory at import, which forked children inherit in a broken state, so tasks import them fresh.
"""

from __future__ import annotations

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


def heavy_libs(task: Task) -> tuple[str, ...]:
    """A task's preloadable libraries from its `libs` alone (cheap: no parsing)."""
    wanted = {lib for lib in task.libs if lib in FORK_SAFE_HEAVY}
    return _with_extras(wanted)


def _with_extras(wanted: set[str]) -> tuple[str, ...]:
    for top, extra in _ALSO.items():
        if top in wanted:
            wanted.update(extra)
    return tuple(sorted(wanted))
