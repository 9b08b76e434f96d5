"""Extract the program to evaluate from a model's raw answer (pure functions).

    sanitize(answer, entry_point, prompt=None) -> SanitizeResult(code, ok, reason, origin)
    syncheck(code) -> (ok, message)

Modules, in the order an answer passes through them: `thinking` (take out reasoning sections),
`fences` (find code blocks), `units` (cut code into top-level statements, tolerating prose and
truncation), `deps` (keep the entry point and what it needs), `extract` (the order in which
places are searched). `wrappers` dresses a known-good program up as a chat answer, for tests
and dry runs.
"""

from __future__ import annotations

from passbench.stages.sanitize.extract import SanitizeResult, sanitize
from passbench.stages.sanitize.syntax import syncheck

__all__ = ["SanitizeResult", "sanitize", "syncheck"]
