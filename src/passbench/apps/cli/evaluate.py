"""`passbench evaluate`: run samples (or the canonical solutions) in the sandbox, score pass@k."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from passbench.apps.cli._progress import RichProgress
from passbench.apps.cli.options import (
    config_option,
    repos_option,
    resolve_options,
    selection_options,
    task_selection,
)
from passbench.apps.pipeline import evaluate_settings as pipeline_settings
from passbench.apps.pipeline import refuse_without_isolation
from passbench.core.errors import InputError
from passbench.core.settings import Paths, Resolved
from passbench.core.settings.registry import BACKEND_NAMES
from passbench.stages.benchmarks import (
    DEFAULT_BENCHMARK,
    benchmark_names,
    check_executable,
    get_benchmark,
)
from passbench.stages.evaluate import (
    EvaluateSettings,
    EvaluationOutcome,
    Evaluator,
    GroundTruthOutcome,
)


@click.command()
@click.option(
    "--benchmark",
    "-b",
    help=f"One of: {', '.join(benchmark_names())} (default: {DEFAULT_BENCHMARK}).",
)
@click.option("--version", "version", help="Dataset version (default: the benchmark's).")
@click.option("--split", help="A split the benchmark offers (default: its first split).")
@click.option("--subset", help="A subset the benchmark offers (default: full).")
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
@selection_options
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
@click.option(
    "--tmp-mb", type=int, help="What a sample may store in its /tmp (a folder on disk), MiB."
)
@click.option(
    "--allow-network",
    is_flag=True,
    help="Let samples reach the network (off by default; recorded in the results).",
)
@click.option("--no-gt", is_flag=True, help="Skip the ground-truth check (official --no_gt).")
@click.option(
    "--runs",
    type=int,
    help="Execute every sample (or, with --ground-truth, every reference) this many times: "
    "samples whose verdicts differ are reported flaky; unstable references are quarantined. "
    "pass@k counts the first run (default 1).",
)
@click.option(
    "--epochs",
    type=int,
    help="The samples are this many independent generations per task (run: generate them): "
    "pass@1 per epoch, and their mean with a confidence interval (default 1).",
)
@click.option(
    "--no-resume", is_flag=True, help="Re-run samples the journal already has verdicts for."
)
@click.option(
    "--allow-unsandboxed",
    is_flag=True,
    help="Where bubblewrap cannot isolate samples, run them with resource limits only instead "
    "of refusing. They can then read and change your files; results say unsandboxed.",
)
@click.option(
    "--backend",
    type=click.Choice(BACKEND_NAMES),
    help="Where samples run: local (bubblewrap here, the default), remote (a passbench serve "
    "at --endpoint; token: PASSBENCH_REMOTE_TOKEN), ...: see docs/backends.md.",
)
@click.option("--endpoint", help="The remote backend's URL, e.g. http://HOST:7860/.")
@click.option("--image", help="docker/podman: the image to run; e2b: the template.")
@click.option(
    "--ray-address", help="ray: the cluster (auto, ray://HOST:10001); default RAY_ADDRESS."
)
@click.option(
    "--verify-fraction",
    type=float,
    help="Backends other than local: run this fraction of their verdicts again here and "
    "report every one that differs (0 to 1; default 0).",
)
# Refusing is the default now; the old flag is accepted so old command lines keep working.
@click.option("--require-isolation", is_flag=True, hidden=True, expose_value=False)
@click.option("--env-dir", type=click.Path(path_type=Path), help="The evaluation environment.")
@click.option("--dataset-path", type=click.Path(path_type=Path), help="A dataset file to use.")
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    help="A folder laid out like shared/datasets (env: PASSBENCH_DATA_DIR).",
)
@repos_option
@click.option("--nltk-data", type=click.Path(path_type=Path), help="NLTK data for samples.")
@config_option
@click.pass_context
def evaluate(ctx: click.Context, /, **options: Any) -> None:
    """Run samples against the tasks' tests in the sandbox and score pass@k."""
    if options["ground_truth"] == bool(options["samples"]):
        raise InputError("give exactly one of --samples FILE and --ground-truth", field="samples")
    settings, paths = evaluate_settings(ctx, options)
    check_executable(get_benchmark(settings.benchmark))  # before the isolation check
    refuse_without_isolation(settings, paths)
    console = Console()
    with RichProgress() as progress:
        evaluator = Evaluator(settings, paths, progress)
        if options["ground_truth"]:
            outcome = evaluator.run_ground_truth(settings.output_dir or Path("results"))
        else:
            assert settings.samples is not None
            outcome_samples = evaluator.evaluate_samples(settings.samples, settings.output_dir)
    if options["ground_truth"]:
        _print_ground_truth(console, outcome, evaluator)
    else:
        _print_outcome(console, outcome_samples, evaluator)


