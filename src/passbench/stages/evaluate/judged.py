"""Samples of a differential benchmark (HumanEval(+), MBPP(+)), judged on the host.

Each phase of a sample (EvalPlus's base and plus inputs) is an io program: the candidate's code
and the inputs, nothing else. The sandbox returns its outputs; `passbench.stages.differential`
judges
them against the reference's expected outputs, which are computed once in the sandbox at
ground-truth time and cached, and never enter a candidate's process.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Any

from passbench.core.journal import Journal, program_sha
from passbench.core.records import ErrorCategory, ExecResult, Isolation, Program, Sample, Task
from passbench.stages import differential
from passbench.stages.benchmarks import Benchmark, DifferentialBenchmark, LoadedBenchmark, Phase
from passbench.stages.evaluate.execution import Execution, fingerprint, weakest
from passbench.stages.evaluate.outcomes import GroundTruth, SampleVerdicts

ExpectedOutputs = dict[tuple[str, str], differential.ExpectedPhase]  # (task id, phase) ->


class JudgedStyle:
    """Inputs in, outputs out, compared on the trusted side."""

    def __init__(
        self,
        benchmark: Benchmark,
        loaded: LoadedBenchmark,
        tasks: Sequence[Task],
        execution: Execution,
    ) -> None:
        if not isinstance(benchmark, DifferentialBenchmark):
            raise TypeError(f"{benchmark.info.name} is not a differential benchmark")
        self.benchmark = benchmark
        self.phases = benchmark.phases
        self.loaded = loaded
        self.tasks = tasks
        self.execution = execution

    def metadata(self) -> dict[str, Any]:
        return {"gt_time_limit_factor": self.execution.settings.gt_time_limit_factor}

    def eval_results_extra(self) -> dict[str, Any] | None:
        # EvalPlus's readers look for the dataset's `hash`
        return {"hash": self.loaded.source.md5_of_text()}

    # -- expected outputs: the ground truth ------------------------------------------------

    def _store(self) -> differential.ExpectedStore:
        execution = self.execution
        key = fingerprint(
            {
                "kind": "expected-outputs",
                "codec": differential.expected.CODEC_VERSION,
                "dataset_sha256": self.loaded.sha256,
                "evalenv": execution.env_description(),
                "limits": asdict(execution.settings.limits),
            }
        )
        return differential.ExpectedStore(execution.cache_folder / "expected-outputs.sqlite", key)

    def expected_outputs(self, *, rerun: bool = False) -> tuple[ExpectedOutputs, Isolation]:
        """The reference's outputs and times for every phase of the selected tasks, by (task
        id, phase): from the cache, computing in the sandbox what it lacks (all with `rerun`)."""
        programs: list[Program] = []
        where: dict[str, tuple[Task, Phase, str]] = {}
        for task in self.tasks:
            for phase in self.phases(task):
                program = differential.reference_program(
                    task, phase, self.benchmark.canonical_code(task)
                )
                programs.append(program)
                where[program.key] = (task, phase, differential.reference_sha(program))
        progress = self.execution.progress
        with self._store() as store:
            found = (
                {}
                if rerun
                else store.get_many(
                    (task.task_id, phase.name, sha) for task, phase, sha in where.values()
                )
            )
            pending = [p for p in programs if (p.task_id, where[p.key][1].name) not in found]
            computed: list[Isolation] = []
            progress.start(len(programs), "expected outputs")
            if found:
                progress.advance(len(found), info=f"{len(found)} from the cache")
            with closing(self.execution.stream(pending)) as stream:
                for result in stream:
                    task, phase, sha = where[result.key]
                    expected = differential.expected_from(result, phase)
                    store.put(task.task_id, phase.name, sha, expected)
                    found[(task.task_id, phase.name)] = expected
                    computed.append(result.isolation)
                    progress.advance(1, info=f"{task.task_id} {phase.name}")
            progress.finish()
        return found, weakest(*computed)

    def _truth(self, expected: Mapping[tuple[str, str], differential.ExpectedPhase]) -> GroundTruth:
        """The reference passes a task when it answered every input of every phase."""
        tasks: dict[str, dict[str, Any]] = {}
        for task in self.tasks:
            phases = [expected[(task.task_id, phase.name)] for phase in self.phases(task)]
            failed = [phase for phase in phases if not phase.ok]
            tasks[task.task_id] = {
                "status": "fail" if failed else "pass",
                "duration_s": round(sum(phase.duration_s for phase in phases), 4),
                "category": ErrorCategory.EXCEPTION.value if failed else None,
                "reason": failed[0].reason if failed else "",
            }
        return GroundTruth(tasks)

    def ground_truth(self) -> tuple[GroundTruth, Isolation]:
        expected, isolation = self.expected_outputs()
        return self._truth(expected), isolation

    def rerun_ground_truth(self, journal_path: Path) -> tuple[GroundTruth, Isolation]:
        """The expected outputs computed afresh; the cache is their journal (stored as they
        arrive), so `journal_path` is not needed."""
        expected, isolation = self.expected_outputs(rerun=True)
        return self._truth(expected), isolation

    # -- samples ---------------------------------------------------------------------------

    def verdicts(
        self,
        samples: Sequence[Sample],
        codes: Sequence[str],
        tasks: Mapping[str, Task],
        journal_path: Path,
    ) -> SampleVerdicts:
        """Each phase an io program, judged on the host against the expected outputs; then a
        sample's phases combined (EvalPlus's fields)."""
        execution = self.execution
        settings = execution.settings
        expected, truth_isolation = self.expected_outputs()
        programs: list[Program] = []
        planned: dict[str, tuple[differential.ExpectedPhase, differential.PhaseSpec]] = {}
        unjudgeable: dict[str, ExecResult] = {}
        per_sample: list[list[tuple[str, Phase]]] = []
        for sample, code in zip(samples, codes, strict=True):
            task = tasks[sample.task_id]
            keys: list[tuple[str, Phase]] = []
            for phase in self.phases(task):
                key = f"{task.task_id}#{sample.sample_index}:{phase.name}"
                keys.append((key, phase))
                reference = expected[(task.task_id, phase.name)]
                if not reference.ok:
                    unjudgeable[key] = _unjudgeable(key, task.task_id, phase, reference)
                    continue
                limits = execution.time_limits.inputs_s(reference)
                spec = differential.PhaseSpec(
                    phase.name, phase.atol, limits, phase.oracle, phase.inputs, phase.match
                )
                planned[key] = (reference, spec)
                programs.append(
                    differential.candidate_program(
                        task,
                        phase,
                        code,
                        key=key,
                        limits=limits,
                        cap_s=execution.time_limits.per_task_s,
                        want_values=differential.wanted_values(
                            reference.records,
                            phase.atol,
                            phase.oracle is not None or phase.match is not None,
                        ),
                    )
                )
            per_sample.append(keys)

        def identity(program: Program) -> str:
            assert program.io is not None
            reference = planned[program.key][0]
            spec = json.dumps([asdict(program.io), program.timeout_s], sort_keys=True)
            return program_sha(program.source, spec, differential.expected_fingerprint(reference))

        def finalize(program: Program, result: ExecResult) -> ExecResult:
            reference, spec = planned[program.key]
            return differential.judge(result, reference.records, spec)

        run_fingerprint = execution.verdict_fingerprint(
            "samples", gt_time_limit_factor=settings.gt_time_limit_factor
        )
        with Journal(journal_path, run_fingerprint) as journal:
            results, isolation, reused = execution.run(
                programs,
                journal,
                "evaluating",
                reuse=settings.resume,
                identity=identity,
                finalize=finalize,
            )
        results.update(unjudgeable)
        verdicts = []
        for sample, keys in zip(samples, per_sample, strict=True):
            outcomes = [differential.PhaseOutcome(phase, results[key]) for key, phase in keys]
            combined = differential.combine(f"{sample.task_id}#{sample.sample_index}", outcomes)
            verdicts.append((combined, differential.evalplus_fields(outcomes)))
        if settings.check_ground_truth:
            return SampleVerdicts(
                verdicts, self._truth(expected), weakest(isolation, truth_isolation), reused
            )
        return SampleVerdicts(verdicts, None, isolation, reused)


def _unjudgeable(
    key: str, task_id: str, phase: Phase, reference: differential.ExpectedPhase
) -> ExecResult:
    """A phase whose reference failed has no expected outputs: the sample cannot pass it."""
    reason = (
        f"{phase.name}: no expected outputs (the reference solution failed: {reference.reason})"
    )
    return ExecResult(
        key=key,
        task_id=task_id,
        status="fail",
        category=ErrorCategory.EXCEPTION,
        details={phase.name: reason},
        duration_s=0.0,
        wall_s=0.0,
        isolation=Isolation.BUBBLEWRAP,
        reason=reason,
        inputs_done=0,
    )
