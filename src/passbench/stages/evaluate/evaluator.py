"""The evaluator: one evaluation's inputs resolved, its style driven, its result files written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from passbench.core.errors import EnvironmentError_, InputError
from passbench.core.progress import NullProgress, Progress
from passbench.core.records import Isolation, Sample, Task
from passbench.core.samplefile import read_samples, sample_file_stem
from passbench.core.scoring import pass_at_k_table
from passbench.core.settings import Paths
from passbench.core.stability import epoch_score, per_epoch_pass_at_1
from passbench.stages.benchmarks import (
    LoadedBenchmark,
    check_executable,
    check_split,
    get_benchmark,
    load_benchmark,
)
from passbench.stages.benchmarks.selection import select_tasks
from passbench.stages.evalenv import EnvInfo, locate_env
from passbench.stages.evaluate import stability
from passbench.stages.evaluate.execution import Execution, weakest
from passbench.stages.evaluate.judged import ExpectedOutputs, JudgedStyle
from passbench.stages.evaluate.outcomes import EvaluationOutcome, GroundTruth, GroundTruthOutcome
from passbench.stages.evaluate.settings import EvaluateSettings
from passbench.stages.evaluate.style import style_for
from passbench.stages.results import (
    GROUND_TRUTH_FILE,
    model_name,
    result_paths,
    sample_entry,
    write_eval_results,
    write_ground_truth,
    write_pass_at_k,
)
from passbench.stages.results import task_order as _task_order


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
        self.benchmark = get_benchmark(settings.benchmark)
        check_executable(self.benchmark)  # a prompt set without tests: another command scores it
        self.loaded: LoadedBenchmark = load_benchmark(
            settings.benchmark,
            version=settings.version,
            subset=settings.subset,
            dataset_path=settings.dataset_path,
            data_dir=paths.data_dir,
            cache_dir=paths.cache_dir,
            mirror=paths.mirror,
            download=not paths.offline,
            repos_dir=paths.repos_dir,
        )
        check_split(self.benchmark, settings.split)
        self.tasks = select_tasks(
            self.loaded.tasks, settings.task_ids, settings.id_range, settings.window
        )
        env_name = self.benchmark.info.env_name
        self.env: EnvInfo | None = None
        if env_name:
            try:
                self.env = locate_env(env_name, settings.env_dir)
            except EnvironmentError_:
                if settings.backend.startswith("local"):
                    raise
                # another backend provides its own; this machine need not have one
        self.execution = Execution(
            settings,
            paths,
            dataset_sha256=self.loaded.sha256,
            env_name=env_name,
            env=self.env,
            default_timeout_s=float(self.benchmark.info.default_timeout_s),
            progress=self.progress,
        )
        self.style = style_for(self.benchmark, self.loaded, self.tasks, self.execution)

    def _run_metadata(self, isolation: Isolation) -> dict[str, Any]:
        settings = self.settings
        execution = self.execution
        return {
            "benchmark": settings.benchmark,
            "dataset_version": self.loaded.version,
            "split": settings.split,
            "subset": settings.subset,
            "dataset_sha256": self.loaded.sha256,
            "dataset_source": str(self.loaded.source),
            # what compare and the leaderboards check before ranking runs together
            "task_set": self.benchmark.task_set(self.loaded).to_json(),
            "calibrated": settings.calibrated,
            "isolation": isolation.value,
            # said in so many words in every file: these verdicts could be forged, and the
            # samples could read and change the host's files
            "unsandboxed": isolation is not Isolation.BUBBLEWRAP,
            "cgroup": execution.cgroup,  # "v2", "v1", "none" (rlimits only); null: nothing ran
            "allow_network": settings.limits.allow_network,
            "evalenv": execution.env_description(),
            "backend": execution.backend_description(),
            "limits": asdict(settings.limits),
            "timeout_per_task_s": execution.timeout_per_task_s,
            "min_time_limit_s": settings.min_time_limit_s,
            **self.style.metadata(),
            "n_tasks": len(self.tasks),
        }

    # -- ground truth ----------------------------------------------------------------------

    def ground_truth(self) -> tuple[GroundTruth, Isolation]:
        """Ground-truth verdicts for the selected tasks, from the cache where it has them
        (per dataset hash and environment), running only what it lacks."""
        return self.style.ground_truth()

    def expected_outputs(self, *, rerun: bool = False) -> tuple[ExpectedOutputs, Isolation]:
        """A differential benchmark's expected outputs (see JudgedStyle.expected_outputs)."""
        if not isinstance(self.style, JudgedStyle):
            raise TypeError(f"{self.settings.benchmark} has no expected outputs")
        return self.style.expected_outputs(rerun=rerun)

    def run_ground_truth(self, output_dir: Path) -> GroundTruthOutcome:
        """The official --check-gt-only: re-run every canonical solution (never answered from
        the cache), write ground_truth.json and refresh the cache.

        An interrupted run resumes from a journal in `output_dir`, deleted once the run is done,
        so the next run starts afresh.
        """
        output_dir.mkdir(parents=True, exist_ok=True)
        journal_path = output_dir / ".ground_truth.journal.sqlite"
        runs = self.settings.runs
        truths, isolation = stability.repeat_ground_truth(
            self.style.rerun_ground_truth, journal_path, runs
        )
        truth = truths[0]
        extra = None
        if runs > 1:  # a stability run: unstable references are quarantined from now on
            extra = {"stability": stability.reference_stability(truths)}
            stability.save_quarantine(self.execution, extra["stability"])
        path = write_ground_truth(
            output_dir / GROUND_TRUTH_FILE, truth.tasks, self._run_metadata(isolation), extra=extra
        )
        for run in range(1, runs + 1):
            for leftover in output_dir.glob(
                stability.journal_for_run(journal_path, run).name + "*"
            ):
                leftover.unlink()
        return GroundTruthOutcome(
            path=path,
            ground_truth=truth,
            isolation=isolation,
            stability=extra["stability"] if extra else None,
        )

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
        # a corrected release takes the original's sample files: samples for the tasks it
        # excluded are skipped, never scored
        original = self.benchmark.corrects(self.loaded.version)
        known = all_ids | set(original.excluded if original is not None else ())
        # a benchmark may take its official tools' answer files as they are (SWE-bench's
        # predictions); anything else is a passbench sample file
        own = self.benchmark.read_samples(samples_path, known)
        samples = own if own is not None else read_samples(samples_path, known_task_ids=known)
        excluded = tuple(
            sorted({s.task_id for s in samples if s.task_id not in all_ids}, key=_task_order)
        )
        if excluded:
            self.progress.warn(
                f"samples of {len(excluded)} tasks skipped: {self.settings.benchmark} "
                f"{self.loaded.version} excludes {', '.join(excluded)}"
            )
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
        journal = journal_path(samples_path, target)
        run = self.style.verdicts(samples, codes, selected, journal)
        repeats = stability.repeat_sample_runs(
            self.style, samples, codes, selected, journal, self.settings.runs
        )
        truth = run.ground_truth

        isolation = weakest(run.isolation, *(repeat.isolation for repeat in repeats))
        metadata = self._run_metadata(isolation)
        metadata["samples_file"] = str(samples_path)
        metadata["missing_tasks"] = list(missing)
        if excluded:
            metadata["excluded_tasks"] = list(excluded)
        entries = []
        for sample, code, (result, fields) in zip(samples, codes, run.verdicts, strict=True):
            entry = sample_entry(sample, code, result)
            language = self.benchmark.language_of(selected[sample.task_id])
            # the tasks of one benchmark in several languages: reports group by it
            if language != self.benchmark.info.programming_language:
                entry["language"] = language
            entry.update(fields)
            entries.append(entry)
        # a benchmark whose references must pass a self-check (CWEval's oracles) leaves the
        # tasks that fail it out of every score
        quarantined = (
            truth.failures()
            if truth is not None and self.benchmark.info.quarantine_failed_references
            else {}
        )
        # references a stability run of the ground truth found unstable (--ground-truth --runs)
        unstable = {
            task_id: why
            for task_id, why in stability.load_quarantine(self.execution).items()
            if task_id in selected and task_id not in quarantined
        }
        quarantined = {**quarantined, **unstable}
        runs_block = (
            stability.add_run_counts(entries, run, repeats, left_out=quarantined)[0]
            if repeats
            else None
        )
        scored = [entry for entry in entries if entry["task_id"] not in quarantined]
        counts: dict[str, tuple[int, int]] = {}
        for entry in scored:
            n, c = counts.get(entry["task_id"], (0, 0))
            counts[entry["task_id"]] = (n + 1, c + (entry["status"] == "pass"))
        scores = pass_at_k_table(counts, self.settings.pass_k)
        extra: dict[str, Any] = {"gt_failures": truth.failures()} if truth else {}
        if quarantined:
            extra["quarantined_tasks"] = quarantined
            extra["score_denominator"] = (
                f"{len(counts)} tasks: the tasks with samples, less {len(quarantined)} "
                "quarantined (left out of numerator and denominator)"
            )
        if runs_block is not None:
            extra["stability"] = runs_block
        if self.settings.epochs > 1:
            extra["epochs"] = epoch_block(scored, self.settings.epochs)
        # more scores than pass@k (CWEval: func@k, func-sec@k, secure_given_functional)
        own_scores = self.benchmark.extra_scores(scored, self.settings.pass_k)
        extra.update(own_scores)
        eval_path, pass_path = result_paths(target, stem)
        write_eval_results(eval_path, entries, metadata, extra=self.style.eval_results_extra())
        write_pass_at_k(
            pass_path,
            scores,
            metadata,
            model=_named_model(samples) or model_name(stem, self.settings.benchmark),
            split=self.settings.split,
            subset=self.settings.subset,
            calibrated=self.settings.calibrated,
            gt_pass_rate=truth.pass_rate if truth else None,
            failed_tasks=truth.failed_tasks if truth else [],
            n_tasks=len(counts),
            n_samples=len(samples),
            extra=extra or None,
        )
        # a benchmark whose official tool has its own result file writes it beside ours
        self.benchmark.write_official_results(
            eval_path, samples, codes, [v for v, _ in run.verdicts], selected
        )
        return EvaluationOutcome(
            eval_results_path=eval_path,
            pass_at_k_path=pass_path,
            pass_at_k=scores,
            # the scores (fractions, None when undefined), not the counts kept beside them
            extra_scores={k: v for k, v in own_scores.items() if v is None or isinstance(v, float)},
            quarantined=quarantined,
            n_tasks=len(counts),
            n_samples=len(samples),
            missing_tasks=missing,
            excluded_tasks=excluded,
            ground_truth=truth,
            isolation=isolation,
            reused=run.reused,
            stability=runs_block,
            epochs=extra.get("epochs"),
        )


