"""`passbench tasks`: list and show benchmark tasks."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Column, Table
from rich.text import Text

from passbench.apps.cli._progress import RichProgress
from passbench.apps.cli.options import (
    benchmark_option,
    config_option,
    data_options,
    data_settings,
    resolve_options,
    selection_options,
    split_option,
    subset_option,
    task_selection,
    version_option,
)
from passbench.core.records import Task
from passbench.core.settings import Resolved
from passbench.stages.benchmarks import (
    DEFAULT_BENCHMARK,
    Benchmark,
    LoadedBenchmark,
    benchmark_names,
    get_benchmark,
    task_language,
)
from passbench.stages.benchmarks.base import check_split
from passbench.stages.benchmarks.selection import select_tasks

_FIELDS = ("prompt", "test", "solution", "all")


@click.group()
def tasks() -> None:
    """List and show benchmark tasks."""


@tasks.command("list")
@benchmark_option
@version_option
@subset_option
@selection_options
@click.option(
    "--libs",
    multiple=True,
    metavar="LIB[,LIB]",
    help="Only tasks that use all these libraries (repeat or comma-separate), e.g. pandas.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
)
@data_options
@config_option
@click.pass_context
def list_tasks(ctx: click.Context, /, **options: Any) -> None:
    """List the tasks of a benchmark, optionally only those using some libraries."""
    resolved = resolve_options(ctx, "tasks", options)
    libs: tuple[str, ...] = options["libs"]
    output_format: str = options["output_format"]
    bench = get_benchmark(resolved["benchmark"])
    loaded = _load(bench, resolved, resolved["subset"])
    selection = task_selection(options)
    selected = select_tasks(loaded.tasks, selection.task_ids, selection.id_range)
    wanted = {lib.strip() for group in libs for lib in group.split(",") if lib.strip()}
    chosen = [task for task in selected if wanted <= set(task.libs)]
    if output_format == "json":
        click.echo(json.dumps(_listing(loaded, chosen), indent=1))
        return
    with_libs = any(task.libs for task in loaded.tasks)
    columns = [Column("task", no_wrap=True, min_width=max(len(t.task_id) for t in loaded))]
    columns.append(Column("language", no_wrap=True))
    if with_libs:
        columns.append(Column("libs", min_width=12, max_width=30))
    columns.append(Column("summary", ratio=1))
    table = Table(
        *columns,
        title=f"{bench.info.title} {loaded.version}, {loaded.subset} subset",
        caption=f"{len(chosen)} of {len(loaded)} tasks · {loaded.source}",
    )
    for task in chosen:
        lib_cell = [", ".join(task.libs)] if with_libs else []
        table.add_row(task.task_id, task_language(task), *lib_cell, summary(task, width=60))
    Console().print(table)


@tasks.command("show")
@click.argument("task_id")
@benchmark_option
@version_option
@split_option
@click.option(
    "--field",
    type=click.Choice(_FIELDS),
    default="all",
    show_default=True,
    help="prompt, test or solution print raw text (for pipes); all renders every part.",
)
@data_options
@config_option
@click.pass_context
def show_task(ctx: click.Context, /, task_id: str, **options: Any) -> None:
    """Show one task: its prompt, test code and canonical solution.

    TASK_ID is a full id (BigCodeBench/13, HumanEval/0) or a number of --benchmark's tasks.
    Without --benchmark the benchmark follows from the id's prefix.
    """
    resolved = resolve_options(ctx, "tasks", options)
    field: str = options["field"]
    bench = get_benchmark(options["benchmark"] or _benchmark_for(task_id, resolved))
    split = check_split(bench, resolved["split"])
    loaded = _load(bench, resolved, "full")
    task = loaded.get(_full_id(bench, loaded, task_id))
    texts = {
        "prompt": task.prompts[split],
        "test": task.test,
        # MultiPL-E has no reference solutions: nothing to show
        "solution": bench.canonical_code(task) if bench.info.has_reference else "",
    }
    if field != "all":
        text = texts[field]
        click.echo(text, nl=not text.endswith("\n"))
        return
    Console().print(_render(bench, loaded, task, split, texts))


def _load(bench: Benchmark, resolved: Resolved, subset: str) -> LoadedBenchmark:
    with RichProgress() as progress:  # only shows anything when a download happens
        return bench.load(
            resolved["version"], subset, data=data_settings(resolved), progress=progress
        )


def _full_id(bench: Benchmark, loaded: LoadedBenchmark, task_id: str) -> str:
    """A bare number is the task of that number among the ids starting with `id_prefix`
    (13 -> BigCodeBench/13; MultiPL-E: 0 -> HumanEval_0_has_close_elements)."""
    if not task_id.isdigit():
        return task_id
    for task in loaded.all_tasks:
        parsed = bench.parse_task_id(task.task_id)
        if parsed and parsed.prefix == bench.info.id_prefix and parsed.number == int(task_id):
            return task.task_id
    return bench.info.id_prefix + task_id  # not there: loaded.get names the data file


def _benchmark_for(task_id: str, resolved: Resolved) -> str:
    """The first registered benchmark whose ids `task_id` is one of, among those whose ids name
    them (HumanEval/0 -> humaneval); for a bare number, the configured benchmark."""
    for name in benchmark_names():
        bench = get_benchmark(name)
        if bench.info.guess_from_ids and bench.parse_task_id(task_id):
            return name
    return str(resolved["benchmark"] or DEFAULT_BENCHMARK)


def summary(task: Task, width: int = 90) -> str:
    """One line describing a task: the instruction's first line, or the docstring's."""
    if "instruct" in task.prompts:
        lines = task.prompts["instruct"].splitlines()
    else:
        prompt = task.prompts["complete"]
        start = min((i for i in (prompt.find('"""'), prompt.find("'''")) if i >= 0), default=0)
        lines = prompt[start:].replace('"""', "").replace("'''", "").splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    return first if len(first) <= width else first[: width - 1] + "…"


