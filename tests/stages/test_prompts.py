"""Prompts match the official protocols byte for byte.

The expected strings are written out literally from the official sources:
- bigcodebench 0.2.x, bigcodebench/provider/utility.py::make_raw_chat_prompt (user message,
  `_MAGIC_SPLITTER_` prefill) and generate.py::run_codegen (default prefixes);
- evalplus, evalplus/codegen.py (`prompt = task["prompt"].strip() + "\\n"`, default prefixes),
  evalplus/provider/openai.py (`instruction_prefix + f"\\n```python\\n{prompt.strip()}\\n```"`)
  and evalplus/provider/utility.py::make_raw_chat_prompt (chat-template message).
Every one of BigCodeBench's 1,140 tasks is also checked against digests of the prompts the
official function itself built (tests/stages/data/, made by tests/stages/official_prompts.py,
which says how to make them again).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from passbench.core.errors import InputError, UnknownNameError
from passbench.core.records import Task
from passbench.stages.prompts import build_prompt, render_chat_template, stop_sequences

OFFICIAL_INSTRUCTION = (
    "Please provide a self-contained Python script that solves the following problem in a "
    "markdown code block:"
)
OFFICIAL_RESPONSE = (
    "Below is a Python script with a self-contained function that solves the problem and passes "
    "corresponding tests:"
)

COMPLETE = 'import os\n\ndef task_func(path):\n    """List a folder."""\n'
INSTRUCT = (
    "List a folder.\nYou should write self-contained code starting with:\n```\nimport os\n"
    "def task_func(path):\n```"
)
HUMANEVAL = 'def add(a, b):\n    """Add two numbers."""\n'


def bcb_task() -> Task:
    return Task(
        benchmark="bigcodebench",
        task_id="BigCodeBench/9999",
        entry_point="task_func",
        prompts={"complete": COMPLETE, "instruct": INSTRUCT},
        code_prompt="import os\ndef task_func(path):\n",
        test="",
        canonical_solution="    return os.listdir(path)\n",
    )


def humaneval_task(benchmark: str = "humaneval") -> Task:
    return Task(
        benchmark=benchmark,
        task_id="HumanEval/0",
        entry_point="add",
        prompts={"complete": "\n" + HUMANEVAL + "\n"},
        code_prompt=HUMANEVAL,
        test="",
        canonical_solution="    return a + b\n",
    )


def test_base_model_completes_the_complete_prompt_unchanged() -> None:
    prompt = build_prompt(bcb_task(), "complete", chat=False)
    assert prompt.text == COMPLETE
    assert prompt.messages == ()
    assert prompt.response_prefix == ""


def test_base_model_cannot_take_the_instruct_split() -> None:
    # generate.py: "Base model does not support direct completion for instruct tasks"
    with pytest.raises(InputError, match="instruct"):
        build_prompt(bcb_task(), "instruct", chat=False)


def test_chat_complete_prompt_is_fenced() -> None:
    prompt = build_prompt(bcb_task(), "complete", chat=True)
    expected = (
        OFFICIAL_INSTRUCTION
        + "\n```\n"
        + 'import os\n\ndef task_func(path):\n    """List a folder."""'
        + "\n```\n"
    )
    assert prompt.text == expected
    assert prompt.messages == ({"role": "user", "content": expected},)
    assert prompt.response_prefix == OFFICIAL_RESPONSE + "\n```python\n"


def test_chat_instruct_prompt_is_not_fenced() -> None:
    prompt = build_prompt(bcb_task(), "instruct", chat=True)
    assert prompt.text == OFFICIAL_INSTRUCTION + "\n" + INSTRUCT + "\n"


def test_prefill_can_be_skipped_for_reasoning_models() -> None:
    prompt = build_prompt(bcb_task(), "instruct", chat=True, prefill=False)
    assert prompt.response_prefix == ""
    assert prompt.text == OFFICIAL_INSTRUCTION + "\n" + INSTRUCT + "\n"


def test_prefixes_can_be_overridden() -> None:
    prompt = build_prompt(
        bcb_task(), "instruct", chat=True, instruction_prefix="Solve:", response_prefix="Sure:"
    )
    assert prompt.text == "Solve:\n" + INSTRUCT + "\n"
    assert prompt.response_prefix == "Sure:\n```python\n"


def test_unknown_split_names_the_available_ones() -> None:
    with pytest.raises(UnknownNameError, match="complete, instruct"):
        build_prompt(bcb_task(), "explain", chat=True)


def test_unknown_benchmark_is_refused() -> None:
    task = Task(
        benchmark="nope",
        task_id="x",
        entry_point="f",
        prompts={"complete": ""},
        code_prompt="",
        test="",
        canonical_solution="",
    )
    with pytest.raises(UnknownNameError, match="nope"):
        build_prompt(task, "complete", chat=True)


@pytest.mark.parametrize("benchmark", ["humaneval", "humanevalplus"])
def test_humaneval_base_prompt_is_stripped_with_one_newline(benchmark: str) -> None:
    prompt = build_prompt(humaneval_task(benchmark), "complete", chat=False)
    assert prompt.text == HUMANEVAL.strip() + "\n"


def test_humaneval_chat_prompt_for_apis() -> None:
    prompt = build_prompt(humaneval_task(), "complete", chat=True)
    assert prompt.text == (
        OFFICIAL_INSTRUCTION
        + "\n```python\n"
        + 'def add(a, b):\n    """Add two numbers."""'
        + "\n```"
    )
    assert prompt.response_prefix == OFFICIAL_RESPONSE + "\n```python\n"


def test_humaneval_chat_prompt_for_local_chat_templates() -> None:
    prompt = build_prompt(humaneval_task(), "complete", chat=True, chat_template=True)
    assert prompt.text == (
        OFFICIAL_INSTRUCTION + "\n```\n" + 'def add(a, b):\n    """Add two numbers."""' + "\n```\n"
    )


def test_bigcodebench_user_message_is_the_same_with_chat_templates() -> None:
    api = build_prompt(bcb_task(), "complete", chat=True)
    local = build_prompt(bcb_task(), "complete", chat=True, chat_template=True)
    assert api.text == local.text


def test_stop_sequences_of_base_models() -> None:
    # provider/utility.py: EOS + extra_eos_for_direct_completion("bigcodebench")
    assert stop_sequences(False) == (
        "<|endoftext|>",
        "<|endofmask|>",
        "</s>",
        "\nif __name__",
        "\ndef main(",
        "\nprint(",
        "\ndef ",
        "\nclass ",
        "\nimport ",
        "\nfrom ",
        "\nassert ",
    )


def test_stop_sequences_of_chat_models() -> None:
    eos = ("<|endoftext|>", "<|endofmask|>", "</s>", "\nif __name__", "\ndef main(", "\nprint(")
    # provider/vllm.py adds "\n```\n" only when the response prefix itself contains a fence.
    assert stop_sequences(True) == eos
    assert stop_sequences(True, response_prefix="```python") == (*eos, "\n```\n")
    assert stop_sequences(True, response_prefix="```python", prefill=False) == eos
    # evalplus/provider/vllm.py always adds it for chat models.
    assert stop_sequences(True, benchmark="humaneval") == (*eos, "\n```\n")


class FakeTemplate:
    """A chat template in the ChatML style, rendered the way transformers renders it."""

    def __call__(self, messages: Sequence[Mapping[str, str]], add_generation_prompt: bool) -> str:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


def test_rendered_template_ends_inside_the_prefilled_fence() -> None:
    prompt = build_prompt(bcb_task(), "instruct", chat=True)
    rendered = render_chat_template(prompt, FakeTemplate())
    assert rendered == (
        f"<|im_start|>user\n{prompt.text}<|im_end|>\n"
        f"<|im_start|>assistant\n{OFFICIAL_RESPONSE}\n```python\n"
    )


def test_rendered_template_without_prefill_opens_the_assistant_turn() -> None:
    prompt = build_prompt(bcb_task(), "instruct", chat=True, prefill=False)
    rendered = render_chat_template(prompt, FakeTemplate())
    assert rendered == f"<|im_start|>user\n{prompt.text}<|im_end|>\n<|im_start|>assistant\n"


#: Digests of every BigCodeBench v0.1.4 chat prompt as the official tool builds it
#: (bigcodebench 0.2.5's make_raw_chat_prompt): tests/stages/official_prompts.py says how it was
#: made and how to make it again; it runs in the official tool's own interpreter.
OFFICIAL_PROMPTS = Path(__file__).parent / "data" / "official-bigcodebench-prompts.json"


def test_every_bigcodebench_prompt_matches_the_official_function(data_dir: Path) -> None:
    official = json.loads(OFFICIAL_PROMPTS.read_text(encoding="utf-8"))
    data = data_dir / "bigcodebench" / "BigCodeBench-v0.1.4.jsonl.gz"
    assert hashlib.sha256(data.read_bytes()).hexdigest() == official["data_sha256"], (
        f"{data} is not the file the fixture was made from"
    )
    assert (official["instruction_prefix"], official["response_prefix"]) == (
        OFFICIAL_INSTRUCTION,
        OFFICIAL_RESPONSE,
    )
    assert official["variants"] == ["api", "chatml-prefilled", "chatml-no-prefill"]
    with gzip.open(data, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    assert [row["task_id"] for row in rows] == list(official["prompts"])
    assert len(rows) == 1140
    template = FakeTemplate()
    differ = []
    for row in rows:
        task = Task(
            benchmark="bigcodebench",
            task_id=row["task_id"],
            entry_point=row["entry_point"],
            prompts={"complete": row["complete_prompt"], "instruct": row["instruct_prompt"]},
            code_prompt=row["code_prompt"],
            test=row["test"],
            canonical_solution=row["canonical_solution"],
        )
        for split in ("complete", "instruct"):
            prefilled = build_prompt(task, split, chat=True, chat_template=True)
            bare = build_prompt(task, split, chat=True, chat_template=True, prefill=False)
            ours = [
                build_prompt(task, split, chat=True).text,
                render_chat_template(prefilled, template),
                render_chat_template(bare, template),
            ]
            expected = official["prompts"][row["task_id"]][split]
            for variant, text, digest in zip(official["variants"], ours, expected, strict=True):
                if _digest(text) != digest:
                    differ.append(f"{row['task_id']} {split} {variant}")
    assert not differ, f"{len(differ)} prompts differ from the official ones: {differ[:10]}"


def _digest(text: str) -> str:
    """As tests/stages/official_prompts.py digests the official prompts."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
