"""Click options shared by the sub-commands, and how a command resolves its settings.

Every option that feeds a setting defaults to None (or is a flag) so a command can tell a flag the
user gave from a default: config files and the environment sit between the two, and
`resolve_options` merges them all through passbench.core.settings. The help text names the effective
default.

    @click.command()
    @benchmark_option
    @subset_option
    @data_options
    @config_option
    @click.pass_context
    def command(ctx, /, **options):
        resolved = resolve_options(ctx, "tasks", options)  # the [tasks] table's settings
        loaded = get_benchmark(resolved["benchmark"]).load(
            resolved["version"], resolved["subset"], data=data_settings(resolved))
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from passbench.core.settings import Resolved, resolve
from passbench.stages.benchmarks import DEFAULT_BENCHMARK, DataSettings, benchmark_names
from passbench.stages.benchmarks.selection import (
    ID_RANGE_HELP,
    MODEL_CUTOFF_HELP,
    SINCE_HELP,
    TASKS_HELP,
    UNTIL_HELP,
    DateWindow,
    TaskSelection,
)

F = TypeVar("F", bound=Callable[..., Any])

benchmark_option: Callable[[F], F] = click.option(
    "--benchmark",
    "-b",
    type=click.Choice(benchmark_names()),
    help=f"Benchmark (default: {DEFAULT_BENCHMARK}).",
)

version_option: Callable[[F], F] = click.option(
    "--version",
    "version",
    metavar="VERSION",
    help="Dataset version (default: the benchmark's default; BigCodeBench: v0.1.4, v0.1.5).",
)

split_option: Callable[[F], F] = click.option(
    "--split",
    metavar="SPLIT",
    help="complete or instruct (instruct: BigCodeBench only; default: complete).",
)

subset_option: Callable[[F], F] = click.option(
    "--subset",
    metavar="SUBSET",
    help="full or hard (hard: BigCodeBench only; default: full).",
)

dataset_path_option: Callable[[F], F] = click.option(
    "--dataset-path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Use this task file (.jsonl or .jsonl.gz) instead of looking one up.",
)

data_dir_option: Callable[[F], F] = click.option(
    "--data-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="A folder laid out like shared/datasets, searched before the cache "
    "(env: PASSBENCH_DATA_DIR).",
)


repos_option: Callable[[F], F] = click.option(
    "--repos",
    type=click.Path(path_type=Path, file_okay=False),
    help="A folder of git repositories named <owner>__<name>.git that repository-level "
    "benchmarks (SWE-bench) read instead of cloning from GitHub (env: PASSBENCH_REPOS).",
)


def data_options(function: F) -> F:
    """--dataset-path, --data-dir and --repos."""
    return dataset_path_option(data_dir_option(repos_option(function)))


config_option: Callable[[F], F] = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Config file (default: ./passbench.toml when it exists); see docs/configuration.md.",
)

tasks_option: Callable[[F], F] = click.option("--tasks", help=TASKS_HELP)
id_range_option: Callable[[F], F] = click.option("--id-range", help=ID_RANGE_HELP)


since_option: Callable[[F], F] = click.option("--since", metavar="DATE", help=SINCE_HELP)
until_option: Callable[[F], F] = click.option("--until", metavar="DATE", help=UNTIL_HELP)


model_cutoff_option: Callable[[F], F] = click.option(
    "--model-cutoff", metavar="DATE", help=MODEL_CUTOFF_HELP
)


def window_options(function: F) -> F:
    """--since and --until (contest-date windows: passbench.stages.benchmarks.selection)."""
    return since_option(until_option(function))


def report_options(formats: tuple[str, ...], output_help: str) -> Callable[[F], F]:
    """--format (one of `formats`, the first by default) and --output/-o (`output_help`): how
    the report commands (inspect, compare, corrections) write what they show."""

    def decorate(function: F) -> F:
        output = click.option(
            "--output",
            "-o",
            type=click.Path(dir_okay=False, path_type=Path),
            help=output_help,
        )
        chosen = click.option(
            "--format",
            "output_format",
            type=click.Choice(formats),
            default=formats[0],
            show_default=True,
        )
        return chosen(output(function))

    return decorate


def selection_options(function: F) -> F:
    """--tasks, --id-range, --since and --until (passbench.stages.benchmarks.selection)."""
    return tasks_option(id_range_option(window_options(function)))


def task_selection(options: Mapping[str, Any]) -> TaskSelection:
    return TaskSelection.parse(
        options.get("tasks"), options.get("id_range"), options.get("since"), options.get("until")
    )


def date_window(options: Mapping[str, Any]) -> DateWindow:
    return DateWindow.parse(options.get("since"), options.get("until"), options.get("model_cutoff"))


def given_flags(ctx: click.Context, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options the user actually gave on the command line."""
    return {
        name: value
        for name, value in options.items()
        if value is not None
        and ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)
    }


def resolve_options(
    ctx: click.Context,
    command: str,
    options: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
) -> Resolved:
    """`command`'s settings: defaults < config file < environment < the flags given."""
    return resolve(
        command,
        flags=given_flags(ctx, options),
        environ=os.environ if environ is None else environ,
        config_path=options.get("config_path"),
        defaults={"benchmark": DEFAULT_BENCHMARK},
    )


def data_settings(resolved: Resolved) -> DataSettings:
    """Where benchmark data comes from, and whether it may be downloaded (PASSBENCH_OFFLINE)."""
    paths = resolved.paths
    return DataSettings(
        dataset_path=resolved.values.get("dataset_path"),
        data_dir=paths.data_dir,
        cache_dir=paths.cache_dir,
        mirror=paths.mirror,
        download=not paths.offline,
        repos_dir=paths.repos_dir,
    )
