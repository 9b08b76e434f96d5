"""`passbench contamination`: is a benchmark's score clean of training-data overlap?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from passbench.analysis.contamination import (
    OverlapSettings,
    check_overlap,
    overlap_document,
    task_text,
)
from passbench.apps.cli._progress import RichProgress
from passbench.apps.cli.options import (
    benchmark_option,
    config_option,
    data_options,
    data_settings,
    id_range_option,
    resolve_options,
    subset_option,
    task_selection,
    tasks_option,
    version_option,
)
from passbench.core.errors import InputError
from passbench.stages.benchmarks import get_benchmark
from passbench.stages.benchmarks.base import check_split
from passbench.stages.benchmarks.selection import select_tasks


@click.group()
def contamination() -> None:
    """Contamination checks: does a corpus contain a benchmark's tasks?"""


@contamination.command("overlap")
@click.option(
    "--corpus",
    "corpus",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="A JSONL file, a text file (either may be .gz) or a folder of code files (repeatable).",
)
@benchmark_option
@version_option
@click.option(
    "--split",
    metavar="SPLIT",
    help="Whose prompt text: instruct (BigCodeBench's check, its default there) or complete.",
)
@subset_option
@tasks_option
@id_range_option
@click.option(
    "--include",
    multiple=True,
    metavar="PATTERN",
    help="In a folder, only files matching this pattern, e.g. '*.py' (repeatable).",
)
@click.option(
    "--field",
    help="The JSONL field that holds a document (default: content, else text).",
)
@click.option(
    "-n",
    "--n",
    "ns",
    multiple=True,
    type=click.IntRange(min=1),
    help="n-gram size, repeatable; the first decides `contaminated` [10 and 13].",
)
@click.option(
    "--min-shared",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Distinct shared n-grams that make a task contaminated (BigCodeBench: 1).",
)
@click.option(
    "--lcs-min",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Shortest shared run of tokens reported as a task's longest common substring.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the result file (JSON) here.",
)
@click.option("--limit", type=int, default=20, show_default=True, help="Tasks listed (0: all).")
@data_options
@config_option
@click.pass_context
def overlap(
    ctx: click.Context,
    /,
    corpus: tuple[Path, ...],
    include: tuple[str, ...],
    field: str | None,
    ns: tuple[int, ...],
    min_shared: int,
    lcs_min: int,
    output_format: str,
    output: Path | None,
    limit: int,
    **options: Any,
) -> None:
    """Which of a benchmark's tasks a corpus contains: BigCodeBench's n-gram check.

    A task is contaminated when a whitespace-token n-gram of its prompt text (n = 10 by
    default; 13 is reported beside) occurs in a corpus document. For each task: the shared
    n-grams, the longest run of tokens shared with the corpus and where it is. The corpus is
    read once, in bounded memory. See docs/contamination.md.
    """
    resolved = resolve_options(ctx, "contamination", options)
    bench = get_benchmark(resolved["benchmark"])
    split = resolved["split"] or ("instruct" if "instruct" in bench.info.splits else "complete")
    split = check_split(bench, split)
    with RichProgress() as progress:
        loaded = bench.load(
            resolved["version"], resolved["subset"], data=data_settings(resolved), progress=progress
        )
    selection = task_selection(options)
    tasks = select_tasks(loaded.tasks, selection.task_ids, selection.id_range)
    try:
        settings = OverlapSettings(tuple(ns) or (10, 13), min_shared, lcs_min)
    except ValueError as error:
        raise InputError(str(error), field="n") from None
    with RichProgress() as progress:
        report = check_overlap(
            {task.task_id: task_text(task, split) for task in tasks},
            list(corpus),
            settings,
            field=field,
            include=include,
            progress=progress,
        )
    document = overlap_document(
        report,
        {
            "benchmark": loaded.benchmark,
            "version": loaded.version,
            "split": split,
            "subset": loaded.subset,
            "dataset_sha256": loaded.sha256,
        },
    )
    text = json.dumps(document, indent=1) + "\n"
    if output is not None:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
    if output_format == "json":
        click.echo(text, nl=False)
    else:
        Console().print(_table(document, limit))


def _table(document: dict[str, Any], limit: int) -> Table:
    ns = document["n"]
    corpus = document["corpus"]
    table = Table(
        title=(
            f"{document['benchmark']} {document['version']} {document['split']}: "
            f"{len(document['contaminated'])} of {document['task_count']} tasks share a "
            f"{ns[0]}-gram with the corpus"
        ),
        title_justify="left",
        caption=(
            f"corpus {corpus['bytes'] / 1e6:.1f} MB, {corpus['files']} file(s), "
            f"{corpus['documents']} document(s), sha256 {corpus['sha256'][:12]}; "
            + ", ".join(f"{n}-gram: {p:.2f}%" for n, p in document["percent_by_n"].items())
        ),
    )
    table.add_column("task", no_wrap=True)
    for n in ns:
        table.add_column(f"shared {n}-grams", justify="right")
    table.add_column("longest shared run", justify="right")
    table.add_column("closest source")
    rows = sorted(
        document["tasks"].items(),
        key=lambda item: -item[1]["longest_common_substring"]["tokens"],
    )
    rows = [(task_id, row) for task_id, row in rows if row["longest_common_substring"]["tokens"]]
    for task_id, row in rows[: limit or None]:
        lcs = row["longest_common_substring"]
        source = lcs["source"]
        where = f"{source['path']}:{source['record'] or source['line']}" if source else ""
        table.add_row(
            task_id,
            *(f"{row['shared'][str(n)]} of {row['ngrams'][str(n)]}" for n in ns),
            f"{lcs['tokens']} tokens",
            where,
        )
    return table
