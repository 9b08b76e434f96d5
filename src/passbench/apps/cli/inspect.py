"""`passbench inspect`: read a result file and report on it, without re-running anything."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from passbench.analysis.report.analysis import Options, filter_tasks, inspect_run, task_detail
from passbench.analysis.report.exports import (
    detail_dict,
    detail_markdown,
    inspection_dict,
    inspection_markdown,
    languages_markdown,
    tasks_csv,
    to_json,
)
from passbench.analysis.security.resultfile import SecurityResult
from passbench.apps.cli.options import (
    config_option,
    data_settings,
    date_window,
    model_cutoff_option,
    report_options,
    resolve_options,
    window_options,
)
from passbench.core.errors import InputError, UnknownNameError
from passbench.core.settings import Resolved
from passbench.stages.benchmarks import windows as dates
from passbench.stages.results import load_results, results_stem
from passbench.stages.results.taskinfo import load_catalog

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", "json", "csv", "markdown", "html")
STATUSES = ("pass", "fail", "timeout")


def scoring_options(resolved: Resolved) -> Options:
    """The scoring settings of `inspect` or `compare` (checked by passbench.core.settings)."""
    return Options(
        ks=resolved["pass_k"],
        resamples=resolved["bootstrap"],
        seed=resolved["seed"],
        confidence=resolved["confidence"],
    )


def scoring_flags(command: F) -> F:
    """--pass-k, --bootstrap, --seed, --confidence: shared with `passbench compare`."""
    for option in reversed(
        [
            click.option(
                "--pass-k", help="k values to score, re-computed from the stored verdicts [1,5,10]."
            ),
            click.option(
                "--bootstrap",
                type=int,
                help="Bootstrap resamples (over tasks) for confidence intervals [2000].",
            ),
            click.option(
                "--seed",
                type=int,
                help="Seed of the bootstrap; the same seed gives the same intervals [0].",
            ),
            click.option(
                "--confidence", type=float, help="Confidence level of the intervals [0.95]."
            ),
            config_option,
        ]
    ):
        command = option(command)
    return command


def data_flags(command: F) -> F:
    for option in reversed(
        [
            click.option(
                "--data-dir",
                type=click.Path(file_okay=False, path_type=Path),
                help="Benchmark data folder (env: PASSBENCH_DATA_DIR).",
            ),
            click.option(
                "--dataset-version",
                help="Dataset version of the run when the file does not say (default v0.1.4).",
            ),
        ]
    ):
        command = option(command)
    return command


@click.command()
@click.argument("results", type=click.Path(path_type=Path), nargs=-1, required=True)
@click.option(
    "--pass-at-k",
    "pass_at_k_file",
    type=click.Path(path_type=Path),
    help="The run's _pass_at_k.json (default: the sibling of RESULTS, when present).",
)
@report_options(
    FORMATS,
    "Write here instead of the terminal (html: default <stem>_report.html beside RESULTS).",
)
@click.option(
    "--task",
    "task_id",
    help="Show one task in full: every sample, failing tests, solution, canonical solution, tests.",
)
@click.option(
    "--status",
    multiple=True,
    type=click.Choice(STATUSES),
    help="List tasks with a sample of this status (repeatable).",
)
@click.option(
    "--category",
    multiple=True,
    help=(
        "List tasks with a failure of this category, label or exception type: "
        "timeout, exception, exception:KeyError, KeyError (repeatable)."
    ),
)
@click.option("--lib", multiple=True, help="List tasks using this library (repeatable).")
@click.option(
    "--security",
    "security_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A `passbench security` result file on this run (default: <stem>_security.json "
    "beside RESULTS, when present): its figures are shown too.",
)
@click.option("--limit", type=int, help="Task rows shown in the terminal (0: all) [20].")
@click.option(
    "--exclude-contaminated",
    "overlap_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help=(
        "A `passbench contamination overlap` result file: pass@1 with and without the tasks "
        "it flags; the rest of the report covers the clean tasks."
    ),
)
@window_options
@model_cutoff_option
@scoring_flags
@data_flags
@click.pass_context
def inspect(
    ctx: click.Context,
    /,
    results: tuple[Path, ...],
    pass_at_k_file: Path | None,
    output_format: str,
    output: Path | None,
    task_id: str | None,
    status: tuple[str, ...],
    category: tuple[str, ...],
    lib: tuple[str, ...],
    overlap_file: Path | None,
    security_file: Path | None,
    **flags: Any,
) -> None:
    """Report on RESULTS, an _eval_results.json from passbench or the official evaluator, or
    LiveCodeBench's *_eval_all.json.

    pass@k with confidence intervals, failures by category, scores by domain and library, the
    Hard subset, and every task's verdicts. Reads stored results only: nothing is re-run.
    A LiveCodeBench run also gets pass@1 by contest-date window (--since / --until: the
    window's beside every problem's) and by difficulty; the rest of the report covers the
    window's problems. --model-cutoff DATE is the window after a model's training cutoff.

    Several RESULTS: the runs with their language and, when they are in more than one
    language, pass@1, counts and MultiPL-E's statuses by language.
    """
    window = date_window(flags)
    resolved = resolve_options(ctx, "inspect", flags)
    options = scoring_options(resolved)
    limit: int = resolved["limit"]
    if len(results) > 1:
        if (
            task_id
            or status
            or category
            or lib
            or pass_at_k_file
            or window.active
            or overlap_file
            or security_file
        ):
            raise InputError(
                "--task, --status, --category, --lib, --pass-at-k, --security, --since, --until, "
                "--model-cutoff and --exclude-contaminated read one RESULTS file",
                field="RESULTS",
            )
        _several(results, output_format, output)
        return
    full_run = load_results(results[0], pass_at_k_file)
    if window.cutoff is not None:
        dates.require_dates(full_run, "model-cutoff")
    run = dates.restrict_to_window(full_run, window)
    windows = None
    if dates.is_dated(full_run):  # a benchmark whose tasks carry contest dates
        windows = dates.window_scores(dates.dated_tasks(full_run), window)
    catalog = load_catalog(
        run.benchmark, resolved["dataset_version"] or run.dataset_version, data_settings(resolved)
    )
    exclusion = None
    if overlap_file is not None:
        from passbench.analysis.contamination import read_contaminated
        from passbench.analysis.report import contamination as contam

        flagged, overlap = read_contaminated(overlap_file)
        contam.check_benchmark(run, overlap, overlap_file)
        exclusion = contam.exclusion_scores(run, flagged)
        run, catalog = contam.without_tasks(run, catalog, flagged, overlap_file)
    inspection = inspect_run(run, catalog, options)
    security = _security(results[0], security_file)
    from passbench.analysis.report import stability as run_stats

    statistics = run_stats.run_statistics(full_run)

    if task_id is not None:
        detail = task_detail(run, inspection, catalog, task_id)
        if detail is None:
            raise UnknownNameError(
                f"no task {task_id!r} in these results", path=run.path, field="--task"
            )
        if output_format == "json":
            _emit(to_json(detail_dict(detail)), output)
        elif output_format == "markdown":
            _emit(detail_markdown(detail), output)
        elif output_format == "table":
            from passbench.analysis.report.terminal import detail_view

            _print(detail_view(detail), output)
        else:
            raise InputError(
                f"--task shows one task as table, json or markdown, not {output_format}",
                field="--format",
            )
        return

    filtered = bool(status or category or lib)
    rows = filter_tasks(inspection.tasks, statuses=status, categories=category, libs=lib)
    if output_format == "json":
        document = inspection_dict(inspection, rows)
        if security is not None:
            document["security"] = {
                "file": str(security.path),
                "tools": security.tools,
                **security.summary.to_json(),
            }
        if windows is not None:
            # keyed by the benchmark's name, as the file format has always had it
            key = full_run.benchmark or "windows"
            document[key] = dates.scores_dict(full_run.path, windows)
        if exclusion is not None and overlap_file is not None:
            document["contamination"] = contam.exclusion_dict(overlap_file, overlap, exclusion)
        document.update(run_stats.statistics_dict(statistics))  # task set, flaky, epochs
        _emit(to_json(document), output)
    elif output_format == "csv":
        _emit(tasks_csv(rows), output)
    elif output_format == "markdown":
        text = inspection_markdown(inspection, rows)
        if security is not None:
            from passbench.analysis.report.security import security_markdown

            text += "\n" + security_markdown(security.summary)
        if not statistics.empty:
            text += "\n" + run_stats.statistics_markdown(statistics)
        _emit(text, output)
    elif output_format == "html":
        from passbench.analysis.report.html import render_report

        target = output or run.path.with_name(results_stem(run.path) + "_report.html")
        html = render_report(
            run,
            inspection,
            catalog,
            security.summary if security is not None else None,
            _tools_line(security) if security is not None else "",
            statistics,
        )
        target.write_text(html, encoding="utf-8")
        click.echo(f"wrote {target}")
    else:
        from rich.console import Group

        from passbench.analysis.report.terminal import inspection_view

        view = inspection_view(inspection, rows, limit=limit, filtered=filtered)
        if exclusion is not None and overlap_file is not None:
            view = Group(contam.exclusion_view(exclusion, overlap_file), view)
        if windows is not None:
            from passbench.analysis.report.terminal import windows_view

            view = Group(windows_view(windows, _title(full_run.benchmark)), view)
        if security is not None:
            from rich.console import Group

            from passbench.analysis.report.security import summary_table

            view = Group(view, summary_table(security.summary, title=_tools_line(security)))
        if not statistics.empty:
            view = Group(view, run_stats.statistics_view(statistics, limit))
        _print(view, output)


def _title(benchmark: str | None) -> str:
    """The benchmark's title for people ("LiveCodeBench"), or its name when not registered."""
    from passbench.stages.benchmarks import benchmark_names, get_benchmark

    if benchmark is None or benchmark not in benchmark_names():
        return benchmark or "Run"
    return get_benchmark(benchmark).info.title


