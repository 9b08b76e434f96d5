"""`passbench evaluate`: run samples (or the canonical solutions) in the sandbox, score pass@k."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from passbench.benchmarks import get_benchmark
from passbench.cli._progress import RichProgress
from passbench.errors import InputError
from passbench.evaluate import EvaluateSettings, EvaluationOutcome, Evaluator, GroundTruthOutcome
from passbench.sandbox.base import Limits
from passbench.settings import Paths, load_config, paths_from, resolve

_DEFAULTS: dict[str, Any] = {
    "benchmark": "bigcodebench",
    "version": None,
    "split": "complete",
    "subset": "full",
    "pass_k": "1,5,10",
    "workers": 0,
    "timeout_per_task": None,
    "min_time_limit": 1.0,
    "gt_time_limit_factor": 4.0,
    "memory_mb": Limits.memory_mb,
    "tmp_mb": Limits.tmp_mb,
    "env_dir": None,
    "data_dir": None,
    "nltk_data": None,
}


def parse_pass_k(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in str(text).split(",") if part.strip())
    except ValueError:
        raise InputError(
            f"expected comma-separated integers, got {text!r}", field="pass-k"
        ) from None
    if not values or any(k < 1 for k in values):
        raise InputError(f"expected positive integers, got {text!r}", field="pass-k")
    return values


def parse_selection(tasks: str | None, id_range: str | None, prefix: str) -> tuple[str, ...] | None:
    """--tasks ID,ID and --id-range LOW-HIGH (half-open, as the official --id_range)."""
    selected: list[str] = []
    if tasks:
        for part in tasks.split(","):
            part = part.strip()
            if part:
                selected.append(part if "/" in part else f"{prefix}{part}")
    if id_range:
        match = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", id_range)
        if not match or int(match[1]) >= int(match[2]):
            raise InputError(
                f"expected LOW-HIGH with LOW < HIGH, got {id_range!r}", field="id-range"
            )
        selected.extend(f"{prefix}{n}" for n in range(int(match[1]), int(match[2])))
    return tuple(selected) if (tasks or id_range) else None


@click.command()
@click.option(
    "--benchmark", "-b", help="bigcodebench, humaneval, humanevalplus or humaneval-openai."
)
@click.option(
    "--version", "version", help="Dataset version (BigCodeBench: v0.1.4 default, v0.1.5)."
)
@click.option("--split", help="complete or instruct (BigCodeBench).")
@click.option("--subset", help="full or hard (BigCodeBench).")
@click.option(
    "--samples",
    type=click.Path(path_type=Path),
    help="Samples file (.jsonl or .jsonl.gz) with task_id and solution or completion.",
)
@click.option(
    "--ground-truth",
    is_flag=True,
    help="Evaluate the canonical solutions instead of samples (official --check-gt-only).",
)
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path),
    help="Where result files go (default: beside the samples; ./results for --ground-truth).",
)
@click.option(
    "--tasks", help="Only these task ids, comma-separated (official --selective_evaluate)."
)
@click.option("--id-range", help="Only task numbers LOW <= n < HIGH, e.g. 10-20.")
@click.option(
    "--calibrated/--no-calibrated",
    default=True,
    show_default=True,
    help="Prefix each solution with the task's code_prompt + pass, as the official tool.",
)
@click.option("--pass-k", help="k values for pass@k, e.g. 1,5,10 (those above n are skipped).")
@click.option("--workers", type=int, help="Concurrent samples (0 = from the cores).")
@click.option(
    "--timeout-per-task",
    type=float,
    help="Per-task limit in seconds (BigCodeBench: 240, the limit is max(this, GT time) + 1; "
    "HumanEval(+): 60, EvalPlus's cap on all of a program's inputs).",
)
@click.option(
    "--min-time-limit",
    type=float,
    help="Lower bound of the per-task limit (BigCodeBench) or of each input's limit "
    "(HumanEval(+), as EvalPlus); official: 1.",
)
@click.option(
    "--gt-time-limit-factor",
    type=float,
    help="HumanEval(+): each input may take this many times the canonical solution's time on "
    "it (EvalPlus: 4).",
)
@click.option("--memory-mb", type=int, help="Address-space limit per sample, MiB.")
@click.option("--tmp-mb", type=int, help="Size of each sample's private /tmp, MiB.")
@click.option(
    "--allow-network",
    is_flag=True,
    help="Let samples reach the network (off by default; recorded in the results).",
)
@click.option("--no-gt", is_flag=True, help="Skip the ground-truth check (official --no_gt).")
@click.option(
    "--no-resume", is_flag=True, help="Re-run samples the journal already has verdicts for."
)
@click.option(
    "--require-isolation",
    is_flag=True,
    help="Fail instead of falling back to rlimit-only isolation when bubblewrap can't run.",
)
@click.option("--env-dir", type=click.Path(path_type=Path), help="The evaluation environment.")
@click.option("--dataset-path", type=click.Path(path_type=Path), help="A dataset file to use.")
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    help="A folder laid out like shared/datasets (env: PASSBENCH_DATA_DIR).",
)
@click.option("--nltk-data", type=click.Path(path_type=Path), help="NLTK data for samples.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="A passbench.toml; its [evaluate] table sets defaults.",
)
@click.pass_context
def evaluate(ctx: click.Context, /, **options: Any) -> None:
    """Run samples against the tasks' tests in the sandbox and score pass@k."""
    if options["ground_truth"] == bool(options["samples"]):
        raise InputError("give exactly one of --samples FILE and --ground-truth", field="samples")
    settings, paths = evaluate_settings(ctx, options)
    console = Console()
    with RichProgress() as progress:
        evaluator = Evaluator(settings, paths, progress)
        if options["ground_truth"]:
            outcome = evaluator.run_ground_truth(options["output_dir"] or Path("results"))
        else:
            assert settings.samples is not None
            outcome_samples = evaluator.evaluate_samples(settings.samples, options["output_dir"])
    if options["ground_truth"]:
        _print_ground_truth(console, outcome, evaluator)
    else:
        _print_outcome(console, outcome_samples, evaluator)


