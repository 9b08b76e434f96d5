"""cyberseceval-instruct on the real instruct-v2 file: counts, prompts, ids, refusing to run."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from passbench.core.errors import DatasetError, InputError
from passbench.stages.benchmarks import DataSettings, get_benchmark, task_language
from passbench.stages.benchmarks.cyberseceval import LANGUAGES, parse_instruct
from passbench.stages.prompts import build_prompt, stop_sequences

NAME = "cyberseceval-instruct"
RELPATH = Path("security") / "cyberseceval-instruct-v2.json"
#: PROVENANCE.md abbreviates one language
_PROVENANCE_NAMES = {"js": "javascript"}


@pytest.fixture(scope="module")
def rows(data_dir: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads((data_dir / RELPATH).read_text(encoding="utf-8"))
    return rows


def _provenance_counts(data_dir: Path) -> dict[str, int]:
    """The per-language counts PROVENANCE.md states ("8 languages; python 282, js 244, ...")."""
    text = (data_dir / "security" / "PROVENANCE.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if "cyberseceval-instruct-v2.json" in line)
    listed = re.search(r"languages; ([^)]*)\)", row)
    assert listed is not None, row
    counts = {}
    for item in listed.group(1).split(","):
        name, count = item.split()
        counts[_PROVENANCE_NAMES.get(name, name)] = int(count)
    return counts


def test_counts_per_language_are_provenances(data_dir: Path, offline: DataSettings) -> None:
    bench = get_benchmark(NAME)
    full = bench.load(None, "full", data=offline)
    expected = _provenance_counts(data_dir)
    assert Counter(task.metadata["language"] for task in full) == expected
    assert len(full) == sum(expected.values()) == 1681
    assert full.sha256.startswith("df19f7c5")  # PROVENANCE's sha256
    assert set(bench.info.subsets) == {"full", *expected} and bench.info.subsets[:2] == (
        "full",
        "python",
    )
    for language, count in expected.items():
        part = bench.load(None, language, data=offline)
        assert len(part) == count
        assert {task.metadata["language"] for task in part} == {language}
        assert {task_language(task) for task in part} == {LANGUAGES[language].title}


def test_tasks_carry_the_rows_prompt_and_fields(
    rows: list[dict[str, object]], offline: DataSettings
) -> None:
    full = get_benchmark(NAME).load(None, "full", data=offline)
    assert len(full) == len(rows)
    for task, row in zip(full, rows, strict=True):  # the file's order
        assert task.task_id == f"CyberSecEval/instruct/{row['language']}/{row['prompt_id']}"
        assert task.prompts == {"complete": row["test_case_prompt"]}
        for field in ("language", "prompt_id", "cwe_identifier", "pattern_id", "origin_code"):
            assert task.metadata[field] == row[field], (task.task_id, field)
        assert task.metadata["rule"] == row["rule"]  # None for the semgrep patterns
        assert not task.test and not task.canonical_solution


def test_prompts_are_the_dataset_text_alone(offline: DataSettings) -> None:
    """As CyberSecEval asks: the prompt as the only user message, no system prompt, no
    prefill, no stop sequences; chat models only."""
    full = get_benchmark(NAME).load(None, "full", data=offline)
    for task in full:
        for chat_template in (False, True):
            prompt = build_prompt(task, "complete", chat=True, chat_template=chat_template)
            assert prompt.text == task.prompts["complete"]
            assert prompt.messages == ({"role": "user", "content": task.prompts["complete"]},)
            assert prompt.response_prefix == ""
    with pytest.raises(InputError, match="chat models only"):
        build_prompt(full.tasks[0], "complete", chat=False)
    assert stop_sequences(True, benchmark=NAME) == ()


def test_ids_round_trip_and_bare_numbers_are_python(offline: DataSettings) -> None:
    bench = get_benchmark(NAME)
    full = bench.load(None, "full", data=offline)
    for task in full:
        parsed = bench.parse_task_id(task.task_id)
        assert parsed is not None and str(parsed) == task.task_id
        assert parsed.number == task.metadata["prompt_id"]
    assert bench.info.id_prefix == "CyberSecEval/instruct/python/"
    for wrong in (
        "CyberSecEval/instruct/ruby/3",  # a language the set does not have
        "CyberSecEval/instruct/python/01",
        "CyberSecEval/autocomplete/python/1565",
        "CyberSecEval/instruct/python/",
    ):
        assert bench.parse_task_id(wrong) is None, wrong


def test_no_tests_to_run(offline: DataSettings) -> None:
    bench = get_benchmark(NAME)
    task = bench.load(None, "python", data=offline).tasks[0]
    assert not bench.info.executable and bench.info.scored_by == "passbench security"
    with pytest.raises(InputError) as caught:
        bench.program(task, "print(1)\n", key="k", timeout_s=5.0)
    message = str(caught.value)
    assert "\n" not in message and "passbench security SAMPLES" in message


def test_the_samples_record_language_and_weakness(offline: DataSettings) -> None:
    bench = get_benchmark(NAME)
    task = bench.load(None, "rust", data=offline).tasks[0]
    fields = bench.sample_fields(task)  # type: ignore[attr-defined]
    assert fields == {
        "language": "rust",
        "cwe_identifier": task.metadata["cwe_identifier"],
        "pattern_id": task.metadata["pattern_id"],
    }


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "instruct.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_bad_rows_name_file_item_and_field(rows: list[dict[str, object]], tmp_path: Path) -> None:
    good = rows[:3]
    assert len(parse_instruct(_write(tmp_path, good))) == 3
    ruby = [*good[:1], {**good[1], "language": "ruby"}]
    with pytest.raises(DatasetError, match=r"instruct\.json:2: field 'language': 'ruby'"):
        parse_instruct(_write(tmp_path, ruby))
    twice = [good[0], good[0]]
    with pytest.raises(DatasetError, match=r":2: field 'prompt_id': .* appears twice"):
        parse_instruct(_write(tmp_path, twice))
    no_prompt = [{key: value for key, value in good[0].items() if key != "test_case_prompt"}]
    with pytest.raises(DatasetError, match=r":1: field 'test_case_prompt': missing"):
        parse_instruct(_write(tmp_path, no_prompt))
    autocomplete = [{**good[0], "variant": "autocomplete"}]
    with pytest.raises(DatasetError, match="field 'variant'"):
        parse_instruct(_write(tmp_path, autocomplete))
