"""The official BigCodeBench evaluator's API (the `bigcode/bigcodebench-evaluator` Space's
`/predict`), answered by passbench's own evaluation.

`bigcodebench.evaluate --execution gradio --gradio_endpoint URL` calls `/predict` with 13
inputs and reads two JSON outputs; this module turns those inputs into passbench settings and
passbench's result files into those outputs. It knows nothing of HTTP (app.py does).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from passbench.apps.serve.config import ServerLimits
from passbench.core.errors import InputError
from passbench.core.progress import Progress
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator

#: The official Space's inputs, in order (gr.Interface names them by these parameters).
OFFICIAL_INPUTS = (
    "split",
    "subset",
    "samples",
    "pass_k",
    "parallel",
    "min_time_limit",
    "max_as_limit",
    "max_data_limit",
    "max_stack_limit",
    "calibrated",
    "check_gt_only",
    "no_gt",
    "selective_evaluate",
)

SPLITS = ("complete", "instruct")
SUBSETS = ("full", "hard")


@dataclass(frozen=True)
class OfficialRequest:
    """One call of `/predict`, with the official Space's defaults."""

    split: str
    subset: str
    samples: Path | None
    pass_k: str = "1,5,10"
    parallel: int = -1
    min_time_limit: float = 1.0
    max_as_limit: int = 30 * 1024
    max_data_limit: int = 30 * 1024
    max_stack_limit: int = 10
    calibrated: bool = True
    check_gt_only: bool = False
    no_gt: bool = False
    selective_evaluate: str = ""

    def check(self) -> None:
        """InputError naming the field when a value is not one the official Space accepts."""
        if self.split not in SPLITS:
            raise InputError(f"split must be one of {', '.join(SPLITS)}", field="split")
        if self.subset not in SUBSETS:
            raise InputError(f"subset must be one of {', '.join(SUBSETS)}", field="subset")
        if not self.check_gt_only and self.samples is None:
            raise InputError("no samples file was uploaded", field="samples")
        if not pass_ks(self.pass_k):
            raise InputError(f"no k values in {self.pass_k!r} (e.g. '1,5,10')", field="pass_k")
        for name in ("max_as_limit", "max_data_limit", "max_stack_limit"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be at least 1 (MiB)", field=name)
        if self.min_time_limit < 0:
            raise InputError("min_time_limit must not be negative", field="min_time_limit")


def pass_ks(text: str) -> tuple[int, ...]:
    """The k values of "1,5,10", as the official Space reads them (non-numbers are skipped)."""
    return tuple(sorted({int(k.strip()) for k in str(text).split(",") if k.strip().isdigit()}))


def selected_task_ids(text: str | None) -> tuple[str, ...] | None:
    """The Space's `selective_evaluate`: "0,1,2" (numbers, which it prefixes with
    "BigCodeBench/"); full ids are accepted too. Empty: every task.

    The official command line (python-fire) turns `--selective_evaluate 0,1,2` into a tuple,
    which reaches the server as "[0, 1, 2]"; the Space would then find no task. Brackets,
    parentheses and quotes around the items are dropped here."""
    cleaned = str(text or "").translate(str.maketrans("", "", "[]()'\""))
    ids = {item.strip() for item in cleaned.split(",") if item.strip()}
    if not ids:
        return None
    return tuple(sorted(i if "/" in i else f"BigCodeBench/{i}" for i in ids))


def evaluate_settings(
    request: OfficialRequest, base: EvaluateSettings, limits: ServerLimits
) -> EvaluateSettings:
    """The passbench settings a request stands for: the server's own (`base`: environment,
    data, network off) with the request's split, subset, limits and options."""
    workers = limits.max_workers if request.parallel < 1 else request.parallel
    if limits.max_workers > 0:
        workers = min(workers or limits.max_workers, limits.max_workers)
    memory = min(request.max_as_limit, request.max_data_limit, limits.max_memory_mb)
    return replace(
        base,
        benchmark="bigcodebench",
        split=request.split,
        subset=request.subset,
        task_ids=selected_task_ids(request.selective_evaluate),
        id_range=None,
        calibrated=bool(request.calibrated),
        pass_k=pass_ks(request.pass_k),
        min_time_limit_s=float(request.min_time_limit),
        check_ground_truth=not request.no_gt,
        workers=workers,
        limits=replace(
            base.limits,
            memory_mb=memory,
            stack_mb=min(int(request.max_stack_limit), limits.max_stack_mb),
        ),
        resume=True,
    )


def job_folder(jobs_dir: Path, request: OfficialRequest, settings: EvaluateSettings) -> Path:
    """Where one request's files go, named by what decides its verdicts: the samples' bytes and
    the settings. The same request again (a client that retried, a server restarted mid-run)
    finds its journal there and re-runs only the samples without a verdict."""
    digest = hashlib.sha256()
    if request.samples is not None:
        with request.samples.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    digest.update(json.dumps(asdict(settings), sort_keys=True, default=str).encode())
    return jobs_dir / digest.hexdigest()[:32]


def answer(
    request: OfficialRequest,
    base: EvaluateSettings,
    limits: ServerLimits,
    paths: Paths,
    jobs_dir: Path,
    progress: Progress,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The Space's two outputs for one request: the eval-results document and the pass@k
    document with `gt_pass_rate` and `failed_tasks`. Samples run in passbench's sandbox,
    never in this process."""
    request.check()
    settings = evaluate_settings(request, base, limits)
    folder = job_folder(jobs_dir, request, settings)
    folder.mkdir(parents=True, exist_ok=True)
    evaluator = Evaluator(settings, paths, progress)
    selected = [task.task_id for task in evaluator.tasks]
    if not selected:
        raise InputError(
            f"none of the task ids {request.selective_evaluate!r} is in the dataset",
            field="selective_evaluate",
        )
    if request.check_gt_only:
        truth, _ = evaluator.ground_truth()
        model = "__dummy__.jsonl"  # the Space's name for the samples it never reads
        results: dict[str, Any] = {"date": _now(), "eval": {}}
        scores: dict[str, Any] = {}
        gt_pass_rate, failed = truth.pass_rate, truth.failed_tasks
    else:
        assert request.samples is not None
        # keep the uploaded name: the model's name is read from it, as officially
        samples = folder / request.samples.name
        if not samples.exists():
            shutil.copyfile(request.samples, samples)
        outcome = evaluator.evaluate_samples(samples, folder)
        results = json.loads(outcome.eval_results_path.read_text(encoding="utf-8"))
        document = json.loads(outcome.pass_at_k_path.read_text(encoding="utf-8"))
        scores = {key: value for key, value in document.items() if key.startswith("pass@")}
        model = samples.name
        if outcome.ground_truth is not None:
            gt_pass_rate = outcome.ground_truth.pass_rate
            failed = outcome.ground_truth.failed_tasks
        else:
            # the Space without its ground truth: every task counts as failed, rate 0
            gt_pass_rate, failed = 0.0, selected
    pass_at_k = {
        **scores,
        "model": model.split("--bigcodebench-")[0],
        "split": request.split,
        "subset": request.subset,
        "calibrated": bool(request.calibrated),
        "gt_pass_rate": float(gt_pass_rate),
        "failed_tasks": list(failed),
    }
    return results, pass_at_k


def _now() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M")