def journal_path(samples_path: Path, output_dir: Path) -> Path:
    """Where the evaluation of `samples_path` into `output_dir` journals its verdicts."""
    return output_dir / f".{sample_file_stem(samples_path)}.journal.sqlite"


def epoch_block(entries: Sequence[Mapping[str, Any]], epochs: int) -> dict[str, Any]:
    """pass@1 per epoch and across epochs (core/stability.py), for the pass@k file: epoch e
    holds each task's sample indices [e * n, (e + 1) * n), n the samples per task per epoch."""
    highest = max((int(entry.get("sample_index", 0)) for entry in entries), default=0)
    per_epoch_n = max(1, -(-(highest + 1) // epochs))  # ceil: n samples per task per epoch
    rows = [
        (str(e["task_id"]), int(e.get("sample_index", 0)), e["status"] == "pass") for e in entries
    ]
    score = epoch_score(per_epoch_pass_at_1(rows, epochs, per_epoch_n))
    return {"samples_per_epoch": per_epoch_n, **score.to_json()}


def _named_model(samples: Sequence[Sample]) -> str | None:
    """The one model every answer names (SWE-bench predictions' `model_name_or_path`): the
    run is that model's whatever its file is called; None when answers name none or several."""
    named = {sample.model for sample in samples}
    return named.pop() if len(named) == 1 and None not in named else None
