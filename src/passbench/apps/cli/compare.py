"""`passbench compare`: is run B better than run A, or is the difference noise?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console, Group
from rich.text import Text

from passbench.analysis.report.analysis import inspect_run
from passbench.analysis.report.compare import RULES, compare_all, unique_names
from passbench.analysis.report.compare_output import compare_json, compare_markdown, compare_view
from passbench.analysis.report.leaderboard import (
    build_leaderboard,
    leaderboard_csv,
    leaderboard_json,
    leaderboard_markdown,
)
from passbench.analysis.report.noise import noise_for_pairs
from passbench.analysis.report.side_by_side import (
    by_language,
    side_by_side_json,
    side_by_side_markdown,
    side_by_side_tables,
    tries_comparison,
)
from passbench.apps.cli.inspect import data_flags, scoring_flags, scoring_options
from passbench.apps.cli.options import (
    data_settings,
    date_window,
    model_cutoff_option,
    report_options,
    resolve_options,
    window_options,
)
from passbench.core.errors import InputError
from passbench.core.taskset import TaskSetIdentity, check_same_task_set, identity_from_meta
from passbench.stages.benchmarks import DataSettings, benchmark_names, get_benchmark
from passbench.stages.benchmarks import windows as dates
from passbench.stages.results import RunResults, load_results
from passbench.stages.results.taskinfo import TaskCatalog, load_catalog

FORMATS = ("table", "json", "markdown", "leaderboard-md", "leaderboard-csv", "leaderboard-json")
_LEADERBOARD_SUFFIXES = {
    ".md": "leaderboard-md",
    ".markdown": "leaderboard-md",
    ".csv": "leaderboard-csv",
    ".json": "leaderboard-json",
}


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@report_options(FORMATS, "Write the comparison here instead of the terminal.")
@click.option(
    "--leaderboard",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a leaderboard of all runs here (.md, .csv or .json).",
)
@click.option(
    "--rule",
    type=click.Choice(RULES),
    help="For McNemar's test a task is solved when most samples pass (majority) or one does "
    "[majority].",
)
@click.option(
    "--limit",
    type=int,
    help="Differing tasks listed per pair (0: none in the terminal, all in markdown) [20].",
)
@window_options
@model_cutoff_option
@scoring_flags
@data_flags
@click.pass_context
def compare(
    ctx: click.Context,
    /,
    results: tuple[Path, ...],
    output_format: str,
    output: Path | None,
    leaderboard: Path | None,
    **flags: Any,
) -> None:
    """Compare runs: per-task agreement, pass@1 difference with a paired bootstrap interval,
    McNemar's exact test, and a plain verdict on whether the difference is noise.

    RESULTS are two or more _eval_results.json files (passbench's or the official
    evaluator's); every pair is compared on the tasks both evaluated. Runs may have different
    numbers of samples per task: per-task pass rates are compared. --since / --until keep
    the tasks of a contest-date window (LiveCodeBench runs); --model-cutoff DATE the tasks
    after a model's training cutoff.
    """
    if len(results) < 2 and output_format not in FORMATS[3:] and leaderboard is None:
        raise InputError("give at least two result files to compare", field="RESULTS")
    resolved = resolve_options(ctx, "compare", flags)
    options = scoring_options(resolved)
    rule: str = resolved["rule"]
    limit: int = resolved["limit"]
    window = date_window(flags)
    loaded = [load_results(path) for path in results]
    # runs of different task sets (another version, other bytes) are never ranked together
    identities = [(str(run.path.name), identity_from_meta(run.meta)) for run in loaded]
    for warning in check_same_task_set(identities, task_family):
        click.echo(f"warning: {warning}", err=True)
    if window.cutoff is not None:
        for run in loaded:
            dates.require_dates(run, "model-cutoff")
    runs = [dates.restrict_to_window(run, window) for run in loaded]
    pairs = compare_all(runs, options, rule)
    # generation (epochs) and execution (flaky verdicts) noise, apart from task sampling
    noises = noise_for_pairs(runs, pairs, options.confidence)
    names = unique_names(runs)
    # beside the pairs: pass@1 per language (runs of several languages) and after each try
    languages = by_language(names, runs)
    tries = tries_comparison(names, runs)

    boards: dict[str, str] = {}
    if output_format.startswith("leaderboard-") or leaderboard is not None:
        rows = build_leaderboard(
            _summaries(runs, options, data_settings(resolved), resolved["dataset_version"]), pairs
        )
        settings = {
            "pass_k": list(options.ks),
            "bootstrap": options.resamples,
            "seed": options.seed,
            "confidence": options.confidence,
            "rule": rule,
        }
        boards = {
            "leaderboard-md": leaderboard_markdown(rows, options.confidence),
            "leaderboard-csv": leaderboard_csv(rows),
            "leaderboard-json": leaderboard_json(rows, settings),
        }
    if leaderboard is not None:
        kind = _LEADERBOARD_SUFFIXES.get(leaderboard.suffix.lower())
        if kind is None:
            raise InputError(
                "name a .md, .csv or .json file", path=leaderboard, field="--leaderboard"
            )
        leaderboard.write_text(boards[kind], encoding="utf-8")
        click.echo(f"wrote {leaderboard}", err=True)

    if output_format in boards:
        _emit(boards[output_format], output)
    elif output_format == "json":
        described = [_run_dict(name, run, options) for name, run in zip(names, runs, strict=True)]
        document = json.loads(compare_json(described, pairs))
        for pair_dict, noise in zip(document["pairs"], noises, strict=True):
            pair_dict["run_to_run_noise"] = noise.to_json()
        document.update(side_by_side_json(names, languages, tries))
        _emit(json.dumps(document, indent=2, ensure_ascii=False) + "\n", output)
    elif output_format == "markdown":
        notes = [f"- {p.a} vs {p.b}: {n.summary}" for p, n in zip(pairs, noises, strict=True)]
        text = compare_markdown(pairs, limit)
        extras = side_by_side_markdown(names, languages, tries)
        text += "\n## Run-to-run noise\n\n" + "\n".join(notes) + "\n"
        _emit(text + ("\n" + extras if extras else ""), output)
    else:
        view = Group(
            compare_view(pairs, limit),
            *(
                Text(f"Run-to-run noise, {p.a} vs {p.b}: {n.summary}")
                for p, n in zip(pairs, noises, strict=True)
            ),
            *(
                Text(shown) if isinstance(shown, str) else shown
                for shown in side_by_side_tables(names, languages, tries)
            ),
        )
        if output is None:
            Console().print(view)
        else:
            with output.open("w", encoding="utf-8") as handle:
                Console(file=handle, width=120, no_color=True).print(view)


def task_family(identity: TaskSetIdentity) -> str:
    """The tasks a task set is a version of: a corrected re-release (BigCodeBench+) is a
    version of the benchmark it corrects, so the two are never ranked together."""
    if identity.benchmark not in benchmark_names():
        return identity.benchmark
    original = get_benchmark(identity.benchmark).corrects(identity.version)
    return original.benchmark if original is not None else identity.benchmark


def _summaries(
    runs: list[RunResults], options: Any, data: DataSettings, dataset_version: str | None
) -> list[tuple[str, Any]]:
    catalogs: dict[tuple[str | None, str | None], TaskCatalog] = {}
    summaries = []
    for name, run in zip(unique_names(runs), runs, strict=True):
        key = (run.benchmark, dataset_version or run.dataset_version)
        if key not in catalogs:
            catalogs[key] = load_catalog(key[0], key[1], data)
        summaries.append((name, inspect_run(run, catalogs[key], options).summary))
    return summaries


def _run_dict(name: str, run: RunResults, options: Any) -> dict[str, Any]:
    from passbench.core import scoring
    from passbench.stages.benchmarks import benchmark_language

    counts = run.counts()
    return {
        "name": name,
        "path": str(run.path),
        "benchmark": run.benchmark,
        "task_set": identity.to_json() if (identity := identity_from_meta(run.meta)) else None,
        "language": benchmark_language(run.benchmark),
        "n_tasks": len(counts),
        "pass_at_k": scoring.pass_at_k_table(counts, options.ks),
    }


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
