"""`passbench run --tries N`: the options and the rendering of a multi-turn run (the work is
done in passbench.apps.tries)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click
from rich.console import Console

from passbench.apps.cli.generate import print_generation, with_cache_and_progress
from passbench.apps.pipeline import GenerationSettings, RunOutcome, SampleFiles
from passbench.apps.tries import TriesOutcome, TriesSettings, run_tries
from passbench.core.settings import Resolved
from passbench.stages.evaluate import EvaluateSettings


def tries_params() -> list[click.Parameter]:
    """`run`'s own options: the tries of a multi-turn run (docs/run.md)."""
    return [
        click.Option(
            ["--tries"],
            type=click.IntRange(min=1),
            help="Tries per sample (default 1): after each, every failing sample is asked "
            "again with its test output, as Aider's benchmark does; chat models only.",
        ),
        click.Option(
            ["--feedback-lines"],
            type=click.IntRange(min=0),
            help="Lines of test output a follow-up shows (default 0: every line, as Aider).",
        ),
    ]


def run_with_tries(
    resolved: Resolved,
    options: Mapping[str, Any],
    generation: GenerationSettings,
    settings: EvaluateSettings,
    files: SampleFiles,
    tries: TriesSettings,
    print_summary: Callable[[Console, RunOutcome], None],
) -> None:
    """`run` with `--tries` above 1: every try, then what each did and the pass rates."""
    outcome = with_cache_and_progress(
        resolved,
        options,
        lambda cache, progress: run_tries(
            generation,
            settings,
            resolved.paths,
            files,
            tries,
            output_dir=resolved["output_dir"],
            cache=cache,
            progress=progress,
        ),
    )
    console = Console(stderr=True)
    first = outcome.tries[0].run
    print_generation(console, first.generation, first.evaluation.n_tasks)
    _print_tries(console, outcome)
    print_summary(Console(), outcome.tries[-1].run)
    _print_pass_rates(Console(), outcome)


def _print_tries(console: Console, outcome: TriesOutcome) -> None:
    """One line per later try: what was asked again, carried and kept, and its score."""
    for attempt in outcome.tries[1:]:
        generation, summary = attempt.run.generation, attempt.run.summary
        kept = (
            f", {generation.kept_samples} kept from an earlier run"
            if generation.kept_samples
            else ""
        )
        console.print(
            f"Try {attempt.attempt}: {generation.new_samples} failing samples asked again with "
            f"their test output, {attempt.carried} passing ones carried{kept}: "
            f"{generation.usage.summary()}; passed {summary.passed}, failed tests "
            f"{summary.test_failures}, extraction failures {summary.extraction_failures}, "
            f"no answer (truncated) {summary.truncated}"
        )
        console.print(f"Wrote {generation.files.raw}\nWrote {generation.files.sanitized}")


def _print_pass_rates(console: Console, outcome: TriesOutcome) -> None:
    for name, value in outcome.pass_rates.items():
        console.print(f"{name}:\t[green]{value:.3f}[/]")
