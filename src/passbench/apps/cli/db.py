"""`passbench db` and `passbench leaderboard`: the results store (docs/leaderboard.md).

The store's modules need SQLAlchemy and Alembic (pip install 'passbench[store]'); they are
imported when a command runs, so the rest of passbench works without them.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from passbench.apps.cli.options import (
    benchmark_option,
    config_option,
    data_options,
    data_settings,
    resolve_options,
    split_option,
    subset_option,
    version_option,
)
from passbench.core.errors import InputError, PassbenchError

if TYPE_CHECKING:  # importing the store needs the extra: only when a command runs
    from passbench.apps.leaderboard.store.database import Store
    from passbench.apps.leaderboard.store.models import Run

F = TypeVar("F", bound=Callable[..., Any])

db_option: Callable[[F], F] = click.option(
    "--db",
    metavar="URL",
    help="The store: a SQLAlchemy URL (sqlite:///FILE, postgresql+psycopg://USER@HOST/DB) or a "
    "file path (env: PASSBENCH_DB; default: passbench.db in the user data folder).",
)


def _open(ctx: click.Context, command: str, options: dict[str, Any]) -> Store:
    missing = [name for name in ("sqlalchemy", "alembic") if importlib.util.find_spec(name) is None]
    if missing:
        raise InputError(
            f"the results store needs {' and '.join(missing)}: pip install 'passbench[store]'"
        )
    from passbench.apps.leaderboard.store.database import open_store

    resolved = resolve_options(ctx, command, options)
    return open_store(resolved["db"])


@click.group()
def db() -> None:
    """The results store: runs with their per-sample verdicts (SQLite or PostgreSQL)."""


@db.command()
@db_option
@config_option
@click.pass_context
def upgrade(ctx: click.Context, /, **options: Any) -> None:
    """Create the store, or bring its schema to the newest migration."""
    from passbench.apps.leaderboard.store.database import current_revision

    store = _open(ctx, "db", options)
    try:
        click.echo(f"{store.url}: schema at revision {current_revision(store.engine)}", err=True)
    finally:
        store.close()


@db.command(name="import")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@db_option
@config_option
@click.pass_context
def import_(ctx: click.Context, /, results: tuple[Path, ...], **options: Any) -> None:
    """Store result files: _eval_results.json files (passbench's or the official
    evaluator's), each with its _pass_at_k.json when beside it.

    Each file is one transaction: a bad file changes nothing and the others are still stored.
    A file already stored (same content) is skipped.
    """
    from passbench.apps.leaderboard.store.importing import import_results

    store = _open(ctx, "db", options)
    failed: list[PassbenchError] = []
    try:
        for path in results:
            try:
                done = import_results(store, path)
            except PassbenchError as error:
                click.echo(f"error: {error}", err=True)
                failed.append(error)
                continue
            verb = "imported" if done.created else "already stored"
            click.echo(
                f"{verb}: run {done.run_id} {done.model}: {done.n_tasks} tasks, "
                f"{done.n_samples} samples, pass@1 {done.pass_at_1:.1%} ({path})",
                err=True,
            )
    finally:
        store.close()
    if failed:
        sys.exit(max(error.exit_code for error in failed))


@db.command(name="import-contamination")
@click.argument(
    "overlaps", metavar="OVERLAP...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@db_option
@config_option
@click.pass_context
def import_contamination(ctx: click.Context, /, overlaps: tuple[Path, ...], **options: Any) -> None:
    """Store contamination checks: result files of `passbench contamination overlap -o FILE`.

    The leaderboard's model page shows a check beside every run of the same benchmark, split
    and subset (and dataset): how many of its tasks are flagged, pass@1 on the clean ones.
    Each file is one transaction; a file already stored (same content) is skipped.
    """
    from passbench.apps.leaderboard.store.contamination import import_contamination as do_import

    store = _open(ctx, "db", options)
    failed: list[PassbenchError] = []
    try:
        for path in overlaps:
            try:
                done = do_import(store, path)
            except PassbenchError as error:
                click.echo(f"error: {error}", err=True)
                failed.append(error)
                continue
            verb = "imported" if done.created else "already stored"
            where = " ".join(part for part in (done.benchmark, done.subset, done.split) if part)
            click.echo(
                f"{verb}: check {done.check_id} {where}: {done.contaminated} of "
                f"{done.task_count} tasks share a {done.contaminated_n}-gram ({path})",
                err=True,
            )
    finally:
        store.close()
    if failed:
        sys.exit(max(error.exit_code for error in failed))


@db.command()
@db_option
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines instead of a table.")
@click.pass_context
def runs(ctx: click.Context, /, as_json: bool, **options: Any) -> None:
    """List the stored runs, and how many reported scores the store holds."""
    import json

    from sqlalchemy import func, select

    from passbench.apps.leaderboard.store.models import ReportedScore, Run

    store = _open(ctx, "db", options)
    try:
        with store.transaction() as session:
            rows = session.scalars(select(Run).order_by(Run.id)).all()
            described = [_describe(run) for run in rows]
            reported = session.scalar(select(func.count()).select_from(ReportedScore)) or 0
    finally:
        store.close()
    if as_json:
        for item in described:
            click.echo(json.dumps(item))
        return
    table = Table(title=f"runs in {store.url}")
    for column in ("id", "model", "benchmark", "subset", "split", "tasks", "samples", "pass@1"):
        table.add_column(column, justify="right" if column in ("tasks", "samples") else "left")
    table.add_column("provenance")
    table.add_column("file")
    for item in described:
        table.add_row(
            str(item["id"]),
            item["model"],
            item["benchmark"] or "?",
            item["subset"] or "?",
            item["split"] or "?",
            str(item["n_tasks"]),
            str(item["n_samples"]),
            f"{item['pass_at_1']:.1%}",
            f"{item['provenance']} ({item['origin']})",
            item["source_name"] or "",
        )
    console = Console()
    console.print(table)
    console.print(f"{len(described)} runs; {reported} reported scores (not re-executed)")


def _describe(run: Run) -> dict[str, Any]:
    return {
        "id": run.id,
        "model": run.model.name,
        "benchmark": run.benchmark,
        "subset": run.subset,
        "split": run.split,
        "n_tasks": run.n_tasks,
        "n_samples": run.n_samples,
        "pass_at_1": run.pass_at_1,
        "provenance": run.provenance,
        "origin": run.origin,
        "source_name": run.source_name,
        "content_sha256": run.content_sha256,
    }


@click.group()
def leaderboard() -> None:
    """The leaderboard: scores published elsewhere (stored as reported), and the workers that
    score submitted bundles."""


@leaderboard.command(name="import-official")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--subset",
    type=click.Choice(("full", "hard")),
    help="Which leaderboard the file is (default: hard when its name says so, else full).",
)
@db_option
@config_option
@click.pass_context
def import_official(ctx: click.Context, /, file: Path, subset: str | None, **options: Any) -> None:
    """Store the public BigCodeBench leaderboard's results.json as reported scores (pass@1 in
    percent per split, and each model's metadata). Never mixed with verified runs."""
    from passbench.apps.leaderboard.store.official_leaderboard import import_official as do_import

    store = _open(ctx, "leaderboard", options)
    try:
        done = do_import(store, file, subset)
    finally:
        store.close()
    verb = "imported" if done.created else "already stored"
    click.echo(
        f"{verb}: {done.n_models} models, {done.n_scores} reported scores "
        f"(BigCodeBench {done.subset}) from {file}",
        err=True,
    )


def _task_ids(tasks: str | None) -> tuple[str, ...] | None:
    return tuple(t.strip() for t in tasks.split(",") if t.strip()) if tasks else None


@leaderboard.command()
@db_option
@click.option(
    "--backend",
    type=click.Choice(("local", "remote", "e2b", "ray", "docker", "podman")),
    help="Where submitted samples run (default: local, bubblewrap on this machine).",
)
@click.option("--endpoint", help="The remote backend's URL (http://HOST:PORT/).")
@click.option("--workers", type=int, help="Concurrent samples (0 = from the cores).")
@click.option(
    "--work-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Each job's samples, journal and result files (default: the cache folder's "
    "leaderboard/jobs). Workers sharing it resume each other's verdicts.",
)
@click.option("--lease-s", type=float, help="Lease without a heartbeat, seconds (default 300).")
@click.option("--poll-s", type=float, help="How often an idle worker looks for a job (default 5).")
@click.option("--max-attempts", type=int, help="Claims before a job whose workers died fails.")
@click.option(
    "--expected-gt-failures",
    type=click.Path(path_type=Path, dir_okay=False),
    help="JSON: environment name -> task ids whose canonical solution is known to fail there "
    "('*': any). A score is published only when no other canonical solution fails "
    "(default: none may fail).",
)
@click.option("--once", is_flag=True, help="Handle the queued jobs, then exit (no polling).")
@click.option("--worker-id", help="This worker's name in leases (default: host:pid:random).")
@config_option
@click.pass_context
def worker(
    ctx: click.Context,
    /,
    expected_gt_failures: Path | None,
    once: bool,
    worker_id: str | None,
    **options: Any,
) -> None:
    """Score queued submissions: claim a job, check the bundle and the environment's ground
    truth, evaluate the samples in the sandbox, store the run and its pass@1.

    The tasks scored are those the app accepted each submission for (`serve --tasks`).
    Submitted code runs only through the backend. Kill a worker at any time: its job returns
    to the queue when the lease expires, and the next worker resumes its finished verdicts.
    """
    import signal
    import threading

    from passbench.apps.leaderboard import Worker, WorkerSettings
    from passbench.apps.leaderboard.gate import ExpectedFailures, read_expected_failures
    from passbench.apps.leaderboard.store.queue import QueuePolicy
    from passbench.stages.evaluate import EvaluateSettings
    from passbench.stages.sandbox.base import Limits

    store = _open(ctx, "leaderboard", options)
    resolved = resolve_options(ctx, "leaderboard", options)
    paths = resolved.paths
    policy = QueuePolicy(
        lease_s=resolved["lease_s"],
        max_attempts=resolved["max_attempts"],
        admin_token=resolved["admin_token"],
    )
    evaluation = EvaluateSettings(
        workers=resolved["workers"],
        limits=Limits(memory_mb=resolved["memory_mb"], tmp_mb=resolved["tmp_mb"]),
        env_dir=resolved["env_dir"],
        nltk_data=resolved["nltk_data"],
        backend=resolved["backend"],
        endpoint=resolved["endpoint"],
        image=resolved["image"],
        ray_address=resolved["ray_address"],
        token=resolved["token"],
    )
    settings = WorkerSettings(
        work_dir=resolved["work_dir"] or paths.cache_dir / "leaderboard" / "jobs",
        evaluation=evaluation,
        policy=policy,
        poll_s=resolved["poll_s"],
        expected_gt_failures=(
            read_expected_failures(expected_gt_failures)
            if expected_gt_failures is not None
            else ExpectedFailures()
        ),
        worker_id=worker_id,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    running = Worker(store, settings, paths, report=lambda line: click.echo(line, err=True))
    click.echo(f"worker {running.name} on {store.url}", err=True)
    try:
        handled = running.run(once=once, stop=stop)
    finally:
        store.close()
    click.echo(f"{handled} jobs handled", err=True)


@leaderboard.command()
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder to write the static board into (created).",
)
@db_option
@config_option
@click.pass_context
def build(ctx: click.Context, /, output: Path, **options: Any) -> None:
    """Write the board as static files: results.json (and results-hard.json) in the public
    leaderboard's schema, board.json, a Parquet task x model matrix per view, index.html.
    The same query as `passbench leaderboard serve`: the two never disagree."""
    from passbench.apps.leaderboard.web.static import build as build_site

    store = _open(ctx, "leaderboard", options)
    try:
        with store.transaction() as session:
            done = build_site(session, output)
    finally:
        store.close()
    click.echo(
        f"wrote {len(done.files)} files ({done.views} views, {done.rows} rows) to {output}",
        err=True,
    )


@leaderboard.command(name="serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=7860, show_default=True, help="Port to listen on.")
@click.option(
    "--tasks",
    help="Score only these task ids (comma-separated): submissions are checked for them, and "
    "each records them for the workers. Default: every task of the subset.",
)
@click.option("--read-only", is_flag=True, help="No Submit and Queue tabs: the board only.")
@db_option
@config_option
@click.pass_context
def serve_board(
    ctx: click.Context, /, host: str, port: int, tasks: str | None, read_only: bool, **options: Any
) -> None:
    """Serve the leaderboard app (Gradio): the board, model pages, comparisons, and the Submit
    and Queue tabs. It checks and queues bundles; submitted code never runs in its process
    (workers score them)."""
    if importlib.util.find_spec("gradio") is None:
        raise InputError("the leaderboard app needs Gradio: pip install 'passbench[leaderboard]'")
    from passbench.apps.leaderboard.store.queue import QueuePolicy
    from passbench.apps.leaderboard.web.app import serve
    from passbench.apps.leaderboard.web.submit import Submissions

    store = _open(ctx, "leaderboard", options)
    resolved = resolve_options(ctx, "leaderboard", options)
    policy = QueuePolicy(task_ids=_task_ids(tasks), admin_token=resolved["admin_token"])
    submissions = None if read_only else Submissions(store, resolved.paths, policy)
    click.echo(f"passbench leaderboard on http://{host}:{port} ({store.url})", err=True)
    try:
        serve(store, host=host, port=port, submissions=submissions)
    finally:
        store.close()


server_option: Callable[[F], F] = click.option(
    "--server",
    required=True,
    metavar="URL",
    help="The leaderboard app's address (http://HOST:PORT/).",
)


def _client(server: str) -> Any:
    if importlib.util.find_spec("gradio_client") is None:
        raise InputError("submitting needs gradio_client: pip install 'passbench[leaderboard]'")
    from gradio_client import Client  # type: ignore[import-untyped]

    try:
        return Client(server, verbose=False)
    except Exception as error:  # httpx and gradio_client raise many kinds: say which server
        raise InputError(f"cannot reach the leaderboard at {server}: {error}") from None


def _call(client: Any, endpoint: str, *args: Any) -> dict[str, Any]:
    """One API call; the app's refusal (gr.Error) as a one-line InputError."""
    from gradio_client.exceptions import AppError  # type: ignore[import-untyped]

    try:
        answer: dict[str, Any] = client.predict(*args, api_name=endpoint)
    except AppError as error:
        raise InputError(" ".join(str(error).split())) from None
    return answer


@leaderboard.command()
@server_option
@click.option(
    "--samples",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="The samples file (.jsonl or .jsonl.gz) to submit.",
)
@click.option("--model", required=True, help="The model's name (org/model).")
@click.option("--revision", default="", help="The model's revision (tells entries apart).")
@click.option("--link", help="The model's page (a Hugging Face repository).")
@click.option("--size-b", type=float, help="Parameters, in billions.")
@click.option("--prompted/--base", default=None, help="A chat model, or a base model.")
@click.option("--temperature", type=float, help="The sampling temperature used.")
@click.option("--n-samples", type=int, help="Samples per task (default: from the file).")
@benchmark_option
@version_option
@split_option
@subset_option
@data_options
@click.option(
    "--token",
    "submit_token",
    envvar="PASSBENCH_SUBMIT_TOKEN",
    help="Your submitter token, 16+ characters (env: PASSBENCH_SUBMIT_TOKEN; prefer it).",
)
@config_option
@click.pass_context
def submit(
    ctx: click.Context,
    /,
    server: str,
    samples: Path,
    model: str,
    revision: str,
    link: str | None,
    size_b: float | None,
    prompted: bool | None,
    temperature: float | None,
    n_samples: int | None,
    submit_token: str | None,
    **options: Any,
) -> None:
    """Submit a samples file to a leaderboard: builds the bundle (manifest.json with the
    dataset version and hash of the local benchmark data) and sends it through the app's
    `submit` API, as the web form does. Prints the job id."""
    import gzip
    import tempfile

    from passbench.apps.leaderboard.store.bundle import bundle_zip, make_bundle
    from passbench.core.version import __version__
    from passbench.stages.benchmarks import check_split, get_benchmark

    if not submit_token:
        raise InputError("a token is needed: --token or PASSBENCH_SUBMIT_TOKEN", field="--token")
    resolved = resolve_options(ctx, "tasks", options)
    loaded = get_benchmark(resolved["benchmark"]).load(
        resolved["version"], resolved["subset"], data=data_settings(resolved)
    )
    data = samples.read_bytes()
    if samples.name.endswith(".gz"):
        data = gzip.decompress(data)
    generation: dict[str, Any] = {}
    if temperature is not None:
        generation["temperature"] = temperature
    if n_samples is not None:
        generation["n_samples"] = n_samples
    bundle = make_bundle(
        data,
        model=model,
        revision=revision,
        benchmark=resolved["benchmark"],
        dataset_version=loaded.version,
        dataset_sha256=loaded.sha256,
        split=check_split(get_benchmark(resolved["benchmark"]), resolved["split"]),
        subset=loaded.subset,
        passbench_version=__version__,
        link=link,
        size_b=size_b,
        prompted=prompted,
        generation=generation,
        name=samples.name,
    )
    from gradio_client import handle_file

    client = _client(server)
    with tempfile.TemporaryDirectory(prefix="passbench-submit-") as folder:
        # named after the samples file: the server's messages name it
        stem = samples.name.removesuffix(".gz").removesuffix(".jsonl") or "samples"
        archive = Path(folder) / f"{stem}.zip"
        archive.write_bytes(bundle_zip(bundle))
        status = _call(client, "/submit", handle_file(str(archive)), *([None] * 9), submit_token)
    position = status["queue_position"]
    click.echo(f"{status['state']}" + (f" (position {position})" if position else ""), err=True)
    click.echo(status["job"])


@leaderboard.command()
@server_option
@click.argument("job")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="json: {job, state, reason, queue_position, pass_at_1, log_tail}.",
)
def status(server: str, job: str, output_format: str) -> None:
    """A submitted job's state (queued, validating, running, scored, rejected, failed,
    cancelled), its reason, and once scored its pass@1 (a fraction). Exits 1 when the job was
    rejected, failed or cancelled."""
    import json

    found = _call(_client(server), "/status", job)
    keys = ("job", "state", "reason", "queue_position", "pass_at_1", "log_tail")
    if output_format == "json":
        click.echo(json.dumps({key: found.get(key) for key in keys}))
    else:
        click.echo(f"{found['job']}: {found['state']}")
        if found["queue_position"] is not None:
            click.echo(f"position: {found['queue_position']}")
        if found["pass_at_1"] is not None:
            click.echo(f"pass_at_1: {found['pass_at_1']}")
        if found["reason"]:
            click.echo(f"reason: {found['reason']}")
    if found["state"] in ("rejected", "failed", "cancelled"):
        sys.exit(1)


@leaderboard.command()
@click.argument("run_id", type=int, required=False)
@click.option(
    "--reported",
    "model",
    metavar="MODEL",
    help="Hide the scores published for MODEL (a reported row) instead of a run.",
)
@click.option("--subset", type=click.Choice(("full", "hard")), help="With --reported: only this.")
@click.option("--split", type=click.Choice(("complete", "instruct")), help="With --reported.")
@click.option("--show", is_flag=True, help="Show a hidden run (or reported score) again.")
@db_option
@config_option
@click.pass_context
def hide(
    ctx: click.Context,
    /,
    run_id: int | None,
    model: str | None,
    subset: str | None,
    split: str | None,
    show: bool,
    **options: Any,
) -> None:
    """Hide a run (RUN_ID) or a model's published scores (--reported MODEL) from every view of
    the board and the static build: an admin's action (it needs the store); nothing is
    deleted, and --show shows them again."""
    from passbench.apps.leaderboard.web.board import set_hidden, set_reported_hidden

    if (run_id is None) == (model is None):
        raise InputError("name a run (RUN_ID) or a model's reported scores (--reported MODEL)")
    if model is None and (subset or split):
        raise InputError("--subset and --split go with --reported", field="--subset")
    store = _open(ctx, "leaderboard", options)
    try:
        with store.transaction() as session:
            if model is not None:
                try:
                    scores = set_reported_hidden(
                        session, model, subset=subset, split=split, hidden=not show
                    )
                except LookupError as error:
                    message = f"{error.args[0]} in {store.url}"
                    raise InputError(message, field="--reported") from None
                what = f"{len(scores)} reported scores of {model}"
            else:
                assert run_id is not None
                try:
                    run = set_hidden(session, run_id, hidden=not show)
                except LookupError:
                    raise InputError(f"no run {run_id} in {store.url}", field="RUN_ID") from None
                what = f"run {run_id} ({run.model.name})"
    finally:
        store.close()
    click.echo(f"{what} {'shown' if show else 'hidden'}", err=True)
