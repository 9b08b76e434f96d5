"""`passbench leaderboard serve` started for real on a loopback port and driven in Debian's
headless Chromium: the board shows the store's rows, the address filters and sorts it and is
rewritten as the reader filters, a click on a row opens the model's page with its provenance
and per-task results, the compare view gives the paired statistics, and the page is drawn.
Needs Chromium (Debian package `chromium`) and skips without it."""

from __future__ import annotations

import io
import json
import time
import urllib.parse
from pathlib import Path

import pytest
from tests.apps.leaderboard.web.browser import CHROMIUM, Browser
from tests.apps.leaderboard.web.conftest import OURS, SHARED_MODEL

from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.web import board as boards
from passbench.apps.leaderboard.web.board import BoardRow
from passbench.apps.leaderboard.web.filters import BoardState
from passbench.stages.results import load_results

#: Where the browser tests leave what they saw, for a person to look at (ignored by git).
SCREENSHOTS = Path(__file__).resolve().parents[4] / "build" / "screenshots"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

#: The rendered grid's rows (a virtual list: the rows in view), as cell texts.
ROWS = """(() => {
  const rows = {};
  document.querySelectorAll('#board [role=gridcell][data-row]').forEach(cell => {
    (rows[cell.dataset.row] = rows[cell.dataset.row] || [])[+cell.dataset.col] =
      cell.innerText.trim();
  });
  return Object.keys(rows).sort((a, b) => a - b).map(key => rows[key]);
})()"""
MODEL = 2  # the Model column, in the default column order


def _board(store: Store, key: str) -> list[BoardRow]:
    with store.transaction() as session:
        view = boards.find_view(boards.views(session), key)
        assert view is not None
        return boards.board(session, view)


def _count(browser: Browser, text: str) -> None:
    try:
        browser.wait_for(
            f"(document.querySelector('#board-count') || {{}}).innerText === {text!r}", 60
        )
    except AssertionError:
        shown = browser.evaluate(
            "[(document.querySelector('#board-count') || {}).innerText, location.href]"
        )
        raise AssertionError(f"the count says {shown!r}, not {text!r}") from None


def _shown(browser: Browser, first: str) -> list[list[str]]:
    """The grid's rows once its first row is `first` (the table refreshes after the count)."""
    browser.wait_for(f"(({ROWS})[0] || [])[{MODEL}] === {first!r}", 30)
    rows: list[list[str]] = browser.evaluate(ROWS)
    return rows


def _pick_board(browser: Browser, store: Store, key: str) -> None:
    """Open the Board list and click the board `key`, as a reader does."""
    with store.transaction() as session:
        label = next(v.label for v in boards.views(session) if v.key == key)
    with_label = f"li[role=option][aria-label={label!r}]"
    browser.click("#view input")
    browser.wait_for(f"!!document.querySelector({with_label!r})")
    browser.click(with_label)


def test_the_first_screen_leads_with_the_table(server: str, browser: Browser) -> None:
    """At 1400 × 1000 the ranking is on the first screen, under one bar of filters, and no
    header is broken into a letter per line."""
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        browser.open(server + "?view=bigcodebench-hard-complete")
        browser.wait_for("document.querySelectorAll('#board [role=gridcell]').length > 20", 60)
        top, rows_visible, headers = browser.evaluate(
            """(() => {
              const board = document.querySelector('#board').getBoundingClientRect();
              const cells = [...document.querySelectorAll('#board [role=gridcell][data-row]')];
              const visible = new Set(cells.filter(c => c.getBoundingClientRect().bottom
                <= window.innerHeight).map(c => c.dataset.row));
              const heads = [...document.querySelectorAll('#board thead th')].map(th => {
                const r = th.getBoundingClientRect();
                return [th.innerText.trim(), r.height];
              });
              return [board.top, visible.size, heads];
            })()"""
        )
        first_screen = browser.screenshot()
    finally:
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1400, "height": 1800, "deviceScaleFactor": 1, "mobile": False},
        )
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "leaderboard-first-screen.png").write_bytes(first_screen)
    assert top < 300, f"the table starts at y = {top:.0f}"
    assert rows_visible >= 10
    # what a user sees: below the bar, the screen is the table's rows, not an empty page
    import PIL.Image as image_module

    image = image_module.open(io.BytesIO(first_screen)).convert("RGB")
    assert image.size == (1400, 1000)
    table = image.crop((0, int(top), image.width, image.height))
    colours = table.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50
    background = max(colours)[1]
    drawn = sum(count for count, colour in colours if colour != background)
    assert drawn > 0.05 * table.width * table.height
    named = {text: height for text, height in headers if text}
    assert "Clean pass@1 %" in named
    lowest = min(named.values())
    assert all(height < 2 * lowest for height in named.values()), named


