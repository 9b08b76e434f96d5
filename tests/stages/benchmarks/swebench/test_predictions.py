"""Predictions files in the three shapes the official tools write, and every way one can be
wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from passbench.core.errors import InputError
from passbench.stages.benchmarks.swebench.instances import read_instances
from passbench.stages.benchmarks.swebench.predictions import (
    GOLD_MODEL,
    Prediction,
    gold_predictions,
    read_predictions,
)

PATCH = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
ROWS: list[dict[str, Any]] = [
    {"instance_id": "psf__requests-1142", "model_name_or_path": "m/1", "model_patch": PATCH},
    {"instance_id": "psf__requests-1724", "model_name_or_path": "m/1", "model_patch": None},
    {"instance_id": "psf__requests-1766", "model_name_or_path": "m/1", "model_patch": ""},
]
EXPECTED = [
    Prediction("psf__requests-1142", "m/1", PATCH),
    Prediction("psf__requests-1724", "m/1", None),
    Prediction("psf__requests-1766", "m/1", ""),
]


def jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def keyed(rows: list[dict[str, Any]], *, drop_id: bool = False) -> str:
    values = {
        row["instance_id"]: {k: v for k, v in row.items() if not (drop_id and k == "instance_id")}
        for row in rows
    }
    return json.dumps(values, indent=2)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("preds.jsonl", jsonl(ROWS)),
        ("all_preds.jsonl", jsonl(ROWS).replace("\n", "\n\n")),  # blank lines are skipped
        ("preds.json", json.dumps(ROWS, indent=2)),
        ("preds.json", keyed(ROWS)),  # mini-swe-agent
        ("preds.json", keyed(ROWS, drop_id=True)),  # sb-cli: the key is the only id
        ("misnamed.json", jsonl(ROWS)),  # the content decides, not the name
        ("misnamed.jsonl", json.dumps(ROWS)),
    ],
)
def test_the_three_shapes_read_alike(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert read_predictions(path) == EXPECTED


def test_unknown_fields_are_ignored_and_one_line_is_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({**ROWS[0], "cost": 0.5, "full_output": {"a": 1}}) + "\n")
    assert read_predictions(path) == EXPECTED[:1]


@pytest.mark.parametrize("text", ["[]", "{}"])
def test_an_empty_list_or_object_has_no_predictions(tmp_path: Path, text: str) -> None:
    path = tmp_path / "preds.json"
    path.write_text(text)
    assert read_predictions(path) == []


def test_gold_predictions_are_the_gold_patches(data_dir: Path) -> None:
    instances = read_instances(data_dir / "swebench" / "swebench-lite-dev.jsonl.gz")
    gold = gold_predictions(instances)
    assert [p.instance_id for p in gold] == [i.instance_id for i in instances]
    assert {p.model_name_or_path for p in gold} == {GOLD_MODEL} == {"gold"}
    assert [p.model_patch for p in gold] == [i.patch for i in instances]


def error_for(tmp_path: Path, text: str, name: str = "preds.jsonl") -> InputError:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_predictions(path)
    assert caught.value.path == str(path)
    return caught.value


def without(row: dict[str, Any], field: str) -> dict[str, Any]:
    return {key: value for key, value in row.items() if key != field}


@pytest.mark.parametrize(
    ("bad_row", "field", "message"),
    [
        (without(ROWS[0], "instance_id"), "instance_id", "missing"),
        (without(ROWS[0], "model_name_or_path"), "model_name_or_path", "missing"),
        (without(ROWS[0], "model_patch"), "model_patch", "missing"),
        ({**ROWS[0], "instance_id": 7}, "instance_id", "non-empty string"),
        ({**ROWS[0], "instance_id": ""}, "instance_id", "non-empty string"),
        ({**ROWS[0], "model_name_or_path": None}, "model_name_or_path", "non-empty string"),
        ({**ROWS[0], "model_patch": ["a"]}, "model_patch", "a string or null, got list"),
        ([1, 2], None, "expected a JSON object, got list"),
    ],
)
def test_a_bad_jsonl_line_names_its_line_and_field(
    tmp_path: Path, bad_row: Any, field: str | None, message: str
) -> None:
    error = error_for(tmp_path, jsonl([ROWS[1], ROWS[2], bad_row]))
    assert (error.line, error.field) == (3, field)
    assert message in str(error)
    assert str(error).startswith(f"{tmp_path / 'preds.jsonl'}:3: ")


def test_not_json_names_the_line(tmp_path: Path) -> None:
    error = error_for(tmp_path, jsonl(ROWS[:2]) + '{"instance_id": \n')
    assert error.line == 3 and "not JSON" in str(error)
    error = error_for(tmp_path, '{"instance_id": "x",\n  "model_patch": nope}\n')
    assert error.line == 2 and "not JSON" in str(error)


def test_a_repeated_instance_id_is_an_error_in_every_shape(tmp_path: Path) -> None:
    error = error_for(tmp_path, jsonl([ROWS[0], ROWS[1], ROWS[0]]))
    assert (error.line, error.field) == (3, "instance_id")
    assert "second prediction for psf__requests-1142 (the first: line 1)" in str(error)
    error = error_for(tmp_path, json.dumps([ROWS[0], ROWS[0]]), "preds.json")
    assert "item 1: a second prediction" in str(error) and "the first: item 0" in str(error)
    clash = {"psf__requests-1142": ROWS[0], "other": {**ROWS[0]}}
    error = error_for(tmp_path, json.dumps(clash), "preds.json")
    assert "key 'other'" in str(error) and "differs from its key" in str(error)


def test_bad_items_of_a_list_or_object_are_named(tmp_path: Path) -> None:
    error = error_for(tmp_path, json.dumps([ROWS[0], without(ROWS[1], "model_patch")]))
    assert error.field == "model_patch" and "item 1: missing" in str(error)
    error = error_for(tmp_path, json.dumps({"a": ROWS[0], "b": {"model_patch": ""}}))
    assert error.field == "instance_id" and "key 'a'" in str(error)
    error = error_for(tmp_path, json.dumps({"x": {"model_name_or_path": "m"}}))
    assert error.field == "model_patch" and "key 'x'" in str(error)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"  \n\n", "the file is empty"),
        (b"42", "expected JSON objects"),
        (b"\xff\xfe", "cannot read predictions"),
    ],
)
def test_unusable_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "preds.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_predictions(path)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read predictions"):
        read_predictions(tmp_path / "absent.jsonl")
