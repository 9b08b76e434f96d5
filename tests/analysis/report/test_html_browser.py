"""The HTML report's failure triage and run-to-run sections, opened in Debian's headless Chromium
(one browser for the module, driven over the DevTools protocol as the leaderboard's tests do):
each section is drawn, its tables read back as a reader sees them, and a click on a task named
there opens that task's detail. Needs Chromium (Debian package `chromium`) and skips without it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.analysis.report.test_triage import _write_run as write_triage_run
from tests.apps.leaderboard.web.browser import CHROMIUM, Browser

from passbench.analysis.report.analysis import Options, inspect_run
from passbench.apps.cli import cli
from passbench.stages.results import load_results
from passbench.stages.results.taskinfo import TaskCatalog

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

#: The rows of a table, as the cells' rendered text.
ROWS = """[...document.querySelectorAll(%r)].map(row =>
  [...row.cells].map(cell => cell.innerText.trim()))"""


def _html(results: Path, target: Path, data_dir: Path) -> Path:
    outcome = CliRunner().invoke(
        cli,
        ["inspect", str(results), "--format", "html", "-o", str(target), "--bootstrap", "200"],
        env={"PASSBENCH_DATA_DIR": str(data_dir)},
    )
    assert outcome.exit_code == 0, outcome.output
    return target


def _open(browser: Browser, page: Path) -> None:
    browser.open(page.as_uri())
    browser.wait_for("(document.getElementById('shown-count') || {}).textContent > ''")


def _open_task_from(browser: Browser, link: str, task_id: str) -> list[str]:
    """Click `link` as a user would; the detail's sample headings once it shows `task_id`."""
    browser.click(link)
    # the page writes its state back to the address, encoded ("BigCodeBench%2F3")
    browser.wait_for(f"decodeURIComponent(location.hash) === {'#task=' + task_id!r}")
    browser.wait_for(
        f"document.getElementById('detail-title').textContent === {task_id!r}"
        " && !document.getElementById('detail').hidden"
    )
    selected = browser.evaluate(
        "[...document.querySelectorAll('#task-table tr.selected')].map(r => r.dataset.task)"
    )
    assert selected == [task_id]
    headings: list[str] = browser.evaluate(
        "[...document.querySelectorAll('#detail-body details > summary')].map(s => s.innerText)"
    )
    return headings


def _laid_out(browser: Browser, section: str) -> dict[str, float]:
    """The section's box and whether anything in it is wider than the page's main column."""
    box: dict[str, float] = browser.evaluate(
        f"""(() => {{
          const s = document.getElementById({section!r}).getBoundingClientRect();
          const main = document.querySelector('main').getBoundingClientRect();
          const parts = document.querySelectorAll('#{section} table, #{section} svg');
          const widest = Math.max(...[...parts].map(e => e.getBoundingClientRect().right));
          return {{top: s.top + scrollY, height: s.height, width: s.width,
                   overflow: widest - main.right}};
        }})()"""
    )
    assert box["height"] > 40 and box["width"] > 300, box
    assert box["overflow"] <= 0, box
    return box


def _drawn_share(browser: Browser, top: float, height: float) -> tuple[int, float]:
    """Colours and share of non-background pixels in a screenshot of the page from `top`."""
    import base64

    import PIL.Image as image_module

    shot = browser.call(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": top, "width": 1400, "height": height, "scale": 1},
        },
    )
    image = image_module.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None
    background = max(colours)[1]
    drawn = sum(count for count, colour in colours if colour != background)
    return len(colours), drawn / (image.width * image.height)


def test_triage_section_is_drawn_and_its_tasks_open(
    browser: Browser, catalog: TaskCatalog, data_dir: Path, tmp_path: Path
) -> None:
    results = write_triage_run(tmp_path, catalog)
    page = _html(results, tmp_path / "triage.html", data_dir)
    triage = inspect_run(load_results(results), catalog, Options(ks=(1,), resamples=50)).triage
    assert triage is not None
    _open(browser, page)

    rows = browser.evaluate(ROWS % "#triage tbody tr")
    assert rows == [[g.cls, g.kind, str(g.samples), ", ".join(g.tasks)] for g in triage.groups]
    assert {row[0] for row in rows} == {"model", "extraction", "environment", "harness"}
    text = browser.evaluate("document.getElementById('triage').innerText")
    assert "7 failing samples: model 3, extraction 1, environment 2, harness 1" in text
    assert "extraction loss: 1 of 4 failing samples (25.0%)" in text
    _laid_out(browser, "triage")

    # the extraction row's example, then the harness row's: each click opens its task
    headings = _open_task_from(browser, '#triage a[href="#task=BigCodeBench/3"]', "BigCodeBench/3")
    assert headings[0].startswith("sample 0: fail")
    headings = _open_task_from(browser, '#triage a[href="#task=BigCodeBench/5"]', "BigCodeBench/5")
    assert headings[0].startswith("sample 0: timeout")


@pytest.mark.bwrap  # `measured` executes the samples in the sandbox
def test_run_to_run_sections_are_drawn_and_their_tasks_open(
    browser: Browser, measured: dict[str, Any], data_dir: Path, tmp_path: Path
) -> None:
    page = _html(measured["outcome"].eval_results_path, tmp_path / "stats.html", data_dir)
    _open(browser, page)

    order = browser.evaluate("[...document.querySelectorAll('main > section')].map(s => s.id)")
    assert order[:4] == ["summary", "flaky", "epochs", "quarantine"]

    coin = measured["eval"]["HumanEval/0"][0]
    counts: dict[str, int] = coin["runs"]
    assert browser.evaluate(ROWS % "#flaky-table tr") == [
        ["task", "sample", *counts],
        ["HumanEval/0", "0", *(str(n) for n in counts.values())],
    ]
    epochs = measured["pass_file"]["epochs"]
    per_epoch = epochs["pass@1_per_epoch"]
    assert browser.evaluate(ROWS % "#epoch-table tbody tr") == [
        [str(e + 1), f"{100 * v:.2f}%"] for e, v in enumerate(per_epoch)
    ]
    # the chart's bars are as long as the values they stand for
    widths = browser.evaluate(
        "[...document.querySelectorAll('#epochs svg rect.bar')].map(r => r.getBBox().width)"
    )
    assert len(widths) == len(per_epoch)
    full = widths[per_epoch.index(1.0)]
    assert widths == pytest.approx([full * value for value in per_epoch], abs=1.0)
    unstable = measured["truth"]["unstable_tasks"]["HumanEval/1"]
    assert browser.evaluate(ROWS % "#quarantine-table tbody tr") == [
        ["HumanEval/1", ", ".join(f"{status} {n}" for status, n in unstable.items())]
    ]

    first = _laid_out(browser, "flaky")
    _laid_out(browser, "epochs")
    last = _laid_out(browser, "quarantine")
    shades, share = _drawn_share(browser, first["top"], last["top"] + last["height"] - first["top"])
    assert shades > 30 and share > 0.03, (shades, share)  # cards, tables, bars: not blank

    # the flaky sample's detail says how its verdicts went over the runs
    headings = _open_task_from(browser, '#flaky a[href="#task=HumanEval/0"]', "HumanEval/0")
    flaky = ", ".join(f"{status} {n}" for status, n in counts.items())
    assert headings[0].startswith(f"sample 0: {coin['status']}")
    assert headings[0].endswith(f"; flaky: {flaky} over the runs")
    assert not any("flaky" in heading for heading in headings[1:])  # the steady ones
    _open_task_from(browser, '#quarantine a[href="#task=HumanEval/1"]', "HumanEval/1")
