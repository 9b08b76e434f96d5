"""The public BigCodeBench leaderboard's `results.json` into the store, as *reported* scores.

`passbench leaderboard import-official FILE [--subset full|hard]`. The file maps each model's
name to its metadata and its pass@1 per split, in percent, as the leaderboard published them:

    {"Magicoder-S-DS-6.7B": {"link": ..., "open-data": "Partial", "pass@1": {"instruct": 36.2,
     "complete": 47.6}, "prompted": true, "moe": false, "size": 6.7, "act_param": 6.7,
     "date": "2024-12-04", "prefill": true}, ...}

Nothing here was executed by us: the scores go to `reported_scores` (never `runs`), so the
leaderboard shows them with a "reported" badge and never ranks them as verified. The models'
metadata fills the `models` rows (a field already set is kept: what we know first-hand wins).
A file is keyed by its content hash: importing it again adds nothing. The whole file is checked
before anything is written; a bad field is an error naming the file and the field.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.importing import model_named
from passbench.apps.leaderboard.store.models import (
    OPEN_DATA_LEVELS,
    Model,
    ReportedScore,
    ReportedSource,
)
from passbench.core.errors import InputError, ResultsFileError

SUBSETS = ("full", "hard")
SPLITS = ("complete", "instruct")
BENCHMARK = "bigcodebench"


@dataclass(frozen=True)
class ReportedModel:
    """One model's entry in the file, checked."""

    name: str
    link: str | None
    open_data: str | None
    pass_at_1: Mapping[str, float]  # split -> percent; splits the file leaves null are absent
    prompted: bool | None
    moe: bool | None
    size_b: float | None
    active_params_b: float | None
    release_date: _dt.date | None
    prefill: bool | None


@dataclass(frozen=True)
class ReportedImport:
    path: Path
    subset: str
    source_id: int
    created: bool
    n_models: int
    n_scores: int


def guess_subset(path: Path) -> str:
    """`hard` for the Hard leaderboard's file (`results-hard.json`, `...-hard.json`), else full."""
    return "hard" if "hard" in path.stem.lower() else "full"


def read_official(path: str | Path) -> list[ReportedModel]:
    """Every model in the file, checked; errors name the file and the field."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsFileError("file not found", path=path) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ResultsFileError(f"cannot read: {error}", path=path) from None
    except json.JSONDecodeError as error:
        raise ResultsFileError(
            f"not valid JSON: {error.msg} (column {error.colno})", path=path, line=error.lineno
        ) from None
    if not isinstance(document, dict) or not document:
        raise ResultsFileError(
            "expected a JSON object mapping model names to their entries (results.json)", path=path
        )
    return [_entry(name, value, path) for name, value in document.items()]


def _entry(name: str, value: Any, path: Path) -> ReportedModel:
    where = f"[{name!r}]"
    if not isinstance(value, dict):
        raise ResultsFileError("must be a JSON object", path=path, field=where)

    def field(key: str, kinds: tuple[type, ...], required: bool = False) -> Any:
        item = value.get(key)
        if item is None:
            if required:
                raise ResultsFileError("is missing", path=path, field=f"{where}.{key}")
            return None
        if not isinstance(item, kinds) or (isinstance(item, bool) and bool not in kinds):
            names = " or ".join(kind.__name__ for kind in kinds)
            raise ResultsFileError(f"must be {names}", path=path, field=f"{where}.{key}")
        return item

    scores = field("pass@1", (dict,), required=True)
    pass_at_1: dict[str, float] = {}
    for split, score in scores.items():
        if split not in SPLITS:
            raise ResultsFileError(
                f"unknown split (known: {', '.join(SPLITS)})",
                path=path,
                field=f"{where}.pass@1.{split}",
            )
        if score is None:
            continue
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 100:
            raise ResultsFileError(
                f"must be a percentage (0 to 100), got {score!r}",
                path=path,
                field=f"{where}.pass@1.{split}",
            )
        pass_at_1[split] = float(score)
    open_data = field("open-data", (str,))
    if open_data is not None and open_data not in OPEN_DATA_LEVELS:
        raise ResultsFileError(
            f"must be one of {', '.join(OPEN_DATA_LEVELS)}, got {open_data!r}",
            path=path,
            field=f"{where}.open-data",
        )
    date = field("date", (str,))
    release = None
    if date is not None:
        try:
            release = _dt.date.fromisoformat(date)
        except ValueError:
            raise ResultsFileError(
                f"must be a date YYYY-MM-DD, got {date!r}", path=path, field=f"{where}.date"
            ) from None
    size, active = field("size", (int, float)), field("act_param", (int, float))
    return ReportedModel(
        name=name,
        link=field("link", (str,)),
        open_data=open_data,
        pass_at_1=pass_at_1,
        prompted=field("prompted", (bool,)),
        moe=field("moe", (bool,)),
        size_b=float(size) if size is not None else None,
        active_params_b=float(active) if active is not None else None,
        release_date=release,
        prefill=field("prefill", (bool,)),
    )


def import_official(store: Store, path: str | Path, subset: str | None = None) -> ReportedImport:
    """Store the file's scores as reported rows of `subset` (default: from the file name)."""
    path = Path(path)
    subset = subset or guess_subset(path)
    if subset not in SUBSETS:
        raise InputError(f"must be one of {', '.join(SUBSETS)}", field="--subset")
    entries = read_official(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with store.transaction() as session:
        found = session.scalar(
            select(ReportedSource).where(ReportedSource.content_sha256 == digest)
        )
        if found is not None:
            return ReportedImport(
                path=path,
                subset=found.subset,
                source_id=found.id,
                created=False,
                n_models=len(entries),
                n_scores=len(found.scores),
            )
        source = ReportedSource(
            content_sha256=digest, name=path.name, benchmark=BENCHMARK, subset=subset
        )
        session.add(source)
        n_scores = 0
        hidden = _hidden_scores(session, subset)
        for entry in entries:
            model = model_named(session, entry.name)
            _fill(model, entry)
            for split, percent in entry.pass_at_1.items():
                source.scores.append(
                    ReportedScore(
                        model=model,
                        benchmark=BENCHMARK,
                        subset=subset,
                        split=split,
                        pass_at_1_percent=percent,
                        hidden=(model.id, split) in hidden,
                    )
                )
                n_scores += 1
        session.flush()
        return ReportedImport(
            path=path,
            subset=subset,
            source_id=source.id,
            created=True,
            n_models=len(entries),
            n_scores=n_scores,
        )


_METADATA = (
    "link",
    "open_data",
    "prompted",
    "moe",
    "size_b",
    "active_params_b",
    "release_date",
    "prefill",
)


def _hidden_scores(session: Session, subset: str) -> set[tuple[int, str]]:
    """(model id, split) of the scores an admin hid in this subset: a newer file's score for
    them stays hidden (hiding is the admin's call about the model's entry, not one file's)."""
    return {
        (model_id, split)
        for model_id, split in session.execute(
            select(ReportedScore.model_id, ReportedScore.split).where(
                ReportedScore.hidden,
                ReportedScore.benchmark == BENCHMARK,
                ReportedScore.subset == subset,
            )
        )
    }


def _fill(model: Model, entry: ReportedModel) -> None:
    """Set the model's metadata the store does not know yet from the leaderboard's entry."""
    for name in _METADATA:
        if getattr(model, name) is None:
            setattr(model, name, getattr(entry, name))
