"""`passbench leaderboard serve`: the leaderboard as a Gradio app over the results store.

    Leaderboard   a view (BigCodeBench Full/Hard × Complete/Instruct, other benchmarks), pass@1
                  with its 95% interval, rank band, badge; filters; sort and columns; the count
                  of rows the filters hide; the current view as CSV or JSON
    Model         a model's metadata, its runs with their provenance (harness version, dataset
                  hash, environment lock, backend, isolation, date), the contamination checks
                  of its runs' tasks (pass@1 on the clean tasks beside every task's), reported
                  scores, a run's per-task results, its samples and result file to download;
                  the same as data through the `model` API endpoint
    Compare       two runs on the tasks where they differ, with `passbench compare`'s statistics

The app reads the store only through web.board, as the static build does. It executes nothing:
samples are data here; scoring is a worker's job (docs/leaderboard.md). What the reader chose
lives in the address (web.filters documents the parameters, plus `tab`, `model`, `run`,
`compare=RUN,RUN`, and with submissions `tab=submit`, `tab=queue&job=ID`): the page reads it in
the browser when it opens and rewrites it with
history.replaceState as the reader changes anything.

With `Submissions` (web.submit) it adds the Submit and Queue tabs and the `submit` and
`status` API endpoints: they queue bundles and read jobs through store/queue.py (the Queue tab
also cancels, hides and deletes entries with the reader's token); workers score them in their
own processes.

Speed: every view's rows are computed at the start (BoardCache.warm), so the first reader does
not wait for them; the page's one load answers with the controls and the board.
"""

# No `from __future__ import annotations`: Gradio reads `gr.SelectData` from a handler's
# annotations at run time, and `gr` is imported inside build_blocks (an optional extra).
import csv
import hashlib
import io
import json
import tempfile
import threading
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from passbench.analysis.report.contamination import GroupScore
from passbench.analysis.report.triage import CLASSES as TRIAGE_CLASSES
from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.models import OPEN_DATA_LEVELS, Run
from passbench.apps.leaderboard.web import board as boards
from passbench.apps.leaderboard.web.board import BADGES, BoardRow, View
from passbench.apps.leaderboard.web.filters import COLUMNS, DEFAULT_SORT, BoardState, records, table
from passbench.apps.leaderboard.web.submit import Submissions, status_markdown, submission_tabs
from passbench.stages.benchmarks import benchmark_names

TABS = ("board", "model", "compare")
#: The tabs an app with submissions adds (`?tab=submit`, `?tab=queue&job=ID`).
SUBMISSION_TABS = ("submit", "queue")
# Headers keep their words whole: a narrow column must not stack a header one letter per line.
_CSS = """
#board-count {font-weight: 600}
.provenance code {font-size: 12px}
#board th, #board th * {white-space: nowrap; word-break: keep-all; overflow-wrap: normal}
#filter-bar {align-items: end}
"""
#: The address's query, read in the browser when the page opens.
_READ_URL = "() => [window.location.search]"
#: Marks the page once its load has answered (`<body data-loaded="1">`): a script (a test) waits
#: for it before using the page.
_LOADED = "() => { document.body.dataset.loaded = '1'; return []; }"
#: Rewrites the address from the hidden query field; runs in the browser only. An empty field
#: is the page still opening (the app always writes the view): the address is left alone, so
#: the load reads it first.
_REPLACE_URL = """(query) => {
  if (query && window.location.search !== '?' + query) {
    window.history.replaceState(null, '', '?' + query);
  }
  return [];
}"""


