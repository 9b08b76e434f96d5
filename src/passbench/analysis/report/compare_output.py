"""Renderings of run comparisons: JSON data, Markdown, and rich renderables for the terminal."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from passbench.analysis.report.compare import PairComparison
from passbench.analysis.report.exports import interval_dict, percent

COMPARE_SCHEMA_VERSION = 1


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def pair_dict(pair: PairComparison, *, with_tasks: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "a": pair.a,
        "b": pair.b,
        "pass_at_1_a": _number(pair.pass_at_1_a),
        "pass_at_1_b": _number(pair.pass_at_1_b),
        "diff": _number(pair.diff),
        "diff_ci": [_number(pair.diff_ci.low), _number(pair.diff_ci.high)],
        "diff_interval": interval_dict(pair.diff_ci),
        "mcnemar_p": pair.mcnemar_p,
        "mcnemar_rule": pair.rule,
        "distinguishable": pair.distinguishable,
        "verdict": pair.verdict,
        "tasks_both": pair.tasks_both,
        "only_a": len(pair.only_a),
        "only_b": len(pair.only_b),
        "only_a_task_ids": list(pair.only_a),
        "only_b_task_ids": list(pair.only_b),
        "solved": {
            "both": pair.solved_both,
            "only_a": pair.solved_only_a,
            "only_b": pair.solved_only_b,
            "neither": pair.solved_neither,
        },
        "won_a": pair.won_a,
        "won_b": pair.won_b,
        "tied": pair.tied,
    }
    if abs(pair.diff_ci.confidence - 0.95) < 1e-9:
        data["diff_ci95"] = data["diff_ci"]  # the name readers look for at the default level
    if with_tasks:
        data["tasks"] = [
            {"task_id": t.task_id, "rate_a": t.rate_a, "rate_b": t.rate_b} for t in pair.tasks
        ]
    return data


def compare_json(runs: Sequence[dict[str, Any]], pairs: Sequence[PairComparison]) -> str:
    document = {
        "schema_version": COMPARE_SCHEMA_VERSION,
        "runs": list(runs),
        "pairs": [pair_dict(pair) for pair in pairs],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def compare_markdown(pairs: Sequence[PairComparison], limit: int = 50) -> str:
    lines: list[str] = []
    for pair in pairs:
        level = round(pair.diff_ci.confidence * 100)
        lines += [
            f"## {pair.a} (A) vs {pair.b} (B)",
            "",
            f"**{pair.verdict}**",
            "",
            "| | A | B |",
            "|---|---|---|",
            f"| pass@1 on {pair.tasks_both} shared tasks | {percent(pair.pass_at_1_a)} | "
            f"{percent(pair.pass_at_1_b)} |",
            f"| tasks only in this run | {len(pair.only_a)} | {len(pair.only_b)} |",
            f"| tasks won (higher pass rate) | {pair.won_a} | {pair.won_b} |",
            "",
            f"B - A: {_points(pair.diff)} points, {level}% CI "
            f"[{_points(pair.diff_ci.low)}, {_points(pair.diff_ci.high)}] (paired bootstrap, "
            f"{pair.diff_ci.resamples} resamples, seed {pair.diff_ci.seed}); "
            f"McNemar exact p = {pair.mcnemar_p:.3g} (solved = {pair.rule}); "
            f"{pair.tied} tasks tied.",
            "",
            "| solved by | B solved | B unsolved |",
            "|---|---|---|",
            f"| **A solved** | {pair.solved_both} | {pair.solved_only_a} |",
            f"| **A unsolved** | {pair.solved_only_b} | {pair.solved_neither} |",
            "",
        ]
        differing = [t for t in pair.tasks if t.rate_a != t.rate_b]
        if differing:
            lines += ["| task | A pass rate | B pass rate |", "|---|---|---|"]
            for t in differing[: limit or None]:
                lines.append(f"| {t.task_id} | {percent(t.rate_a, 0)} | {percent(t.rate_b, 0)} |")
            if limit and len(differing) > limit:
                lines.append(f"| ... {len(differing) - limit} more | | |")
            lines.append("")
    return "\n".join(lines)


def compare_view(pairs: Sequence[PairComparison], limit: int = 20) -> RenderableType:
    parts: list[RenderableType] = []
    for pair in pairs:
        level = round(pair.diff_ci.confidence * 100)
        table = Table(title=f"{pair.a} (A) vs {pair.b} (B)", title_justify="left")
        table.add_column("")
        table.add_column("A", justify="right")
        table.add_column("B", justify="right")
        table.add_row(
            f"pass@1 ({pair.tasks_both} shared tasks)",
            percent(pair.pass_at_1_a),
            percent(pair.pass_at_1_b),
        )
        table.add_row("tasks only in this run", str(len(pair.only_a)), str(len(pair.only_b)))
        table.add_row("tasks won", str(pair.won_a), str(pair.won_b))
        table.add_row(
            f"solved ({pair.rule}), not by the other",
            str(pair.solved_only_a),
            str(pair.solved_only_b),
        )
        parts.append(table)
        parts.append(
            Text(
                f"B - A = {_points(pair.diff)} points, {level}% CI "
                f"[{_points(pair.diff_ci.low)}, {_points(pair.diff_ci.high)}]; "
                f"McNemar exact p = {pair.mcnemar_p:.3g}; solved by both {pair.solved_both}, "
                f"by neither {pair.solved_neither}; tied {pair.tied}"
            )
        )
        parts.append(Text(pair.verdict, style="bold green" if pair.distinguishable else "bold"))
        differing = [t for t in pair.tasks if t.rate_a != t.rate_b]
        if differing and limit != 0:
            tasks = Table(
                title=f"{len(differing)} tasks where the pass rates differ"
                + (f" (first {limit})" if len(differing) > limit else ""),
                title_justify="left",
            )
            tasks.add_column("task")
            tasks.add_column("A", justify="right")
            tasks.add_column("B", justify="right")
            for t in differing[:limit]:
                tasks.add_row(t.task_id, percent(t.rate_a, 0), percent(t.rate_b, 0))
            parts.append(tasks)
        parts.append(Text(""))
    return Group(*parts)
