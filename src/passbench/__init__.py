"""passbench: measure how well large language models write code."""

from __future__ import annotations

from passbench.core.errors import PassbenchError
from passbench.core.records import (
    Completion,
    ErrorCategory,
    ExecResult,
    Isolation,
    Program,
    Prompt,
    Sample,
    Score,
    Task,
)
from passbench.core.version import __version__

__all__ = [
    "Completion",
    "ErrorCategory",
    "ExecResult",
    "Isolation",
    "PassbenchError",
    "Program",
    "Prompt",
    "Sample",
    "Score",
    "Task",
    "__version__",
]