def evaluate_settings(
    ctx: click.Context, options: Mapping[str, Any]
) -> tuple[EvaluateSettings, Paths]:
    """EvaluateSettings from the options of `evaluate` (also used by `passbench run`):
    defaults < config file's [evaluate] table < environment < flags the user gave."""
    flags = {
        name: value
        for name, value in options.items()
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
        and value is not None
    }
    config = load_config(options["config_path"], "evaluate")
    values = resolve(_DEFAULTS, config, os.environ, flags)
    paths = paths_from(os.environ, values["data_dir"])
    prefix = get_benchmark(values["benchmark"]).id_prefix
    settings = EvaluateSettings(
        benchmark=values["benchmark"],
        version=values["version"],
        split=values["split"],
        subset=values["subset"],
        samples=options.get("samples"),
        task_ids=parse_selection(options["tasks"], options["id_range"], prefix),
        calibrated=options["calibrated"],
        pass_k=parse_pass_k(values["pass_k"]),
        timeout_per_task_s=_optional_float(values["timeout_per_task"]),
        min_time_limit_s=float(values["min_time_limit"]),
        gt_time_limit_factor=float(values["gt_time_limit_factor"]),
        check_ground_truth=not options["no_gt"],
        workers=int(values["workers"]),
        limits=Limits(
            memory_mb=int(values["memory_mb"]),
            tmp_mb=int(values["tmp_mb"]),
            allow_network=options["allow_network"],
        ),
        env_dir=_optional_path(values["env_dir"]),
        dataset_path=options["dataset_path"],
        nltk_data=_optional_path(values["nltk_data"]),
        require_isolation=options["require_isolation"],
        resume=not options["no_resume"],
    )
    return settings, paths


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _optional_path(value: Any) -> Path | None:
    return None if value in (None, "") else Path(value)


def _title(evaluator: Evaluator) -> str:
    settings = evaluator.settings
    return (
        f"{settings.benchmark} {evaluator.loaded.version} "
        f"{settings.split}/{settings.subset} ({len(evaluator.tasks)} tasks)"
    )


def _print_ground_truth(
    console: Console, outcome: GroundTruthOutcome, evaluator: Evaluator
) -> None:
    truth = outcome.ground_truth
    colour = "green" if truth.pass_rate > 0.99 else "red"
    console.print(
        f"[bold]{_title(evaluator)}[/] ground truth, isolation: {outcome.isolation.value}"
    )
    console.print(
        f"Ground-truth pass rate: [{colour}]{truth.pass_rate:.4f}[/] "
        f"({len(truth.tasks) - len(truth.failed_tasks)}/{len(truth.tasks)})"
    )
    if truth.failed_tasks:
        table = Table("task", "status", "category", "reason", title="Failing canonical solutions")
        for task_id in truth.failed_tasks:
            entry = truth.tasks[task_id]
            table.add_row(task_id, entry["status"], entry["category"] or "", entry["reason"][:120])
        console.print(table)
    console.print(f"Wrote {outcome.path}")


def _print_outcome(console: Console, outcome: EvaluationOutcome, evaluator: Evaluator) -> None:
    console.print(f"[bold]{_title(evaluator)}[/], isolation: {outcome.isolation.value}")
    if outcome.ground_truth is not None:
        truth = outcome.ground_truth
        colour = "green" if truth.pass_rate > 0.99 else "red"
        console.print(f"Ground-truth pass rate: [{colour}]{truth.pass_rate:.3f}[/]")
        if truth.failed_tasks:
            console.print(f"Failed ground-truth tasks: {', '.join(truth.failed_tasks)}")
    if outcome.missing_tasks:
        console.print(f"[yellow]{len(outcome.missing_tasks)} tasks have no sample[/]")
    for name, value in outcome.pass_at_k.items():
        console.print(f"{name}:\t[green]{value:.3f}[/]")
    console.print(
        f"{outcome.n_samples} samples over {outcome.n_tasks} tasks"
        + (f" ({outcome.reused} verdicts reused from the journal)" if outcome.reused else "")
    )
    console.print(f"Wrote {outcome.eval_results_path}\nWrote {outcome.pass_at_k_path}")