def evaluate_settings(
    ctx: click.Context, options: Mapping[str, Any]
) -> tuple[EvaluateSettings, Paths]:
    """EvaluateSettings from the options of `evaluate`: defaults < config file < environment
    < flags the user gave (passbench.core.settings)."""
    resolved = resolve_options(ctx, "evaluate", options)
    return settings_from(resolved, options), resolved.paths


def settings_from(resolved: Resolved, options: Mapping[str, Any]) -> EvaluateSettings:
    """EvaluateSettings from resolved settings (of `evaluate` or `run`) and the options that
    are not settings (samples, task selection, --no-gt, --no-resume)."""
    return pipeline_settings(
        resolved,
        task_selection(options),
        samples=options.get("samples"),
        check_ground_truth=not options["no_gt"],
        resume=not options["no_resume"],
    )


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
    if outcome.stability is not None:
        print_reference_stability(console, outcome.stability)
    console.print(f"Wrote {outcome.path}")


def print_reference_stability(console: Console, block: Mapping[str, Any]) -> None:
    """What a ground-truth stability run (--runs N) found, and which denominator scores use."""
    unstable = block["unstable_tasks"]
    colour = "yellow" if unstable else "green"
    console.print(
        f"[{colour}]{len(unstable)} unstable references over {block['runs']} runs[/] "
        "(quarantined: their tasks are left out of every later score on this setup)"
    )
    for task_id, counts in unstable.items():
        console.print(f"  {task_id}: {_counts(counts)}")
    console.print(f"Score denominator: {block['denominator']}")


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{status} {n}" for status, n in counts.items())


def print_run_statistics(console: Console, outcome: EvaluationOutcome, limit: int = 20) -> None:
    """Flaky samples (--runs) and pass@1 across epochs (--epochs), when measured."""
    block = outcome.stability
    if block is not None:
        flaky = block["flaky_samples"]
        rate = block["flaky_rate"]
        console.print(
            f"[{'yellow' if flaky else 'green'}]{len(flaky)} flaky samples[/] over "
            f"{block['runs']} runs (flaky rate {100 * (rate or 0):.1f}%; pass@k counts the "
            f"first run; pass@1 {block['pass@1_if_flaky_fail']:.3f} to "
            f"{block['pass@1_if_flaky_pass']:.3f} as they fail or pass)"
        )
        for item in flaky[:limit]:
            console.print(
                f"  {item['task_id']} #{item['sample_index']}: {_counts(item['verdicts'])}"
            )
    epochs = outcome.epochs
    if epochs is not None and epochs.get("pass@1_ci"):
        low, high = epochs["pass@1_ci"]
        console.print(
            f"pass@1 over {epochs['epochs']} epochs: [green]{epochs['pass@1_mean']:.3f}[/] "
            f"({round(100 * epochs['confidence'])}% CI {low:.3f} to {high:.3f}; per epoch "
            + ", ".join(f"{value:.3f}" for value in epochs["pass@1_per_epoch"])
            + ")"
        )


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
    if outcome.excluded_tasks:
        console.print(
            f"{len(outcome.excluded_tasks)} tasks excluded by this version (their samples are "
            f"not scored): {', '.join(outcome.excluded_tasks)}"
        )
    for name, value in outcome.pass_at_k.items():
        console.print(f"{name}:\t[green]{value:.3f}[/]")
    for name, value in outcome.extra_scores.items():
        if isinstance(value, float):
            console.print(f"{name}:\t[green]{value:.3f}[/]")
    if outcome.quarantined:
        console.print(
            f"[yellow]{len(outcome.quarantined)} tasks quarantined (their references fail the "
            f"self-check or are unstable; left out of every score): "
            f"{', '.join(outcome.quarantined)}[/]"
        )
    print_run_statistics(console, outcome)
    console.print(
        f"{outcome.n_samples} samples over {outcome.n_tasks} tasks"
        + (f" ({outcome.reused} verdicts reused from the journal)" if outcome.reused else "")
    )
    console.print(f"Wrote {outcome.eval_results_path}\nWrote {outcome.pass_at_k_path}")
