"""`passbench run --dry-run`: the requests, tokens and cost a run would have, with nothing sent
and nothing written."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.stages.providers.servers.openai_fake import OpenAIFake

from passbench.apps.cli import cli
from passbench.core.errors import InputError
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.prompts import build_prompt

TIKTOKEN = importlib.util.find_spec("tiktoken") is not None


def _invoke(args: list[str], data_dir: Path, tmp_path: Path) -> tuple[int, str]:
    env = {
        "PASSBENCH_DATA_DIR": str(data_dir),
        "PASSBENCH_CACHE_DIR": str(tmp_path / "cache"),
        "OPENAI_API_KEY": "",
        "ANTHROPIC_API_KEY": "",
    }
    result = CliRunner().invoke(cli, ["run", *args, "--dry-run"], env=env)
    return result.exit_code, result.output


def _chars_over_4(data_dir: Path, tmp_path: Path, count: int) -> list[int]:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    tasks = list(get_benchmark("humaneval").load(None, "full", data=data))[:count]
    prompts = [build_prompt(t, "complete", chat=True, prefill=False) for t in tasks]
    return [math.ceil(len(p.messages[0]["content"]) / 4) for p in prompts]


@pytest.mark.skipif(TIKTOKEN, reason="counts with tiktoken when it is installed")
def test_dry_run_sends_nothing_and_prices_every_request(data_dir: Path, tmp_path: Path) -> None:
    server = OpenAIFake()
    out = tmp_path / "out"
    try:
        code, text = _invoke(
            [
                *("-m", "gpt-4o-2024-08-06", "-p", "openai", "--base-url", f"{server.url}/v1"),
                *("-b", "humaneval", "--id-range", "0-3", "-n", "5", "--output-dir", str(out)),
            ],
            data_dir,
            tmp_path,
        )
    finally:
        server.close()
    assert code == 0, text
    assert server.requests == [] and not out.exists()  # nothing sent, nothing written
    tokens = _chars_over_4(data_dir, tmp_path, 3)
    lines = [line.split() for line in text.splitlines() if line.lstrip()[:1].isdigit()]
    # one request per task asks for its 5 samples (OpenAI's n), each at most 1,280 tokens out
    assert [(row[1], row[2], int(row[3]), row[4]) for row in lines[:3]] == [
        (f"HumanEval/{i}", "0-4", tokens[i], "6,400") for i in range(3)
    ]
    assert "The first request's prompt (chat message):" in text
    assert f"input tokens: {sum(tokens):,} (estimated as characters / 4)" in text
    assert "output tokens: at most 19,200" in text
    # gpt-4o's built-in list price: $2.50 in, $10 out per million
    total = sum(tokens) * 2.5 / 1e6 + 19_200 * 10 / 1e6
    assert f"= at most ${total:.4f}" in text
    assert "built-in list price of 'gpt-4o'" in text


@pytest.mark.skipif(TIKTOKEN, reason="counts with tiktoken when it is installed")
def test_a_price_file_overrides_and_one_sample_per_request_pays_the_prompt_each_time(
    data_dir: Path, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"claude-test": {"input": 100.0, "output": 0}}))
    code, text = _invoke(
        [
            *("-m", "claude-test", "-p", "anthropic", "-b", "humaneval", "--id-range", "0-2"),
            *("-n", "3", "--prices", str(prices)),
        ],
        data_dir,
        tmp_path,
    )
    assert code == 0, text
    tokens = _chars_over_4(data_dir, tmp_path, 2)
    assert "6 requests for 6 samples of 2 tasks" in text  # Anthropic: one sample a request
    assert f"input tokens: {3 * sum(tokens):,}" in text
    assert f"cost: ${3 * sum(tokens) * 100 / 1e6:.4f} input" in text
    assert str(prices) in text


def test_unknown_prices_and_bad_price_files(data_dir: Path, tmp_path: Path) -> None:
    base = ["-p", "openai", "-b", "humaneval", "--id-range", "0-1"]
    code, text = _invoke(["-m", "my-own-model", *base], data_dir, tmp_path)
    assert code == 0, text
    assert "cost: unknown (no price known for 'my-own-model'" in text
    # a dated snapshot has its model's price; another model of the family does not
    code, text = _invoke(["-m", "gpt-4o-2024-11-20", *base], data_dir, tmp_path)
    assert "built-in list price of 'gpt-4o'" in text
    code, text = _invoke(["-m", "gpt-4o-audio-preview", *base], data_dir, tmp_path)
    assert "cost: unknown" in text
    bad = tmp_path / "p.toml"
    bad.write_text('["my-own-model"]\ninput = "cheap"\noutput = 1\n')
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "c")}
    args = ["run", "-m", "my-own-model", *base, "--dry-run", "--prices", str(bad)]
    result = CliRunner().invoke(cli, args, env=env)
    assert isinstance(result.exception, InputError) and result.exception.exit_code == 2
    assert f"{bad}: field 'my-own-model.input': must be a non-negative number" in str(
        result.exception
    )


def _dry(command: str, args: list[str], data_dir: Path, tmp_path: Path) -> str:
    env = {
        "PASSBENCH_DATA_DIR": str(data_dir),
        "PASSBENCH_CACHE_DIR": str(tmp_path / "cache"),
        "OPENAI_API_KEY": "",
    }
    result = CliRunner().invoke(cli, [command, *args, "--dry-run"], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_generate_dry_run_prints_what_run_dry_run_prints(data_dir: Path, tmp_path: Path) -> None:
    server = OpenAIFake()
    out = tmp_path / "out"
    prices = tmp_path / "prices.toml"
    prices.write_text('["gpt-4o-2024-08-06"]\ninput = 3.0\noutput = 12.0\n')
    model = ("-m", "gpt-4o-2024-08-06", "-p", "openai", "--base-url", f"{server.url}/v1")
    common = [*model, "-b", "humaneval", "--id-range", "2-5", "--prices", str(prices)]
    try:
        generated = _dry(
            "generate", [*common, "-n", "6", "--output-dir", str(out)], data_dir, tmp_path
        )
        ran = _dry("run", [*common, "-n", "6", "--output-dir", str(out)], data_dir, tmp_path)
        # run --epochs 3 of 2 samples asks what generate -n 6 asks
        epochs = _dry("run", [*common, "-n", "2", "--epochs", "3"], data_dir, tmp_path)
        raw = tmp_path / "mine.jsonl"
        named = _dry("generate", [*common, "-n", "6", "-o", str(raw)], data_dir, tmp_path)
    finally:
        server.close()
    assert server.requests == [] and not out.exists() and not raw.exists()
    assert generated == ran == epochs == named
    assert generated.startswith("Dry run: nothing is sent and nothing is written.\n")
    assert "3 requests for 18 samples of 3 tasks to openai:gpt-4o-2024-08-06" in generated
    assert "output tokens: at most 23,040" in generated  # 18 samples x 1,280
    assert f"prices: $3 in / $12 out per million tokens ({prices} (gpt-4o-2024-08-06))" in generated


def test_run_dry_run_says_what_tries_would_add(data_dir: Path, tmp_path: Path) -> None:
    args = ["-m", "gpt-4o-2024-08-06", "-p", "openai", "-b", "humaneval", "--id-range", "0-1"]
    once = _dry("run", args, data_dir, tmp_path)
    thrice = _dry("run", [*args, "--tries", "3"], data_dir, tmp_path)
    assert thrice.startswith(once)  # the first try's requests, as a run of one try
    assert thrice[len(once) :].startswith("--tries 3: the follow-up requests of failing samples")
    assert "up to 2 more per sample" in thrice
