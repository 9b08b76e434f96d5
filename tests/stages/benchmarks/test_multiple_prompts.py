"""MultiPL-E's prompts: base models as MultiPL-E's own generation, chat models as passbench's
documented choice (a language-named instruction asking for a fenced block)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passbench.core.errors import DatasetError
from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.multiple import LANGUAGES, parse_multiple
from passbench.stages.prompts import build_prompt, stop_sequences

END_MARKERS = ("<|endoftext|>", "<|endofmask|>", "</s>")


def _task(data_dir: Path, key: str, task_id: str = "HumanEval_53_add") -> Task:
    data = DataSettings(data_dir=data_dir, download=False)
    return get_benchmark(f"multipl-e-{key}").load(data=data).get(task_id)


@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_base_models_complete_the_dataset_prompt_and_stop_at_its_stop_tokens(
    data_dir: Path, key: str
) -> None:
    # multipl_e/completions.py: prompts=[problem["prompt"]], stop=problem["stop_tokens"]
    task = _task(data_dir, key)
    prompt = build_prompt(task, "complete", chat=False)
    assert prompt.text == task.prompts["complete"] and prompt.messages == ()
    assert stop_sequences(False, benchmark=f"multipl-e-{key}") == LANGUAGES[key].stop_tokens


def test_chat_models_are_asked_for_a_fenced_block_in_the_language(data_dir: Path) -> None:
    task = _task(data_dir, "lua")
    prompt = build_prompt(task, "complete", chat=True)
    assert prompt.text == (
        "Please provide a self-contained Lua program that solves the following problem in a "
        f"markdown code block:\n```lua\n{task.prompts['complete'].strip()}\n```\n"
    )
    assert prompt.response_prefix == (
        "Below is a Lua program with a self-contained function that solves the problem and "
        "passes corresponding tests:\n```lua\n"
    )
    # the same message for API and local chat templates; a prefix override still works
    assert build_prompt(task, "complete", chat=True, chat_template=True).text == prompt.text
    other = build_prompt(task, "complete", chat=True, instruction_prefix="Solve:", prefill=False)
    assert other.text.startswith("Solve:\n```lua\n") and other.response_prefix == ""


def test_chat_stops_have_no_python_markers(data_dir: Path) -> None:
    name = "multipl-e-js"
    # a prefilled fence ends at the closing fence; "\nprint(" etc. would cut code here
    assert stop_sequences(True, benchmark=name) == (*END_MARKERS, "\n```\n")
    assert stop_sequences(True, benchmark=name, prefill=False) == END_MARKERS
    js = build_prompt(_task(data_dir, "js"), "complete", chat=True)
    assert js.response_prefix.endswith("```javascript\n")


def test_a_record_whose_stop_tokens_differ_is_refused(data_dir: Path, tmp_path: Path) -> None:
    rows = json.loads((data_dir / "multipl-e" / "multipl-e-humaneval-js.json").read_text())[:2]
    rows[0]["stop_tokens"] = list(LANGUAGES["js"].stop_tokens)  # agreeing: accepted
    rows[1]["stop_tokens"] = ["\n}"]
    path = tmp_path / "js.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(DatasetError, match=r"js.json:2: field 'stop_tokens': expected"):
        parse_multiple(path, LANGUAGES["js"], "multipl-e-js")
    path.write_text(json.dumps(rows[:1]))
    assert len(parse_multiple(path, LANGUAGES["js"], "multipl-e-js")) == 1
