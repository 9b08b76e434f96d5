"""passbench: measure how well large language models write code.

The public Python API (docs/python-api.md); everything else may change between releases:

    import passbench

    results = passbench.evaluate("samples.jsonl", benchmark="humaneval")
    results.pass_at_k["pass@1"]
    passbench.load_results("model_eval_results.json").tasks["HumanEval/0"][0].status

`evaluate`, `generate` and `load_results` do what the commands of the same names do and return
records. They (and the records they return) are imported on first use, so `import passbench`
loads only the records and the errors. tests/test_public_api.py pins `__all__`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from passbench.core.errors import PassbenchError
from passbench.core.records import (
    Completion,
    ErrorCategory,
    ExecResult,
    Isolation,
    Program,
    Prompt,
    Sample,
    Task,
)
from passbench.core.version import __version__

if TYPE_CHECKING:
    from passbench.apps.api import evaluate, generate
    from passbench.apps.pipeline import GenerationOutcome, SampleFiles
    from passbench.stages.results import RunResults, SampleResult, load_results

#: Public names imported on first use, and the module each comes from.
_LAZY = {
    "evaluate": "passbench.apps.api",
    "generate": "passbench.apps.api",
    "load_results": "passbench.stages.results",
    "GenerationOutcome": "passbench.apps.pipeline",
    "SampleFiles": "passbench.apps.pipeline",
    "RunResults": "passbench.stages.results",
    "SampleResult": "passbench.stages.results",
}

__all__ = [
    "Completion",
    "ErrorCategory",
    "ExecResult",
    "GenerationOutcome",
    "Isolation",
    "PassbenchError",
    "Program",
    "Prompt",
    "RunResults",
    "Sample",
    "SampleFiles",
    "SampleResult",
    "Task",
    "__version__",
    "evaluate",
    "generate",
    "load_results",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'passbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
