"""Samples whose own tests decide in the sandbox: BigCodeBench's unittest classes, HumanEval's
original `check()` (script programs).

The ground truth is the canonical solutions run the same way; their verdicts and durations are
cached per dataset and environment (the official time limits derive from the durations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from passbench.core.journal import Journal, program_sha
from passbench.core.records import ExecResult, Isolation, Program, Sample, Task
from passbench.stages.benchmarks import Benchmark
from passbench.stages.evaluate.execution import Execution, fingerprint, weakest
from passbench.stages.evaluate.outcomes import GroundTruth, SampleVerdicts
from passbench.stages.evaluate.splitting import SplitRun
from passbench.stages.sandbox.base import cpu_share


class TestedStyle:
    """Programs that carry their tests; the sandbox's verdict is the verdict."""

    def __init__(self, benchmark: Benchmark, tasks: Sequence[Task], execution: Execution) -> None:
        self.benchmark = benchmark
        self.tasks = tasks
        self.execution = execution

    def metadata(self) -> dict[str, Any]:
        return {}

    def eval_results_extra(self) -> dict[str, Any] | None:
        return None

    # -- ground truth ----------------------------------------------------------------------

    def _cache(self) -> Journal:
        return Journal(
            self.execution.cache_folder / "timings.sqlite",
            self.execution.verdict_fingerprint("ground-truth"),
        )

    def _programs(self, cache: Journal) -> list[Program]:
        """Canonical programs, with the cached previous timings (duration and CPU time) to
        start the slowest first, split those that wait, and spread those that compute."""
        limit = self.execution.time_limits.program_s()
        drafts = [
            self.benchmark.program(
                task,
                self.benchmark.canonical_code(task),
                key=f"{task.task_id}#gt",
                timeout_s=limit,
                expected_duration_s=None,
            )
            for task in self.tasks
        ]
        previous = cache.done(program_sha(draft.source) for draft in drafts)
        return [_timed(draft, previous.get(program_sha(draft.source))) for draft in drafts]

    def ground_truth(self) -> tuple[GroundTruth, Isolation]:
        """Ground-truth verdicts for the selected tasks, from the cache where it has them
        (per dataset hash and environment), running only the canonical solutions it lacks."""
        with self._cache() as cache:
            programs = self._programs(cache)
            split = SplitRun(cache.done)
            identity, finalize = self._judging()
            results, isolation, _ = self.execution.run(
                programs,
                cache,
                "ground truth",
                reuse=True,
                split=split,
                identity=identity,
                finalize=finalize,
            )
            _remember_parts(cache, split)
        return self._truth(programs, results), isolation

    def rerun_ground_truth(self, journal_path: Path) -> tuple[GroundTruth, Isolation]:
        """Every canonical solution run again (never answered from the cache, which is
        refreshed); an interrupted run resumes from the journal at `journal_path`."""
        with self._cache() as cache:
            programs = self._programs(cache)
            run_fingerprint = cache.fingerprint + ":" + fingerprint([p.key for p in programs])
            # long canonical programs run as one program per test method (splitting.py), each
            # part scheduled by its own duration from an earlier run
            split = SplitRun(cache.done)
            identity, finalize = self._judging()
            with Journal(journal_path, run_fingerprint) as journal:
                results, isolation, _ = self.execution.run(
                    programs,
                    journal,
                    "ground truth",
                    reuse=self.execution.settings.resume,
                    split=split,
                    identity=identity,
                    finalize=finalize,
                )
            for program in programs:
                cache.record(program_sha(program.source), results[program.key])
            _remember_parts(cache, split)
        return self._truth(programs, results), isolation

    def _truth(self, programs: Sequence[Program], results: Mapping[str, ExecResult]) -> GroundTruth:
        by_id = {task.task_id: task for task in self.tasks}
        return GroundTruth.from_results(
            programs,
            self._explained(results),
            lambda result: self.benchmark.verdict_fields(by_id[result.task_id], result),
        )

    def _judging(
        self,
    ) -> tuple[Callable[[Program], str] | None, Callable[[Program, ExecResult], ExecResult] | None]:
        """How the host judges the canonical programs where the benchmark judges them as it
        judges samples (SWE-bench's log grading); else none: the sandbox's verdict stands, read
        by `reference_verdict`."""
        if not self.benchmark.info.judges_references:
            return None, None
        judging = self.benchmark.judging({task.task_id: task for task in self.tasks})
        return judging if judging is not None else (None, None)

    def _explained(self, results: Mapping[str, ExecResult]) -> Mapping[str, ExecResult]:
        """The canonical verdicts as the benchmark reads them where it has its own rule
        (CWEval's oracle self-check: which reference failed which oracle); the cache keeps
        the sandbox's."""
        decide = self.benchmark.reference_verdict
        by_id = {task.task_id: task for task in self.tasks}
        return {key: decide(by_id[result.task_id], result) for key, result in results.items()}

    # -- samples ---------------------------------------------------------------------------

    def verdicts(
        self,
        samples: Sequence[Sample],
        codes: Sequence[str],
        tasks: Mapping[str, Task],
        journal_path: Path,
    ) -> SampleVerdicts:
        """Each sample's program run with the official time limit (from its task's ground-truth
        duration when the ground truth is checked)."""
        execution = self.execution
        settings = execution.settings
        truth: GroundTruth | None = None
        truth_isolation = Isolation.BUBBLEWRAP
        # a benchmark without reference solutions (MultiPL-E) has no ground truth to check
        checked = settings.check_ground_truth and self.benchmark.info.has_reference
        if checked:
            truth, truth_isolation = self.ground_truth()
        programs: list[Program] = []
        for sample, code in zip(samples, codes, strict=True):
            task = tasks[sample.task_id]
            gt_time = truth.expected_time(task.task_id) if truth else None
            programs.append(
                self.benchmark.program(
                    task,
                    code,
                    key=f"{task.task_id}#{sample.sample_index}",
                    timeout_s=execution.time_limits.sample_s(
                        gt_time, has_reference=self.benchmark.info.has_reference
                    ),
                    expected_duration_s=gt_time,
                )
            )
        # without the ground truth, limits assume the official 20 s per task
        run_fingerprint = execution.verdict_fingerprint("samples", ground_truth_times=checked)
        # a benchmark that judges its programs' outputs on the host (LiveCodeBench) says how
        judging = self.benchmark.judging(tasks)
        identity, finalize = judging if judging is not None else (None, None)
        with Journal(journal_path, run_fingerprint) as journal:
            results, isolation, reused = execution.run(
                programs,
                journal,
                "evaluating",
                reuse=settings.resume,
                identity=identity,
                finalize=finalize,
            )
        # a benchmark that reads more than pass/fail from a verdict (CWEval: functional,
        # secure) adds those fields to each sample's entry
        verdicts = []
        for program in programs:
            result = results[program.key]
            extra = dict(self.benchmark.verdict_fields(tasks[program.task_id], result))
            verdicts.append((result, extra))
        return SampleVerdicts(
            verdicts=verdicts,
            ground_truth=truth,
            isolation=weakest(isolation, truth_isolation),
            reused=reused,
        )


def _remember_parts(cache: Journal, split: SplitRun) -> None:
    """The parts' own verdicts, kept so that the next run schedules each by its duration."""
    for sha, result in split.parts_done.items():
        cache.record(sha, result)


def _timed(program: Program, previous: ExecResult | None) -> Program:
    if previous is None:
        return program
    return replace(
        program, expected_duration_s=previous.duration_s, expected_cpu_share=cpu_share(previous)
    )
