"""What gets scanned: each sample's code, language (the task's, else its benchmark's),
libraries and verdict, from results and samples files of any benchmark (the real task data)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from passbench.analysis.security.inputs import read_input, security_path_for, task_language
from passbench.analysis.security.languages import detector_language
from passbench.core.errors import InputError
from passbench.stages.benchmarks import DataSettings
from passbench.stages.results.taskinfo import load_catalog


@pytest.fixture
def data(data_dir: Path, tmp_path: Path) -> DataSettings:
    return DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_bigcodebench_samples_carry_their_tasks_libraries(
    tmp_path: Path, data: DataSettings
) -> None:
    samples = _write(
        tmp_path / "m--bigcodebench-instruct.jsonl",
        [
            {"task_id": "BigCodeBench/13", "solution": "import ftplib\n"},
            {"task_id": "BigCodeBench/13", "solution": "import os\n"},
            {"task_id": "BigCodeBench/0", "completion": "    return 1\n"},
        ],
    )
    source = read_input(samples, data=data)
    assert source.benchmark == "bigcodebench" and source.kind == "samples"
    first, second, completion = source.items
    assert (first.key, second.key) == ("BigCodeBench/13#0", "BigCodeBench/13#1")
    assert {"ftplib", "subprocess"} <= set(first.libs)
    assert first.language == "Python" and first.status is None
    # a completion is scanned as the program it completes: the Complete prompt, then it
    catalog = load_catalog("bigcodebench", None, data)
    prompt = catalog.tasks["BigCodeBench/0"].prompts["complete"]
    assert completion.code == prompt + "    return 1\n"
    assert source.default_output == tmp_path / "m--bigcodebench-instruct_security.json"
    assert security_path_for(samples) == source.default_output


def test_a_multipl_e_sample_is_scanned_as_its_language(tmp_path: Path, data: DataSettings) -> None:
    samples = _write(
        tmp_path / "cpp.jsonl",
        [{"task_id": "HumanEval_0_has_close_elements", "solution": "int main() {}\n"}],
    )
    (item,) = read_input(samples, benchmark="multipl-e-cpp", data=data).items
    assert detector_language(item.language) == "cpp"  # MultiPL-E's tasks name it "cpp"


def test_a_tasks_own_language_wins(data: DataSettings) -> None:
    task = load_catalog("bigcodebench", None, data).tasks["BigCodeBench/0"]
    assert task_language(task, "bigcodebench") == "Python"
    tagged = replace(task, metadata={**task.metadata, "language": "javascript"})
    assert task_language(tagged, "bigcodebench") == "javascript"
    assert task_language(None, "multipl-e-js") == "JavaScript"


def test_a_file_of_another_kind_is_refused_in_one_line(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match=r"notes\.txt: expected an _eval_results\.json"):
        read_input(other)
    with pytest.raises(InputError, match="is a folder"):
        read_input(tmp_path)
