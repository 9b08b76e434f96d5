"""`passbench security`: static analysis of every sample of a run (bandit, and CyberSecEval's
insecure-code-detector rules through semgrep and regex), from the `security` tool environment."""

from __future__ import annotations

import os
from pathlib import Path

import click
from rich.console import Console

from passbench.benchmarks import DataSettings
from passbench.cli._progress import RichProgress
from passbench.report.security import summary_table
from passbench.security.resultfile import ScanRun, security_scan
from passbench.security.scan import DEFAULT_BATCH_SIZE, ScanSettings
from passbench.security.tools import BANDIT_SEVERITIES, DEFAULT_BANDIT_SEVERITY


@click.command()
@click.argument("source", metavar="RESULTS|SAMPLES", type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Result file [<stem>_security.json beside the input, where inspect finds it].",
)
@click.option("--benchmark", help="The benchmark the samples are from [from the task ids].")
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


def _title(run: ScanRun) -> str:
    tools = ", ".join(f"{name} {version}" for name, version in run.result.tools.items())
    resumed = f"; {run.resumed} resumed" if run.resumed else ""
    return f"security: {run.source.path.name} ({tools}{resumed})"
