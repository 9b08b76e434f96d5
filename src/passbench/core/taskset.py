"""A task set's identity: which benchmark, which release, and the exact bytes it was read from.

Two scores are comparable only when they were measured on the same tasks. A benchmark's name and
version say which release was meant; the sha256 of the data file(s) says which bytes were
actually read (a re-published file, a local edit, a correction under the same version name).
Every result file records the identity (`task_set` in the `"passbench"` block), and `compare`
and the leaderboards refuse to rank runs of different identities together.

The identity's *key* is the benchmark, the version and the sha256 of the task file (the first
file). Further files a subset was chosen with (BigCodeBench-Hard's id list) are recorded too,
but do not change the key: they select tasks, they do not change what a task is, and runs are
compared on the tasks they share.

Files written before the field existed: a passbench file that records `benchmark`,
`dataset_version` and `dataset_sha256` (every passbench file since the first schema) gives the
same key; a file without them (the official evaluator's) has an unknown identity, which callers
report as a warning, never as an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passbench.core.errors import InputError


@dataclass(frozen=True)
class DatasetFile:
    """One data file the tasks were read from: its file name and the sha256 of its bytes."""

    name: str
    sha256: str


@dataclass(frozen=True)
class TaskSetIdentity:
    """Benchmark, version and the data files (task file first) of one set of tasks."""

    benchmark: str
    version: str
    files: tuple[DatasetFile, ...]

    @property
    def sha256(self) -> str:
        """The task file's sha256 ("" when no file is known)."""
        return self.files[0].sha256 if self.files else ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What must be equal for two runs to be ranked together."""
        return (self.benchmark, self.version, self.sha256)

    def describe(self) -> str:
        """ "bigcodebench v0.1.4 (sha256 1a2b3c4d5e6f)" """
        return f"{self.benchmark} {self.version} (sha256 {self.sha256[:12] or 'unknown'})"

    def to_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "version": self.version,
            "files": [{"name": f.name, "sha256": f.sha256} for f in self.files],
        }

    @classmethod
    def from_json(cls, value: Any) -> TaskSetIdentity | None:
        """The identity a result file's `task_set` field records; None when it is malformed."""
        if not isinstance(value, Mapping):
            return None
        benchmark, version, files = value.get("benchmark"), value.get("version"), value.get("files")
        if not isinstance(benchmark, str) or not isinstance(version, str):
            return None
        if not isinstance(files, list) or not all(
            isinstance(f, Mapping)
            and isinstance(f.get("name"), str)
            and isinstance(f.get("sha256"), str)
            for f in files
        ):
            return None
        return cls(benchmark, version, tuple(DatasetFile(f["name"], f["sha256"]) for f in files))


def identity_from_meta(meta: Mapping[str, Any]) -> TaskSetIdentity | None:
    """The identity a result file's `"passbench"` block records: its `task_set`, else the
    `benchmark`, `dataset_version` and `dataset_sha256` older files carry; None: unknown."""
    recorded = TaskSetIdentity.from_json(meta.get("task_set"))
    if recorded is not None:
        return recorded
    benchmark, version = meta.get("benchmark"), meta.get("dataset_version")
    sha = meta.get("dataset_sha256")
    if isinstance(benchmark, str) and isinstance(version, str) and isinstance(sha, str) and sha:
        return TaskSetIdentity(benchmark, version, (DatasetFile("", sha),))
    return None


def check_same_task_set(
    identities: Sequence[tuple[str, TaskSetIdentity | None]],
    family: Callable[[TaskSetIdentity], str] | None = None,
) -> list[str]:
    """Raise InputError (one line) when two named runs were measured on different versions of
    the same tasks; return one warning per run whose task set is unknown (it cannot be
    checked).

    Runs of different benchmarks (a leaderboard across languages) are different task sets by
    design and are let through; `family` names what counts as the same tasks (default: the
    benchmark; a corrected re-release belongs to the family of the benchmark it corrects)."""
    family_of = family or (lambda identity: identity.benchmark)
    first: dict[str, tuple[str, TaskSetIdentity]] = {}
    for name, identity in identities:
        if identity is None:
            continue
        seen = first.setdefault(family_of(identity), (name, identity))
        if identity.key != seen[1].key:
            raise InputError(
                f"cannot rank runs of different task versions together: {seen[0]} is "
                f"{seen[1].describe()}, {name} is {identity.describe()}",
                field="task_set",
            )
    return [
        f"{name}: task set unknown (no benchmark version and dataset sha256 in the file); "
        "it cannot be checked against the others"
        for name, identity in identities
        if identity is None
    ]
