"""`passbench run --epochs N` end to end through the real OpenAI client against a loopback
server: N generations per task, pass@1 per epoch with its interval, and a later run with more
epochs asks only for the new epochs' samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.stages.providers.servers.canonical_fake import CanonicalChatServer

from passbench.apps.cli import cli
from passbench.stages.benchmarks import DataSettings, get_benchmark

pytestmark = pytest.mark.bwrap

TASKS = 3


def _run(
    server: CanonicalChatServer,
    out: Path,
    tmp_path: Path,
    epochs: int,
    *,
    from_config: bool = False,
) -> str:
    """`run` with `epochs`: given as --epochs, or (`from_config`) in a config file's [run]."""
    if from_config:
        config = tmp_path / "passbench.toml"
        config.write_text(f"[run]\nepochs = {epochs}\n")
        given = ["--config", str(config)]
    else:
        given = ["--epochs", str(epochs)]
    args = [
        "run",
        "--model",
        "org/fake-chat",
        "-p",
        "openai",
        "--base-url",
        f"{server.url}/v1",
        "-b",
        "humaneval-openai",
        "--id-range",
        f"0-{TASKS}",
        "--temperature",
        "0.8",
        *given,
        "--no-gt",
        "--output-dir",
        str(out),
        "--cache",
        str(tmp_path / "responses.sqlite"),
    ]
    env = {"PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _asked(server: CanonicalChatServer) -> int:
    """Samples asked of the model (a request may ask for several: `n`)."""
    return sum(int(request.body.get("n", 1)) for request in server.requests)


def test_epochs_generate_independent_samples_and_report_an_interval(
    data_dir: Path, tmp_path: Path
) -> None:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    benchmark = get_benchmark("humaneval-openai")
    tasks = list(benchmark.load(None, "full", data=data))
    server = CanonicalChatServer(tasks, benchmark)
    try:
        out = tmp_path / "results"
        text = _run(server, out, tmp_path, 2)
        assert _asked(server) == 2 * TASKS
        stem = "org--fake-chat--main--humaneval-openai-complete--openai-0.8-2"
        rows = [json.loads(line) for line in (out / f"{stem}.jsonl").read_text().splitlines()]
        assert sorted((row["task_id"], row["sample_index"]) for row in rows) == sorted(
            (f"HumanEval/{n}", index) for n in range(TASKS) for index in range(2)
        )
        scores = json.loads((out / f"{stem}-sanitized_calibrated_pass_at_k.json").read_text())
        epochs = scores["epochs"]
        assert epochs["epochs"] == 2 and epochs["samples_per_epoch"] == 1
        assert epochs["pass@1_per_epoch"] == [1.0, 1.0] and epochs["pass@1_ci"] == [1.0, 1.0]
        assert "pass@1 over 2 epochs: 1.000 (95% CI 1.000 to 1.000" in text

        # three epochs, set in the config file: the first two come from the response cache,
        # only the third is asked
        _run(server, out, tmp_path, 3, from_config=True)
        assert _asked(server) == 3 * TASKS
        stem3 = stem[: -len("-2")] + "-3"
        scores = json.loads((out / f"{stem3}-sanitized_calibrated_pass_at_k.json").read_text())
        assert scores["epochs"]["epochs"] == 3
        assert scores["passbench"]["task_set"]["benchmark"] == "humaneval-openai"
    finally:
        server.close()
