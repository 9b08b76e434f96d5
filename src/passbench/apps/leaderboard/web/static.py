"""`passbench leaderboard build --output DIR`: the board as static files, publishable anywhere.

    results.json          the public BigCodeBench leaderboard's schema (Full), pass@1 in percent
    results-hard.json     the same for Hard
    board.json            every view's rows with intervals, rank bands and badges
    matrix-<view>.parquet pass rate per task (rows) and model (columns), for views with runs
    index.html            one self-contained page with every view's table (no server, no CDN)

Everything comes from web.board, the module the Gradio app reads, so the published board and
the served one cannot disagree. In results.json a model's score for a split is, in order: our
verified run's, else the published (reported) score, else an imported run's; rounded to one
decimal as the public file writes it.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from passbench.apps.leaderboard.store.official_leaderboard import (
    BENCHMARK as OFFICIAL_BENCHMARK,
)
from passbench.apps.leaderboard.web.board import BoardRow, View, board, run_counts, views
from passbench.apps.leaderboard.web.filters import COLUMNS, records, table
from passbench.core.errors import InputError
from passbench.stages.results import task_order

OFFICIAL_SPLITS = ("instruct", "complete")  # the public file's key order
OFFICIAL_FILES = {"full": "results.json", "hard": "results-hard.json"}
_PREFERENCE = ("verified", "reported", "imported")


@dataclass(frozen=True)
class Built:
    output: Path
    files: tuple[Path, ...]
    views: int
    rows: int


def official_results(boards: dict[View, list[BoardRow]], subset: str) -> dict[str, Any]:
    """The public leaderboard's `results.json` for BigCodeBench `subset`, from the boards."""
    chosen: dict[str, dict[str, BoardRow]] = {}  # model -> split -> row
    order: dict[str, int] = {}
    for view, rows in boards.items():
        if view.benchmark != OFFICIAL_BENCHMARK or view.subset != subset or view.language:
            continue
        if view.split not in OFFICIAL_SPLITS:
            continue
        for row in rows:
            order.setdefault(row.model, row.model_id)
            held = chosen.setdefault(row.model, {}).get(view.split)
            if held is None or _PREFERENCE.index(row.badge) < _PREFERENCE.index(held.badge):
                chosen[row.model][view.split] = row
    document: dict[str, Any] = {}
    for name in sorted(chosen, key=lambda model: order[model]):
        splits = chosen[name]
        any_row = next(iter(splits.values()))
        document[name] = {
            "link": any_row.link,
            "open-data": any_row.open_data,
            "pass@1": {
                split: round(splits[split].pass_at_1, 1) if split in splits else None
                for split in OFFICIAL_SPLITS
            },
            "prompted": any_row.prompted,
            "moe": any_row.moe,
            "size": _number(any_row.size_b),
            "act_param": _number(any_row.active_params_b),
            "date": any_row.release_date.isoformat() if any_row.release_date else None,
            "prefill": any_row.prefill,
        }
    return document


def _number(value: float | None) -> float | int | None:
    return int(value) if value is not None and value.is_integer() else value


def task_matrix(session: Session, rows: Sequence[BoardRow], language: str | None = None) -> Any:
    """A pyarrow table: `task_id`, then one column per run shown in the view (its model's
    name) holding the task's pass rate (c / n), null where the run lacks the task; a
    language's view has that language's tasks."""
    import pyarrow as pa  # type: ignore[import-untyped]

    runs = [row for row in rows if row.run_id is not None]
    counts = run_counts(session, [row.run_id for row in runs if row.run_id is not None], language)
    tasks = sorted({task for per_run in counts.values() for task in per_run}, key=task_order)
    columns: dict[str, list[Any]] = {"task_id": tasks}
    for row in runs:
        per_task = counts[row.run_id or 0]
        name = row.model if row.model not in columns else f"{row.model} (run {row.run_id})"
        columns[name] = [
            per_task[task][1] / per_task[task][0] if task in per_task else None for task in tasks
        ]
    metadata = {
        "runs": json.dumps({row.model: row.run_id for row in runs}),
        "value": "pass rate per task: passing samples / samples",
    }
    return pa.table(columns).replace_schema_metadata(metadata)