def _security(results: Path, given: Path | None) -> SecurityResult | None:
    """The security result file named by --security, else `<stem>_security.json` beside
    RESULTS when there is one."""
    from passbench.analysis.security import load_security
    from passbench.analysis.security.inputs import security_path_for

    if given is not None:
        return load_security(given)
    beside = security_path_for(results)
    return load_security(beside) if beside.is_file() else None


def _tools_line(security: SecurityResult) -> str:
    tools = ", ".join(f"{name} {version}" for name, version in security.tools.items())
    return f"security: {security.path.name} ({tools})"


def _several(paths: tuple[Path, ...], output_format: str, output: Path | None) -> None:
    """Several runs: the list with languages, and the breakdown by language."""
    from passbench.analysis.report.languages import language_breakdown, languages_dict, run_rows

    runs = [load_results(path) for path in paths]
    rows, scores = run_rows(runs), language_breakdown(runs)
    if output_format == "json":
        _emit(to_json(languages_dict(rows, scores)), output)
    elif output_format == "markdown":
        _emit(languages_markdown(rows, scores), output)
    elif output_format == "html":
        from passbench.analysis.report.html import render_languages_report

        target = output or paths[0].with_name("languages_report.html")
        target.write_text(render_languages_report(rows, scores), encoding="utf-8")
        click.echo(f"wrote {target}")
    elif output_format == "table":
        from passbench.analysis.report.terminal import languages_view

        _print(languages_view(rows, scores), output)
    else:
        raise InputError(
            f"several RESULTS are shown as table, json, markdown or html, not {output_format}",
            field="--format",
        )


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)


def _print(renderable: object, output: Path | None) -> None:
    if output is None:
        Console().print(renderable)
        return
    with output.open("w", encoding="utf-8") as handle:
        Console(file=handle, width=120, no_color=True).print(renderable)
    click.echo(f"wrote {output}", err=True)
