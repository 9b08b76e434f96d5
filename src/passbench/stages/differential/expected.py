"""Expected outputs of differential tasks: computed once from the reference, kept on the host.

At ground-truth time the canonical solution of every task runs in the sandbox as an io program
(the same path a candidate takes), each input timed there; its output records — digest, type,
`is_floats`, and the value itself when small or float-valued — and times are stored in a SQLite
cache beside the ground-truth timings, keyed by everything that could change them (dataset
hash, evaluation interpreter, codec version, limits). They never go back into a sandbox: the
judge (judge.py) compares on the host, so a candidate cannot read what it should return.

From the times come EvalPlus's limits: each input gets `max(min_time_limit, factor * t)`, and the
whole program `min(per-task cap, sum of the input limits) + 2` seconds (EvalPlus's
`untrusted_check`: a `timeout` of `min(cap, sum) + 1`, joined for one second more).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passbench.core.errors import ResultsError
from passbench.core.records import ExecResult, IOSpec, Program, Task
from passbench.stages.benchmarks.base import Phase
from passbench.stages.sandbox.inside import _values

#: EvalPlus's defaults (evalplus/config.py).
DEFAULT_GT_TIME_LIMIT_FACTOR = 4.0
DEFAULT_MIN_TIME_LIMIT_S = 1.0
#: What EvalPlus adds to min(cap, sum of input limits): 1 s in `untrusted_check`, 1 s in `join`.
CAP_SLACK_S = 2.0
#: The reference gets generous limits: EvalPlus runs it with none.
REFERENCE_INPUT_LIMIT_S = 60.0
REFERENCE_CAP_S = 600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS expected (
    fingerprint TEXT NOT NULL,
    task_id TEXT NOT NULL,
    phase TEXT NOT NULL,
    reference_sha TEXT NOT NULL,
    ok INTEGER NOT NULL,
    reason TEXT NOT NULL,
    records TEXT NOT NULL,
    PRIMARY KEY (fingerprint, task_id, phase, reference_sha)
);
"""


@dataclass(frozen=True)
class ExpectedPhase:
    """The reference's outputs on one phase's inputs, and its time on each."""

    ok: bool  # the reference answered every input
    reason: str  # why not, when not ok
    records: tuple[Mapping[str, Any], ...]  # one per input, as the sandbox reported them

    @property
    def times(self) -> tuple[float, ...]:
        return tuple(float(record.get("t", 0.0) or 0.0) for record in self.records)

    @property
    def duration_s(self) -> float:
        return sum(self.times)


def time_limits(
    expected: ExpectedPhase, min_time_limit_s: float, factor: float
) -> tuple[float, ...]:
    """EvalPlus's per-input limits: max(min_time_limit, factor x the reference's time)."""
    return tuple(max(min_time_limit_s, factor * t) for t in expected.times)


def program_cap(limits: Sequence[float], cap_s: float) -> float:
    """EvalPlus's whole-program limit for one phase."""
    return min(cap_s, sum(limits)) + CAP_SLACK_S


def reference_program(task: Task, phase: Phase, code: str) -> Program:
    """The io program that computes the expected outputs of one phase."""
    count = len(phase.inputs)
    return Program(
        key=f"{task.task_id}#reference:{phase.name}",
        task_id=task.task_id,
        source=code,
        style="io",
        timeout_s=REFERENCE_CAP_S,
        preload=phase.preload,
        io=IOSpec(
            entry_point=task.entry_point,
            inputs_json=phase.inputs_json,
            time_limits=(REFERENCE_INPUT_LIMIT_S,) * count,
            # every value whole (up to the codec's caps): the judge needs floats and, with a
            # tolerance, everything; the rest is compared by digest when large
            want_values=(tuple(range(count)) if phase.atol or phase.oracle or phase.match else ()),
            reference=True,
        ),
    )


def candidate_program(
    task: Task,
    phase: Phase,
    code: str,
    *,
    key: str,
    limits: Sequence[float],
    cap_s: float,
    want_values: Sequence[int],
) -> Program:
    """The io program that runs a candidate on one phase's inputs."""
    return Program(
        key=key,
        task_id=task.task_id,
        source=code,
        style="io",
        timeout_s=program_cap(limits, cap_s),
        preload=phase.preload,
        expected_duration_s=sum(limits) / DEFAULT_GT_TIME_LIMIT_FACTOR,
        io=IOSpec(
            entry_point=task.entry_point,
            inputs_json=phase.inputs_json,
            time_limits=tuple(limits),
            want_values=tuple(want_values),
        ),
    )