class BoardCache:
    """Boards computed once per state of the store (board.stamp), per view."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._stamp: tuple[object, ...] | None = None
        self._views: list[View] = []
        self._rows: dict[View, list[BoardRow]] = {}

    def warm(self) -> None:
        """Compute every view's rows now (at the server's start): no reader waits for them."""
        found, rows_of = self.current()
        for view in found:
            rows_of(view)

    def current(self) -> tuple[list[View], Callable[[View], list[BoardRow]]]:
        with self.store.transaction() as session:
            stamp = boards.stamp(session)
            with self._lock:
                if stamp != self._stamp:
                    self._stamp, self._rows = stamp, {}
                    self._views = boards.views(session)
                found = list(self._views)

        def rows(view: View) -> list[BoardRow]:
            with self._lock:
                cached = self._rows.get(view)
            if cached is None:
                with self.store.transaction() as session:
                    cached = boards.board(session, view)
                with self._lock:
                    self._rows[view] = cached
            return cached

        return found, rows


def _choices_sort() -> list[tuple[str, str]]:
    out = []
    for key, (header, _) in COLUMNS.items():
        out += [(f"{header} ↓", f"-{key}"), (f"{header} ↑", key)]
    return out


def _downloads(folder: Path, rows: list[BoardRow], columns: list[str], view: View) -> list[str]:
    """The shown rows as CSV (shown columns) and JSON (every field), named by their content."""
    headers, cells = table(rows, columns)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(headers)
    writer.writerows(cells)
    document = json.dumps({"view": view.key, "rows": records(rows)}, indent=1, default=str)
    paths = []
    for suffix, text in (("csv", buffer.getvalue()), ("json", document)):
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        path = folder / f"{view.key}-{digest}.{suffix}"
        if not path.exists():
            path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


def _model_markdown(page: boards.ModelPage) -> str:
    model = page.model
    facts = [
        ("link", f"[{model.link}]({model.link})" if model.link else None),
        ("size", f"{model.size_b:g} B" if model.size_b is not None else None),
        ("active", f"{model.active_params_b:g} B" if model.active_params_b is not None else None),
        ("MoE", None if model.moe is None else ("yes" if model.moe else "no")),
        ("open data", model.open_data),
        ("released", model.release_date.isoformat() if model.release_date else None),
        ("kind", None if model.prompted is None else ("chat" if model.prompted else "base")),
    ]
    lines = [f"## {model.name}", " · ".join(f"{k}: {v}" for k, v in facts if v is not None)]
    if page.runs:
        lines += [
            "",
            "### Runs (per-sample verdicts held)",
            "| run | badge | benchmark | pass@1 | tasks × samples | harness | dataset sha256 |"
            " environment (lock) | backend | isolation | date |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [_run_line(run) for run in page.runs]
    triaged = [run for run in page.runs if run.triage]
    if triaged:
        lines += [
            "",
            "### Failures by cause (as `passbench inspect` classifies them)",
            "| run | failing samples | model | extraction | environment | harness "
            "| no answer (truncated) | extraction loss |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [_triage_line(run) for run in triaged]
    if page.contamination:
        lines += [
            "",
            "### Contamination checks (`passbench contamination overlap`)",
            "| run | corpus | rule | contaminated tasks | pass@1 all tasks | pass@1 clean "
            "| pass@1 contaminated | file |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [_contamination_line(found) for found in page.contamination]
    if page.reported:
        lines += ["", "### Reported (published elsewhere, not re-executed)", ""]
        lines += [
            f"- {s.benchmark} {s.subset} {s.split}: **{s.pass_at_1_percent:.1f}%** "
            f"(from `{s.source.name}`)"
            for s in page.reported
        ]
    return "\n".join(lines)


def _run_line(run: Run) -> str:
    def code(value: str | None, width: int = 12) -> str:
        return f"`{value[:width]}`" if value else "—"

    environment = f"{run.env_name or '—'} ({code(run.env_lock_sha256)})"
    return (
        f"| {run.id} | {run.provenance} | {run.benchmark} {run.subset or ''} {run.split or ''} "
        f"| {100 * run.pass_at_1:.1f}% | {run.n_tasks} × {run.n_samples // max(run.n_tasks, 1)} "
        f"| {run.harness_version or '—'} | {code(run.dataset_sha256)} | {environment} "
        f"| {run.backend or '—'} | {run.isolation or '—'} | {run.evaluated_at or '—'} |"
    )


def _triage_line(run: Run) -> str:
    triage = run.triage or {}
    by_class = triage.get("by_class", {})
    truncated = sum(
        group["samples"]
        for group in triage.get("groups", [])
        if group.get("kind") == "no answer (truncated)"
    )
    loss = triage.get("extraction_loss", {})
    checked = loss.get("checked", 0)
    loss_text = f"{loss.get('samples', 0)} of {checked} checked" if checked else "not measured"
    classes = " | ".join(str(by_class.get(name, 0)) for name in TRIAGE_CLASSES)
    return f"| {run.id} | {triage.get('failing', 0)} | {classes} | {truncated} | {loss_text} |"


def _contamination_line(found: boards.RunContamination) -> str:
    def score(group: GroupScore) -> str:
        return f"{100 * group.pass_at_1:.1f}% of {group.tasks}" if group.tasks else "—"

    shared = f", ≥ {found.min_shared} shared" if found.min_shared is not None else ""
    return (
        f"| {found.run_id} | `{found.corpus.replace('|', '/')}` | {found.n}-gram{shared} "
        f"| **{found.contaminated.tasks}** of the run's {found.all_tasks.tasks} "
        f"({found.flagged} of {found.checked} checked) | {score(found.all_tasks)} "
        f"| **{score(found.clean)}** | {score(found.contaminated)} | `{found.source_name}` |"
    )


def _comparison_markdown(result: Any) -> str:
    ci = result.diff_ci
    return "\n".join(
        [
            f"### {result.a} vs {result.b}",
            f"- tasks both ran: **{result.tasks_both}**"
            + (f" (only {result.a}: {len(result.only_a)}," if result.only_a else " (")
            + f" only {result.b}: {len(result.only_b)})",
            f"- pass@1: {100 * result.pass_at_1_a:.1f}% vs {100 * result.pass_at_1_b:.1f}%",
            f"- difference (B − A): **{100 * result.diff:+.1f} points**, "
            f"{int(ci.confidence * 100)}% interval [{100 * ci.low:+.1f}, {100 * ci.high:+.1f}] "
            f"(paired bootstrap over tasks)",
            f"- McNemar exact p = {result.mcnemar_p:.3g} (solved = {result.rule}: only A "
            f"{result.solved_only_a}, only B {result.solved_only_b})",
            f"- tasks B wins / loses / ties: {result.won_b} / {result.won_a} / {result.tied}",
            f"- **{result.verdict}**",
        ]
    )


def build_blocks(
    store: Store, downloads: Path | None = None, submissions: Submissions | None = None
) -> Any:
    """The Gradio Blocks of the app over `store`; with `submissions`, its Submit and Queue
    tabs (without, a read-only board)."""
    import gradio as gr

    cache = BoardCache(store)
    folder = downloads or Path(tempfile.mkdtemp(prefix="passbench-board-"))
    folder.mkdir(parents=True, exist_ok=True)
    # Every view's rows now, not at the first reader's request. (Building the default board
    # into the page's config as well was measured: no faster to the rows on screen, and a
    # page opened at another board drew twice; see docs/leaderboard.md, Measured.)
    cache.warm()

    def render(state: BoardState) -> list[Any]:
        """The count, the table and the downloads for `state`."""
        found, rows_of = cache.current()
        chosen = boards.find_view(found, state.view)
        if chosen is None:
            return ["No boards yet: import results (docs/leaderboard.md).", None, None, None]
        rows = rows_of(chosen)
        shown, hidden = state.apply(rows)
        headers, cells = table(shown, state.columns)
        frame = {"headers": headers, "data": cells}
        text = f"{len(shown)} of {len(rows)} rows shown · {hidden} hidden by filters"
        csv_path, json_path = _downloads(folder, shown, list(state.columns), chosen)
        return [text, frame, csv_path, json_path]

    def model_choices() -> list[tuple[str, int]]:
        from sqlalchemy import select

        from passbench.apps.leaderboard.store.models import Model

        with store.transaction() as session:
            found = session.execute(select(Model.id, Model.name).order_by(Model.name)).all()
        return [(name, model_id) for model_id, name in found]

    def run_choices() -> list[tuple[str, int]]:
        from sqlalchemy import select

        with store.transaction() as session:
            runs = session.scalars(select(Run).where(~Run.hidden).order_by(Run.id)).all()
            return [
                (
                    f"{run.model.name} · {run.benchmark} {run.subset or ''} {run.split or ''} "
                    f"· {100 * run.pass_at_1:.1f}% ({run.provenance}, run {run.id})",
                    run.id,
                )
                for run in runs
            ]

    with gr.Blocks(title="passbench leaderboard") as blocks:
        # The ranking first: one line of title, one bar of the filters people use most, the
        # table; the rest of the filters and the legend fold away below it.
        gr.Markdown("## passbench leaderboard")
        query = gr.Textbox(visible=False, elem_id="url-query")
        tab = gr.State("board")
        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab("Leaderboard", id="board") as board_tab:
                with gr.Row(elem_id="filter-bar", equal_height=True):
                    view = gr.Dropdown(label="Board", elem_id="view", scale=2, min_width=260)
                    search = gr.Textbox(
                        label="Model contains", elem_id="q", scale=2, min_width=200, max_lines=1
                    )
                    sort = gr.Dropdown(
                        _choices_sort(), value=DEFAULT_SORT, label="Sort by", scale=1, min_width=160
                    )
                count = gr.Markdown(elem_id="board-count")
                grid = gr.Dataframe(
                    elem_id="board",
                    interactive=False,
                    show_search="search",
                    pinned_columns=3,
                    max_height=800,
                    wrap=False,
                )
                with gr.Accordion("More filters and columns", open=False, elem_id="more-filters"):
                    with gr.Row():
                        # text, not gr.Number: an empty box must mean "no bound", never 0
                        size_min = gr.Textbox(label="Size ≥ (B)", elem_id="size-min")
                        size_max = gr.Textbox(label="Size ≤ (B)", elem_id="size-max")
                        date_from = gr.Textbox(label="Released from", placeholder="YYYY-MM-DD")
                        date_to = gr.Textbox(label="Released to", placeholder="YYYY-MM-DD")
                    with gr.Row():
                        open_weights = gr.Checkbox(
                            label="Open weights only", elem_id="open-weights"
                        )
                        open_data = gr.CheckboxGroup(list(OPEN_DATA_LEVELS), label="Open data")
                        moe = gr.Radio(["any", "yes", "no"], value="any", label="MoE")
                        badges = gr.CheckboxGroup(list(BADGES), label="Badge")
                    columns = gr.CheckboxGroup(
                        [(header, key) for key, (header, _) in COLUMNS.items()],
                        value=list(COLUMNS),
                        label="Columns",
                    )
                gr.Markdown(
                    "pass@1 with its 95% interval; a **rank band** spans the ranks the "
                    "intervals allow. Badges: **verified** (run by a passbench worker), "
                    "**imported** (result files with every verdict), **reported** (published "
                    "elsewhere, not re-executed)."
                )
                with gr.Row():
                    csv_file = gr.DownloadButton("Download CSV", elem_id="download-csv")
                    json_file = gr.DownloadButton("Download JSON", elem_id="download-json")
            with gr.Tab("Model", id="model") as model_tab:
                model = gr.Dropdown(label="Model", elem_id="model-pick", filterable=True)
                model_info = gr.Markdown(elem_id="model-info", elem_classes="provenance")
                model_run = gr.Dropdown(label="Run", elem_id="model-run")
                tasks = gr.Dataframe(
                    headers=["task", "samples", "passed", "pass rate"],
                    elem_id="model-tasks",
                    interactive=False,
                    show_search="search",
                    max_height=500,
                )
                with gr.Row():
                    samples_file = gr.DownloadButton("Samples (.jsonl)", elem_id="download-samples")
                    results_file = gr.DownloadButton(
                        "Result file (_eval_results.json)", elem_id="download-results"
                    )
            with gr.Tab("Compare", id="compare") as compare_tab:
                with gr.Row():
                    run_a = gr.Dropdown(label="Run A", elem_id="compare-a")
                    run_b = gr.Dropdown(label="Run B", elem_id="compare-b")
                comparison = gr.Markdown(elem_id="comparison")
                differing = gr.Dataframe(
                    headers=["task", "A pass rate", "B pass rate", "A solved", "B solved"],
                    elem_id="compare-tasks",
                    interactive=False,
                    max_height=500,
                )
            extra = None
            if submissions is not None:
                extra = submission_tabs(gr, tabs, submissions, list(benchmark_names()))
        tab_names = TABS + (SUBMISSION_TABS if extra is not None else ())

        filters = [
            view, search, size_min, size_max, date_from, date_to,
            open_weights, open_data, moe, badges, sort, columns,
        ]  # fmt: skip

        def state_of(*values: Any) -> BoardState:
            (
                v, q, lo, hi, start, end, weights, levels, moe_, badge_, sort_, cols
            ) = values  # fmt: skip
            params = {
                "view": v or "",
                "q": q or "",
                "size_min": "" if lo is None else str(lo).strip(),
                "size_max": "" if hi is None else str(hi).strip(),
                "from": start or "",
                "to": end or "",
                "open_weights": "1" if weights else "",
                "open_data": ",".join(levels or []),
                "moe": "" if moe_ in (None, "any") else moe_,
                "badge": ",".join(badge_ or []),
                "sort": sort_ or DEFAULT_SORT,
                "cols": ",".join(cols or []),
            }
            return BoardState.from_query(params)

        def query_of(
            state: BoardState, tab: str | None, model_id: Any, first: Any, second: Any
        ) -> str:
            """The address's query: the board's state, then the tab and what it shows."""
            params = state.to_query()
            if tab == "model" and model_id is not None:
                names = {mid: name for name, mid in model_choices()}
                params.update(tab="model", model=names.get(int(model_id), ""))
            elif tab == "compare" and first is not None and second is not None:
                params.update(tab="compare", compare=f"{int(first)},{int(second)}")
            elif tab in SUBMISSION_TABS:
                params.update(tab=tab)
            return urllib.parse.urlencode(params)

        def refilter(*values: Any) -> list[Any]:
            """A reader changed a filter: the board, and the address to match."""
            *board_values, tab_, model_id, first, second = values
            state = state_of(*board_values)
            return [*render(state), query_of(state, tab_, model_id, first, second)]

        def address(*values: Any) -> str:
            *board_values, tab_, model_id, first, second = values
            return query_of(state_of(*board_values), tab_, model_id, first, second)

        def open_page(search: str | None) -> list[Any]:
            """The page opened at an address (its query, as the browser sees it)."""
            params: Mapping[str, str] = dict(urllib.parse.parse_qsl((search or "").lstrip("?")))
            state = BoardState.from_query(params)
            found, _ = cache.current()
            chosen = boards.find_view(found, state.view)
            state = replace(state, view=chosen.key if chosen else None)
            chosen_tab = params.get("tab") if params.get("tab") in tab_names else "board"
            # The model and run lists are filled when their tab opens: a board's load stays
            # one small answer, and setting no picker sets off none of their events.
            picked, pair = None, []
            model_pick, run_pick_a, run_pick_b = gr.skip(), gr.skip(), gr.skip()
            if chosen_tab == "model":
                models = model_choices()
                picked = next((m for name, m in models if name == params.get("model")), None)
                model_pick = gr.Dropdown(choices=models, value=picked)
            elif chosen_tab == "compare":
                runs = run_choices()
                known = {run_id for _, run_id in runs}
                pair = [int(x) for x in params.get("compare", "").split(",") if x.isdigit()]
                pair = [run_id for run_id in pair[:2] if run_id in known]
                run_pick_a = gr.Dropdown(choices=runs, value=pair[0] if pair else None)
                run_pick_b = gr.Dropdown(choices=runs, value=pair[1] if len(pair) > 1 else None)
            queue_parts: list[Any] = []
            if extra is not None and submissions is not None:
                # the Queue tab opened by its address: its table, and the job it names
                queue_parts = [gr.skip(), gr.skip(), gr.skip()]
                if chosen_tab == "queue":
                    queue_parts[0] = submissions.listing()
                    if params.get("job"):
                        queue_parts[1] = params["job"]
                        try:
                            queue_parts[2] = status_markdown(submissions.status(params["job"]))
                        except Exception as error:  # gr.Error: no such job
                            queue_parts[2] = str(error)
            return [
                *queue_parts,
                gr.Dropdown(choices=[(v.label, v.key) for v in found], value=state.view),
                state.q,
                "" if state.size_min is None else f"{state.size_min:g}",
                "" if state.size_max is None else f"{state.size_max:g}",
                state.date_from.isoformat() if state.date_from else "",
                state.date_to.isoformat() if state.date_to else "",
                state.open_weights,
                list(state.open_data),
                state.moe or "any",
                list(state.badges),
                state.sort,
                list(state.columns),
                model_pick,
                run_pick_a,
                run_pick_b,
                # only a tab the address names: a reader who opened another tab while the page
                # loaded stays there
                gr.Tabs(selected=chosen_tab) if "tab" in params else gr.skip(),
                chosen_tab,
                *render(state),
                query_of(
                    state,
                    chosen_tab,
                    picked,
                    pair[0] if pair else None,
                    pair[1] if len(pair) > 1 else None,
                ),
            ]

        board_outputs = [count, grid, csv_file, json_file]
        where = [*filters, tab, model, run_a, run_b]
        # One round trip on load: the controls from the address, and the board they select.
        # Readers' changes are `input` events, so the load's own updates trigger nothing.
        queue_outputs = [] if extra is None else [extra.jobs, extra.lookup, extra.summary]
        blocks.load(
            open_page,
            inputs=query,
            js=_READ_URL,
            outputs=[
                *queue_outputs,
                *filters,
                model,
                run_a,
                run_b,
                tabs,
                tab,
                *board_outputs,
                query,
            ],
            queue=False,
            api_visibility="private",
        ).then(None, js=_LOADED)
        gr.on(
            [_on_input(f) for f in filters],
            refilter,
            inputs=where,
            outputs=[*board_outputs, query],
            trigger_mode="always_last",
            queue=False,
            api_visibility="private",
        )
        gr.on(
            [model.input, run_a.input, run_b.input],
            address,
            inputs=where,
            outputs=query,
            queue=False,
            api_visibility="private",
        )

        def switch(name: str) -> Callable[..., list[Any]]:
            """Opening tab `name`: the address says so; its pickers get the current lists."""

            def opened(*values: Any) -> list[Any]:
                *_, current, model_id, first, second = values
                if current == name:
                    # the tab already shown: the front end selects the first tab as it starts,
                    # before the load has read the address; that must not rewrite it
                    return [gr.skip()] * 5
                pickers = [gr.skip(), gr.skip(), gr.skip()]
                if name == "model":
                    pickers[0] = gr.Dropdown(choices=model_choices(), value=model_id)
                elif name == "compare":
                    runs = run_choices()
                    pickers[1:] = [
                        gr.Dropdown(choices=runs, value=first),
                        gr.Dropdown(choices=runs, value=second),
                    ]
                return [name, address(*values[:-4], name, *values[-3:]), *pickers]

            return opened

        opening = [("board", board_tab), ("model", model_tab), ("compare", compare_tab)]
        if extra is not None:
            opening += [("submit", extra.submit_tab), ("queue", extra.queue_tab)]
        for name, opened in opening:
            opened.select(
                switch(name),
                where,
                [tab, query, model, run_a, run_b],
                queue=False,
                api_visibility="private",
            )

        def show_model(model_id: int | None) -> list[Any]:
            if model_id is None:
                return ["", gr.Dropdown(choices=[], value=None)]
            with store.transaction() as session:
                page = boards.model_page(session, int(model_id))
                if page is None:
                    return [f"no model {model_id}", gr.Dropdown(choices=[], value=None)]
                text = _model_markdown(page)
                choices = [
                    (f"run {run.id}: {run.benchmark} {run.subset or ''} {run.split or ''}", run.id)
                    for run in page.runs
                ]
            return [text, gr.Dropdown(choices=choices, value=choices[0][1] if choices else None)]

        def show_run(run_id: int | None) -> list[Any]:
            if run_id is None:
                return [None, None, None]
            with store.transaction() as session:
                rows = boards.task_rows(session, int(run_id))
                samples = boards.samples_file(session, int(run_id))
                document = boards.eval_results_file(session, int(run_id))
                name = session.get(Run, int(run_id)).model.name  # type: ignore[union-attr]
            frame = {
                "headers": ["task", "samples", "passed", "pass rate"],
                "data": [[t, n, c, round(c / n, 3)] for t, n, c in rows],
            }
            stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
            samples_path = folder / f"{stem}-run{run_id}-samples.jsonl"
            samples_path.write_text("".join(json.dumps(s) + "\n" for s in samples))
            results_path = folder / f"{stem}-run{run_id}_eval_results.json"
            results_path.write_text(json.dumps(document, indent=1))
            return [frame, str(samples_path), str(results_path)]

        model.change(show_model, model, [model_info, model_run], api_visibility="private")

        def model_api(name: str) -> dict[str, Any]:
            """A model's page as data: metadata, runs with provenance and the contamination
            checks of their tasks (pass@1 on all, clean and flagged tasks), reported scores."""
            with store.transaction() as session:
                found = boards.model_named(session, name)
                page = None if found is None else boards.model_page(session, found.id)
                if page is None:
                    raise gr.Error(f"no model {name!r}")
                return boards.model_document(page)

        from gradio.events import api  # gradio re-exports it as gr.api, untyped

        api(model_api, api_name="model", queue=False)
        model_run.change(
            show_run, model_run, [tasks, samples_file, results_file], api_visibility="private"
        )

        def pick_row(event: gr.SelectData, *values: Any) -> list[Any]:
            """A click on a board row opens its model's page."""
            *board_values, _, _, first, second = values
            state = state_of(*board_values)
            headers, _ = table([], state.columns)
            row = list(event.row_value or [])
            name = row[headers.index("Model")] if "Model" in headers and row else None
            picked = next((mid for label, mid in model_choices() if label == name), None)
            if picked is None:
                return [gr.Dropdown(), gr.Tabs(), "board", address(*values)]
            return [
                gr.Dropdown(choices=model_choices(), value=picked),
                gr.Tabs(selected="model"),
                "model",
                query_of(state, "model", picked, first, second),
            ]

        grid.select(
            pick_row, inputs=where, outputs=[model, tabs, tab, query], api_visibility="private"
        )

        def compare_runs(first: int | None, second: int | None) -> list[Any]:
            if first is None or second is None:
                return ["Pick two runs.", None]
            with store.transaction() as session:
                result = boards.compare(session, int(first), int(second))
            differ = [
                [t.task_id, round(t.rate_a, 3), round(t.rate_b, 3), t.solved_a, t.solved_b]
                for t in result.tasks
                if t.rate_a != t.rate_b
            ]
            frame = {
                "headers": ["task", "A pass rate", "B pass rate", "A solved", "B solved"],
                "data": differ,
            }
            return [_comparison_markdown(result), frame]

        gr.on(
            [run_a.change, run_b.change],
            compare_runs,
            inputs=[run_a, run_b],
            outputs=[comparison, differing],
            api_visibility="private",
        )

        query.change(None, inputs=query, js=_REPLACE_URL)
    return blocks


def _on_input(component: Any) -> Any:
    """The component's `input` event: a reader's change, not a value set by the app (typed
    loosely: Gradio's annotations do not list it on every component class)."""
    return component.input


def asgi_app(store: Store, submissions: Submissions | None = None) -> Any:
    """FastAPI with /health and the Gradio app at /."""
    import gradio as gr
    from fastapi import FastAPI

    app = FastAPI(title="passbench leaderboard")

    @app.get("/health")
    def health() -> dict[str, Any]:
        with store.transaction() as session:
            found = boards.views(session)
        return {"status": "ok", "views": [v.key for v in found]}

    folder = Path(tempfile.mkdtemp(prefix="passbench-board-"))
    limit = submissions.policy.max_bundle_bytes if submissions is not None else None
    return gr.mount_gradio_app(
        app,
        build_blocks(store, folder, submissions),
        path="/",
        css=_CSS,
        allowed_paths=[str(folder)],
        max_file_size=limit,
    )


def serve(store: Store, *, host: str, port: int, submissions: Submissions | None = None) -> None:
    """Run the app until interrupted."""
    import uvicorn

    uvicorn.run(asgi_app(store, submissions), host=host, port=port, log_level="info")
