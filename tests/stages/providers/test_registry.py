"""The registry: names, lazy imports, and the error that names the pip extra."""

from __future__ import annotations

import sys

import pytest

import passbench.stages.providers as providers
from passbench.core.errors import ProviderError, UnknownNameError
from passbench.stages.providers import Provider, create_provider, load_model_config, provider_names
from passbench.stages.providers.registry import require_sdk


def test_names() -> None:
    assert provider_names() == ["anthropic", "google", "hf", "mistral", "ollama", "openai", "vllm"]


def test_public_api_is_pinned() -> None:
    assert providers.__all__ == sorted(providers.__all__)
    assert set(providers.__all__) == {
        "Capabilities",
        "Choice",
        "GenerationParams",
        "ModelConfig",
        "ModelRunner",
        "Prices",
        "Provider",
        "ProviderCallError",
        "ProviderRequest",
        "ProviderResponse",
        "ResponseCache",
        "UsageTotals",
        "create_provider",
        "generate_completions",
        "load_model_config",
        "provider_names",
    }


def test_importing_passbench_providers_imports_no_sdk() -> None:
    # in a fresh interpreter: other tests in this one may have imported the SDKs already
    code = (
        "import sys, importlib, passbench.stages.providers, passbench.stages.providers.runner;"
        "[importlib.import_module('passbench.stages.providers.' + name) for name in"
        " ('openai', 'anthropic', 'google', 'mistral', 'ollama', 'vllm', 'hf')];"
        "sdks=('openai','anthropic','google.genai','mistralai','ollama','torch','vllm');"
        "bad=[m for m in sdks if m in sys.modules];"
        "assert not bad, bad"
    )
    import subprocess

    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_provider() -> None:
    with pytest.raises(UnknownNameError, match="known: anthropic, google"):
        create_provider(load_model_config("m", flags={"provider": "nope"}), {})


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mistralai", None)  # an import of it now fails
    with pytest.raises(ProviderError, match=r"pip install 'passbench\[mistral\]'"):
        require_sdk("mistralai", "mistral")


def test_providers_satisfy_the_protocol() -> None:
    pytest.importorskip("openai")
    provider = create_provider(
        load_model_config("m", flags={"provider": "openai", "base_url": "http://127.0.0.1:9/v1"}),
        {},
    )
    assert isinstance(provider, Provider)
