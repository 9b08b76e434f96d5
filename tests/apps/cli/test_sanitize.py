"""`passbench sanitize` and `passbench syncheck` on real benchmark data."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from passbench.apps.cli import main
from passbench.apps.cli.sanitize import sanitized_path

REPO = Path(__file__).resolve().parents[3]
SOLUTION_0 = (
    "import itertools\nfrom random import shuffle\n\n"
    "def task_func(numbers=[1, 2]):\n    return 1.0\n"
)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PASSBENCH_OFFLINE", "1")
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def read(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def run(args: list[str], data_dir: Path) -> None:
    main([*args, "--data-dir", str(data_dir)])


def test_output_is_named_like_the_official_tool(tmp_path: Path) -> None:
    assert sanitized_path(tmp_path / "m--bigcodebench-complete.jsonl").name == (
        "m--bigcodebench-complete-sanitized.jsonl"
    )
    assert sanitized_path(tmp_path / "s.jsonl.gz").name == "s-sanitized.jsonl.gz"


def test_sanitize_keeps_the_raw_answer_and_records_failures(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = write(
        tmp_path / "raw.jsonl",
        [
            {"task_id": "BigCodeBench/0", "solution": f"Here:\n```python\n{SOLUTION_0}```\nDone."},
            {"task_id": "BigCodeBench/1", "solution": "I cannot help with that.", "extra": 7},
            {"task_id": "BigCodeBench/2", "completion": "    return {}\n"},
            {"task_id": "BigCodeBench/3", "solution": "<think>\ndef task_func():\n    return 3\n"},
        ],
    )
    run(["sanitize", "--samples", str(samples)], data_dir)
    rows = read(tmp_path / "raw-sanitized.jsonl")
    assert [row["task_id"] for row in rows] == [
        "BigCodeBench/0",
        "BigCodeBench/1",
        "BigCodeBench/2",
        "BigCodeBench/3",
    ]
    assert rows[0]["solution"].startswith("import itertools")
    assert "Here:" in rows[0]["raw_solution"]
    assert "sanitize_error" not in rows[0]
    assert rows[1]["sanitize_error"] == "no definition of 'task_func' found"
    assert rows[1]["extra"] == 7
    # A completion is appended to the Complete prompt, as the official tools do.
    assert rows[2]["raw_solution"].endswith('"""\n    return {}\n')
    assert "def task_func" in rows[2]["solution"]
    assert "completion" not in rows[2]
    err = capsys.readouterr().err
    assert "1 extraction failures" in err
    assert "BigCodeBench/1" in err
    assert "1 taken from thinking sections (no code after them): BigCodeBench/3" in err


def test_resanitizing_starts_from_the_raw_answer(tmp_path: Path, data_dir: Path) -> None:
    samples = write(
        tmp_path / "s.jsonl.gz",
        [
            {
                "task_id": "BigCodeBench/0",
                "solution": "a stale sanitized text",
                "raw_solution": f"```python\n{SOLUTION_0}```",
            }
        ],
    )
    output = tmp_path / "out.jsonl"
    run(["sanitize", "--samples", str(samples), "--output", str(output)], data_dir)
    (row,) = read(output)
    assert row["solution"].startswith("import itertools")
    assert row["raw_solution"] == f"```python\n{SOLUTION_0}```"


def test_humaneval_entry_points(tmp_path: Path, data_dir: Path) -> None:
    answer = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"
    samples = write(tmp_path / "he.jsonl", [{"task_id": "HumanEval/0", "solution": answer}])
    run(["sanitize", "--samples", str(samples), "-b", "humaneval"], data_dir)
    (row,) = read(tmp_path / "he-sanitized.jsonl")
    assert row["solution"] == "def has_close_elements(numbers, threshold):\n    return False"