def _listing(loaded: LoadedBenchmark, chosen: list[Task]) -> dict[str, object]:
    return {
        "benchmark": loaded.benchmark,
        # one language, or those of a prompt set in several ("Python, C, C++")
        "language": ", ".join(dict.fromkeys(task_language(task) for task in loaded.tasks)),
        "version": loaded.version,
        "subset": loaded.subset,
        "dataset_sha256": loaded.sha256,
        "dataset_source": str(loaded.source),
        "count": len(chosen),
        "tasks": [
            {
                "task_id": task.task_id,
                "language": task_language(task),
                "entry_point": task.entry_point,
                "libs": list(task.libs),
                "summary": summary(task),
            }
            for task in chosen
        ],
    }


def _render(
    bench: Benchmark, loaded: LoadedBenchmark, task: Task, split: str, texts: dict[str, str]
) -> Group:
    facts = Table.grid(padding=(0, 2))
    facts.add_row("benchmark", f"{bench.info.title} {loaded.version}")
    facts.add_row("language", task_language(task))
    if task.entry_point:
        facts.add_row("entry point", task.entry_point)
    if "cwe_identifier" in task.metadata:  # a security prompt: the weakness it invites
        description = task.metadata.get("pattern_desc")  # CyberSecEval's; SALLM has none
        weakness = task.metadata["cwe_identifier"] + (f": {description}" if description else "")
        facts.add_row("weakness", weakness)
    if "technique" in task.metadata:  # SALLM: how it checks an answer, and the prompt's origin
        facts.add_row("technique", f"{task.metadata['technique']} ({task.metadata['source']})")
    if task.libs:
        facts.add_row("libs", ", ".join(task.libs))
    if "base_input" in task.metadata:
        facts.add_row(
            "inputs",
            f"{len(task.metadata['base_input'])} base, {len(task.metadata['plus_input'])} plus "
            f"(atol {task.metadata['atol']}); the tests compare with the canonical solution",
        )
    facts.add_row("data", str(loaded.source))
    prompt: Syntax | Text = (
        Syntax(texts["prompt"], "python") if split == "complete" else Text(texts["prompt"])
    )
    panels = [Panel(prompt, title=f"prompt ({split})", title_align="left")]
    # a benchmark without tests or references (CyberSecEval's prompts) shows neither
    if texts["test"]:
        panels.append(Panel(Syntax(texts["test"], "python"), title="test", title_align="left"))
    if texts["solution"]:
        solution = Syntax(texts["solution"], "python")
        panels.append(Panel(solution, title="canonical solution", title_align="left"))
    return Group(Text(task.task_id, style="bold"), facts, *panels)
