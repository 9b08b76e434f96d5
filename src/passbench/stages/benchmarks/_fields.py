"""Reading typed fields out of one raw dataset record, with errors naming file, line and field."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from passbench.core.errors import DatasetError


class RecordReader:
    """Typed access to one JSON record read from `path` at `line`."""

    def __init__(self, record: dict[str, Any], path: Path, line: int, *, prefix: str = "") -> None:
        self.record = record
        self.path = path
        self.line = line
        self.prefix = prefix  # where a nested record sits in its row: "content."

    def error(self, field: str, message: str) -> DatasetError:
        return DatasetError(f"{self.path}:{self.line}: field '{self.prefix}{field}': {message}")

    def _get(self, field: str) -> Any:
        if field not in self.record:
            raise self.error(field, "missing")
        return self.record[field]

    def text(self, field: str) -> str:
        value = self._get(field)
        if not isinstance(value, str):
            raise self.error(field, f"expected a string, got {type(value).__name__}")
        return value

    def number(self, field: str) -> float:
        value = self._get(field)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(field, f"expected a number, got {type(value).__name__}")
        return float(value)

    def list_of_lists(self, field: str) -> list[list[Any]]:
        """A list of argument lists (HumanEval+ inputs)."""
        value = self._get(field)
        if not isinstance(value, list) or not all(isinstance(item, list) for item in value):
            raise self.error(field, "expected a list of argument lists")
        return value

    def string_list(self, field: str) -> tuple[str, ...]:
        """A list of strings, stored either as JSON or as the text of a Python list.

        BigCodeBench's jsonl stores `libs` as the repr of a list ("['pandas', 'numpy']"),
        while exports of the Hugging Face dataset carry a real list; both are accepted.
        """
        value = self._get(field)
        if isinstance(value, str):
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError) as error:
                raise self.error(field, f"not a list literal: {value[:80]!r}") from error
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise self.error(field, f"expected a list of strings, got {value!r:.80}")
        return tuple(value)


def json_array_records(path: Path, source: str, items: str) -> list[RecordReader]:
    """The objects of a data file that is one non-empty JSON array (MultiPL-E's, CyberSecEval's),
    each as a `RecordReader` numbered from 1; anything else is a `DatasetError` naming the file
    (and the item)."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DatasetError(f"{path}: not a {source} JSON array: {error}") from error
    if not isinstance(rows, list) or not rows:
        raise DatasetError(f"{path}: expected a non-empty JSON array of {items}")
    records = []
    for index, raw in enumerate(rows, start=1):
        if not isinstance(raw, dict):
            raise DatasetError(f"{path}: item {index} is not an object")
        records.append(RecordReader(raw, path, index))
    return records