def test_multiple_chat_answers_take_the_languages_block(tmp_path: Path, data_dir: Path) -> None:
    """MultiPL-E: the C++ block (not the Python one) replaces the prompt's open function, its
    `main` dropped and its last `}` left to the tests; a completion continues the prompt, cut
    at the language's stop tokens ("\n}") as MultiPL-E cuts it."""
    if not (data_dir / "multipl-e").is_dir():
        pytest.fail(f"MultiPL-E data not found in {data_dir}; set PASSBENCH_DATA_DIR")
    answer = (
        "```python\ndef add(x, y):\n    return x + y\n```\nIn C++:\n```cpp\n"
        "long add(long x, long y) {\n    return x + y;\n}\nint main() { return 0; }\n```\n"
    )
    rows = [
        {"task_id": "HumanEval_53_add", "raw_solution": answer},
        {"task_id": "HumanEval_53_add", "completion": "    return x + y;\n}\n"},
        {"task_id": "HumanEval_53_add", "raw_solution": "```java\nlong add() {}\n```"},
    ]
    samples = write(tmp_path / "cpp.jsonl", rows)
    run(["sanitize", "--samples", str(samples), "-b", "multipl-e-cpp"], data_dir)
    chat, completion, wrong = read(tmp_path / "cpp-sanitized.jsonl")
    assert chat["solution"].endswith("// (12)\nlong add(long x, long y) {\n    return x + y;\n")
    assert chat["solution"].startswith("#include<assert.h>")
    assert "main" not in chat["solution"] and "def add" not in chat["solution"]
    assert completion["solution"] == chat["solution"].rstrip("\n")
    assert wrong["sanitize_error"] == "no definition of 'add' found"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"task_id": "BigCodeBench/99999", "solution": "x"}, "raw.jsonl:1: field 'task_id'"),
        ({"task_id": "BigCodeBench/0"}, "raw.jsonl:1: field 'solution'"),
        ({"task_id": "BigCodeBench/0", "solution": 3}, "field 'solution': must be a string"),
        ({"solution": "x"}, "field 'task_id'"),
        (
            {"task_id": "BigCodeBench/0", "solution": "x", "sample_index": -3},
            "raw.jsonl:1: field 'sample_index': must be a non-negative integer",
        ),
    ],
)
def test_bad_input_exits_2_naming_file_line_and_field(
    tmp_path: Path,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    row: dict[str, Any],
    message: str,
) -> None:
    samples = write(tmp_path / "raw.jsonl", [row])
    with pytest.raises(SystemExit) as exit_info:
        run(["sanitize", "--samples", str(samples)], data_dir)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_malformed_json_names_the_line(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = tmp_path / "raw.jsonl"
    samples.write_text('{"task_id": "BigCodeBench/0", "solution": "x"}\n{oops\n')
    with pytest.raises(SystemExit) as exit_info:
        run(["sanitize", "--samples", str(samples)], data_dir)
    assert exit_info.value.code == 2
    assert "raw.jsonl:2: malformed JSON" in capsys.readouterr().err


def test_sample_indexes_are_kept_and_a_repeated_one_is_an_error(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"task_id": "BigCodeBench/0", "solution": SOLUTION_0, "sample_index": 1},
        {"task_id": "BigCodeBench/0", "solution": SOLUTION_0, "sample_index": 0},
    ]
    run(["sanitize", "--samples", str(write(tmp_path / "raw.jsonl", rows))], data_dir)
    assert [row["sample_index"] for row in read(tmp_path / "raw-sanitized.jsonl")] == [1, 0]
    rows[1]["sample_index"] = 1
    with pytest.raises(SystemExit) as exit_info:
        run(["sanitize", "--samples", str(write(tmp_path / "raw.jsonl", rows))], data_dir)
    assert exit_info.value.code == 2
    assert "raw.jsonl:2: field 'sample_index': 1 is taken by line 1" in capsys.readouterr().err


def test_worker_processes_give_the_same_output(tmp_path: Path, data_dir: Path) -> None:
    rows = [
        {"task_id": f"BigCodeBench/{n % 5}", "solution": f"Answer {n}:\n```python\n{SOLUTION_0}```"}
        for n in range(220)
    ]
    samples = write(tmp_path / "many.jsonl", rows)
    run(
        [
            "sanitize",
            "--samples",
            str(samples),
            "--jobs",
            "2",
            "--output",
            str(tmp_path / "a.jsonl"),
        ],
        data_dir,
    )
    run(
        [
            "sanitize",
            "--samples",
            str(samples),
            "--jobs",
            "1",
            "--output",
            str(tmp_path / "b.jsonl"),
        ],
        data_dir,
    )
    assert read(tmp_path / "a.jsonl") == read(tmp_path / "b.jsonl")
    assert len(read(tmp_path / "a.jsonl")) == 220


def test_syncheck_reports_per_task(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = write(
        tmp_path / "s.jsonl",
        [
            {"task_id": "BigCodeBench/0", "solution": SOLUTION_0},
            {"task_id": "BigCodeBench/0", "solution": "def task_func(:\n    pass\n"},
            {"task_id": "BigCodeBench/1", "completion": "    return 1\n"},
        ],
    )
    run(["syncheck", "--samples", str(samples)], data_dir)
    out = capsys.readouterr().out
    assert "BigCodeBench/0 #1 (line 2): line 1, column" in out
    assert "1 of 3 samples do not parse" in out
    assert "1138 tasks have no samples" in out


def test_syncheck_all_good(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = write(
        tmp_path / "s.jsonl",
        [{"task_id": f"HumanEval/{n}", "completion": "    return None\n"} for n in range(164)],
    )
    run(
        ["syncheck", "--samples", str(samples), "-b", "humaneval", "--nsample-check", "1"], data_dir
    )
    out = capsys.readouterr().out
    assert "Every task has samples." in out
    assert "All 164 samples parse." in out


def test_syncheck_does_not_parse_multiple_programs_as_python(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not (data_dir / "multipl-e").is_dir():
        pytest.fail(f"MultiPL-E data not found in {data_dir}; set PASSBENCH_DATA_DIR")
    samples = write(
        tmp_path / "js.jsonl", [{"task_id": "HumanEval_53_add", "completion": "  return x;\n}\n"}]
    )
    run(["syncheck", "--samples", str(samples), "-b", "multipl-e-js"], data_dir)
    out = capsys.readouterr().out
    assert "do not parse" not in out and "not parsed here" in out
