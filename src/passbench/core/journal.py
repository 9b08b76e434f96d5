"""The evaluation journal: every finished verdict, committed as soon as it is known.

An interrupted evaluation (Ctrl-C, kill -9, a machine reset) resumes from here without
re-executing finished samples. Rows are keyed by what determines a verdict: the run's
fingerprint (benchmark, dataset hash, environment, limits...) and the program's source hash,
so a changed sample or setting is re-run and an unchanged one never is.

SQLite in WAL mode with synchronous=FULL: a committed verdict survives a power cut.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from passbench.core.errors import ResultsError
from passbench.core.records import ErrorCategory, ExecResult, Isolation

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    fingerprint TEXT NOT NULL,
    program_sha TEXT NOT NULL,
    task_id TEXT NOT NULL,
    status TEXT NOT NULL,
    category TEXT,
    details TEXT NOT NULL,
    duration_s REAL NOT NULL,
    wall_s REAL NOT NULL,
    isolation TEXT NOT NULL,
    reason TEXT NOT NULL,
    tests_run INTEGER NOT NULL,
    stdout_tail TEXT NOT NULL,
    inputs_done INTEGER,
    PRIMARY KEY (fingerprint, program_sha)
);
CREATE TABLE IF NOT EXISTS cpu_times (
    fingerprint TEXT NOT NULL,
    program_sha TEXT NOT NULL,
    cpu_s REAL NOT NULL,
    cpu_wait_s REAL,
    PRIMARY KEY (fingerprint, program_sha)
);
"""
# CPU seconds live in a table of their own, not in a column of `verdicts`: a passbench from
# before them still writes its 13-column rows into a journal or cache this version made (and
# reads one back as a verdict without CPU time, as this version reads theirs)


def program_sha(source: str, *context: str) -> str:
    """The hash a verdict is stored under: the program's source and whatever else decides its
    verdict beside the run's settings (an io program's inputs, limits and expected outputs)."""
    digest = hashlib.sha256(source.encode("utf-8"))
    for part in context:
        digest.update(b"\0" + part.encode("utf-8"))
    return digest.hexdigest()


class Journal:
    """Verdicts keyed by (run fingerprint, program source hash). One writer: the evaluator."""

    def __init__(self, path: str | Path, fingerprint: str) -> None:
        self.path = Path(path)
        self.fingerprint = fingerprint
        try:
            self._db = sqlite3.connect(self.path)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(verdicts)")}
            if "inputs_done" not in columns:  # a journal from before io programs existed
                self._db.execute("ALTER TABLE verdicts ADD COLUMN inputs_done INTEGER")
        except sqlite3.DatabaseError as error:
            raise ResultsError(
                f"{self.path}: cannot open the evaluation journal ({error}); "
                "move it away to start the evaluation afresh"
            ) from None

    def done(self, shas: Iterable[str]) -> dict[str, ExecResult]:
        """The stored verdicts among `shas`, by program hash."""
        wanted = set(shas)
        found: dict[str, ExecResult] = {}
        rows = self._db.execute(
            "SELECT v.program_sha, task_id, status, category, details, duration_s, wall_s,"
            " isolation, reason, tests_run, stdout_tail, inputs_done, c.cpu_s, c.cpu_wait_s"
            " FROM verdicts v"
            " LEFT JOIN cpu_times c"
            " ON c.fingerprint = v.fingerprint AND c.program_sha = v.program_sha"
            " WHERE v.fingerprint = ?",
            (self.fingerprint,),
        )
        for row in rows:
            sha = row[0]
            if sha not in wanted:
                continue
            found[sha] = ExecResult(
                key="",
                task_id=row[1],
                status=row[2],
                category=ErrorCategory(row[3]) if row[3] else None,
                details=json.loads(row[4]),
                duration_s=row[5],
                wall_s=row[6],
                isolation=Isolation(row[7]),
                reason=row[8],
                tests_run=row[9],
                stdout_tail=row[10],
                inputs_done=row[11],
                cpu_s=row[12],
                cpu_wait_s=row[13],
            )
        return found

    def record(self, sha: str, result: ExecResult) -> None:
        """Store one verdict and commit it before returning."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    self.fingerprint,
                    sha,
                    result.task_id,
                    result.status,
                    result.category.value if result.category else None,
                    json.dumps(dict(result.details)),
                    result.duration_s,
                    result.wall_s,
                    result.isolation.value,
                    result.reason,
                    result.tests_run,
                    result.stdout_tail,
                    result.inputs_done,
                ),
            )
            # a verdict without CPU time (an older backend's) leaves none behind from before
            if result.cpu_s is None:
                self._db.execute(
                    "DELETE FROM cpu_times WHERE fingerprint = ? AND program_sha = ?",
                    (self.fingerprint, sha),
                )
            else:
                self._db.execute(
                    "INSERT OR REPLACE INTO cpu_times VALUES (?,?,?,?)",
                    (self.fingerprint, sha, result.cpu_s, result.cpu_wait_s),
                )

    def adopt(self, source: Path) -> int:
        """Copy the verdicts another journal holds into this one, keeping those already here;
        returns how many were new. An evaluation of the same programs under the same settings
        then reuses them (`passbench run --tries`: the samples that passed are carried to the
        next try's files, and are not run again)."""
        if not source.exists():
            return 0
        columns = (
            "fingerprint, program_sha, task_id, status, category, details, duration_s, wall_s,"
            " isolation, reason, tests_run, stdout_tail, inputs_done"
        )
        Journal(source, self.fingerprint).close()  # brings an older journal's columns up to date
        self._db.execute("ATTACH DATABASE ? AS other", (str(source),))
        try:
            with self._db:
                cursor = self._db.execute(
                    f"INSERT OR IGNORE INTO verdicts ({columns})"
                    f" SELECT {columns} FROM other.verdicts"
                )
                added = cursor.rowcount
                self._db.execute("INSERT OR IGNORE INTO cpu_times SELECT * FROM other.cpu_times")
            return added
        finally:
            self._db.execute("DETACH DATABASE other")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
