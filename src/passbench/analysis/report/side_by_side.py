"""What `passbench compare` shows of its runs beside the pairwise tests: pass@1 per language
when a run's tasks are in several languages.

Pure: it reads RunResults and returns plain records and their renderings (Markdown lines,
JSON data, rich tables). The language of a task is what its samples recorded at evaluation
time (the benchmark's `language_of` hook), else the benchmark's one language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.table import Table

from passbench.analysis.report.exports import percent
from passbench.analysis.report.languages import task_languages
from passbench.stages.results import RunResults


@dataclass(frozen=True)
class LanguageFigures:
    """One run's tasks of one language."""

    tasks: int
    pass_at_1: float  # the mean over those tasks of their pass rate
    solved: int  # tasks with at least one passing sample


@dataclass(frozen=True)
class LanguageRow:
    """One language across the compared runs (None: the run has no task in it)."""

    language: str
    runs: Mapping[str, LanguageFigures | None]


def by_language(names: Sequence[str], runs: Sequence[RunResults]) -> tuple[LanguageRow, ...]:
    """One row per language, in the order the languages first appear; () unless some run's
    tasks are in more than one language (quarantined tasks are left out, as in pass@k)."""
    grouped: list[dict[str, list[float]]] = []
    solved: list[dict[str, int]] = []
    for run in runs:
        languages = task_languages(run)
        quarantined = run.quarantined_tasks
        rates: dict[str, list[float]] = {}
        wins: dict[str, int] = {}
        for task_id, samples in run.tasks.items():
            if not samples or task_id in quarantined:
                continue
            language = languages[task_id]
            passed = sum(sample.passed for sample in samples)
            rates.setdefault(language, []).append(passed / len(samples))
            wins[language] = wins.get(language, 0) + (passed > 0)
        grouped.append(rates)
        solved.append(wins)
    if not any(len(rates) > 1 for rates in grouped):
        return ()
    order = list(dict.fromkeys(language for rates in grouped for language in rates))
    return tuple(
        LanguageRow(
            language,
            {
                name: (
                    LanguageFigures(
                        len(rates[language]),
                        sum(rates[language]) / len(rates[language]),
                        wins[language],
                    )
                    if language in rates
                    else None
                )
                for name, rates, wins in zip(names, grouped, solved, strict=True)
            },
        )
        for language in order
    )


# ---- renderings ---------------------------------------------------------------------------------


def _figures_text(figures: LanguageFigures | None) -> str:
    if figures is None:
        return "-"
    return f"{percent(figures.pass_at_1)} ({figures.tasks})"


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def language_cells(names: Sequence[str], rows: Sequence[LanguageRow]) -> list[list[str]]:
    """Header, then one line per language: each run's pass@1 (tasks), and B - A for two runs."""
    header = ["language", *(f"{name} pass@1 (tasks)" for name in names)]
    pair = len(names) == 2
    if pair:
        header.append("B - A (points)")
    lines = [header]
    for row in rows:
        cells = [row.language, *(_figures_text(row.runs[name]) for name in names)]
        if pair:
            a, b = (row.runs[name] for name in names)
            cells.append(_points(b.pass_at_1 - a.pass_at_1) if a and b else "-")
        lines.append(cells)
    return lines


def side_by_side_markdown(names: Sequence[str], languages: Sequence[LanguageRow]) -> str:
    """The Markdown sections ("" when there is nothing to show)."""
    parts: list[str] = []
    if languages:
        parts += ["## By language", "", *_md(language_cells(names, languages)), ""]
    return "\n".join(parts)


def _md(lines: Sequence[Sequence[str]]) -> list[str]:
    header, *rows = lines
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return out + ["| " + " | ".join(row) + " |" for row in rows]


def side_by_side_tables(
    names: Sequence[str], languages: Sequence[LanguageRow]
) -> list[Table | str]:
    """Rich tables for the terminal (a note as a plain string)."""
    shown: list[Table | str] = []
    if languages:
        shown.append(_table("By language", language_cells(names, languages)))
    return shown


def _table(title: str, lines: Sequence[Sequence[str]]) -> Table:
    header, *rows = lines
    table = Table(title=title, title_justify="left")
    table.add_column(header[0])
    for name in header[1:]:
        table.add_column(name, justify="right")
    for row in rows:
        table.add_row(*row)
    return table


def side_by_side_json(names: Sequence[str], languages: Sequence[LanguageRow]) -> dict[str, object]:
    """`by_language`: a list, [] when no run has several languages."""
    return {
        "by_language": [
            {
                "language": row.language,
                "runs": {
                    name: (
                        None
                        if figures is None
                        else {
                            "tasks": figures.tasks,
                            "pass_at_1": figures.pass_at_1,
                            "solved": figures.solved,
                        }
                    )
                    for name, figures in row.runs.items()
                },
            }
            for row in languages
        ]
    }
