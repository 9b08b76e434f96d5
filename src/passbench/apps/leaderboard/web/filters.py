"""What a reader chose on the board (view, filters, sort, columns) and its form in the URL.

The state is a frozen value read from and written to query parameters, so a board's address
reproduces what its reader saw (`?view=bigcodebench-hard-instruct&sort=-size&moe=no&size_max=20`).
Parsing never fails: a parameter that does not parse is ignored (an old or hand-edited link
still opens the board). Applying the state to rows is pure, shared by the app and the tests.

    view        View.key (default: the first view)
    q           text the model name must contain (case-insensitive)
    sort        a column key, `-` in front for descending (default: -pass1)
    size_min, size_max   parameters in billions; a model of unknown size is hidden by either
    open_weights=1       only models with downloadable weights (a Hugging Face link)
    open_data   comma-separated levels: None, Partial, Full
    moe         yes | no
    from, to    release date window, YYYY-MM-DD (inclusive)
    badge       comma-separated: verified, imported, reported
    cols        comma-separated column keys shown (default: all); `clean` is pass@1 without
                the tasks a stored contamination check flags, "71.7 (−2)" (2 tasks left out)
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from passbench.apps.leaderboard.store.models import OPEN_DATA_LEVELS
from passbench.apps.leaderboard.web.board import BADGES, BoardRow

#: Column key -> (header, value of a row). The order is the table's.
COLUMNS: dict[str, tuple[str, Callable[[BoardRow], Any]]] = {
    "rank": ("Rank", lambda r: r.rank),
    "band": ("Rank band", lambda r: r.rank_band),
    "model": ("Model", lambda r: r.model),
    "badge": ("Badge", lambda r: r.badge),
    "pass1": ("pass@1 %", lambda r: round(r.pass_at_1, 1)),
    "ci": ("95% CI", lambda r: _interval(r)),
    "clean": ("Clean pass@1 %", lambda r: _clean(r)),
    "size": ("Size (B)", lambda r: r.size_b),
    "active": ("Active (B)", lambda r: r.active_params_b),
    "moe": ("MoE", lambda r: _yes_no(r.moe)),
    "open_weights": ("Open weights", lambda r: _yes_no(r.open_weights)),
    "open_data": ("Open data", lambda r: r.open_data),
    "date": ("Released", lambda r: r.release_date.isoformat() if r.release_date else None),
    "tasks": ("Tasks", lambda r: r.n_tasks),
    "samples": ("Samples", lambda r: r.n_samples),
}
#: Sort keys: the column's own value, except where a number sorts better than its text.
_SORT: dict[str, Callable[[BoardRow], Any]] = {
    "band": lambda r: r.rank_best,
    "pass1": lambda r: r.pass_at_1,
    "clean": lambda r: r.clean_pass_at_1,
    "ci": lambda r: r.ci_low if r.ci_low is not None else r.pass_at_1,
    "model": lambda r: r.model.lower(),
}
DEFAULT_SORT = "-pass1"


def _interval(row: BoardRow) -> str | None:
    if row.ci_low is None or row.ci_high is None:
        return None
    return f"{row.ci_low:.1f}–{row.ci_high:.1f}"


def _clean(row: BoardRow) -> str | None:
    """pass@1 without the tasks a stored contamination check flags, and how many."""
    if row.clean_pass_at_1 is None:
        return None
    return f"{row.clean_pass_at_1:.1f} (−{row.contaminated_tasks})"


def _yes_no(value: bool | None) -> str | None:
    return None if value is None else ("yes" if value else "no")


@dataclass(frozen=True)
class BoardState:
    view: str | None = None
    q: str = ""
    sort: str = DEFAULT_SORT
    size_min: float | None = None
    size_max: float | None = None
    open_weights: bool = False
    open_data: tuple[str, ...] = ()
    moe: str | None = None  # "yes" / "no"
    date_from: _dt.date | None = None
    date_to: _dt.date | None = None
    badges: tuple[str, ...] = ()
    columns: tuple[str, ...] = field(default_factory=lambda: tuple(COLUMNS))

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> BoardState:
        """The state a URL's query parameters describe; what does not parse is ignored."""

        def number(name: str) -> float | None:
            try:
                return float(params[name]) if params.get(name) else None
            except ValueError:
                return None

        def date(name: str) -> _dt.date | None:
            try:
                return _dt.date.fromisoformat(params[name]) if params.get(name) else None
            except ValueError:
                return None

        def listed(name: str, allowed: Sequence[str]) -> tuple[str, ...]:
            given = [item.strip() for item in params.get(name, "").split(",")]
            return tuple(item for item in allowed if item in given)

        sort = params.get("sort", DEFAULT_SORT)
        if sort.lstrip("-") not in COLUMNS:
            sort = DEFAULT_SORT
        columns = listed("cols", tuple(COLUMNS)) or tuple(COLUMNS)
        return cls(
            view=params.get("view") or None,
            q=params.get("q", "").strip(),
            sort=sort,
            size_min=number("size_min"),
            size_max=number("size_max"),
            open_weights=params.get("open_weights", "") in ("1", "true", "yes"),
            open_data=listed("open_data", OPEN_DATA_LEVELS),
            moe=params.get("moe") if params.get("moe") in ("yes", "no") else None,
            date_from=date("from"),
            date_to=date("to"),
            badges=listed("badge", BADGES),
            columns=columns,
        )

    def to_query(self) -> dict[str, str]:
        """The parameters that differ from the defaults, in a stable order."""
        query: dict[str, str] = {}
        if self.view:
            query["view"] = self.view
        if self.q:
            query["q"] = self.q
        if self.sort != DEFAULT_SORT:
            query["sort"] = self.sort
        for name in ("size_min", "size_max"):
            value = getattr(self, name)
            if value is not None:
                query[name] = f"{value:g}"
        if self.open_weights:
            query["open_weights"] = "1"
        if self.open_data:
            query["open_data"] = ",".join(self.open_data)
        if self.moe:
            query["moe"] = self.moe
        if self.date_from:
            query["from"] = self.date_from.isoformat()
        if self.date_to:
            query["to"] = self.date_to.isoformat()
        if self.badges:
            query["badge"] = ",".join(self.badges)
        if self.columns != tuple(COLUMNS):
            query["cols"] = ",".join(self.columns)
        return query

    def keeps(self, row: BoardRow) -> bool:
        """Whether the filters let `row` through."""
        if self.q and self.q.lower() not in row.model.lower():
            return False
        if self.size_min is not None and (row.size_b is None or row.size_b < self.size_min):
            return False
        if self.size_max is not None and (row.size_b is None or row.size_b > self.size_max):
            return False
        if self.open_weights and not row.open_weights:
            return False
        if self.open_data and row.open_data not in self.open_data:
            return False
        if self.moe is not None and row.moe is not (self.moe == "yes"):
            return False
        if self.date_from and (row.release_date is None or row.release_date < self.date_from):
            return False
        if self.date_to and (row.release_date is None or row.release_date > self.date_to):
            return False
        return not (self.badges and row.badge not in self.badges)

    def apply(self, rows: Sequence[BoardRow]) -> tuple[list[BoardRow], int]:
        """The rows the filters keep, sorted; and how many they hide."""
        kept = [row for row in rows if self.keeps(row)]
        key = self.sort.lstrip("-")
        value = _SORT.get(key) or COLUMNS[key][1]
        known = [row for row in kept if value(row) is not None]
        unknown = [row for row in kept if value(row) is None]  # last, whichever the direction
        known.sort(key=value, reverse=self.sort.startswith("-"))
        return known + unknown, len(rows) - len(kept)


def table(rows: Sequence[BoardRow], columns: Sequence[str]) -> tuple[list[str], list[list[Any]]]:
    """Headers and cells of `columns` for `rows` (what the table shows and downloads hold)."""
    chosen = [key for key in columns if key in COLUMNS]
    return (
        [COLUMNS[key][0] for key in chosen],
        [[COLUMNS[key][1](row) for key in chosen] for row in rows],
    )


def records(rows: Sequence[BoardRow]) -> list[dict[str, Any]]:
    """Every field of `rows`, JSON-ready (the download of the current view as JSON)."""
    out = []
    for row in rows:
        item = {f.name: getattr(row, f.name) for f in fields(row)}
        item["release_date"] = row.release_date.isoformat() if row.release_date else None
        item["rank_band"] = row.rank_band
        item["open_weights"] = row.open_weights
        out.append(item)
    return out
