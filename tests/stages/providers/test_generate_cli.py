"""`passbench generate` end to end: real BigCodeBench tasks, a fake OpenAI server, real SDK."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli

from .servers.openai_fake import OpenAIFake


def _run(args: list[str], data_dir: Path, tmp_path: Path) -> tuple[int, str]:
    runner = CliRunner()
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}
    result = runner.invoke(cli, ["generate", *args], env=env, catch_exceptions=False)
    return result.exit_code, result.output


def test_generate_chat_samples_then_rerun_from_cache(
    openai_server: OpenAIFake, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "samples.jsonl"
    args = [
        "--model",
        "gpt-test",
        "--provider",
        "openai",
        "--base-url",
        f"{openai_server.url}/v1",
        "--split",
        "instruct",
        "--subset",
        "hard",
        "--id-range",
        "0-3",
        "-n",
        "2",
        "--temperature",
        "0.8",
        "--output",
        str(out),
    ]
    code, text = _run(args, data_dir, tmp_path)
    assert code == 0, text
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 6
    assert {row["sample_index"] for row in rows} == {0, 1}
    assert all(row["raw_solution"] and row["provider"] == "openai" for row in rows)
    (first, *_) = openai_server.bodies("/chat/completions")
    # the official API protocol: the user message alone, no prefill, no stop sequences
    assert len(first["messages"]) == 1 and first["messages"][0]["role"] == "user"
    assert first["messages"][0]["content"].startswith(
        "Please provide a self-contained Python script"
    )
    assert "stop" not in first and first["max_tokens"] == 1280 and first["n"] == 2

    code, _ = _run(args, data_dir, tmp_path)
    assert code == 0 and len(openai_server.requests) == 3  # second run: all from the cache
    assert out.read_text().count("\n") == 6


def test_direct_completion_writes_prompt_plus_continuation(
    openai_server: OpenAIFake, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "base.jsonl"
    code, text = _run(
        [
            "--model",
            "base-test",
            "-p",
            "openai",
            "--base-url",
            f"{openai_server.url}/v1",
            "--direct-completion",
            "--tasks",
            "BigCodeBench/0",
            "-o",
            str(out),
        ],
        data_dir,
        tmp_path,
    )
    assert code == 0, text
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    (body,) = openai_server.bodies("/v1/completions")
    assert row["raw_solution"].startswith(body["prompt"]) and len(row["raw_solution"]) > len(
        body["prompt"]
    )
    assert "\ndef " in body["stop"]  # the official direct-completion stop sequences


def test_unknown_model_exits_with_a_message(
    openai_server: OpenAIFake, data_dir: Path, tmp_path: Path
) -> None:
    from passbench.apps.cli import main

    with pytest.raises(SystemExit) as caught:
        main(
            [
                "generate",
                "--model",
                "missing-model",
                "-p",
                "openai",
                "--base-url",
                f"{openai_server.url}/v1",
                "--tasks",
                "BigCodeBench/0",
                "--data-dir",
                str(data_dir),
                "--cache",
                str(tmp_path / "c.sqlite"),
                "-o",
                str(tmp_path / "x.jsonl"),
            ]
        )
    assert caught.value.code == 1
    assert not (tmp_path / "x.jsonl").exists()


def test_a_malformed_option_exits_with_a_message(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from passbench.apps.cli import main

    with pytest.raises(SystemExit) as caught:
        main(
            [
                *("generate", "--model", "m", "-p", "openai", "--option", "max_model_len"),
                *("--tasks", "BigCodeBench/0", "--data-dir", str(data_dir)),
                *("-o", str(tmp_path / "x.jsonl")),
            ]
        )
    assert caught.value.code == 2
    assert "field 'option': expected KEY=VALUE, got 'max_model_len'" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    ("provider", "temperature", "top_p", "expected"),
    [
        ("openai", 0.8, None, 0.95),  # the official OpenAI, vLLM and transformers backends
        ("vllm", 0.8, None, 0.95),
        ("hf", 0.8, None, 0.95),
        ("anthropic", 0.8, None, None),  # the official Anthropic backend sends none
        ("openai", None, None, None),  # greedy: top_p changes nothing, none is sent
        ("openai", 0.8, 1.0, 1.0),  # the user's wins
    ],
)
def test_sampling_defaults_follow_the_official_backend(
    provider: str, temperature: float | None, top_p: float | None, expected: float | None
) -> None:
    from passbench.apps.cli.generate import model_config

    options = dict.fromkeys(
        (
            *("config_path", "base_url", "max_new_tokens", "seed", "reasoning_effort"),
            *("thinking_budget", "concurrency", "requests_per_minute", "tokens_per_minute"),
            *("timeout_s", "revision"),
        )
    )
    options |= {"model": "m", "provider": provider, "stop": (), "provider_options": ()}
    options |= {"temperature": temperature, "top_p": top_p}
    params = model_config(options).params
    assert params.top_p == expected
    assert params.temperature == (temperature or 0.0) and params.max_new_tokens == 1280
