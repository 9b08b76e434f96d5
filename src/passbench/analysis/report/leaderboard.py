"""Several runs side by side, ranked by pass@1: JSON, CSV and Markdown leaderboards.

One row per run with its scores recomputed from stored verdicts, the pass@1 interval, and what
makes runs comparable or not (split, subset, calibration, dataset version and hash, samples per
task, isolation, missing tasks). Rows are ranked by pass@1; `separable_from_next` says whether
a run's lead over the next one is distinguishable from noise (report.compare's paired test on
their shared tasks), so a reader sees which ranks are real and which are ties in disguise.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passbench.analysis.report.analysis import Summary
from passbench.analysis.report.compare import PairComparison
from passbench.analysis.report.exports import percent

LEADERBOARD_SCHEMA_VERSION = 1
FORMATS = ("json", "csv", "md")


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    name: str
    summary: Summary
    separable_from_next: bool | None  # None for the last row


def build_leaderboard(
    summaries: Sequence[tuple[str, Summary]], pairs: Sequence[PairComparison]
) -> list[LeaderboardRow]:
    """Rank (name, summary) by pass@1, highest first; equal scores share a rank."""
    by_pair: dict[frozenset[str], PairComparison] = {
        frozenset((pair.a, pair.b)): pair for pair in pairs
    }
    ordered = sorted(summaries, key=lambda item: -_pass1(item[1]))
    rows: list[LeaderboardRow] = []
    for index, (name, summary) in enumerate(ordered):
        rank = index + 1
        if rows and _pass1(rows[-1].summary) == _pass1(summary):
            rank = rows[-1].rank
        separable = None
        if index + 1 < len(ordered):
            pair = by_pair.get(frozenset((name, ordered[index + 1][0])))
            separable = pair.distinguishable if pair is not None else None
        rows.append(LeaderboardRow(rank, name, summary, separable))
    return rows


def _pass1(summary: Summary) -> float:
    value = summary.pass_at_k.get("pass@1", math.nan)
    return -1.0 if math.isnan(value) else value


def _ks(rows: Sequence[LeaderboardRow]) -> list[str]:
    keys: list[str] = []
    for row in rows:
        for key in row.summary.pass_at_k:
            if key not in keys:
                keys.append(key)
    return sorted(keys, key=lambda key: int(key.split("@")[1]))


def _samples(summary: Summary) -> str:
    sizes = list(summary.samples_per_task)
    if not sizes:
        return "0"
    return str(sizes[0]) if len(sizes) == 1 else f"{min(sizes)}-{max(sizes)}"


def row_dict(row: LeaderboardRow) -> dict[str, Any]:
    s = row.summary
    interval = s.intervals.get("pass@1")
    return {
        "rank": row.rank,
        "name": row.name,
        "file": s.path,
        **{key: s.pass_at_k.get(key) for key in s.pass_at_k},
        "pass@1_ci": [interval.low, interval.high] if interval else None,
        "separable_from_next": row.separable_from_next,
        "n_tasks": s.n_tasks,
        "samples_per_task": _samples(s),
        "missing_tasks": len(s.missing_tasks),
        "benchmark": s.benchmark,
        "language": s.language,
        "split": s.split,
        "subset": s.subset,
        "calibrated": s.calibrated,
        "gt_pass_rate": s.gt_pass_rate,
        "dataset_version": s.dataset_version,
        "dataset_sha256": s.dataset_sha256,
        "isolation": s.isolation,
        "passbench_version": s.passbench_version,
        "origin": s.origin,
        "date": s.date,
    }


def leaderboard_json(rows: Sequence[LeaderboardRow], settings: Mapping[str, Any]) -> str:
    document = {
        "schema_version": LEADERBOARD_SCHEMA_VERSION,
        "generated_by": "passbench compare",
        "settings": dict(settings),
        "rows": [row_dict(row) for row in rows],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def leaderboard_csv(rows: Sequence[LeaderboardRow]) -> str:
    ks = _ks(rows)
    columns = ["rank", "name", *ks, "pass@1_ci_low", "pass@1_ci_high", "separable_from_next"]
    columns += ["n_tasks", "samples_per_task", "missing_tasks", "benchmark", "language"]
    columns += ["split", "subset"]
    columns += ["calibrated", "gt_pass_rate", "dataset_version", "dataset_sha256", "isolation"]
    columns += ["passbench_version", "origin", "date", "file"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        data = row_dict(row)
        ci = data.pop("pass@1_ci") or [None, None]
        data["pass@1_ci_low"], data["pass@1_ci_high"] = ci
        writer.writerow({key: _cell(value) for key, value in data.items()})
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def leaderboard_markdown(rows: Sequence[LeaderboardRow], confidence: float) -> str:
    ks = _ks(rows)
    level = f"{round(confidence * 100)}%"
    header = ["rank", "model", "language", *ks, f"pass@1 {level} CI", "tasks", "n", "split"]
    header += ["subset"]
    header += ["calibrated", "GT pass", "dataset", "isolation"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        s = row.summary
        interval = s.intervals.get("pass@1")
        ci = f"[{percent(interval.low)}, {percent(interval.high)}]" if interval else ""
        tie = " ≈" if row.separable_from_next is False else ""
        cells = [
            f"{row.rank}{tie}",
            row.name.replace("|", "\\|"),
            s.language,
            *(percent(s.pass_at_k.get(k)) for k in ks),
            ci,
            str(s.n_tasks) + (f" ({len(s.missing_tasks)} missing)" if s.missing_tasks else ""),
            _samples(s),
            s.split or "",
            s.subset or "",
            "" if s.calibrated is None else "yes" if s.calibrated else "no",
            percent(s.gt_pass_rate) if s.gt_pass_rate is not None else "",
            s.dataset_version or "",
            s.isolation or "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"pass@k recomputed from stored verdicts; {level} CI: bootstrap over tasks. "
        "≈: not distinguishable from the next row (paired bootstrap and McNemar's exact test)."
    )
    return "\n".join(lines) + "\n"
