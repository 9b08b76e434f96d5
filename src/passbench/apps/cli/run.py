"""`passbench run`: generate, sanitize, evaluate and summarize in one command.

It takes every option of `passbench generate` and of `passbench evaluate` (the click parameters
are shared, not copied), writes the same sample files as `generate` and the same result files as
`evaluate` (`<stem>_eval_results.json`, `<stem>_pass_at_k.json` with `gt_pass_rate`) into
--output-dir, and resumes both stages after an interruption. The work is composed in
passbench.apps.pipeline; this module only reads options and renders.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from passbench.apps.cli._tries import run_with_tries, tries_params
from passbench.apps.cli.dryrun import print_dry_run
from passbench.apps.cli.evaluate import evaluate as evaluate_command
from passbench.apps.cli.evaluate import print_run_statistics, settings_from
from passbench.apps.cli.generate import generate as generate_command
from passbench.apps.cli.generate import (
    generation_settings,
    model_config,
    output_files,
    print_generation,
    select,
    with_cache_and_progress,
)
from passbench.apps.cli.options import resolve_options
from passbench.apps.pipeline import RunOutcome, refuse_without_isolation, run_pipeline
from passbench.apps.tries import TriesSettings, check_conversation
from passbench.stages.benchmarks import check_executable

# evaluate's options that `run` does not take: it evaluates what it generated, into the
# --output-dir of generate; --tasks / --id-range / --config / --no-resume / the data and
# benchmark options are generate's (same names, one value for both stages). Its settings are
# those of the [run] table (passbench.core.settings: generate's and evaluate's keys).
_NOT_FROM_EVALUATE = {"samples", "ground_truth", "output_dir"}
_NOT_FROM_GENERATE = {"output"}  # `run` names its files officially, in --output-dir


def _shared_params() -> list[click.Parameter]:
    params = [p for p in generate_command.params if p.name not in _NOT_FROM_GENERATE]
    taken = {p.name for p in params}
    params += [
        p
        for p in evaluate_command.params
        if p.name not in taken and p.name not in _NOT_FROM_EVALUATE
    ]
    return params


@click.command(params=_shared_params() + tries_params())  # --dry-run and --prices: generate's
@click.pass_context
def run(ctx: click.Context, /, dry_run: bool, price_file: Path | None, **options: Any) -> None:
    """Generate samples, sanitize them, evaluate them and report pass@k, in one command."""
    console = Console(stderr=True)
    resolved = resolve_options(ctx, "run", options)
    config = model_config(options, resolved.config)
    selection = select(resolved, options)
    if dry_run:
        # the requests of every epoch: --epochs N asks N times --n-samples per task
        generation = generation_settings(resolved, options, config, selection.split)
        generation = replace(generation, n_samples=generation.n_samples * resolved["epochs"])
        print_dry_run(config, list(selection.tasks), generation, price_file)
        if resolved["tries"] > 1:
            click.echo(
                f"--tries {resolved['tries']}: the follow-up requests of failing samples (up to "
                f"{resolved['tries'] - 1} more per sample, each with the answer and its test "
                "output) are not counted: they depend on the tests' verdicts"
            )
        return
    check_executable(selection.benchmark)  # before any request: nothing could be evaluated
    settings = replace(
        settings_from(resolved, options),
        benchmark=selection.benchmark.info.name,
        version=selection.loaded.version,
        split=selection.split,
        subset=selection.loaded.subset,
        task_ids=tuple(task.task_id for task in selection.tasks),
        id_range=None,  # applied by select(): task_ids are the chosen tasks
    )
    # before generating: the samples could not be evaluated
    refuse_without_isolation(settings, resolved.paths)
    # --epochs N: N independent generations of --n-samples each, numbered on (epoch e holds
    # sample indices [e * n, (e + 1) * n)), so every epoch resumes like any run
    epochs = settings.epochs
    generation = generation_settings(resolved, options, config, selection.split)
    generation = replace(generation, n_samples=generation.n_samples * epochs)
    files = output_files(resolved, options, config, selection, None, generation.n_samples)
    tries = TriesSettings(resolved["tries"], resolved["feedback_lines"] or None)
    check_conversation(generation, tries.tries)
    if tries.tries > 1:
        if epochs > 1:
            raise click.UsageError("--tries and --epochs are one at a time: choose one")
        run_with_tries(resolved, options, generation, settings, files, tries, _print_summary)
        return
    outcome = with_cache_and_progress(
        resolved,
        options,
        lambda cache, progress: run_pipeline(
            generation,
            settings,
            resolved.paths,
            files,
            output_dir=resolved["output_dir"],
            cache=cache,
            progress=progress,
        ),
    )
    print_generation(console, outcome.generation, len(selection.tasks))
    _print_summary(Console(), outcome)


def _print_summary(console: Console, outcome: RunOutcome) -> None:
    summary = outcome.summary
    evaluation = outcome.evaluation
    console.print(
        f"[bold]{summary.n_samples} samples over {summary.n_tasks} tasks[/], "
        f"isolation: {evaluation.isolation.value}"
    )
    if summary.gt_pass_rate is not None:
        colour = "green" if summary.gt_pass_rate > 0.99 else "red"
        console.print(f"Ground-truth pass rate: [{colour}]{summary.gt_pass_rate:.3f}[/]")
    console.print(
        f"passed {summary.passed}, failed tests {summary.test_failures}, "
        f"extraction failures {summary.extraction_failures}, "
        f"no answer (truncated) {summary.truncated}"
    )
    if evaluation.missing_tasks:
        console.print(f"[yellow]{len(evaluation.missing_tasks)} tasks have no sample[/]")
    for name, value in summary.pass_at_k.items():
        console.print(f"{name}:\t[green]{value:.3f}[/]")
    print_run_statistics(console, evaluation)
    console.print(f"Wrote {evaluation.eval_results_path}\nWrote {evaluation.pass_at_k_path}")
