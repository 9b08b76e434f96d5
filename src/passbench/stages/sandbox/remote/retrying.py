"""Retrying infrastructure, never verdicts: what every backend that runs programs elsewhere shares.

A backend hands `run_with_retries` one `attempt`: run these programs and yield their verdicts
as they arrive. When an attempt fails for a reason of the infrastructure (BackendUnavailable, a
dropped connection: anything in `transient`), the programs still without a verdict are tried
again after a pause that doubles; a verdict that arrived is final and never asked for twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from passbench.core.errors import BackendUnavailable
from passbench.core.records import ExecResult, Program

#: Attempts per batch before giving up, and the first pause between them (doubling).
RETRIES = 5
BACKOFF_S = 1.0

Attempt = Callable[[list[Program]], Iterator[ExecResult]]


def run_with_retries(
    programs: Iterable[Program],
    attempt: Attempt,
    *,
    where: str,
    warn: Callable[[str], None] | None = None,
    transient: tuple[type[BaseException], ...] = (),
    retries: int = RETRIES,
    backoff_s: float = BACKOFF_S,
) -> Iterator[ExecResult]:
    """Every program's verdict, each once, as it arrives; BackendUnavailable after `retries`
    failed attempts in a row (an attempt that brought a verdict resets the count)."""
    pending = {program.key: program for program in programs}
    retried: tuple[type[BaseException], ...] = (BackendUnavailable, *transient)
    failures = 0
    while pending:
        try:
            for result in attempt(list(pending.values())):
                if pending.pop(result.key, None) is None:
                    continue  # a verdict for a program not asked for, or twice: ignored
                failures = 0
                yield result
            if pending:
                raise BackendUnavailable(f"the run ended with {len(pending)} programs unanswered")
        except retried as error:
            failures += 1
            if failures >= retries:
                raise BackendUnavailable(
                    f"{where}: giving up after {failures} attempts with {len(pending)} "
                    f"programs unanswered: {error}"
                ) from error
            pause = backoff_s * 2 ** (failures - 1)
            if warn is not None:
                warn(
                    f"{where}: {error}; {len(pending)} programs again in {pause:g} s "
                    f"(attempt {failures + 1} of {retries})"
                )
            time.sleep(pause)