def test_the_board_shows_the_store_and_is_drawn(
    server: str, browser: Browser, filled: tuple[Store, dict[str, int]]
) -> None:
    store, _ = filled
    rows = _board(store, "bigcodebench-hard-complete")
    browser.open(server + "?view=bigcodebench-hard-complete")
    _count(browser, f"{len(rows)} of {len(rows)} rows shown · 0 hidden by filters")
    shown = _shown(browser, rows[0].model)
    assert len(shown) >= 10
    for cells, row in zip(shown, rows, strict=False):
        assert cells[:6] == [
            str(row.rank),
            row.rank_band,
            row.model,
            row.badge,
            f"{round(row.pass_at_1, 1):g}",
            f"{row.ci_low:.1f}–{row.ci_high:.1f}",
        ]
    assert shown[0][3] == "verified"  # demo-model-v2, 55.7%, tops Hard × Complete
    # its tasks were checked for contamination: pass@1 without the 2 flagged ones
    assert rows[0].clean_pass_at_1 is not None
    assert shown[0][6] == f"{rows[0].clean_pass_at_1:.1f} (−2)"

    import PIL.Image as image_module

    image = image_module.open(io.BytesIO(browser.screenshot())).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None
    background = max(colours)[1]
    drawn = sum(count for count, colour in colours if colour != background)
    assert len(colours) > 50  # text, badges, table lines: not a blank page
    assert drawn > 0.05 * image.width * image.height


def test_the_address_filters_and_sorts_the_board(
    server: str, browser: Browser, filled: tuple[Store, dict[str, int]]
) -> None:
    store, _ = filled
    query = {"view": "bigcodebench-full-instruct", "sort": "-size", "size_max": "16", "moe": "no"}
    rows = _board(store, query["view"])
    expected, hidden = BoardState.from_query(query).apply(rows)
    assert 0 < hidden < len(rows)
    browser.open(server + "?" + urllib.parse.urlencode(query))
    _count(browser, f"{len(expected)} of {len(rows)} rows shown · {hidden} hidden by filters")
    shown = _shown(browser, expected[0].model)
    assert [cells[MODEL] for cells in shown] == [r.model for r in expected[: len(shown)]]
    sizes = [float(cells[7]) for cells in shown]
    assert sizes == sorted(sizes, reverse=True) and max(sizes) <= 16
    assert {cells[9] for cells in shown} == {"no"}  # MoE
    # the page keeps the state in its address (rewritten in the canonical order)
    canonical = urllib.parse.urlencode(BoardState.from_query(query).to_query())
    browser.wait_for(f"location.search === {'?' + canonical!r}")


def test_picking_a_board_and_typing_a_filter_rewrite_the_board_and_the_address(
    server: str, browser: Browser, filled: tuple[Store, dict[str, int]]
) -> None:
    store, _ = filled
    first = _board(store, "bigcodebench-full-complete")
    browser.open(server)
    _count(browser, f"{len(first)} of {len(first)} rows shown · 0 hidden by filters")
    browser.wait_for("location.search === '?view=bigcodebench-full-complete'")

    rows = _board(store, "bigcodebench-hard-instruct")
    _pick_board(browser, store, "bigcodebench-hard-instruct")
    _count(browser, f"{len(rows)} of {len(rows)} rows shown · 0 hidden by filters")
    browser.type("#q input", "llama")
    expected, hidden = BoardState(q="llama").apply(rows)
    _count(browser, f"{len(expected)} of {len(rows)} rows shown · {hidden} hidden by filters")
    browser.wait_for("location.search === '?view=bigcodebench-hard-instruct&q=llama'")
    shown = _shown(browser, expected[0].model)
    assert all("llama" in cells[MODEL].lower() for cells in shown)


