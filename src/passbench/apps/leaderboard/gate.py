"""The worker's ground-truth gate: publish a score only when the environment fails exactly the
canonical solutions it is known to fail there (or fewer).

A minimum pass rate cannot tell a known gap (a task whose canonical solution needs the network,
which the sandbox never has) from a new breakage of the same size: a library upgraded in the
environment that breaks three other tasks would pass a 99% gate. A list of *expected* failures
per environment can: any failure outside the list blocks publishing, naming the tasks.

The list is a JSON file the deployment keeps beside the worker (`--expected-gt-failures FILE`):

    {"bigcodebench-py311": ["BigCodeBench/16", "BigCodeBench/1006"], "*": []}

Keys are evaluation environments by name (`passbench env create bigcodebench` names them;
`host` is the worker's own interpreter, as for HumanEval), `*` applies to every environment.
Without a file nothing is expected to fail: every canonical solution must pass. The run the
worker stores records the gate (`meta["ground_truth_gate"]`): the file, its sha256, the
environment, and which tasks were expected to fail and which did.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passbench.core.errors import InputError

#: The key of the tasks expected to fail in every environment.
ANY_ENVIRONMENT = "*"


@dataclass(frozen=True)
class ExpectedFailures:
    """Per environment, the tasks whose canonical solution is known to fail there."""

    by_environment: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: Where the list came from ("path (sha256 …)"); None: no list, nothing may fail.
    source: str | None = None

    def for_environment(self, name: str) -> frozenset[str]:
        return self.by_environment.get(name, frozenset()) | self.by_environment.get(
            ANY_ENVIRONMENT, frozenset()
        )


def read_expected_failures(path: str | Path) -> ExpectedFailures:
    """The list in `path`; InputError naming the file and the key when it is malformed."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        document = json.loads(raw)
    except OSError as error:
        raise InputError(f"cannot read it: {error.strerror}", path=path) from None
    except ValueError as error:
        raise InputError(f"not JSON: {error}", path=path) from None
    if not isinstance(document, dict):
        raise InputError("must be an object: environment -> [task ids]", path=path)
    by_environment: dict[str, frozenset[str]] = {}
    for name, tasks in document.items():
        if not isinstance(tasks, list) or not all(isinstance(task, str) for task in tasks):
            raise InputError("must be a list of task ids", path=path, field=name)
        by_environment[name] = frozenset(tasks)
    digest = hashlib.sha256(raw).hexdigest()
    return ExpectedFailures(by_environment, source=f"{path} (sha256 {digest[:12]})")


@dataclass(frozen=True)
class GateVerdict:
    """What the gate found for one environment: `problem` is None when a score may be
    published; `record` is what the stored run keeps of it."""

    problem: str | None
    record: dict[str, Any]


def judge(
    expected: ExpectedFailures,
    environment: str,
    failed: Sequence[str],
    n_tasks: int,
) -> GateVerdict:
    """Publish only when the failing canonical solutions are among the expected ones."""
    allowed = expected.for_environment(environment)
    unexpected = [task for task in failed if task not in allowed]
    record = {
        "environment": environment,
        "expected_failures_source": expected.source,
        "expected_failures": sorted(allowed),
        "failed": list(failed),
        "tasks": n_tasks,
    }
    problem = None
    if unexpected:
        shown = ", ".join(unexpected[:10]) + (" …" if len(unexpected) > 10 else "")
        problem = (
            f"the ground truth fails unexpectedly in environment {environment!r}: "
            f"{len(unexpected)} canonical solution(s) not in the expected failures "
            f"({expected.source or 'none expected'}) fail: {shown}; no score is published "
            "until the environment is fixed or the list says why"
        )
    return GateVerdict(problem, record)
