"""The HTML report: self-contained, well-formed charts, and (in a real browser) rendered, sortable
and filterable. Browser tests need Chromium (Debian package `chromium`) and skip without it."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from passbench.analysis.report.analysis import Options, inspect_run
from passbench.analysis.report.html import render_report
from passbench.analysis.report.svg import Bar, bar_chart, line_chart
from passbench.stages.results import RunResults, SampleResult
from passbench.stages.results.taskinfo import TaskCatalog

FAST = Options(resamples=300, engine="python")
CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


@pytest.fixture(scope="module")
def report(
    our_run: RunResults, catalog: TaskCatalog, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(
        render_report(our_run, inspect_run(our_run, catalog, FAST), catalog), encoding="utf-8"
    )
    return path


def test_report_is_self_contained(report: Path) -> None:
    # Task data (tests and solutions mention URLs) is inert JSON; check everything around it.
    text = re.sub(
        r'(<script type="application/json" id="task-data">).*?(</script>)',
        r"\1\2",
        report.read_text(encoding="utf-8"),
        flags=re.S,
    )
    assert "<link" not in text
    assert not re.search(r"\ssrc\s*=", text)
    assert not re.search(r"@import|url\(", text)
    addresses = set(re.findall(r"https?://[^\s\"'<>)]+", text))
    assert addresses <= {"http://www.w3.org/2000/svg"}, addresses
    assert text.count("<svg") == 4  # domains, categories, libraries, pass@k curve


def test_embedded_data_cannot_break_out_of_its_script(tmp_path: Path) -> None:
    evil = "x = '</script><script>alert(1)</script>'"
    tasks = {"HumanEval/0": (SampleResult("HumanEval/0", 0, "fail", evil, {"t": "<b>boom</b>"}),)}
    run = RunResults(path=tmp_path / "x_eval_results.json", date=None, tasks=tasks)
    html = render_report(run, inspect_run(run, TaskCatalog(), FAST), TaskCatalog())
    assert "<script>alert(1)" not in html
    assert "<b>boom</b>" not in html
    payload = re.search(
        r'<script type="application/json" id="task-data">(.*?)</script>', html, re.S
    )
    assert payload is not None
    data = json.loads(payload.group(1))
    assert data["HumanEval/0"]["solutions"] == [evil]


def test_charts_are_well_formed_svg() -> None:
    bars = [Bar("a & b", 0.5, 0.4, 0.6, "(3)"), Bar("<lib>", 0.0), Bar("c", 1.0)]
    for svg in (
        bar_chart(bars, title="t <1>", maximum=1.0),
        bar_chart([Bar("x", 12.0)], title="counts", percent=False),
        line_chart([(1.0, 0.2), (2.0, 0.5), (3.0, 0.6)], title="pass@k", x_label="k"),
    ):
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
    assert bar_chart([], title="empty") == ""


class _Rows(HTMLParser):
    """Task rows of the dumped DOM, in document order: (task id, hidden, attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, bool, dict[str, str | None]]] = []
        self.ids: dict[str, str] = {}
        self.sorted_by: tuple[str | None, str | None] | None = None
        self._capture: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("data-task"):
            self.rows.append((str(found["data-task"]), "hidden" in found, found))
        if tag == "th" and found.get("aria-sort"):
            self.sorted_by = (found.get("data-key"), found.get("aria-sort"))
        if found.get("id") in {"shown-count", "detail-title"}:
            self._capture = str(found["id"])

    def handle_data(self, data: str) -> None:
        if self._capture:
            self.ids[self._capture] = self.ids.get(self._capture, "") + data

    def handle_endtag(self, tag: str) -> None:
        self._capture = None


def chromium(*arguments: str, profile: Path) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *arguments,
    ]
    return subprocess.run(command, capture_output=True, timeout=120, check=True)


def dump_dom(page: Path, fragment: str, profile: Path) -> _Rows:
    result = chromium(
        "--virtual-time-budget=5000", "--dump-dom", page.as_uri() + fragment, profile=profile
    )
    parsed = _Rows()
    parsed.feed(result.stdout.decode("utf-8"))
    return parsed


def visible(rows: _Rows) -> list[str]:
    return [task for task, hidden, _ in rows.rows if not hidden]


@pytest.mark.slow
@needs_chromium
def test_screenshot_is_not_blank(report: Path, tmp_path: Path) -> None:
    import PIL.Image as image_module

    shot = tmp_path / "shot.png"
    chromium(
        "--window-size=1280,1600", f"--screenshot={shot}", report.as_uri(), profile=tmp_path / "p"
    )
    image = image_module.open(io.BytesIO(shot.read_bytes())).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None
    background = max(colours)[1]
    drawn = sum(count for count, colour in colours if colour != background)
    assert len(colours) > 50  # text, bars, whiskers, cards: many shades, not one flat colour
    assert drawn > 0.05 * image.width * image.height


