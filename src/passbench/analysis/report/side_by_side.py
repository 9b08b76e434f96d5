"""What `passbench compare` shows of its runs beside the pairwise tests: pass@1 per language
when a run's tasks are in several languages, and pass@1 after each try of multi-turn runs.

Pure: it reads RunResults and returns plain records and their renderings (Markdown lines,
JSON data, rich tables). The language of a task is what its samples recorded at evaluation
time (the benchmark's `language_of` hook), else the benchmark's one language; the pass rates
after each try are those the run's pass@k file stored (`run --tries N`).
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


@dataclass(frozen=True)
class TriesComparison:
    """pass@1 after each try, per run; `note` says why nothing is compared ("" when rows are)."""

    tries: int
    rates: Mapping[str, Mapping[int, float]]  # run name -> try -> pass@1 after it
    note: str = ""


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


def tries_comparison(names: Sequence[str], runs: Sequence[RunResults]) -> TriesComparison | None:
    """The runs' pass rates after each try when they made the same number of tries; a note
    when some made several tries and the others another number; None when none made more than
    one."""
    rates = {name: run.try_pass_rates for name, run in zip(names, runs, strict=True)}
    if not any(rates.values()):
        return None
    counts = {name: len(by_try) or 1 for name, by_try in rates.items()}
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{name} {count}" for name, count in counts.items())
        return TriesComparison(
            0, {}, f"pass rates per try not compared: the runs made different tries ({listed})"
        )
    return TriesComparison(next(iter(counts.values())), rates)


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


def tries_cells(names: Sequence[str], tries: TriesComparison) -> list[list[str]]:
    """Header, then one line per try: each run's pass@1 after it, and B - A for two runs."""
    pair = len(names) == 2
    header = ["", *names, *(["B - A (points)"] if pair else [])]
    lines = [header]
    for attempt in range(1, tries.tries + 1):
        values = [tries.rates[name][attempt] for name in names]
        cells = [f"pass_rate_{attempt}", *(percent(value) for value in values)]
        if pair:
            cells.append(_points(values[1] - values[0]))
        lines.append(cells)
    return lines


def side_by_side_markdown(
    names: Sequence[str], languages: Sequence[LanguageRow], tries: TriesComparison | None
) -> str:
    """The Markdown sections ("" when there is nothing to show)."""
    parts: list[str] = []
    if languages:
        parts += ["## By language", "", *_md(language_cells(names, languages)), ""]
    if tries is not None:
        parts += ["## Pass rate after each try", ""]
        parts += [tries.note, ""] if tries.note else [*_md(tries_cells(names, tries)), ""]
    return "\n".join(parts)


def _md(lines: Sequence[Sequence[str]]) -> list[str]:
    header, *rows = lines
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return out + ["| " + " | ".join(row) + " |" for row in rows]


def side_by_side_tables(
    names: Sequence[str], languages: Sequence[LanguageRow], tries: TriesComparison | None
) -> list[Table | str]:
    """Rich tables for the terminal (a note as a plain string)."""
    shown: list[Table | str] = []
    if languages:
        shown.append(_table("By language", language_cells(names, languages)))
    if tries is not None:
        if tries.note:
            shown.append(tries.note)
        else:
            shown.append(_table("Pass rate after each try", tries_cells(names, tries)))
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


def side_by_side_json(
    names: Sequence[str], languages: Sequence[LanguageRow], tries: TriesComparison | None
) -> dict[str, object]:
    """`by_language` (a list, [] when no run has several languages) and `pass_rates_by_try`
    (null when no run made several tries)."""
    tries_data: dict[str, object] | None = None
    if tries is not None:
        tries_data = {
            "tries": tries.tries,
            "runs": {
                name: {f"pass_rate_{t}": rate for t, rate in by_try.items()}
                for name, by_try in tries.rates.items()
            },
            "note": tries.note,
        }
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
        ],
        "pass_rates_by_try": tries_data,
    }
