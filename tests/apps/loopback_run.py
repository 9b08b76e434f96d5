"""`passbench run` against a loopback model server, as the end-to-end run tests (tries,
reflections, reasoning) drive it: one request at a time, no response cache (what is not asked
again is kept by the run's files), the data and cache folders of the test."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from click.testing import CliRunner

from passbench.apps.cli import cli


def run_args(
    url: str, benchmark: str, task_ids: Iterable[str], out: Path, *extra: str
) -> list[str]:
    """The command line: model `fake-chat` through the OpenAI provider at `url`."""
    return [
        *("run", "-m", "fake-chat", "-p", "openai", "--base-url", f"{url}/v1"),
        *("-b", benchmark, "--tasks", ",".join(task_ids), "--output-dir", str(out)),
        *("--no-cache", "--concurrency", "1"),
        *extra,
    ]


def invoke(args: list[str], data_dir: Path, cache_dir: Path) -> tuple[int, str]:
    """Run the CLI in this process (exceptions propagate); its exit code and output."""
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(cache_dir)}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    return result.exit_code, result.output
