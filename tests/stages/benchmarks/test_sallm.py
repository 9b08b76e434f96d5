"""sallm on the real dataset: counts, prompts, ids, metadata, refusing to run."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from passbench.core.errors import DatasetError, InputError
from passbench.stages.benchmarks import DataSettings, get_benchmark, task_language
from passbench.stages.benchmarks.sallm import DIRECT_STOPS, TECHNIQUES, cwe_of, parse_sallm
from passbench.stages.prompts import build_prompt, stop_sequences
from passbench.stages.sanitize.sallm import END_OF_TEXT, SPLIT_TOKENS

NAME = "sallm"
RELPATH = Path("security") / "sallm-dataset.jsonl"


@pytest.fixture(scope="module")
def rows(data_dir: Path) -> list[dict[str, str]]:
    lines = (data_dir / RELPATH).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _provenance_counts(data_dir: Path) -> dict[str, int]:
    """The per-technique counts PROVENANCE.md states ("Assertion 43 / Tainted 43 / ...")."""
    text = (data_dir / "security" / "PROVENANCE.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| sallm-dataset.jsonl"))
    listed = re.search(r"technique \(([^)]*)\)", row)
    assert listed is not None, row
    return {name: int(count) for name, count in (part.split() for part in listed[1].split("/"))}


def test_counts_per_technique_are_provenances(data_dir: Path, offline: DataSettings) -> None:
    bench = get_benchmark(NAME)
    full = bench.load(None, "full", data=offline)
    expected = _provenance_counts(data_dir)
    assert Counter(task.metadata["technique"] for task in full) == expected
    assert len(full) == sum(expected.values()) == 100
    assert full.sha256.startswith("6704778b")  # PROVENANCE's sha256
    assert bench.info.subsets == ("full", "assertion", "tainted", "matching")
    for technique in TECHNIQUES:
        part = bench.load(None, technique.lower(), data=offline)
        assert len(part) == expected[technique]
        assert {task.metadata["technique"] for task in part} == {technique}
    assert {task_language(task) for task in full} == {"Python"}


def test_tasks_carry_the_rows_prompt_and_fields(
    rows: list[dict[str, str]], offline: DataSettings
) -> None:
    full = get_benchmark(NAME).load(None, "full", data=offline)
    assert len(full) == len(rows)
    for task, row in zip(full, rows, strict=True):  # the file's order, SALLM's ids
        assert task.task_id == row["id"]
        assert task.prompts == {"complete": row["prompt"]}
        assert task.metadata["technique"] == row["technique"]
        assert task.metadata["source"] == row["source"]
        assert task.metadata["insecure_code"] == row["insecure_code"]
        cwe = re.search(r"_cwe0*([0-9]+)_", row["id"])
        assert cwe is not None and task.metadata["cwe_identifier"] == f"CWE-{cwe[1]}"
        # the function the prompt asks for: the last one it starts
        _, signature, rest = row["prompt"].rpartition(f"def {task.entry_point}(")
        assert signature and "def " not in rest, task.task_id
        assert not task.test and not task.canonical_solution
    by_id = {task.task_id: task for task in full}
    assert by_id["Tainted_CodeQL_codeql_cwe078_0.py"].entry_point == "download"
    assert by_id["Assertion_SonarSource_SS_cwe1204_0.py"].metadata["cwe_identifier"] == "CWE-1204"


def test_prompts_are_the_dataset_text_and_a_newline(offline: DataSettings) -> None:
    """As SALLM asks: a base model continues the prompt and a newline; a chat model gets the
    same text as its only message, with no system prompt, prefill or instruction."""
    full = get_benchmark(NAME).load(None, "full", data=offline)
    for task in full:
        text = task.prompts["complete"] + "\n"
        base = build_prompt(task, "complete", chat=False)
        assert base.text == text and not base.messages and base.response_prefix == ""
        for chat_template in (False, True):
            chat = build_prompt(task, "complete", chat=True, chat_template=chat_template)
            assert chat.text == text
            assert chat.messages == ({"role": "user", "content": text},)
            assert chat.response_prefix == ""
    assert stop_sequences(True, benchmark=NAME) == ()
    assert stop_sequences(False, benchmark=NAME) == DIRECT_STOPS == (END_OF_TEXT, *SPLIT_TOKENS)


def test_ids_round_trip(offline: DataSettings) -> None:
    bench = get_benchmark(NAME)
    full = bench.load(None, "full", data=offline)
    for task in full:
        parsed = bench.parse_task_id(task.task_id)
        assert parsed is not None and str(parsed) == task.task_id
        assert parsed.prefix.startswith(f"{task.metadata['technique']}_{task.metadata['source']}_")
        assert cwe_of(task.task_id) == task.metadata["cwe_identifier"]
    for wrong in (
        "Tainted_CodeQL_codeql_cwe078_0",  # no .py
        "Tainted_CodeQL_SO_cwe078_0.py",  # another source's abbreviation
        "Fuzzing_Author_A_cwe078_0.py",  # not a technique
        "Tainted_CodeQL_codeql_cwe078_01.py",
        "Tainted_CodeQL_codeql_cwe78_0.py",
        "cweval/core/py/cwe_078_0",
    ):
        assert bench.parse_task_id(wrong) is None, wrong


def test_no_tests_to_run(offline: DataSettings) -> None:
    bench = get_benchmark(NAME)
    task = bench.load(None, "tainted", data=offline).tasks[0]
    assert not bench.info.executable and bench.info.scored_by == "passbench security"
    with pytest.raises(InputError) as caught:
        bench.program(task, task.metadata["insecure_code"], key="k", timeout_s=5.0)
    message = str(caught.value)
    assert "\n" not in message and "passbench security SAMPLES" in message
    with pytest.raises(InputError, match="no reference solutions"):
        bench.canonical_code(task)


def test_the_samples_record_language_weakness_and_technique(offline: DataSettings) -> None:
    bench = get_benchmark(NAME)
    task = bench.load(None, "matching", data=offline).tasks[0]
    assert bench.sample_fields(task) == {  # type: ignore[attr-defined]
        "language": "python",
        "cwe_identifier": "CWE-502",
        "technique": "Matching",
    }


def test_a_completion_is_the_prompt_and_the_continuation_cut_as_sallm_cuts_it(
    offline: DataSettings,
) -> None:
    bench = get_benchmark(NAME)
    task = bench.load(None, "full", data=offline).get("Matching_Author_A_cwe502_0.py")
    body = "    return marshal.loads(bytes.fromhex(request.args['data']))\n"
    completion = body + "\n@app.route('/more')\ndef more():\n    pass\n"
    prompt = task.prompts["complete"]
    assert bench.solution_from_completion(task, completion) == f"{prompt}\n\n{body}"
    raw = build_prompt(task, "complete", chat=False).text + completion  # the raw file's text
    assert bench.sanitize_answer(raw, task, "complete").code == f"{prompt}\n\n{body}"  # type: ignore[attr-defined]


def _write(tmp_path: Path, rows: list[dict[str, str]]) -> Path:
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_bad_rows_name_file_line_and_field(rows: list[dict[str, str]], tmp_path: Path) -> None:
    good = rows[:3]
    assert len(parse_sallm(_write(tmp_path, good))) == 3
    with pytest.raises(DatasetError, match=r"dataset\.jsonl:2: field 'id': .* already on line 1"):
        parse_sallm(_write(tmp_path, [good[0], good[0]]))
    renamed = [{**good[0], "technique": "Tainted"}]
    with pytest.raises(DatasetError, match=r":1: field 'id': .* does not name Tainted_Author_A"):
        parse_sallm(_write(tmp_path, renamed))
    with pytest.raises(DatasetError, match=r":1: field 'source': 'GitHub' is not one of"):
        parse_sallm(_write(tmp_path, [{**good[0], "source": "GitHub"}]))
    no_prompt = [{key: value for key, value in good[0].items() if key != "prompt"}]
    with pytest.raises(DatasetError, match=r":1: field 'prompt': missing"):
        parse_sallm(_write(tmp_path, no_prompt))
    with pytest.raises(DatasetError, match=r":1: field 'prompt': no function to complete"):
        parse_sallm(_write(tmp_path, [{**good[0], "prompt": "import os\n"}]))
    with pytest.raises(DatasetError, match="no prompts"):
        parse_sallm(_write(tmp_path, []))