def test_a_click_on_a_row_opens_the_model_page(
    server: str, browser: Browser, filled: tuple[Store, dict[str, int]], tmp_path: Path
) -> None:
    store, runs = filled
    browser.open(server + "?view=bigcodebench-hard-complete&q=demo-model-v2")
    browser.wait_for("document.querySelector('#board-count')?.innerText.startsWith('1 of ')", 60)
    _shown(browser, "demo-model-v2")
    browser.click("#board [data-testid=cell-0-2]")
    info = browser.wait_for(
        "document.querySelector('#model-info')?.innerText.includes('Runs') && "
        "document.querySelector('#model-info').innerText"
    )
    with store.transaction() as session:
        run = session.get(boards.Run, runs["demo-model-v2"])
        assert run is not None
        facts = [run.harness_version, run.dataset_sha256, run.isolation, run.evaluated_at]
        facts += [fact for fact in (run.backend, run.env_name) if fact]
        page = boards.model_page(session, run.model_id)
        assert page is not None
        [check] = page.contamination
    assert "demo-model-v2" in info
    assert all(fact and fact[:12] in info for fact in facts), (facts, info)  # provenance
    assert "verified" in info
    # the stored contamination check of its tasks: how many are flagged, pass@1 on the rest
    assert "Contamination checks" in info and "corpus.jsonl" in info
    assert f"{100 * check.clean.pass_at_1:.1f}% of {check.clean.tasks}" in info, info
    tasks = browser.wait_for(
        "document.querySelectorAll('#model-tasks [role=gridcell][data-col=\"0\"]').length"
        " >= 10 && Array.from(document.querySelectorAll("
        "'#model-tasks [role=gridcell][data-col=\"0\"]')).map(c => c.innerText.trim())"
    )
    assert all(task.startswith("BigCodeBench/") for task in tasks)
    browser.wait_for("location.search.includes('tab=model') && location.search.includes('v2')")
    # the result file and the samples download as the files they were imported from say
    folder = tmp_path / "downloads"
    folder.mkdir()
    browser.download_into(folder)
    browser.click("#download-results")
    browser.click("#download-samples")
    deadline = time.monotonic() + 30
    while len([p for p in folder.iterdir() if not p.name.endswith(".crdownload")]) < 2:
        assert time.monotonic() < deadline, list(folder.iterdir())
        time.sleep(0.1)
    results = next(folder.glob("*_eval_results.json"))
    samples = next(folder.glob("*.jsonl"))
    original = load_results(OURS)
    assert load_results(results).counts() == original.counts()
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    assert [(s["task_id"], s["solution"]) for s in lines] == [
        (s.task_id, s.solution) for samples_ in original.tasks.values() for s in samples_
    ]


def test_the_compare_view_gives_the_paired_statistics(
    server: str, browser: Browser, filled: tuple[Store, dict[str, int]]
) -> None:
    store, runs = filled
    first, second = runs[SHARED_MODEL], runs["demo-model-v2"]
    with store.transaction() as session:
        result = boards.compare(session, first, second)
    browser.open(server + f"?tab=compare&compare={first},{second}")
    text = browser.wait_for(
        "document.querySelector('#comparison')?.innerText.includes('McNemar') && "
        "document.querySelector('#comparison').innerText"
    )
    assert f"tasks both ran: {result.tasks_both}" in text
    assert f"p = {result.mcnemar_p:.3g}" in text
    assert f"{100 * result.diff:+.1f} points" in text
    assert result.verdict in text
    differ = sum(1 for t in result.tasks if t.rate_a != t.rate_b)
    browser.wait_for(
        "document.querySelectorAll('#compare-tasks [role=gridcell][data-col=\"0\"]').length"
        f" === {differ}"
    )
