"""`passbench corrections`: a run's official and corrected pass@1 side by side.

Either two result files (or the folders holding them) of the same samples, one evaluated on a
benchmark and one on its corrected release, in any order; or `--samples FILE -b CORRECTED`,
which evaluates the samples on both first (every option of `evaluate` applies to both runs).
The work is in passbench.analysis.report.corrections; this module reads options and prints.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from passbench.analysis.report.corrections import (
    correction_report,
    load_task_diff,
    original_of,
    pair_runs,
    report_json,
    report_text,
)
from passbench.apps.cli._progress import RichProgress
from passbench.apps.cli.evaluate import evaluate as evaluate_command
from passbench.apps.cli.evaluate import evaluate_settings
from passbench.apps.cli.options import data_settings, report_options, resolve_options
from passbench.apps.pipeline import refuse_without_isolation
from passbench.core.errors import InputError
from passbench.core.runs import EVAL_RESULTS_SUFFIX
from passbench.stages.benchmarks import check_executable, get_benchmark
from passbench.stages.evaluate import Evaluator
from passbench.stages.results import load_results

FORMATS = ("table", "json")
# evaluate's options that make no sense here: the canonical solutions are not samples, and no
# benchmark with contest dates has a corrected release
_NOT_FROM_EVALUATE = {"ground_truth", "since", "until"}


def _evaluate_params() -> list[click.Parameter]:
    return [p for p in evaluate_command.params if p.name not in _NOT_FROM_EVALUATE]


@click.command(params=_evaluate_params())
@click.argument("results", nargs=-1, type=click.Path(path_type=Path))
@report_options(FORMATS, "Write the report here instead of the terminal.")
@click.option(
    "--limit", type=int, help="Changed tasks listed in the table (default and 0: all of them)."
)
@click.pass_context
def corrections(
    ctx: click.Context,
    /,
    results: tuple[Path, ...],
    output_format: str,
    output: Path | None,
    limit: int | None,
    **options: Any,
) -> None:
    """Official and corrected pass@1 of the same samples, with the tasks whose verdict
    changed and the fields the correction touched in each.

    RESULTS are two result files (or folders with one _eval_results.json each): the samples
    evaluated on a benchmark and on its corrected release, in either order. Or give
    --samples FILE with -b CORRECTED (e.g. bigcodebench-plus): the samples are evaluated on
    both first, into OUTPUT_DIR/<benchmark>/ (default: beside the samples). Tasks the
    correction excluded are listed as excluded, never as failures.
    """
    if options["samples"] is not None:
        if results:
            raise InputError("give either --samples FILE or two result files, not both")
        results = _evaluate_both(ctx, options)
    elif len(results) != 2:
        raise InputError(
            "give two result files (the same samples on a benchmark and on its corrected "
            "release) or --samples FILE -b CORRECTED",
            field="RESULTS",
        )
    pair = pair_runs(*(load_results(_results_file(path)) for path in results))
    data = replace(data_settings(resolve_options(ctx, "evaluate", options)), dataset_path=None)
    name = pair.corrected_run.benchmark
    assert name is not None  # pair_runs found its release by it
    diff = load_task_diff(name, pair.corrected_version, pair.original, data)
    report = correction_report(pair, diff)
    if output_format == "json":
        text = json.dumps(report_json(report), indent=1) + "\n"
    else:
        text = report_text(report, limit)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)


def _results_file(path: Path) -> Path:
    """`path`, or the one `_eval_results.json` in the folder `path`."""
    if not path.is_dir():
        return path
    found = sorted(path.glob(f"*{EVAL_RESULTS_SUFFIX}"))
    if len(found) != 1:
        what = "no" if not found else f"{len(found)}"
        raise InputError(
            f"{what} *{EVAL_RESULTS_SUFFIX} files in this folder: name the one to read",
            path=path,
            field="RESULTS",
        )
    return found[0]


def _evaluate_both(ctx: click.Context, options: dict[str, Any]) -> tuple[Path, Path]:
    """Evaluate the samples on the corrected release (-b) and on the release it corrects,
    each into OUTPUT_DIR/<benchmark>/; the two result files."""
    settings, paths = evaluate_settings(ctx, options)
    assert settings.samples is not None
    version, original = original_of(settings.benchmark, settings.version)
    base = settings.output_dir or settings.samples.parent
    kept = settings.task_ids
    if kept is not None:  # --tasks: the ids the correction excluded run on the original only
        kept = tuple(task for task in kept if task not in original.excluded)
    runs = (
        # --dataset-path names the corrected release's file; the original is looked up
        replace(
            settings, benchmark=original.benchmark, version=original.version, dataset_path=None
        ),
        replace(settings, version=version, task_ids=kept),
    )
    written = []
    with RichProgress() as progress:
        for run in runs:
            run = replace(run, output_dir=base / run.benchmark)
            check_executable(get_benchmark(run.benchmark))
            refuse_without_isolation(run, paths)
            outcome = Evaluator(run, paths, progress).evaluate_samples(
                settings.samples, run.output_dir
            )
            written.append(outcome.eval_results_path)
    click.echo(f"wrote {written[0]}\nwrote {written[1]}", err=True)
    return written[0], written[1]
