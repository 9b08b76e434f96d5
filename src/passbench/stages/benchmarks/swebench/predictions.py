"""SWE-bench predictions files, in the three shapes the official tools write and read.

- JSONL, one `{"instance_id", "model_name_or_path", "model_patch"}` object a line (the harness's
  `--predictions_path preds.jsonl`, SWE-agent's `all_preds.jsonl`);
- a JSON list of those objects;
- a JSON object keyed by instance id whose values are those objects (sb-cli and mini-swe-agent's
  `preds.json`); a value may leave `instance_id` out, the key then being the only place it is.

The shape is read from the content, not the file name. Unknown fields are ignored (agents add
their own). `model_patch` may be null or empty: the official run report counts such instances as
"empty patch" and never runs them. `--predictions_path gold` is `gold_predictions`.

Where this is stricter than `swebench.harness.utils.get_predictions_from_file`: a repeated
instance id is an error (officially the last one silently wins), so is a missing
`model_name_or_path` or `model_patch` (officially a KeyError later in the run), a value of the
wrong type, or an object whose `instance_id` disagrees with its key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passbench.core.errors import InputError
from passbench.stages.benchmarks.swebench.instances import Instance

#: The model name the official harness gives the gold patches (`--predictions_path gold`).
GOLD_MODEL = "gold"


@dataclass(frozen=True)
class Prediction:
    """One model's patch for one instance. `model_patch` None or '' is an empty patch."""

    instance_id: str
    model_name_or_path: str
    model_patch: str | None


def read_predictions(path: Path) -> list[Prediction]:
    """The predictions in `path` (any of the three shapes), in file order. Bad content raises
    InputError naming the file, the line (JSONL) or item, and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read predictions: {error}", path=path) from error
    if not text.strip():
        raise InputError("no predictions: the file is empty", path=path)
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":  # more than one JSON value: JSONL
            raise InputError(f"not JSON: {error.msg}", path=path, line=error.lineno) from error
        return _unique(_jsonl(text, path), path)
    if isinstance(whole, list):
        return _unique(_listed(whole, path), path)
    if isinstance(whole, dict) and _is_one_prediction(whole):
        return _unique([(_prediction(whole, path, line=1), _Place(line=1))], path)
    if isinstance(whole, dict):
        return _unique(_keyed(whole, path), path)
    raise InputError("expected JSON objects, a JSON list or an object keyed by id", path=path)


def gold_predictions(instances: Iterable[Instance]) -> list[Prediction]:
    """The gold patches as predictions of the model "gold", as `--predictions_path gold` makes
    them."""
    return [Prediction(item.instance_id, GOLD_MODEL, item.patch) for item in instances]


@dataclass(frozen=True)
class _Place:
    """Where a prediction sits in its file: a JSONL line, or a list item or key."""

    line: int | None = None
    where: str = ""


def _jsonl(text: str, path: Path) -> list[tuple[Prediction, _Place]]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"not JSON: {error.msg}", path=path, line=number) from error
        found.append((_prediction(row, path, line=number), _Place(line=number)))
    return found


def _listed(rows: list[Any], path: Path) -> list[tuple[Prediction, _Place]]:
    found = []
    for index, row in enumerate(rows):
        place = _Place(where=f"item {index}")
        found.append((_prediction(row, path, where=place.where), place))
    return found


def _keyed(rows: dict[str, Any], path: Path) -> list[tuple[Prediction, _Place]]:
    found = []
    for key, row in rows.items():
        place = _Place(where=f"key {key!r}")
        found.append((_prediction(row, path, where=place.where, key=key), place))
    return found


def _is_one_prediction(row: dict[str, Any]) -> bool:
    """A lone JSONL line, not an object keyed by id: its values are not all objects."""
    return bool(row) and not all(isinstance(value, dict) for value in row.values())


def _prediction(
    row: Any,
    path: Path,
    *,
    line: int | None = None,
    where: str = "",
    key: str | None = None,
) -> Prediction:
    prefix = f"{where}: " if where else ""

    def bad(field: str | None, message: str) -> InputError:
        return InputError(prefix + message, path=path, line=line, field=field)

    if not isinstance(row, dict):
        raise bad(None, f"expected a JSON object, got {type(row).__name__}")
    instance_id = row.get("instance_id", key)
    if instance_id is None:
        raise bad("instance_id", "missing")
    if not isinstance(instance_id, str) or not instance_id:
        raise bad("instance_id", f"expected a non-empty string, got {instance_id!r:.60}")
    if key is not None and instance_id != key:
        raise bad("instance_id", f"{instance_id!r} differs from its key")
    if "model_name_or_path" not in row:
        raise bad("model_name_or_path", "missing")
    model = row["model_name_or_path"]
    if not isinstance(model, str) or not model:
        raise bad("model_name_or_path", f"expected a non-empty string, got {model!r:.60}")
    if "model_patch" not in row:
        raise bad("model_patch", 'missing (null or "" for an empty patch)')
    patch = row["model_patch"]
    if patch is not None and not isinstance(patch, str):
        raise bad("model_patch", f"expected a string or null, got {type(patch).__name__}")
    return Prediction(instance_id, model, patch)


def _unique(found: list[tuple[Prediction, _Place]], path: Path) -> list[Prediction]:
    first: dict[str, _Place] = {}
    for prediction, place in found:
        earlier = first.setdefault(prediction.instance_id, place)
        if earlier is not place:
            was = f"line {earlier.line}" if earlier.line is not None else earlier.where
            prefix = f"{place.where}: " if place.where else ""
            raise InputError(
                f"{prefix}a second prediction for {prediction.instance_id} (the first: {was})",
                path=path,
                line=place.line,
                field="instance_id",
            )
    return [prediction for prediction, _ in found]
