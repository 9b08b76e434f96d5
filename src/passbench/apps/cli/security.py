"""`passbench security`: static analysis of every sample of a run (bandit, and CyberSecEval's
insecure-code-detector rules through semgrep and regex), from the `security` tool environment."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from rich.console import Console

from passbench.analysis.report.security import summary_table
from passbench.analysis.security.reference import load_references, reference_check
from passbench.analysis.security.resultfile import ScanRun, security_scan
from passbench.analysis.security.scan import DEFAULT_BATCH_SIZE, ScanSettings
from passbench.analysis.security.tools import BANDIT_SEVERITIES, DEFAULT_BANDIT_SEVERITY
from passbench.apps.cli._progress import RichProgress
from passbench.core.errors import InputError
from passbench.stages.benchmarks import DataSettings, get_benchmark


@click.command()
@click.argument(
    "source", metavar="RESULTS|SAMPLES", required=False, type=click.Path(path_type=Path)
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Result file [<stem>_security.json beside the input, where inspect finds it].",
)
@click.option("--benchmark", help="The benchmark the samples are from [from the task ids].")
@click.option(
    "--references",
    is_flag=True,
    help="Instead of a run: scan the --benchmark's insecure reference code (SALLM's), one "
    "sample per task, and say how many of them the tools flag (the reference self-check).",
)
@click.option(
    "--bandit-severity",
    type=click.Choice(BANDIT_SEVERITIES),
    default=DEFAULT_BANDIT_SEVERITY,
    show_default=True,
    help="Lowest bandit severity recorded (low also flags `import pickle`, `assert`, `random`).",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    help="Samples per tool invocation.",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="semgrep jobs."
)
@click.option(
    "--env-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The security tool environment (env: PASSBENCH_SECURITY_ENV_DIR; built by "
    "`passbench env create security`).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Benchmark data folder, for the tasks' libraries and languages (env: PASSBENCH_DATA_DIR).",
)
def security(
    source: Path,
    output: Path | None,
    benchmark: str | None,
    references: bool,
    bandit_severity: str,
    batch_size: int,
    jobs: int,
    env_dir: Path | None,
    data_dir: Path | None,
) -> None:
    """Scan every sample of RESULTS (an _eval_results.json: verdicts too) or SAMPLES (.jsonl)
    for insecure code.

    Python samples go through bandit and the insecure-code detector of CyberSecEval (its
    semgrep and regex rules, as CodeShield ships them); other languages through the detector's
    rules for them. Offline: local rule files only. Writes findings per sample and the figures
    (by CWE, by library, CyberSecEval's vulnerable percentage by language, insecure among
    passing) to a JSON file; an interrupted scan resumes where it stopped.
    """
    data = DataSettings.from_env(os.environ, data_dir=data_dir, download=False)
    settings = ScanSettings(bandit_severity=bandit_severity, batch_size=batch_size, jobs=jobs)
    if references:
        _scan_references(source, output, benchmark, settings, env_dir, data)
        return
    if source is None:
        raise InputError("give a RESULTS or SAMPLES file, or --references --benchmark B")
    with RichProgress() as progress:
        run = security_scan(
            source,
            output=output,
            benchmark=benchmark,
            settings=settings,
            env_path=env_dir,
            data=data,
            progress=progress,
        )
    Console().print(summary_table(run.result.summary, title=_title(run)))
    if run.source.note:
        click.echo(f"note: {run.source.note}", err=True)
    click.echo(f"wrote {run.output}")


def _scan_references(
    source: Path | None,
    output: Path | None,
    benchmark: str | None,
    settings: ScanSettings,
    env_dir: Path | None,
    data: DataSettings,
) -> None:
    """Write the benchmark's insecure references as a samples file (beside --output, else in
    the current folder), scan it, and print how many the tools flag."""
    if source is not None:
        raise InputError("--references scans the benchmark's own references: give no file")
    if benchmark is None:
        raise InputError("--references needs --benchmark (sallm)", field="benchmark")
    loaded, rows = load_references(benchmark, data)
    folder = output.parent if output is not None else Path.cwd()
    samples = folder / f"{benchmark}-insecure-references.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with RichProgress() as progress:
        run = security_scan(
            samples,
            output=output,
            benchmark=benchmark,
            settings=settings,
            env_path=env_dir,
            data=data,
            progress=progress,
        )
    Console().print(summary_table(run.result.summary, title=_title(run)))
    check = reference_check(get_benchmark(benchmark), loaded, run.result.scans, data)
    tools = ", ".join(f"{tool} {count}" for tool, count in check.by_tool.items())
    subsets = ", ".join(f"{g.name} {g.flagged}/{g.total}" for g in check.by_subset)
    click.echo(
        f"references flagged: {check.flagged}/{check.total} (by tool: {tools or 'none'}; "
        f"with the prompt's own CWE: {check.own_cwe}; {subsets})"
    )
    click.echo(f"wrote {samples} and {run.output}")


def _title(run: ScanRun) -> str:
    tools = ", ".join(f"{name} {version}" for name, version in run.result.tools.items())
    resumed = f"; {run.resumed} resumed" if run.resumed else ""
    return f"security: {run.source.path.name} ({tools}{resumed})"
