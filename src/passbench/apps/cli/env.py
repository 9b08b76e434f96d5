"""`passbench env`: build, check and locate evaluation environments."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from passbench.apps.cli._progress import RichProgress
from passbench.apps.cli.options import (
    config_option,
    data_dir_option,
    data_settings,
    resolve_options,
    task_selection,
    tasks_option,
)
from passbench.core.errors import EnvironmentError_, UnknownNameError
from passbench.core.settings import Resolved
from passbench.stages.benchmarks import TaskEnvironments, environment_benchmarks, get_benchmark
from passbench.stages.benchmarks.selection import select_tasks
from passbench.stages.evalenv import check_env, create_env, locate_env, spec_names, verify_manifest
from passbench.stages.evalenv.check import CheckItem, EnvReport
from passbench.stages.evalenv.location import env_path
from passbench.stages.evalenv.nltk_data import NLTK_DIR_NAME, missing_packages
from passbench.stages.evalenv.specs import get_spec

_NAME = click.argument("name", default="bigcodebench", type=click.Choice(spec_names()))
#: `env check`/`env create`: an environment's name, or a benchmark that builds its own per task
_ANY_NAME = click.argument("name", default="bigcodebench", metavar="NAME")
_SELECTION = (
    click.option("--version", default=None, help="The benchmark's version (per-task envs)."),
    click.option("--subset", default=None, help="Only this subset's tasks (per-task envs)."),
    tasks_option,
    data_dir_option,
)


def _selection(function: Any) -> Any:
    for option in reversed(_SELECTION):
        function = option(function)
    return function


#: `env check multipl-e`: the MultiPL-E languages' system toolchains, not an environment
_TOOLCHAINS = "multipl-e"
_PATH = click.option(
    "--path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Environment folder (env: PASSBENCH_ENV_DIR, PASSBENCH_SECURITY_ENV_DIR for security; "
    "default: the user data dir).",
)


@click.group()
def env() -> None:
    """Evaluation environments: the benchmark's libraries, in their own virtual environment
    (create, check what it lacks, verify no file changed, info)."""


@env.command()
@_ANY_NAME
@_PATH
@_selection
@click.option(
    "--python",
    "python",
    default=None,
    help="Interpreter to build from; its version picks the lock (bigcodebench: 3.10 or 3.11). "
    "Default: the version of the env already there, else the official evaluator's 3.10 when "
    "it is on the machine (PATH, pyenv, uv), else 3.11.",
)
@click.option(
    "--nltk-data",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Local NLTK data folder to copy from (default: nltk_data/ in PASSBENCH_DATA_DIR).",
)
@click.option("--no-download", is_flag=True, help="Do not try NLTK's downloader.")
@click.option("--force", is_flag=True, help="Rebuild even when the environment is up to date.")
@click.option(
    "--pip-arg",
    "pip_args",
    multiple=True,
    help="Extra argument for pip install (repeatable), e.g. --pip-arg=--no-index.",
)
@click.option("-v", "--verbose", is_flag=True, help="Print pip's output.")
@config_option
@click.pass_context
def create(ctx: click.Context, /, name: str, **options: Any) -> None:
    """Build environment NAME from the lock file shipped with passbench (idempotent).

    NAME is an environment, or a benchmark that builds one per task (SWE-bench: one per
    instance lock, cached by its sha256; --subset/--tasks choose the instances; an interrupted
    run resumes, each build being published whole or not at all).

    With PASSBENCH_OFFLINE nothing is downloaded: pip installs only from what --pip-arg
    points it to (--find-links DIR; pip's --no-index is added), and NLTK data must come from
    the local folder (or be in the environment already).
    """
    console = Console(stderr=True)
    hook = _hook(name)
    if hook is not None:
        _create_task_environments(ctx, name, hook, options, console)
        return
    resolved = resolve_options(ctx, "env", options)
    path: Path | None = resolved["env_dir"]
    nltk_source = _nltk_source(resolved)
    offline = resolved.paths.offline
    pip_args = tuple(options["pip_args"])
    if offline:
        _check_offline_nltk(name, path, nltk_source, force=options["force"])
        if "--no-index" not in pip_args:
            pip_args += ("--no-index",)
    verbose = options["verbose"]
    with RichProgress(console) as progress:
        result = create_env(
            name,
            path=path,
            python=resolved["python"],
            nltk_source=nltk_source,
            download_nltk=not (options["no_download"] or offline),
            force=options["force"],
            pip_args=pip_args,
            progress=progress,
            on_output=(lambda line: console.print(line, markup=False, highlight=False))
            if verbose
            else None,
        )
    info = result.info
    if result.status == "up-to-date":
        console.print(
            f"[green]up to date[/]: {info.root} (Python {info.python_version}, "
            f"{info.metadata.lock_file}, sha256 {info.lock_sha256[:12]})"
        )
    else:
        console.print(
            f"[green]created[/] {info.root} in {result.seconds:.0f} s: Python "
            f"{info.python_version}, {info.metadata.lock_file}, sha256 {info.lock_sha256[:12]}"
        )
        console.print(f"interpreter: {result.python_choice}", markup=False, highlight=False)
    if result.nltk.missing:
        if offline:
            raise _offline_nltk_error(name, result.nltk.missing, nltk_source, info.root)
        console.print(f"[yellow]NLTK data missing[/]: {', '.join(result.nltk.missing)}")
    click.echo(str(info.python))


def _nltk_source(resolved: Resolved) -> Path | None:
    """--nltk-data, else DATA_DIR/nltk_data when that folder exists."""
    if resolved["nltk_data"] is not None:
        return Path(resolved["nltk_data"])
    data_dir = resolved.paths.data_dir
    if data_dir is not None and (data_dir / NLTK_DIR_NAME).is_dir():
        return data_dir / NLTK_DIR_NAME
    return None


def _check_offline_nltk(name: str, path: Path | None, source: Path | None, *, force: bool) -> None:
    """Offline, every NLTK package must be in the local folder or (unless the environment is
    rebuilt from scratch) already in the environment: say so before building anything."""
    root = env_path(name, path)
    missing = get_spec(name).nltk_packages
    if source is not None:
        missing = tuple(missing_packages(source, missing))
    if not force and missing:
        missing = tuple(missing_packages(root / NLTK_DIR_NAME, missing))
    if missing:
        raise _offline_nltk_error(name, missing, source, root)


def _offline_nltk_error(
    name: str, missing: Any, source: Path | None, root: Path
) -> EnvironmentError_:
    looked = [str(source)] if source is not None else []
    looked.append(str(root / NLTK_DIR_NAME))
    return EnvironmentError_(
        f"NLTK data for {name} not found: {', '.join(missing)} (looked in {', '.join(looked)}) "
        "and downloads are off (PASSBENCH_OFFLINE); pass --nltk-data DIR, or point "
        "PASSBENCH_DATA_DIR at a folder holding nltk_data/"
    )


@env.command()
@_ANY_NAME
@_PATH
@_selection
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--skip-imports", is_flag=True, help="Skip the (slow) import of every module.")
@config_option
@click.pass_context
def check(ctx: click.Context, /, name: str, **options: Any) -> None:
    """Report what environment NAME lacks; exit code 1 when anything is missing.

    `multipl-e` checks the system toolchains MultiPL-E's and HumanEval-X's languages build and
    run with. A benchmark that builds environments per task (SWE-bench) reports, per
    repository and task, what can be evaluated here, how faithfully, whether its environment
    is built, and why not (--subset/--tasks choose the tasks); any other benchmark, the
    toolchains its programs need and which of its tasks cannot run here and why."""
    if _toolchain_benchmark(name):
        _show(_benchmark_report(name), options["as_json"])
        return
    hook = _hook(name)
    if hook is not None:
        report = hook.check(_selected_tasks(ctx, name, options), options["path"])
        _show(report, options["as_json"])
        return
    if name == _TOOLCHAINS:
        report = _toolchain_report()
        if options["as_json"]:
            click.echo(json.dumps(_report_json(report), indent=2))
        else:
            _print_report(report, Console())
        if not report.ok:
            sys.exit(1)
        return
    path: Path | None = resolve_options(ctx, "env", options)["env_dir"]
    as_json: bool = options["as_json"]
    report = check_env(name, path, modules=not options["skip_imports"])
    if as_json:
        click.echo(json.dumps(_report_json(report), indent=2))
    else:
        _print_report(report, Console())
    if not report.ok:
        sys.exit(1)


@env.command()
@_ANY_NAME
@_PATH
@_selection
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (per-task envs).")
@config_option
@click.pass_context
def verify(ctx: click.Context, /, name: str, **options: Any) -> None:
    """Check that no file of environment NAME changed since it was built: every file's sha256
    against the manifest `env create` recorded (exit code 1 naming the first change).

    Every evaluation checks sizes and times (fast); this reads every file. For a benchmark
    that builds environments per task (SWE-bench), every environment the chosen tasks need
    (--subset/--tasks), one not built counting as a failure."""
    hook = _hook(name)
    if hook is not None:
        _show(hook.verify(_selected_tasks(ctx, name, options), options["path"]), options["as_json"])
        return
    path: Path | None = resolve_options(ctx, "env", options)["env_dir"]
    found = locate_env(name, path, allow_stale=True)
    outcome = verify_manifest(found.root, full=True)
    console = Console()
    if outcome.recorded:
        console.print(
            f"[yellow]recorded[/] a manifest of {outcome.files} files in {outcome.seconds:.1f} s: "
            f"{found.root} predates manifests, so there was nothing to compare with; later "
            "checks compare with this one"
        )
        return
    if not outcome.intact:
        raise EnvironmentError_(
            f"the evaluation environment at {found.root} changed after it was built: "
            f"{outcome.change}. Rebuild it with `passbench env create {name} --force "
            f"--path {found.root}`"
        )
    console.print(
        f"[green]intact[/]: {outcome.files} files of {found.root} match their sha256 "
        f"({outcome.seconds:.1f} s)"
    )


@env.command()
@_ANY_NAME
@_PATH
@_selection
@config_option
@click.pass_context
def info(ctx: click.Context, /, name: str, **options: Any) -> None:
    """Print where environment NAME is and what it was built from (JSON). For a benchmark that
    builds environments per task (SWE-bench): a list, one entry per environment the chosen
    tasks need (--subset/--tasks), built or not."""
    hook = _hook(name)
    if hook is not None:
        tasks = _selected_tasks(ctx, name, options)
        click.echo(json.dumps(hook.describe(tasks, options["path"]), indent=2))
        return
    path: Path | None = resolve_options(ctx, "env", options)["env_dir"]
    found = locate_env(name, path, allow_stale=True)
    record = {
        "name": found.name,
        "root": str(found.root),
        "python": str(found.python),
        "nltk_data": str(found.nltk_data),
        "metadata": json.loads(found.metadata.to_json()),
    }
    click.echo(json.dumps(record, indent=2))


def _hook(name: str) -> TaskEnvironments | None:
    """The per-task environments of benchmark NAME; None for a named environment. An unknown
    name is an error listing every valid one."""
    if name in spec_names() or name == _TOOLCHAINS:
        return None
    valid = (*spec_names(), _TOOLCHAINS, *environment_benchmarks())
    try:
        hook = get_benchmark(name).task_environments()
    except UnknownNameError:
        hook = None
    if hook is None:
        raise click.BadParameter(f"{name!r} is not one of {', '.join(valid)}", param_hint="NAME")
    return hook


def _selected_tasks(ctx: click.Context, name: str, options: dict[str, Any]) -> list[Any]:
    resolved = resolve_options(ctx, "tasks", options)
    bench = get_benchmark(name)
    with RichProgress(Console(stderr=True)) as progress:  # shows only when data downloads
        loaded = bench.load(
            options["version"],
            options["subset"] or "full",
            data=data_settings(resolved),
            progress=progress,
        )
    selection = task_selection(options)
    return list(select_tasks(loaded.tasks, selection.task_ids, selection.id_range))


def _show(report: EnvReport, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(_report_json(report), indent=2))
    else:
        _print_report(report, Console())
    if not report.ok:
        sys.exit(1)


def _create_task_environments(
    ctx: click.Context, name: str, hook: TaskEnvironments, options: dict[str, Any], console: Console
) -> None:
    tasks = _selected_tasks(ctx, name, options)
    offline = resolve_options(ctx, "env", options).paths.offline
    pip_args = tuple(options["pip_args"])
    if offline and "--no-index" not in pip_args:
        pip_args += ("--no-index",)
    verbose = options["verbose"]
    with RichProgress(console) as progress:
        report = hook.create(
            tasks,
            options["path"],
            force=options["force"],
            pip_args=pip_args,
            progress=progress,
            on_output=(lambda line: console.print(line, markup=False, highlight=False))
            if verbose
            else None,
        )
    environments = [item for item in report.items if item.kind == "environment"]
    if report.items and not any(item.ok for item in environments):
        first = report.problems[0]
        raise EnvironmentError_(f"{name}: nothing built: {first.name} {first.detail}")
    _print_report(report, console)
    if not report.ok:
        sys.exit(1)


def _report_json(report: EnvReport) -> dict[str, object]:
    return {
        "name": report.name,
        "root": str(report.root),
        "ok": report.ok,
        "items": [
            {"kind": item.kind, "name": item.name, "ok": item.ok, "detail": item.detail}
            for item in report.items
        ],
    }


def _toolchain_report() -> EnvReport:
    """Every MultiPL-E language's compilers, interpreters and libraries, as samples see them."""
    from passbench.stages.benchmarks.multiple import LANGUAGES, tool_location

    items = []
    for language in LANGUAGES.values():
        packages = " ".join(language.debian_packages)
        fixes = {tool: f"apt-get install {packages}" for tool in language.tools}
        npm = " ".join(language.npm_packages)
        fixes.update({tool: f"npm install -g {npm}" for tool in language.npm_tools})
        for tool, fix in fixes.items():
            where = tool_location(tool)
            detail = where or f"missing ({fix}; needed by {language.title})"
            items.append(CheckItem("program", f"{language.key}: {tool}", where is not None, detail))
    items += _humaneval_x_items()
    return EnvReport(_TOOLCHAINS, Path("/usr/bin"), tuple(items))


def _toolchain_benchmark(name: str) -> bool:
    """NAME is a benchmark (not an environment) without per-task environments: `env check`
    reports its `toolchain_checks`."""
    from passbench.stages.benchmarks import benchmark_names

    if name in spec_names() or name == _TOOLCHAINS or name not in benchmark_names():
        return False
    return get_benchmark(name).task_environments() is None


def _benchmark_report(name: str) -> EnvReport:
    """A benchmark's own toolchain checks (`toolchain_checks`), as `env check` lists them."""
    from passbench.stages.benchmarks import get_benchmark

    items = tuple(
        CheckItem("program", check.name, check.ok, check.detail)
        for check in get_benchmark(name).toolchain_checks()
    )
    return EnvReport(name, Path("/usr/bin"), items)


def _humaneval_x_items() -> list[CheckItem]:
    """HumanEval-X's toolchains: Debian's, and what scripts/setup.sh adds (npm's js-md5, the
    Rust crates it builds)."""
    from passbench.stages.benchmarks.humanevalx import LANGUAGES
    from passbench.stages.benchmarks.multiple import tool_location

    items = []
    for language in LANGUAGES.values():
        fixes = {
            tool: "apt-get install " + " ".join(language.debian_packages) for tool in language.tools
        }
        fixes.update({tool: "bash scripts/setup.sh --multipl-e" for tool in language.local_tools})
        for tool, fix in fixes.items():
            where = tool_location(tool)
            detail = where or f"missing ({fix}; needed by HumanEval-X {language.title})"
            name = f"HumanEval-X {language.key}: {tool}"
            items.append(CheckItem("program", name, where is not None, detail))
    return items


def _print_report(report: EnvReport, console: Console) -> None:
    passed = sum(item.ok for item in report.items)
    table = Table(title=f"{report.name}: {report.root}", show_lines=False)
    table.add_column("kind")
    table.add_column("name")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for item in report.items:
        if item.ok and item.kind in ("module", "nltk", "program"):
            continue  # the table lists problems; passing items are counted below
        status = "[green]ok[/]" if item.ok else "[red]missing[/]"
        table.add_row(item.kind, item.name, status, item.detail)
    console.print(table)
    summary = f"{passed}/{len(report.items)} checks pass"
    if report.ok:
        console.print(f"[green]complete[/]: {summary}")
    else:
        names = ", ".join(f"{item.kind} {item.name}" for item in report.problems)
        console.print(f"[red]incomplete[/]: {summary}; missing: {names}")