@pytest.mark.slow
@needs_chromium
def test_table_sorts_and_filters_from_the_address(
    report: Path, our_run: RunResults, tmp_path: Path
) -> None:
    rows = dump_dom(report, "#sort=-rate&outcome=partial", tmp_path / "p")
    rates = {
        t: sum(s.passed for s in samples) / len(samples) for t, samples in our_run.tasks.items()
    }
    partial = [t for t, rate in rates.items() if 0 < rate < 1]
    shown = visible(rows)
    assert sorted(shown) == sorted(partial)
    assert [rates[t] for t in shown] == sorted((rates[t] for t in shown), reverse=True)
    assert rows.ids["shown-count"] == f"{len(partial)} of {len(rates)} tasks"

    rows = dump_dom(report, "#category=exception&lib=sklearn&task=BigCodeBench/37", tmp_path / "p")
    assert visible(rows) == ["BigCodeBench/37", "BigCodeBench/92"]
    assert rows.ids["detail-title"] == "BigCodeBench/37"


@pytest.mark.slow
@needs_chromium
def test_clicks_and_form_controls_drive_the_table(
    report: Path, our_run: RunResults, tmp_path: Path
) -> None:
    """A copy of the report with a script that clicks like a user: sort by pass rate twice
    (descending), pick a failure category, open a task by clicking its row."""
    actions = """<script>
      document.querySelector('th[data-key="rate"]').click();
      document.querySelector('th[data-key="rate"]').click();
      var pick = document.getElementById('f-category');
      pick.value = 'timeout';
      pick.dispatchEvent(new Event('change'));
      document.querySelector('tr[data-task="BigCodeBench/101"] td').click();
    </script></body>"""
    page = tmp_path / "clicked.html"
    page.write_text(
        report.read_text(encoding="utf-8").replace("</body>", actions), encoding="utf-8"
    )
    rows = dump_dom(page, "", tmp_path / "p")
    assert visible(rows) == ["BigCodeBench/17", "BigCodeBench/101"]  # 1/5 then 0/5 pass
    assert rows.sorted_by == ("rate", "descending")
    assert rows.ids["shown-count"] == "2 of 14 tasks"
    assert rows.ids["detail-title"] == "BigCodeBench/101"
    selected = [task for task, _, attrs in rows.rows if "selected" in (attrs.get("class") or "")]
    assert selected == ["BigCodeBench/101"]


def test_languages_report_renders_the_breakdown(tmp_path: Path) -> None:
    """`passbench inspect A B C --format html`: the runs with their language, and by language
    pass@1, counts and MultiPL-E's statuses, read back from the rendered page's tables."""
    from html.parser import HTMLParser

    from click.testing import CliRunner
    from tests.analysis.report.conftest import OURS
    from tests.analysis.report.multiple_runs import write_js, write_lua

    from passbench.apps.cli import cli

    js, lua = write_js(tmp_path), write_lua(tmp_path)
    target = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli, ["inspect", str(OURS), str(js), str(lua), "--format", "html", "-o", str(target)]
    )
    assert result.exit_code == 0, result.output

    class Tables(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tables: list[list[list[str]]] = []
            self.cell: list[str] | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "table":
                self.tables.append([])
            elif tag == "tr":
                self.tables[-1].append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag: str) -> None:
            if tag in ("td", "th") and self.cell is not None:
                self.tables[-1][-1].append("".join(self.cell))
                self.cell = None

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell.append(data)

    page = target.read_text(encoding="utf-8")
    parser = Tables()
    parser.feed(page)
    runs, languages = parser.tables
    assert runs[0] == ["run", "benchmark", "language", "tasks", "samples", "pass@1"]
    assert [row[2] for row in runs[1:]] == ["Python", "JavaScript", "Lua"]
    header, *rows = languages
    assert header[-4:] == ["OK", "SyntaxError", "Exception", "Timeout"]
    by_language = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    assert by_language["JavaScript"]["pass@1"] == "75.0%"
    assert by_language["JavaScript"]["SyntaxError"] == "1"
    assert by_language["Lua"]["Timeout"] == "1" and by_language["Lua"]["tasks"] == "3"
    assert by_language["Python"]["OK"] == ""  # no MultiPL-E statuses for Python
    assert "pass@1 by language" in page and page.count("<svg") == 1