def expected_from(result: ExecResult, phase: Phase) -> ExpectedPhase:
    """The reference's run, as expected outputs (or why the reference failed)."""
    io = result.outputs
    if io is None:
        return ExpectedPhase(False, result.reason or "the reference was killed", ())
    if io.get("exec_error"):
        error = io["exec_error"]
        return ExpectedPhase(
            False, f"failed while loading: {error.get('exc_type')}: {error.get('exc_message')}", ()
        )
    records = tuple(r for r in io.get("records") or [] if r.get("kind") == "output")
    if len(records) == len(phase.inputs):
        return ExpectedPhase(True, "", tuple(_stored(r) for r in records))
    failed = [r for r in io.get("records") or [] if r.get("kind") == "error"]
    if failed:
        why = f"{phase.name} input {failed[0].get('i')}: {failed[0].get('exc_type')}: "
        why += str(failed[0].get("exc_message", ""))[:200]
    elif io.get("input_timeout") is not None:
        why = f"{phase.name} input {io['input_timeout']}: over {REFERENCE_INPUT_LIMIT_S:g}s"
    elif io.get("cap_hit"):
        why = f"{phase.name}: over {REFERENCE_CAP_S:g}s in all"
    else:
        why = f"{phase.name} input {len(records)}: the reference died ({io.get('died')})"
    return ExpectedPhase(False, why, ())


def _stored(record: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("digest", "nan", "floats", "type", "size", "value", "t", "value_dropped")
    return {key: record[key] for key in keep if key in record}


def reference_sha(program: Program) -> str:
    """What the expected outputs were computed from: the reference code and the inputs."""
    assert program.io is not None
    text = json.dumps([program.source, program.io.entry_point, program.io.inputs_json])
    return hashlib.sha256(text.encode()).hexdigest()


def expected_fingerprint(expected: ExpectedPhase) -> str:
    """A digest of the expected outputs (not their times): verdicts depend on it."""
    text = json.dumps(
        [{k: v for k, v in record.items() if k != "t"} for record in expected.records],
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()


class ExpectedStore:
    """Expected outputs by (cache fingerprint, task, phase, reference hash); one writer.

    Every reference run is stored the moment it finishes, so an interrupted ground truth
    resumes where it stopped."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        try:
            self._db = sqlite3.connect(path)
            self._db.execute("PRAGMA journal_mode=WAL")
            # A commit per reference run without an fsync each (2.5 s of MBPP+'s 756 runs
            # here): in WAL mode a killed process loses no commit and the file stays
            # consistent; a power cut may lose the last few, which are computed again.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise ResultsError(
                f"{path}: cannot open the expected-outputs cache ({error}); delete it and "
                "passbench computes the expected outputs again"
            ) from None

    def get_many(
        self, keys: Iterable[tuple[str, str, str]]
    ) -> dict[tuple[str, str], ExpectedPhase]:
        """Stored phases among (task id, phase, reference sha) keys, by (task id, phase)."""
        wanted = {(task, phase): sha for task, phase, sha in keys}
        found: dict[tuple[str, str], ExpectedPhase] = {}
        rows = self._db.execute(
            "SELECT task_id, phase, reference_sha, ok, reason, records FROM expected"
            " WHERE fingerprint = ?",
            (self.fingerprint,),
        )
        for task_id, phase, sha, ok, reason, records in rows:
            if wanted.get((task_id, phase)) == sha:
                found[(task_id, phase)] = ExpectedPhase(
                    bool(ok), reason, tuple(json.loads(records))
                )
        return found

    def put(self, task_id: str, phase: str, sha: str, expected: ExpectedPhase) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO expected VALUES (?,?,?,?,?,?,?)",
                (
                    self.fingerprint,
                    task_id,
                    phase,
                    sha,
                    int(expected.ok),
                    expected.reason,
                    json.dumps(list(expected.records)),
                ),
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ExpectedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Part of the cache fingerprint: a change to how outputs are encoded invalidates the cache.
CODEC_VERSION = _values.CODEC_VERSION
