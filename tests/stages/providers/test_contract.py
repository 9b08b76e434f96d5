"""One contract, every API provider: each is driven through its real SDK against its vendor's
fake server, and must turn the same situations into the same records and decisions."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from passbench.core.errors import PermanentProviderError
from passbench.stages.providers import Capabilities, Provider, create_provider

from .conftest import FAST_RETRY
from .helpers import chat_prompt, config, run
from .servers.anthropic_fake import AnthropicFake
from .servers.base import FakeServer
from .servers.google_fake import GoogleFake
from .servers.mistral_fake import MistralFake
from .servers.ollama_fake import OllamaFake
from .servers.openai_fake import OpenAIFake


@dataclass(frozen=True)
class Backend:
    provider: str
    sdk: str
    server: Callable[[], FakeServer]
    base_url: Callable[[str], str]
    environ: dict[str, str]


BACKENDS = [
    Backend("openai", "openai", OpenAIFake, lambda url: f"{url}/v1", {"OPENAI_API_KEY": "k"}),
    Backend("anthropic", "anthropic", AnthropicFake, str, {"ANTHROPIC_API_KEY": "k"}),
    Backend("google", "google.genai", GoogleFake, str, {"GEMINI_API_KEY": "k"}),
    Backend("mistral", "mistralai", MistralFake, str, {"MISTRAL_API_KEY": "k"}),
    Backend("ollama", "ollama", OllamaFake, str, {}),
]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.fixture(params=BACKENDS, ids=[b.provider for b in BACKENDS])
def backend(request: pytest.FixtureRequest) -> Iterator[tuple[Backend, FakeServer]]:
    spec: Backend = request.param
    if not _installed(spec.sdk):
        # every provider SDK is a dev dependency (scripts/setup.sh --dev): missing is a failure
        pytest.fail(f"{spec.sdk} is not installed: pip install -e '.[dev,providers]'")
    server = spec.server()
    yield spec, server
    server.close()


def _config(spec: Backend, server: FakeServer, model: str = "contract-model", **flags: object):  # type: ignore[no-untyped-def]
    return config(model, provider=spec.provider, base_url=spec.base_url(server.url), **flags)


def test_is_a_provider(backend: tuple[Backend, FakeServer]) -> None:
    spec, server = backend
    provider = create_provider(_config(spec, server), spec.environ)
    assert isinstance(provider, Provider)
    assert provider.name == spec.provider and provider.model == "contract-model"
    assert isinstance(provider.capabilities, Capabilities)
    asyncio.run(provider.aclose())


def test_samples_become_completions(backend: tuple[Backend, FakeServer]) -> None:
    spec, server = backend
    cfg = _config(spec, server, temperature=0.5, max_new_tokens=64)
    completions, runner = run(
        cfg,
        [chat_prompt("T/0", "alpha"), chat_prompt("T/1", "beta")],
        n_samples=3,
        environ=spec.environ,
    )
    assert [(c.task_id, c.sample_index) for c in completions] == [
        (t, i) for t in ("T/0", "T/1") for i in range(3)
    ]
    for completion in completions:
        assert completion.provider == spec.provider and completion.model
        assert ("alpha" if completion.task_id == "T/0" else "beta") in completion.text
        assert completion.finish_reason
        assert completion.latency_s > 0
        assert completion.params["temperature"] == 0.5 and "sent" in completion.params
    assert runner.usage.samples == 6 and runner.usage.output_tokens > 0
    assert sum(c.usage.output_tokens for c in completions) == runner.usage.output_tokens
    # a provider that takes n answers all samples of a prompt in one call
    expected_calls = 2 if runner.capabilities.max_n >= 3 else 6
    assert runner.usage.requests == len(server.requests) == expected_calls


def test_transient_failures_are_retried(backend: tuple[Backend, FakeServer]) -> None:
    spec, server = backend
    server.fail(429, headers={"Retry-After": "0"})
    server.fail(503)
    server.malformed(body=b'{"truncated": ')
    completions, runner = run(
        _config(spec, server), [chat_prompt("T/0", "a")], environ=spec.environ, retry=FAST_RETRY
    )
    assert len(completions) == 1
    assert runner.usage.retries == 3 and runner.usage.rate_limited == 1


def test_unknown_model_stops_the_run(backend: tuple[Backend, FakeServer]) -> None:
    spec, server = backend
    cfg = _config(spec, server, model="missing-model", concurrency=1)
    with pytest.raises(PermanentProviderError, match="missing-model"):
        run(
            cfg,
            [chat_prompt(f"T/{i}", "a") for i in range(5)],
            environ=spec.environ,
            retry=FAST_RETRY,
        )
    assert len(server.requests) == 1
