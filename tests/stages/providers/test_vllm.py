"""The vllm provider on vLLM's real offline engine, with a tiny randomly initialised GPT-2.

vLLM's CPU build (the `vllm-cpu` package) runs here. It pins its own torch and transformers, so
it lives in its own virtual environment (`.venv-vllm`, made by `scripts/setup.sh --dev`). Where
vllm is importable the tests run in-process; elsewhere `test_in_the_vllm_environment` runs this
file with that environment's Python and fails if any of it fails.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from passbench.core.errors import PermanentProviderError
from passbench.core.records import Completion, Prompt
from passbench.stages.providers import ModelConfig, ModelRunner, Provider, create_provider
from passbench.stages.providers.base import GenerationParams, ProviderRequest
from passbench.stages.providers.vllm import _Item

from .helpers import chat_prompt, config

REPO = Path(__file__).resolve().parents[3]
HAS_VLLM = importlib.util.find_spec("vllm") is not None
#: Small engines: the KV cache in GiB on the CPU backend; no torch.compile warm-up.
ENGINE_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING"}
ENGINE_OPTIONS = {"enforce_eager": True, "max_model_len": 128}

pytestmark = pytest.mark.slow
in_process = pytest.mark.skipif(
    not HAS_VLLM, reason="vllm is not importable here; test_in_the_vllm_environment runs these"
)


def _vllm_python() -> Path | None:
    configured = os.environ.get("PASSBENCH_VLLM_PYTHON")
    path = Path(configured) if configured else REPO / ".venv-vllm" / "bin" / "python"
    return path if path.is_file() else None


@pytest.mark.skipif(HAS_VLLM, reason="vllm is importable: the tests of this file ran in-process")
def test_in_the_vllm_environment(data_dir: Path) -> None:
    python = _vllm_python()
    if python is None:
        pytest.skip(
            "no vLLM environment: `bash scripts/setup.sh --dev` makes .venv-vllm "
            "(or set PASSBENCH_VLLM_PYTHON)"
        )
    env = {**os.environ, **ENGINE_ENV, "PASSBENCH_DATA_DIR": str(data_dir)}
    env.pop("PASSBENCH_VLLM_PYTHON", None)
    result = subprocess.run(
        [str(python), "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider", "-x"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    report = result.stdout[-8000:] + result.stderr[-4000:]
    assert result.returncode == 0, report
    summary = result.stdout.strip().splitlines()[-1]
    # every test of the file ran and passed there, but this one (skipped where vllm imports)
    assert re.search(r"\b\d+ passed, 1 skipped\b", summary), report
    assert not re.search(r"failed|error|deselected|xfail", summary), report


# ---- in-process, where vllm is importable -------------------------------------------------


@pytest.fixture(scope="module")
def engine_env() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for key, value in ENGINE_ENV.items():
            patch.setenv(key, os.environ.get(key, value))
        yield


@pytest.fixture(scope="module")
def chat_provider(engine_env: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    from .tiny_models import make_tiny_gpt2

    model = make_tiny_gpt2(tmp_path_factory.mktemp("chat-model"), chat=True)
    # This engine runs in this process: vLLM's CPU build otherwise spawns an engine process and
    # a worker process, each importing vllm and torch again (about 50 s of the file's time).
    # What these tests check (batches, seeds, stops, refusals) is decided in this process either
    # way; the engine in vLLM's default process layout, as users get it, is
    # test_generate_cli_direct_completion_on_bigcodebench's.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        provider = create_provider(config(str(model), provider="vllm", options=ENGINE_OPTIONS), {})
    # vLLM caches its environment variables once an engine runs in-process; without this the
    # next engine (the CLI test's) would run in-process too.
    importlib.import_module("vllm.envs").disable_envs_cache()
    yield provider
    asyncio.run(provider.aclose())


def _generate(
    provider: Provider, cfg: ModelConfig, prompts: list[Prompt], n: int
) -> list[Completion]:
    return asyncio.run(ModelRunner(provider, cfg).generate(prompts, n))


def _texts(provider: Provider, request: ProviderRequest) -> list[str]:
    response = asyncio.run(provider.generate(request))
    return [choice.text for choice in response.choices]


@in_process
def test_every_sample_of_every_prompt_in_one_engine_batch(chat_provider: Provider) -> None:
    cfg = config("m", provider="vllm", temperature=0.8, max_new_tokens=6, seed=1)
    batcher = chat_provider._batcher  # type: ignore[attr-defined]
    batches_before = batcher.batches_run
    prompts = [chat_prompt(f"T/{i}", f"add {i}", prefix="```python\n") for i in range(5)]

    completions = _generate(chat_provider, cfg, prompts, 3)

    assert sorted((c.task_id, c.sample_index) for c in completions) == [
        (f"T/{i}", k) for i in range(5) for k in range(3)
    ]
    assert batcher.batches_run - batches_before == 1  # 5 calls of n=3, one vllm generate()
    assert chat_provider.capabilities.chat and chat_provider.capabilities.prefill
    assert all(c.provider == "vllm" and c.finish_reason in ("stop", "length") for c in completions)
    assert all(0 < c.usage.output_tokens <= 6 for c in completions)
    assert all(c.usage.input_tokens > 0 for c in completions if c.sample_index == 0)
    assert all(c.params["response_prefix"] == "```python\n" for c in completions)


@in_process
def test_sample_k_is_seeded_seed_plus_k_however_samples_are_split(
    chat_provider: Provider,
) -> None:
    def request(n: int, seed: int) -> ProviderRequest:
        params = GenerationParams(temperature=1.0, max_new_tokens=8, seed=seed)
        return ProviderRequest(text="def add", n=n, params=params)

    together = _texts(chat_provider, request(3, seed=5))
    alone = _texts(chat_provider, request(1, seed=7))

    assert len(together) == 3 and len(set(together)) > 1  # samples differ
    assert alone == together[2:]  # sample 2 of seed 5 is sample 0 of seed 7
    assert _texts(chat_provider, request(3, seed=5)) == together  # reproducible


@in_process
def test_stop_sequences_end_the_answer_before_them(chat_provider: Provider) -> None:
    params = GenerationParams(temperature=1.0, max_new_tokens=24, seed=3, stop=(" ",))
    response = asyncio.run(
        chat_provider.generate(ProviderRequest(text="def add", n=16, params=params))
    )
    assert all(" " not in choice.text for choice in response.choices)
    assert any(choice.finish_reason == "stop" for choice in response.choices)


@in_process
def test_answers_keep_special_tokens_as_the_official_backend_decodes(
    chat_provider: Provider,
) -> None:
    request = ProviderRequest(text="x", params=GenerationParams(max_new_tokens=4))
    assert chat_provider._sampling(request).skip_special_tokens is False  # type: ignore[attr-defined]


@in_process
def test_a_prompt_longer_than_the_context_stops_the_run_naming_the_task(
    chat_provider: Provider,
) -> None:
    cfg = config("m", provider="vllm", max_new_tokens=4)
    long_prompt = chat_prompt("T/long", " ".join(["a"] * 200))

    with pytest.raises(PermanentProviderError) as caught:
        _generate(chat_provider, cfg, [chat_prompt("T/short", "add"), long_prompt], 1)

    message = str(caught.value)
    assert "(T/long)" in message and "max_model_len" in message and "128" in message
    # the engine was never handed the bad prompt and still answers
    assert len(_generate(chat_provider, cfg, [chat_prompt("T/after", "add")], 1)) == 1


@in_process
def test_a_prompt_the_engine_refuses_fails_alone_not_its_batch(chat_provider: Provider) -> None:
    # Past the length check (called directly): vLLM refuses the long prompt as it adds it,
    # which drops the whole generate() call; the others must still be answered.
    sampling = chat_provider._sampling(  # type: ignore[attr-defined]
        ProviderRequest(text="x", params=GenerationParams(max_new_tokens=4))
    )
    items = [_Item(prompt, sampling) for prompt in ("add 1", " ".join(["a"] * 200), "add 2")]

    results = chat_provider._run_batch("all", items)  # type: ignore[attr-defined]

    assert [type(result).__name__ for result in results] == [
        "RequestOutput",
        "ProviderCallError",
        "RequestOutput",
    ]
    assert results[1].kind == "invalid" and "refused" in str(results[1])
    assert all(len(results[i].outputs[0].token_ids) > 0 for i in (0, 2))


@in_process
def test_generate_cli_direct_completion_on_bigcodebench(
    engine_env: None, data_dir: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from passbench.apps.cli import cli
    from passbench.stages.benchmarks import DataSettings, get_benchmark

    from .tiny_models import make_tiny_gpt2

    model = make_tiny_gpt2(tmp_path / "base-model", chat=False, n_positions=2048)
    # this engine runs in vLLM's default layout (an engine process), as a user's does
    assert importlib.import_module("vllm.envs").VLLM_ENABLE_V1_MULTIPROCESSING
    args = [
        "generate",
        *("--model", str(model), "-p", "vllm", "--subset", "hard", "--id-range", "0-2"),
        *("-n", "2", "--temperature", "0.8", "--seed", "3", "--max-new-tokens", "16"),
        *("--option", "enforce_eager=true", "--option", "max_model_len=2048"),
        *("--output-dir", str(tmp_path / "out"), "--no-cache"),
    ]
    result = CliRunner().invoke(cli, args, env={"PASSBENCH_DATA_DIR": str(data_dir)})
    assert result.exit_code == 0, result.output

    raw_files = list((tmp_path / "out").glob("*--bigcodebench-hard-complete--vllm-0.8-2.jsonl"))
    assert len(raw_files) == 1, list((tmp_path / "out").iterdir())
    rows: list[dict[str, Any]] = [json.loads(line) for line in raw_files[0].open()]
    loaded = get_benchmark("bigcodebench").load(None, "hard", data=DataSettings(data_dir=data_dir))
    tasks = loaded.tasks[:2]
    assert sorted((r["task_id"], r["sample_index"]) for r in rows) == [
        (t.task_id, k) for t in tasks for k in range(2)
    ]
    prompts = {t.task_id: t.prompts["complete"] for t in tasks}
    # no chat template: the prompt is completed as is and kept in front, as officially
    assert all(r["raw_solution"].startswith(prompts[r["task_id"]]) for r in rows)
    assert all(r["provider"] == "vllm" and r["usage"]["output_tokens"] <= 16 for r in rows)
    sanitized = raw_files[0].with_name(raw_files[0].stem + "-sanitized_calibrated.jsonl")
    assert sum(1 for _ in sanitized.open()) == 4


if __name__ == "__main__":  # vLLM's engine process re-imports the main module under spawn
    sys.exit(pytest.main([__file__, "-q"]))
