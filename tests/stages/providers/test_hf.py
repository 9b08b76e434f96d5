"""The hf provider with a tiny randomly initialised GPT-2 and a tokenizer built here (no Hub).

The model's words are random, so the tests check what does not depend on them: prompt
rendering through the chat template, prefill, batching, n samples, stop sequences, seeds,
token accounting.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.core.records import Task
from passbench.stages.providers.base import ProviderRequest
from passbench.stages.providers.hf import cut_at_stop, render_prompt

from .helpers import chat_prompt, config, run, text_prompt

# torch and transformers (the `hf` extra, installed by scripts/setup.sh --dev) are imported by
# the tests that use them, not when the suite is collected (together they take seconds).


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from .tiny_models import make_tiny_gpt2

    return make_tiny_gpt2(tmp_path_factory.mktemp("chat-model"), chat=True)


@pytest.fixture(scope="module")
def base_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from .tiny_models import make_tiny_gpt2

    return make_tiny_gpt2(tmp_path_factory.mktemp("base-model"), chat=False)


def test_render_prompt_with_template_and_prefill(chat_model: Path) -> None:
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(chat_model)
    request = ProviderRequest(text="add", messages=({"role": "user", "content": "add"},))
    assert (
        render_prompt(tokenizer, request, direct_completion=False)
        == "<|user|>add<|end|><|assistant|>"
    )
    prefilled = ProviderRequest(
        text="add", messages=request.messages, response_prefix="```python\n"
    )
    assert (
        render_prompt(tokenizer, prefilled, direct_completion=False)
        == "<|user|>add<|end|><|assistant|>```python\n"
    )
    assert render_prompt(tokenizer, prefilled, direct_completion=True) == "add```python\n"


def test_rendering_matches_the_official_local_backends(chat_model: Path) -> None:
    import transformers

    from passbench.stages import prompts

    tokenizer = transformers.AutoTokenizer.from_pretrained(chat_model)
    task = Task(
        benchmark="bigcodebench",
        task_id="BigCodeBench/0",
        entry_point="task_func",
        prompts={"complete": "def task_func(a):\n    pass\n"},
        code_prompt="",
        test="",
        canonical_solution="",
    )

    def apply(messages, add_generation_prompt):  # type: ignore[no-untyped-def]
        return tokenizer.apply_chat_template(
            list(messages), tokenize=False, add_generation_prompt=add_generation_prompt
        )

    for prefill in (True, False):
        prompt = prompts.build_prompt(
            task, "complete", chat=True, prefill=prefill, chat_template=True
        )
        request = ProviderRequest(
            text=prompt.text, messages=prompt.messages, response_prefix=prompt.response_prefix
        )
        ours = render_prompt(tokenizer, request, direct_completion=False)
        assert ours == prompts.render_chat_template(prompt, apply)


def test_cut_at_stop() -> None:
    assert cut_at_stop("a\ndef b\nclass c", ["\nclass ", "\ndef "]) == ("a", True)
    assert cut_at_stop("abc", ["x"]) == ("abc", False)


def test_chat_model_generates_batched_samples(chat_model: Path) -> None:
    cfg = config(
        str(chat_model),
        provider="hf",
        temperature=0.8,
        max_new_tokens=6,
        seed=1,
        options={"device": "cpu", "batch_size": 4},
    )
    prompts = [chat_prompt(f"T/{i}", f"add {i}", prefix="```python\n") for i in range(5)]
    completions, runner = run(cfg, prompts, n_samples=3)

    assert len(completions) == 15
    assert sorted({(c.task_id, c.sample_index) for c in completions}) == [
        (f"T/{i}", k) for i in range(5) for k in range(3)
    ]
    assert runner.capabilities.chat and runner.capabilities.prefill
    assert all(c.usage.output_tokens <= 6 for c in completions)
    assert runner.usage.output_tokens > 0 and runner.usage.input_tokens > 0
    assert all(c.provider == "hf" and c.finish_reason in ("stop", "length") for c in completions)
    batcher = runner.provider._batcher  # type: ignore[attr-defined]
    assert batcher.batches_run < 5  # 5 prompts at batch size 4 -> 2 batches, never one per prompt


def test_same_seed_same_text(base_model: Path) -> None:
    cfg = config(
        str(base_model),
        provider="hf",
        temperature=1.0,
        max_new_tokens=8,
        seed=7,
        options={"device": "cpu"},
    )
    first, _ = run(cfg, [text_prompt("T/0", "def add ( a , b ) :")])
    second, _ = run(cfg, [text_prompt("T/0", "def add ( a , b ) :")])
    assert first[0].text == second[0].text


def test_base_model_is_direct_completion_and_stops(base_model: Path) -> None:
    cfg = config(
        str(base_model), provider="hf", max_new_tokens=12, stop=[" "], options={"device": "cpu"}
    )
    completions, runner = run(cfg, [chat_prompt("T/0", "def add")])
    assert not runner.capabilities.chat  # no chat template: the text is completed as is
    assert " " not in completions[0].text
