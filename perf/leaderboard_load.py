"""How fast does the leaderboard page load with the public board's 202 models and verified runs?

Builds a store in a temporary folder: both public snapshots (leaderboard/bigcodebench-results-
{full,hard}.json from PASSBENCH_DATA_DIR, 202 models each, reported) and synthetic *verified*
runs in the documented result-file format (seeded random verdicts: only the shape is real):
`--full-runs` on BigCodeBench Full × Complete, 1,140 tasks × 1 sample, and `--hard-runs` on
Hard × Instruct, 148 tasks × 5 samples. Then it times:

  - server side: every view's rows computed from the store (cold: the first request after the
    store changed) and a page's rows from the app's cache (warm: the stamp query, filter, sort,
    table) — web.board and web.app.BoardCache, what `passbench leaderboard serve` runs;
  - in Debian's headless Chromium: from navigation until the board's row count and its first
    row are on screen, first load (cold) and the median of the next `--loads` (target < 1 s),
    at the default board (built into the page) and at another board (`?view=`, whose rows
    the page's load answers with).

Usage: python perf/leaderboard_load.py [--full-runs 5] [--hard-runs 5] [--loads 5]
    [--breakdown]   (the last load's requests on the page's timeline)
Needs the `leaderboard` extra, chromium and (for the browser part) tests/ on the path.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))  # tests.apps.leaderboard.web.browser: the DevTools client

from _common import data_dir  # noqa: E402


def write_run(folder: Path, model: str, subset: str, split: str, tasks: int, n: int) -> Path:
    rng = random.Random(model)
    skill = rng.uniform(0.2, 0.7)
    ids = [f"BigCodeBench/{i}" for i in range(tasks)]
    document = {
        "date": "2026-11-01 12:00",
        "eval": {
            task: [
                {
                    "task_id": task,
                    "solution": f"def task_func():\n    return {index}\n",
                    "status": "pass" if rng.random() < skill else "fail",
                    "details": {},
                }
                for index in range(n)
            ]
            for task in ids
        },
    }
    stem = f"{model}--bigcodebench-{subset}-{split}--bench-{n}-sanitized-calibrated"
    path = folder / f"{stem}_eval_results.json"
    path.write_text(json.dumps(document))
    side = {"pass@1": 0.0, "model": model, "split": split, "subset": subset, "calibrated": True}
    (folder / f"{stem}_pass_at_k.json").write_text(json.dumps(side))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full-runs", type=int, default=5)
    parser.add_argument("--hard-runs", type=int, default=5)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument(
        "--breakdown", action="store_true", help="Print the last load's requests and times."
    )
    args = parser.parse_args()

    from passbench.apps.leaderboard.store.database import open_store
    from passbench.apps.leaderboard.store.importing import import_results
    from passbench.apps.leaderboard.store.official_leaderboard import import_official
    from passbench.apps.leaderboard.web import board as boards
    from passbench.apps.leaderboard.web.app import BoardCache, asgi_app
    from passbench.apps.leaderboard.web.filters import BoardState, table

    folder = Path(tempfile.mkdtemp(prefix="passbench-board-bench-"))
    store = open_store(f"sqlite:///{folder / 'store.db'}")
    started = time.perf_counter()
    for subset in ("full", "hard"):
        import_official(store, data_dir() / "leaderboard" / f"bigcodebench-results-{subset}.json")
    for index in range(args.full_runs):
        path = write_run(folder, f"bench-full-{index}", "full", "complete", 1140, 1)
        import_results(store, path, provenance="verified")
    for index in range(args.hard_runs):
        path = write_run(folder, f"bench-hard-{index}", "hard", "instruct", 148, 5)
        import_results(store, path, provenance="verified")
    print(
        f"store: 202 models reported, {args.full_runs + args.hard_runs} verified runs "
        f"({time.perf_counter() - started:.1f} s to build)"
    )

    sizes: dict[str, int] = {}
    with store.transaction() as session:
        views = boards.views(session)
        for view in views:
            began = time.perf_counter()
            rows = boards.board(session, view)
            sizes[view.key] = len(rows)
            print(
                f"  cold rows  {view.key:28} {len(rows):4} rows  "
                f"{1000 * (time.perf_counter() - began):7.1f} ms"
            )
    cache = BoardCache(store)
    cache.current()[1](views[0])
    times = []
    for _ in range(20):
        began = time.perf_counter()
        found, rows_of = cache.current()
        shown, _ = BoardState().apply(rows_of(found[0]))
        table(shown, list(BoardState().columns))
        times.append(time.perf_counter() - began)
    print(
        f"  warm page rows (cache, filter, sort, table): median "
        f"{1000 * statistics.median(times):.1f} ms"
    )

    import uvicorn
    from tests.apps.leaderboard.web.browser import CHROMIUM, Browser
    from tests.apps.serve.live import free_port

    if CHROMIUM is None:
        print("chromium not installed: browser timings skipped")
        return
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(asgi_app(store), host="127.0.0.1", port=port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    browser = Browser(folder / "chromium")
    loaded = (
        "(document.querySelector('#board-count') || {}).innerText?.includes('rows shown') && "
        "document.querySelector('#board [data-testid=cell-0-2]')?.innerText.trim().length > 0"
    )
    try:
        loads = []
        for index in range(args.loads + 1):
            browser.open("about:blank")
            browser.wait_for("document.readyState === 'complete'")
            began = time.perf_counter()
            browser.open(f"http://127.0.0.1:{port}/?view={views[0].key}&load={index}")
            browser.wait_for(loaded, 60)
            loads.append(time.perf_counter() - began)
        if args.breakdown:  # where the last load's time went, from the page's own timeline
            entries = browser.evaluate(
                "JSON.stringify([performance.getEntriesByType('navigation')[0], "
                "...performance.getEntriesByType('resource')].map(e => "
                "[e.name.split('?')[0].slice(-60), Math.round(e.startTime), "
                "Math.round(e.responseEnd), e.transferSize]))"
            )
            for name, start, end, size in json.loads(entries):
                print(f"  {start:6} → {end:6} ms  {size or 0:>9} B  {name}")
            print(f"  rows on screen at {1000 * loads[-1]:.0f} ms")
        # another board than the default: the page's load answers with its rows (a round trip)
        other, n_rows = views[-1].key, sizes[views[-1].key]
        others = []
        for index in range(args.loads):
            browser.open("about:blank")
            browser.wait_for("document.readyState === 'complete'")
            began = time.perf_counter()
            browser.open(f"http://127.0.0.1:{port}/?view={other}&load=other{index}")
            browser.wait_for(
                f"(document.querySelector('#board-count') || {{}}).innerText?.startsWith("
                f"'{n_rows} of {n_rows} rows') && "
                "document.querySelector('#board [data-testid=cell-0-2]')?.innerText.trim()",
                60,
            )
            others.append(time.perf_counter() - began)
        print(
            f"chromium, another board (?view={other}): median {statistics.median(others):.2f} s "
            f"(min {min(others):.2f}, max {max(others):.2f}) over {args.loads} loads"
        )
        print(
            f"chromium page load to rows on screen: first {loads[0]:.2f} s, then median "
            f"{statistics.median(loads[1:]):.2f} s (min {min(loads[1:]):.2f}, "
            f"max {max(loads[1:]):.2f}) over {args.loads} loads"
        )
    finally:
        browser.close()
        server.should_exit = True
        store.close()


if __name__ == "__main__":
    main()
