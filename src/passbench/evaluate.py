"""Evaluate: samples -> programs -> sandbox -> ExecResults -> result files.

Also the ground truth: the canonical solutions run through the same path, which gives the
ground-truth pass rate and the per-task timings the official time limits are derived from.
Verdicts are journaled as they arrive, so an interrupted run resumes without re-executing
finished samples; the result files are written once, atomically, at the end.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from passbench import differential
from passbench.benchmarks import (
    DifferentialBenchmark,
    LoadedBenchmark,
    Phase,
    check_split,
    get_benchmark,
    load_benchmark,
)
from passbench.benchmarks.selection import select_tasks
from passbench.errors import InputError
from passbench.evalenv import EnvInfo, check_integrity, locate_env
from passbench.progress import NullProgress, Progress
from passbench.records import ErrorCategory, ExecResult, Isolation, Program, Sample, Task
from passbench.results import (
    GROUND_TRUTH_FILE,
    ground_truth_entry,
    model_name,
    result_paths,
    sample_entry,
    write_eval_results,
    write_ground_truth,
    write_pass_at_k,
)
from passbench.results import task_order as _task_order
from passbench.samplefile import read_samples, sample_file_stem
from passbench.sandbox import Sandbox, open_sandbox
from passbench.sandbox.base import Limits, SandboxConfig
from passbench.scoring import pass_at_k_table
from passbench.settings import Paths
from passbench.store.journal import Journal, program_sha

#: The official evaluator's per-task limit (bigcodebench.eval.utils.TIMEOUT_LIMIT).
OFFICIAL_TIMEOUT_S = 240.0
#: The official default `--min_time_limit`.
OFFICIAL_MIN_TIME_LIMIT_S = 1.0
#: What the official evaluator assumes for a task whose ground truth failed.
OFFICIAL_FAILED_GT_TIME_S = 20.0


@dataclass(frozen=True)
class EvaluateSettings:
    """Everything one evaluation depends on (resolved by settings.resolve in the CLI)."""

    benchmark: str = "bigcodebench"
    version: str | None = None
    split: str = "complete"
    subset: str = "full"
    samples: Path | None = None
    output_dir: Path | None = None
    task_ids: tuple[str, ...] | None = None  # selection; None = every task of the subset
    id_range: tuple[int, int] | None = None  # positions low <= i < high (benchmarks.selection)
    calibrated: bool = True
    pass_k: tuple[int, ...] = (1, 5, 10)
    timeout_per_task_s: float | None = None  # None = the benchmark's official default
    min_time_limit_s: float = OFFICIAL_MIN_TIME_LIMIT_S
    # differential benchmarks: each input's limit is max(min_time_limit, factor x reference time)
    gt_time_limit_factor: float = differential.DEFAULT_GT_TIME_LIMIT_FACTOR
    check_ground_truth: bool = True  # official: ground truth runs (or is cached) before samples
    workers: int = 0
    limits: Limits = field(default_factory=Limits)
    env_dir: Path | None = None
    dataset_path: Path | None = None
    nltk_data: Path | None = None
    allow_unsandboxed: bool = False  # run without bubblewrap (rlimits only) rather than refuse
    resume: bool = True


@dataclass(frozen=True)
class GroundTruth:
    """Per-task ground-truth verdicts and test durations."""

    tasks: Mapping[str, Mapping[str, Any]]  # task id -> {status, duration_s, reason, category}

    @property
    def pass_rate(self) -> float:
        if not self.tasks:
            return float("nan")
        passed = sum(1 for entry in self.tasks.values() if entry["status"] == "pass")
        return passed / len(self.tasks)

    @property
    def failed_tasks(self) -> list[str]:
        return sorted(
            (task for task, entry in self.tasks.items() if entry["status"] != "pass"),
            key=_task_order,
        )

    def expected_time(self, task_id: str) -> float | None:
        entry = self.tasks.get(task_id)
        if entry is None or entry["status"] != "pass":
            return None
        return float(entry["duration_s"])


@dataclass(frozen=True)
class EvaluationOutcome:
    eval_results_path: Path
    pass_at_k_path: Path
    pass_at_k: Mapping[str, float]
    n_tasks: int
    n_samples: int
    missing_tasks: tuple[str, ...]
    ground_truth: GroundTruth | None
    isolation: Isolation
    reused: int  # verdicts taken from the journal instead of re-running


@dataclass(frozen=True)
class GroundTruthOutcome:
    path: Path
    ground_truth: GroundTruth
    isolation: Isolation


def sample_time_limit(settings: EvaluateSettings, default_s: float, gt_time: float | None) -> float:
    """The per-sample limit the official evaluator derives: max(240, min limit, GT time) + 1."""
    per_task = settings.timeout_per_task_s if settings.timeout_per_task_s is not None else default_s
    reference = gt_time if gt_time is not None else OFFICIAL_FAILED_GT_TIME_S
    return max(per_task, settings.min_time_limit_s, reference) + 1.0


def _fingerprint(parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class Evaluator:
    """One evaluation's resolved inputs; runs the ground truth and samples through the sandbox."""

    def __init__(
        self,
        settings: EvaluateSettings,
        paths: Paths,
        progress: Progress | None = None,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.progress = progress or NullProgress()
        self.loaded: LoadedBenchmark = load_benchmark(
            settings.benchmark,
            version=settings.version,
            subset=settings.subset,
            dataset_path=settings.dataset_path,
            data_dir=paths.data_dir,
            cache_dir=paths.cache_dir,
            mirror=paths.mirror,
            download=not paths.offline,
        )
        self.benchmark = get_benchmark(settings.benchmark)
        check_split(self.benchmark, settings.split)
        self.tasks = select_tasks(self.loaded.tasks, settings.task_ids, settings.id_range)
        env_name = self.benchmark.env_name
        self.env: EnvInfo | None = locate_env(env_name, settings.env_dir) if env_name else None
        self._env_verified = False
        self._cgroup: str | None = None  # how workers were capped; None until a sandbox ran
        self.default_timeout_s = float(self.benchmark.default_timeout_s)
        # differential benchmarks are judged on the host from their outputs (passbench.differential)
        self.phased: DifferentialBenchmark | None = (
            self.benchmark if isinstance(self.benchmark, DifferentialBenchmark) else None
        )

    # -- shared pieces ---------------------------------------------------------------------

    def _run_metadata(self, isolation: Isolation) -> dict[str, Any]:
        limits = self.settings.limits
        return {
            "benchmark": self.settings.benchmark,
            "dataset_version": self.loaded.version,
            "split": self.settings.split,
            "subset": self.settings.subset,
            "dataset_sha256": self.loaded.sha256,
            "dataset_source": str(self.loaded.source),
            "calibrated": self.settings.calibrated,
            "isolation": isolation.value,
            # said in so many words in every file: these verdicts could be forged, and the
            # samples could read and change the host's files
            "unsandboxed": isolation is not Isolation.BUBBLEWRAP,
            "cgroup": self._cgroup,  # "v2", "v1", "none" (rlimits only); null: nothing ran
            "allow_network": limits.allow_network,
            "evalenv": self._env_description(),
            "limits": asdict(limits),
            "timeout_per_task_s": self._timeout_per_task(),
            "min_time_limit_s": self.settings.min_time_limit_s,
            **(
                {"gt_time_limit_factor": self.settings.gt_time_limit_factor}
                if self.phased is not None
                else {}
            ),
            "n_tasks": len(self.tasks),
        }

    def _timeout_per_task(self) -> float:
        if self.settings.timeout_per_task_s is not None:
            return self.settings.timeout_per_task_s
        return self.default_timeout_s

    def _env_description(self) -> dict[str, str]:
        if self.env is None:
            return {
                "name": "host",
                "python": str(self._python()),
                "python_version": platform.python_version(),
                "lock_sha256": "",
            }
        return {
            "name": self.env.name,
            "python": str(self.env.python),
            "python_version": self.env.python_version,
            "lock_sha256": self.env.lock_sha256,
        }

    def _python(self) -> Path:
        """The interpreter samples run under: the benchmark's environment, or the one passbench
        runs on (with its dependencies, numpy among them, as EvalPlus's own process has) for
        benchmarks without one."""
        if self.env is not None:
            return self.env.python
        return Path(sys.executable)

    def _sandbox_config(self) -> SandboxConfig:
        env = dict(self.env.sample_environment()) if self.env is not None else {}
        read_only: list[Path] = []
        if self.settings.nltk_data is not None:
            env["NLTK_DATA"] = str(self.settings.nltk_data)
            read_only.append(self.settings.nltk_data)
        return SandboxConfig(
            python=self._python(),
            workers=self.settings.workers,
            limits=self.settings.limits,
            env=tuple(sorted(env.items())),
            read_only_paths=tuple(read_only),
            allow_unsandboxed=self.settings.allow_unsandboxed,
            scratch_dir=self.paths.cache_dir / "scratch",
        )

    def _open_sandbox(self) -> Sandbox:
        """The sandbox samples run in, once the evaluation environment is verified intact
        (evalenv/manifest.py: no file changed since it was built)."""
        if self.env is not None and not self._env_verified:
            check_integrity(self.env.name, self.env.root, self.progress.warn)
            self._env_verified = True
        sandbox = open_sandbox(self._sandbox_config(), warn=self.progress.warn)
        self._cgroup = sandbox.cgroup
        return sandbox

    def _execute(
        self,
        programs: list[Program],
        journal: Journal,
        description: str,
        *,
        reuse: bool,
        identity: Callable[[Program], str] | None = None,
        finalize: Callable[[Program, ExecResult], ExecResult] | None = None,
    ) -> tuple[dict[str, ExecResult], Isolation, int]:
        """Run programs, journaling each verdict; with `reuse`, journaled ones are not re-run.

        `identity` gives the hash a verdict is journaled under (default: the source's);
        `finalize` turns the sandbox's result into the verdict (the differential judge)."""
        identify = identity or (lambda program: program_sha(program.source))
        shas = {program.key: identify(program) for program in programs}
        by_key = {program.key: program for program in programs}
        results: dict[str, ExecResult] = {}
        if reuse:
            stored = journal.done(shas.values())
            for program in programs:
                hit = stored.get(shas[program.key])
                # an unsandboxed verdict is not reused by a run that does not allow them
                if hit is not None and (_isolated(hit) or self.settings.allow_unsandboxed):
                    results[program.key] = replace(hit, key=program.key)
        reused = len(results)
        pending = [program for program in programs if program.key not in results]
        isolation = Isolation.BUBBLEWRAP
        self.progress.start(len(programs), description)
        if reused:
            self.progress.advance(reused, info=f"{reused} reused from the journal")
        if pending:
            with self._open_sandbox() as sandbox:
                isolation = sandbox.isolation
                for result in sandbox.run(pending):
                    if finalize is not None:
                        result = finalize(by_key[result.key], result)
                    journal.record(shas[result.key], result)
                    results[result.key] = result
                    self.progress.advance(1, info=f"{result.task_id}: {result.status}")
        self.progress.finish()
        return results, weakest(isolation, *(r.isolation for r in results.values())), reused

    # -- ground truth ----------------------------------------------------------------------

    def _verdict_fingerprint(self, kind: str, **extra: object) -> str:
        """What, besides a program's source, can change its verdict: the key of the
        ground-truth cache and of the samples journal (one function, so they cannot drift).
        The dataset, the interpreter (path, version) and its environment's lock, the limits
        (network permission included), the time limits, the samples' environment variables and
        read-only folders, and the NLTK data they see (folder and packages)."""
        settings = self.settings
        config = self._sandbox_config()
        return _fingerprint(
            {
                "kind": kind,
                "benchmark": settings.benchmark,
                "dataset_sha256": self.loaded.sha256,
                "evalenv": self._env_description(),
                "limits": asdict(settings.limits),
                "timeouts": [
                    settings.timeout_per_task_s or self.default_timeout_s,
                    settings.min_time_limit_s,
                ],
                "sample_env": config.env,
                "read_only": [str(path) for path in config.read_only_paths],
                "nltk": _nltk_listing(dict(config.env).get("NLTK_DATA")),
                # samples' /tmp and working directory on disk, not tmpfs (listdir order differs)
                "workdir": "disk",
                **extra,
            }
        )

    def _ground_truth_cache(self) -> Journal:
        folder = self.paths.cache_dir / "ground-truth"
        folder.mkdir(parents=True, exist_ok=True)
        return Journal(folder / "timings.sqlite", self._verdict_fingerprint("ground-truth"))

    def _ground_truth_programs(self, cache: Journal) -> list[Program]:
        """Canonical programs, with the cached previous timings to start the slowest first."""
        limit = (
            max(
                self.settings.timeout_per_task_s or self.default_timeout_s,
                self.settings.min_time_limit_s,
            )
            + 1.0
        )
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
        return [
            replace(draft, expected_duration_s=_previous_duration(previous, draft))
            for draft in drafts
        ]

    def ground_truth(self) -> tuple[GroundTruth, Isolation]:
        """Ground-truth verdicts for the selected tasks, from the cache where it has them
        (per dataset hash and environment), running only the canonical solutions it lacks."""
        if self.phased is not None:
            expected, isolation = self.expected_outputs()
            return self._ground_truth_from_expected(expected), isolation
        with self._ground_truth_cache() as cache:
            programs = self._ground_truth_programs(cache)
            results, isolation, _ = self._execute(programs, cache, "ground truth", reuse=True)
        return _ground_truth_from(programs, results), isolation

    def run_ground_truth(self, output_dir: Path) -> GroundTruthOutcome:
        """The official --check-gt-only: re-run every canonical solution (never answered from
        the cache), write ground_truth.json and refresh the cache.

        An interrupted run resumes from a journal in `output_dir`, deleted once the run is done,
        so the next run starts afresh.
        """
        output_dir.mkdir(parents=True, exist_ok=True)
        journal_path = output_dir / ".ground_truth.journal.sqlite"
        if self.phased is not None:
            # the expected-outputs cache is its own journal: computed afresh, stored as it goes
            expected, isolation = self.expected_outputs(rerun=True)
            truth = self._ground_truth_from_expected(expected)
        else:
            truth, isolation = self._rerun_ground_truth(journal_path)
        path = write_ground_truth(
            output_dir / GROUND_TRUTH_FILE, truth.tasks, self._run_metadata(isolation)
        )
        for leftover in output_dir.glob(journal_path.name + "*"):
            leftover.unlink()
        return GroundTruthOutcome(path=path, ground_truth=truth, isolation=isolation)

    def _rerun_ground_truth(self, journal_path: Path) -> tuple[GroundTruth, Isolation]:
        with self._ground_truth_cache() as cache:
            programs = self._ground_truth_programs(cache)
            fingerprint = cache.fingerprint + ":" + _fingerprint([p.key for p in programs])
            with Journal(journal_path, fingerprint) as journal:
                results, isolation, _ = self._execute(
                    programs, journal, "ground truth", reuse=self.settings.resume
                )
            for program in programs:
                cache.record(program_sha(program.source), results[program.key])
        return _ground_truth_from(programs, results), isolation

    # -- differential benchmarks: expected outputs -------------------------------------------

    def _expected_store(self) -> differential.ExpectedStore:
        folder = self.paths.cache_dir / "ground-truth"
        folder.mkdir(parents=True, exist_ok=True)
        fingerprint = _fingerprint(
            {
                "kind": "expected-outputs",
                "codec": differential.expected.CODEC_VERSION,
                "dataset_sha256": self.loaded.sha256,
                "evalenv": self._env_description(),
                "limits": asdict(self.settings.limits),
            }
        )
        return differential.ExpectedStore(folder / "expected-outputs.sqlite", fingerprint)

    def expected_outputs(
        self, *, rerun: bool = False
    ) -> tuple[dict[tuple[str, str], differential.ExpectedPhase], Isolation]:
        """The reference's outputs and times for every phase of the selected tasks, by (task
        id, phase): from the cache, computing in the sandbox what it lacks (all with `rerun`)."""
        assert self.phased is not None
        programs: list[Program] = []
        where: dict[str, tuple[Task, Phase, str]] = {}
        for task in self.tasks:
            for phase in self.phased.phases(task):
                program = differential.reference_program(
                    task, phase, self.benchmark.canonical_code(task)
                )
                programs.append(program)
                where[program.key] = (task, phase, differential.reference_sha(program))
        isolation = Isolation.BUBBLEWRAP
        with self._expected_store() as store:
            found = (
                {}
                if rerun
                else store.get_many(
                    (task.task_id, phase.name, sha) for task, phase, sha in where.values()
                )
            )
            pending = [p for p in programs if (p.task_id, where[p.key][1].name) not in found]
            self.progress.start(len(programs), "expected outputs")
            if found:
                self.progress.advance(len(found), info=f"{len(found)} from the cache")
            if pending:
                with self._open_sandbox() as sandbox:
                    isolation = sandbox.isolation
                    for result in sandbox.run(pending):
                        task, phase, sha = where[result.key]
                        expected = differential.expected_from(result, phase)
                        store.put(task.task_id, phase.name, sha, expected)
                        found[(task.task_id, phase.name)] = expected
                        self.progress.advance(1, info=f"{task.task_id} {phase.name}")
            self.progress.finish()
        return found, isolation

    def _ground_truth_from_expected(
        self, expected: Mapping[tuple[str, str], differential.ExpectedPhase]
    ) -> GroundTruth:
        """The reference passes a task when it answered every input of every phase."""
        assert self.phased is not None
        tasks: dict[str, dict[str, Any]] = {}
        for task in self.tasks:
            phases = [expected[(task.task_id, phase.name)] for phase in self.phased.phases(task)]
            failed = [phase for phase in phases if not phase.ok]
            tasks[task.task_id] = {
                "status": "fail" if failed else "pass",
                "duration_s": round(sum(phase.duration_s for phase in phases), 4),
                "category": ErrorCategory.EXCEPTION.value if failed else None,
                "reason": failed[0].reason if failed else "",
            }
        return GroundTruth(tasks)

    # -- samples ---------------------------------------------------------------------------

    def _solution_code(self, task: Task, sample: Sample) -> str:
        if sample.solution is not None:
            code = sample.solution
        else:
            code = self.benchmark.solution_from_completion(task, sample.completion or "")
        if self.settings.calibrated:
            code = self.benchmark.calibrated_code(task, code)
        return code

    def evaluate_samples(self, samples_path: Path, output_dir: Path | None) -> EvaluationOutcome:
        # A sample file made for the full benchmark is fine for a subset: the other tasks are
        # skipped, as officially; only ids the dataset version lacks are an error.
        all_ids = {task.task_id for task in self.loaded.all_tasks}
        samples = read_samples(samples_path, known_task_ids=all_ids)
        selected = {task.task_id: task for task in self.tasks}
        samples = [sample for sample in samples if sample.task_id in selected]
        if not samples:
            raise InputError(
                "no samples for the selected tasks of this benchmark/subset",
                path=samples_path,
            )
        covered = {sample.task_id for sample in samples}
        missing = tuple(sorted((t for t in selected if t not in covered), key=_task_order))
        if missing:
            self.progress.warn(
                f"{len(missing)} of {len(selected)} tasks have no sample "
                "(recorded as missing_tasks; pass@k is over the tasks with samples)"
            )

        stem = sample_file_stem(samples_path)
        target = output_dir if output_dir is not None else samples_path.parent
        target.mkdir(parents=True, exist_ok=True)
        codes = [self._solution_code(selected[sample.task_id], sample) for sample in samples]
        if self.phased is not None:
            truth, verdicts, isolation, reused = self._judge_samples(
                samples, codes, selected, target / f".{stem}.journal.sqlite"
            )
        else:
            truth, verdicts, isolation, reused = self._test_samples(
                samples, codes, selected, target / f".{stem}.journal.sqlite"
            )

        metadata = self._run_metadata(isolation)
        metadata["samples_file"] = str(samples_path)
        metadata["missing_tasks"] = list(missing)
        entries = []
        for sample, code, (result, extra) in zip(samples, codes, verdicts, strict=True):
            entry = sample_entry(sample, code, result)
            entry.update(extra)
            entries.append(entry)
        counts: dict[str, tuple[int, int]] = {}
        for entry in entries:
            n, c = counts.get(entry["task_id"], (0, 0))
            counts[entry["task_id"]] = (n + 1, c + (entry["status"] == "pass"))
        scores = pass_at_k_table(counts, self.settings.pass_k)
        eval_path, pass_path = result_paths(target, stem)
        # EvalPlus's readers look for the dataset's `hash`
        evalplus = {"hash": self.loaded.source.md5_of_text()} if self.phased is not None else None
        write_eval_results(eval_path, entries, metadata, extra=evalplus)
        write_pass_at_k(
            pass_path,
            scores,
            metadata,
            model=model_name(stem),
            split=self.settings.split,
            subset=self.settings.subset,
            calibrated=self.settings.calibrated,
            gt_pass_rate=truth.pass_rate if truth else None,
            failed_tasks=truth.failed_tasks if truth else [],
            n_tasks=len(counts),
            n_samples=len(samples),
            extra={"gt_failures": _gt_failures(truth)} if truth else None,
        )
        return EvaluationOutcome(
            eval_results_path=eval_path,
            pass_at_k_path=pass_path,
            pass_at_k=scores,
            n_tasks=len(counts),
            n_samples=len(samples),
            missing_tasks=missing,
            ground_truth=truth,
            isolation=isolation,
            reused=reused,
        )

    def _test_samples(
        self,
        samples: Sequence[Sample],
        codes: Sequence[str],
        selected: Mapping[str, Task],
        journal_path: Path,
    ) -> tuple[GroundTruth | None, list[tuple[ExecResult, dict[str, Any]]], Isolation, int]:
        """Samples whose tests decide in the sandbox (BigCodeBench, HumanEval's own tests)."""
        truth: GroundTruth | None = None
        truth_isolation = Isolation.BUBBLEWRAP
        if self.settings.check_ground_truth:
            truth, truth_isolation = self.ground_truth()
        programs: list[Program] = []
        for sample, code in zip(samples, codes, strict=True):
            task = selected[sample.task_id]
            gt_time = truth.expected_time(task.task_id) if truth else None
            programs.append(
                self.benchmark.program(
                    task,
                    code,
                    key=f"{task.task_id}#{sample.sample_index}",
                    timeout_s=sample_time_limit(self.settings, self.default_timeout_s, gt_time),
                    expected_duration_s=gt_time,
                )
            )
        # without the ground truth, limits assume the official 20 s per task
        fingerprint = self._verdict_fingerprint(
            "samples", ground_truth_times=self.settings.check_ground_truth
        )
        with Journal(journal_path, fingerprint) as journal:
            results, isolation, reused = self._execute(
                programs, journal, "evaluating", reuse=self.settings.resume
            )
        verdicts: list[tuple[ExecResult, dict[str, Any]]] = [
            (results[program.key], {}) for program in programs
        ]
        return truth, verdicts, weakest(isolation, truth_isolation), reused

    def _judge_samples(
        self,
        samples: Sequence[Sample],
        codes: Sequence[str],
        selected: Mapping[str, Task],
        journal_path: Path,
    ) -> tuple[GroundTruth | None, list[tuple[ExecResult, dict[str, Any]]], Isolation, int]:
        """Samples of a differential benchmark: each phase an io program, judged on the host
        against the expected outputs; then a sample's phases combined (EvalPlus's fields)."""
        assert self.phased is not None
        expected, truth_isolation = self.expected_outputs()
        truth = self._ground_truth_from_expected(expected)
        programs: list[Program] = []
        planned: dict[str, tuple[Phase, differential.ExpectedPhase, differential.PhaseSpec]] = {}
        unjudgeable: dict[str, ExecResult] = {}
        per_sample: list[list[tuple[str, Phase]]] = []
        for sample, code in zip(samples, codes, strict=True):
            task = selected[sample.task_id]
            keys: list[tuple[str, Phase]] = []
            for phase in self.phased.phases(task):
                key = f"{task.task_id}#{sample.sample_index}:{phase.name}"
                keys.append((key, phase))
                reference = expected[(task.task_id, phase.name)]
                if not reference.ok:
                    unjudgeable[key] = _unjudgeable(key, task.task_id, phase, reference)
                    continue
                limits = differential.time_limits(
                    reference, self.settings.min_time_limit_s, self.settings.gt_time_limit_factor
                )
                spec = differential.PhaseSpec(
                    phase.name, phase.atol, limits, phase.oracle, phase.inputs
                )
                planned[key] = (phase, reference, spec)
                programs.append(
                    differential.candidate_program(
                        task,
                        phase,
                        code,
                        key=key,
                        limits=limits,
                        cap_s=self._timeout_per_task(),
                        want_values=differential.wanted_values(
                            reference.records, phase.atol, phase.oracle is not None
                        ),
                    )
                )
            per_sample.append(keys)

        def identity(program: Program) -> str:
            assert program.io is not None
            reference = planned[program.key][1]
            spec = json.dumps([asdict(program.io), program.timeout_s], sort_keys=True)
            return program_sha(program.source, spec, differential.expected_fingerprint(reference))

        def finalize(program: Program, result: ExecResult) -> ExecResult:
            _, reference, spec = planned[program.key]
            return differential.judge(result, reference.records, spec)

        fingerprint = self._verdict_fingerprint(
            "samples", gt_time_limit_factor=self.settings.gt_time_limit_factor
        )
        with Journal(journal_path, fingerprint) as journal:
            results, isolation, reused = self._execute(
                programs,
                journal,
                "evaluating",
                reuse=self.settings.resume,
                identity=identity,
                finalize=finalize,
            )
        results.update(unjudgeable)
        verdicts = []
        for sample, keys in zip(samples, per_sample, strict=True):
            outcomes = [differential.PhaseOutcome(phase, results[key]) for key, phase in keys]
            combined = differential.combine(f"{sample.task_id}#{sample.sample_index}", outcomes)
            verdicts.append((combined, differential.evalplus_fields(outcomes)))
        if self.settings.check_ground_truth:
            return truth, verdicts, weakest(isolation, truth_isolation), reused
        return None, verdicts, isolation, reused


def weakest(*isolations: Isolation) -> Isolation:
    """The weakest isolation among verdicts: what a run that used them all can claim."""
    return Isolation.RLIMIT if Isolation.RLIMIT in isolations else Isolation.BUBBLEWRAP


def _isolated(result: ExecResult) -> bool:
    return result.isolation is Isolation.BUBBLEWRAP


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


def _ground_truth_from(
    programs: Sequence[Program], results: Mapping[str, ExecResult]
) -> GroundTruth:
    return GroundTruth(
        {program.task_id: ground_truth_entry(results[program.key]) for program in programs}
    )


def _gt_failures(truth: GroundTruth) -> dict[str, dict[str, Any]]:
    """Why each failing canonical solution failed (inspect names environment gaps from it)."""
    return {
        task: {
            "category": truth.tasks[task].get("category"),
            "reason": str(truth.tasks[task].get("reason", ""))[:500],
        }
        for task in truth.failed_tasks
    }


def _nltk_listing(folder: str | None) -> list[str]:
    """The NLTK packages under `folder` ("corpora/stopwords", ...): what samples can load."""
    if not folder or not Path(folder).is_dir():
        return []
    return sorted(
        f"{category.name}/{package.name}"
        for category in Path(folder).iterdir()
        if category.is_dir()
        for package in category.iterdir()
    )


def _previous_duration(previous: Mapping[str, ExecResult], program: Program) -> float | None:
    hit = previous.get(program_sha(program.source))
    return hit.duration_s if hit is not None else None