def build(session: Session, output: Path) -> Built:
    """Write every static file into `output` (created; files already there are replaced)."""
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        raise InputError(
            "the static build writes Parquet with pyarrow: pip install 'passbench[leaderboard]'"
        ) from None
    output.mkdir(parents=True, exist_ok=True)
    boards = {view: board(session, view) for view in views(session)}
    written: list[Path] = []

    def write(name: str, text: str) -> None:
        path = output / name
        path.write_text(text, encoding="utf-8")
        written.append(path)

    for subset, name in OFFICIAL_FILES.items():
        document = official_results(boards, subset)
        if document:
            write(name, json.dumps(document, indent=4, ensure_ascii=False) + "\n")
    generated = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    write(
        "board.json",
        json.dumps(
            {
                "generated": generated,
                "views": [
                    {"key": v.key, "label": v.label, "rows": records(rows)}
                    for v, rows in boards.items()
                ],
            },
            indent=1,
            default=str,
        ),
    )
    for view, rows in boards.items():
        if any(row.run_id is not None for row in rows):
            path = output / f"matrix-{view.key}.parquet"
            pq.write_table(task_matrix(session, rows, view.language), path)
            written.append(path)
    write("index.html", render_page(boards, generated))
    return Built(
        output=output,
        files=tuple(written),
        views=len(boards),
        rows=sum(len(rows) for rows in boards.values()),
    )


_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em;color:#222}
nav a{margin-right:1em} table{border-collapse:collapse;width:100%;margin-bottom:2em}
th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left}
th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{border-radius:8px;padding:0 6px;font-size:12px;color:#fff}
.verified{background:#1a7f37}.imported{background:#0969da}.reported{background:#8c959f}
"""
_SCRIPT = """
document.querySelectorAll('table.board th').forEach(function (th, index) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var down = th.getAttribute('aria-sort') !== 'descending';
    th.closest('tr').querySelectorAll('th').forEach(function (o) {
      o.removeAttribute('aria-sort');
    });
    th.setAttribute('aria-sort', down ? 'descending' : 'ascending');
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[index].dataset.value, y = b.cells[index].dataset.value;
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
      return down ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""
_NUMERIC = {"rank", "pass1", "clean", "size", "active", "tasks", "samples"}


def render_page(boards: dict[View, list[BoardRow]], generated: str) -> str:
    """One self-contained HTML page: a table per view, sortable by clicking a header."""
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<title>passbench leaderboard</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>passbench leaderboard</h1>",
        f"<p>Generated {html.escape(generated)}. pass@1 in percent with its 95% interval; "
        "a rank band spans the ranks the intervals allow. <span class='badge verified'>"
        "verified</span> executed by a passbench worker, <span class='badge imported'>imported"
        "</span> from result files with every verdict, <span class='badge reported'>reported"
        "</span> as published elsewhere (not re-executed).</p><nav>",
    ]
    parts += [f"<a href='#{v.key}'>{html.escape(v.label)}</a>" for v in boards]
    parts.append("</nav>")
    for view, rows in boards.items():
        keys = list(COLUMNS)
        headers, cells = table(rows, keys)
        parts.append(f"<h2 id='{view.key}'>{html.escape(view.label)} ({len(rows)} rows)</h2>")
        parts.append(f"<table class='board' data-view='{view.key}'><thead><tr>")
        parts += [
            f"<th data-key='{k}'>{html.escape(h)}</th>" for k, h in zip(keys, headers, strict=True)
        ]
        parts.append("</tr></thead><tbody>")
        for row, values in zip(rows, cells, strict=True):
            parts.append(f"<tr data-model='{html.escape(row.model, quote=True)}'>")
            for key, value in zip(keys, values, strict=True):
                parts.append(_cell(key, value, row))
            parts.append("</tr>")
        parts.append("</tbody></table>")
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "".join(parts)


def _cell(key: str, value: Any, row: BoardRow) -> str:
    text = "" if value is None else str(value)
    sort_value = {"band": row.rank_best, "ci": row.ci_low, "clean": row.clean_pass_at_1}.get(
        key, value
    )
    attrs = f" data-value='{html.escape('' if sort_value is None else str(sort_value), True)}'"
    if key in _NUMERIC:
        attrs += " class='num'"
    if key == "badge":
        return f"<td{attrs}><span class='badge {row.badge}'>{html.escape(text)}</span></td>"
    if key == "model" and row.link:
        link = html.escape(row.link, quote=True)
        return f"<td{attrs}><a href='{link}'>{html.escape(text)}</a></td>"
    return f"<td{attrs}>{html.escape(text)}</td>"
