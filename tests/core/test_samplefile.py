"""Reading sample files: every kind of bad input gets one line naming file, line and field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from passbench.core.errors import SampleFileError
from passbench.core.samplefile import read_samples, sample_file_stem, write_json_atomic

KNOWN = {"BigCodeBench/0", "BigCodeBench/1"}


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


def test_reads_solutions_and_completions_with_per_task_indices(tmp_path: Path) -> None:
    rows = [
        {"task_id": "BigCodeBench/0", "solution": "a"},
        {"task_id": "BigCodeBench/1", "completion": "b", "raw_solution": "raw"},
        {"task_id": "BigCodeBench/0", "solution": "c"},
    ]
    path = write(tmp_path / "s.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    samples = read_samples(path, KNOWN)
    assert [(s.task_id, s.sample_index, s.source_line) for s in samples] == [
        ("BigCodeBench/0", 0, 1),
        ("BigCodeBench/1", 0, 2),
        ("BigCodeBench/0", 1, 3),
    ]
    assert samples[1].completion == "b" and samples[1].solution is None
    assert samples[1].raw_solution == "raw"


def test_reads_gzipped_files(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"task_id": "BigCodeBench/0", "solution": "x"}\n'))
    assert read_samples(path, KNOWN)[0].solution == "x"
    assert sample_file_stem(path) == "s"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "s.jsonl: file is empty"),
        (
            b'{"task_id": "BigCodeBench/0", "solution": "x"}\n{not json\n',
            "s.jsonl:2: malformed JSON",
        ),
        (b'{"solution": "x"}\n', "s.jsonl:1: field 'task_id': missing"),
        (
            b'{"task_id": "BigCodeBench/99", "solution": "x"}\n',
            "s.jsonl:1: field 'task_id': unknown task id 'BigCodeBench/99'",
        ),
        (b'{"task_id": "BigCodeBench/0"}\n', "s.jsonl:1: field 'solution': no 'solution' or"),
        (b'{"task_id": "BigCodeBench/0", "solution": 3}\n', "s.jsonl:1: field 'solution': must be"),
        (b'{"task_id": "BigCodeBench/0", "solution": "\xff"}\n', "s.jsonl:1: not valid UTF-8"),
        (b"[1, 2]\n", "s.jsonl:1: expected a JSON object"),
    ],
)
def test_bad_input_names_file_line_and_field(tmp_path: Path, content: bytes, expected: str) -> None:
    path = write(tmp_path / "s.jsonl", content)
    with pytest.raises(SampleFileError) as caught:
        read_samples(path, KNOWN)
    assert str(caught.value).startswith(f"{tmp_path}/{expected}")
    assert "\n" not in str(caught.value)
    assert caught.value.exit_code == 2


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SampleFileError, match="file not found"):
        read_samples(tmp_path / "nope.jsonl")


def test_atomic_json_write_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write_json_atomic(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def rows_file(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    return write(tmp_path / "s.jsonl", "".join(json.dumps(row) + "\n" for row in rows))


def test_the_generator_s_sample_index_is_kept_when_written_out_of_order(tmp_path: Path) -> None:
    """Concurrent requests finish in any order: the file order is not the sample order."""
    path = rows_file(
        tmp_path,
        [
            {"task_id": "BigCodeBench/0", "solution": "third", "sample_index": 2},
            {"task_id": "BigCodeBench/1", "solution": "x", "sample_index": 0},
            {"task_id": "BigCodeBench/0", "solution": "first", "sample_index": 0},
            {"task_id": "BigCodeBench/0", "solution": "second", "sample_index": 1},
        ],
    )
    samples = read_samples(path, KNOWN)
    assert [(s.solution, s.sample_index, s.source_line) for s in samples] == [
        ("third", 2, 1),
        ("x", 0, 2),
        ("first", 0, 3),
        ("second", 1, 4),
    ]


def test_lines_without_an_index_take_the_lowest_free_one(tmp_path: Path) -> None:
    path = rows_file(
        tmp_path,
        [
            {"task_id": "BigCodeBench/0", "solution": "a"},
            {"task_id": "BigCodeBench/0", "solution": "b", "sample_index": 0},
            {"task_id": "BigCodeBench/0", "solution": "c"},
        ],
    )
    assert [(s.solution, s.sample_index) for s in read_samples(path, KNOWN)] == [
        ("a", 1),
        ("b", 0),
        ("c", 2),
    ]


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (-1, "s.jsonl:2: field 'sample_index': must be a non-negative integer, got -1"),
        ("1", "s.jsonl:2: field 'sample_index': must be a non-negative integer, got '1'"),
        (True, "s.jsonl:2: field 'sample_index': must be a non-negative integer, got True"),
        (1.0, "s.jsonl:2: field 'sample_index': must be a non-negative integer, got 1.0"),
        (5, "s.jsonl:2: field 'sample_index': 5 is taken by line 1 for BigCodeBench/0"),
    ],
)
def test_a_bad_or_repeated_sample_index_names_file_line_and_field(
    tmp_path: Path, index: object, message: str
) -> None:
    path = rows_file(
        tmp_path,
        [
            {"task_id": "BigCodeBench/0", "solution": "a", "sample_index": 5},
            {"task_id": "BigCodeBench/0", "solution": "b", "sample_index": index},
            {"task_id": "BigCodeBench/1", "solution": "c", "sample_index": 5},  # other task: fine
        ],
    )
    with pytest.raises(SampleFileError) as caught:
        read_samples(path, KNOWN)
    assert str(caught.value).startswith(f"{tmp_path}/{message}")
    assert caught.value.exit_code == 2
