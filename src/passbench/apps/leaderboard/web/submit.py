"""The app's Submit and Queue tabs, and the two named API endpoints behind them.

    submit   a bundle (.zip, .tar.gz), or a samples file and the form's metadata, with the
             submitter's token -> the job's status; the web form, `gradio_client` and
             `passbench leaderboard submit` all call this one function
    status   a job id -> {"job", "state", "reason", "queue_position", "pass_at_1", "log_tail",
             ...}; the queue tab's lookup and `passbench leaderboard status`

The Queue tab also lets a submitter cancel their job, and an admin hide (or show) or delete an
entry, with their token: the same queue functions (cancel_job, hide_submission,
delete_submission) the Python API offers, which check who may do what.

Both only call store/queue.py: a bundle is read and checked as data, and queued. Nothing here
imports or runs the evaluator; a worker scores the job in its sandbox (docs/leaderboard.md).
A refused bundle raises `gr.Error` with the queue's one-line reason, which the form shows and
`gradio_client` raises as `AppError`; nothing is stored.
"""

# No `from __future__ import annotations`: Gradio reads handlers' annotations at run time.
import functools
import gzip
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passbench.apps.leaderboard.store.bundle import make_bundle, read_bundle
from passbench.apps.leaderboard.store.database import Store
from passbench.apps.leaderboard.store.models import Job
from passbench.apps.leaderboard.store.queue import (
    BenchmarkData,
    JobStatus,
    QueuePolicy,
    cancel_job,
    delete_submission,
    hide_submission,
    job_status,
    queue_listing,
    submit_bundle,
)
from passbench.core.errors import PassbenchError, PermissionDenied, SubmissionRejected
from passbench.core.settings import Paths
from passbench.core.version import __version__

#: States after which a job changes no more: the page stops polling.
FINAL_STATES = ("scored", "rejected", "failed", "cancelled")
QUEUE_HEADERS = ["job", "model", "benchmark", "state", "position", "pass@1", "reason", "updated"]
#: How often the page refreshes a job it follows, seconds.
POLL_S = 2.0


def status_document(status: JobStatus) -> dict[str, Any]:
    """A job's status as the API and `passbench leaderboard status --format json` give it."""
    return {
        "job": status.job_id,
        "state": status.state,
        "reason": status.reason,
        "queue_position": status.position,
        "pass_at_1": status.pass_at_1,
        "log_tail": status.log_tail,
        "model": status.model,
        "revision": status.revision,
        "benchmark": status.benchmark,
        "subset": status.subset,
        "split": status.split,
        "attempts": status.attempts,
        "updated_at": status.updated_at.isoformat(),
    }


def status_markdown(document: dict[str, Any]) -> str:
    """The status panel: state, position or pass@1, reason."""
    lines = [
        f"**job** `{document['job']}`",
        f"**{document['model']}** {document['revision'] or ''} · {document['benchmark']} "
        f"{document['subset']} {document['split']}",
        f"**state: {document['state']}**",
    ]
    if document["queue_position"] is not None:
        lines.append(f"position in the queue: **{document['queue_position']}**")
    if document["pass_at_1"] is not None:
        lines.append(f"pass@1: **{100 * document['pass_at_1']:.1f}%**")
    if document["reason"]:
        lines.append(f"reason: {document['reason']}")
    return "\n\n".join(lines)


@dataclass
class Submissions:
    """What the tabs need: the store, the benchmark data bundles are checked against (loaded
    once for the process), and the deployment's policy (its `task_ids` are recorded on each
    submission for the workers)."""

    store: Store
    paths: Paths
    policy: QueuePolicy = field(default_factory=QueuePolicy)

    def __post_init__(self) -> None:
        self._benchmarks = BenchmarkData(self.paths)
        self._lock = threading.Lock()  # the benchmark data loads once; one writer at a time

    def submit(
        self,
        bundle: str | None,
        samples: str | None,
        model: str | None,
        revision: str | None,
        benchmark: str | None,
        split: str | None,
        subset: str | None,
        link: str | None,
        size_b: str | None,
        temperature: str | None,
        token: str | None,
    ) -> dict[str, Any]:
        """Queue a bundle file, or a samples file with the metadata given; the job's status."""
        with self._lock:
            try:
                if bundle:
                    read = read_bundle(Path(bundle), max_bytes=self.policy.max_bundle_bytes)
                elif samples:
                    read = self._from_form(
                        Path(samples), model, revision, benchmark, split, subset, link, size_b,
                        temperature,
                    )  # fmt: skip
                else:
                    raise SubmissionRejected("choose a bundle or a samples file", code="format")
                with self.store.transaction() as session:
                    job = submit_bundle(
                        session,
                        read,
                        (token or "").strip(),
                        benchmarks=self._benchmarks,
                        policy=self.policy,
                    )
                    return status_document(job_status(session, job.id))
            except PassbenchError as error:
                raise _error(f"rejected: {error}") from None

    def _from_form(
        self,
        samples: Path,
        model: str | None,
        revision: str | None,
        benchmark: str | None,
        split: str | None,
        subset: str | None,
        link: str | None,
        size_b: str | None,
        temperature: str | None,
    ) -> Any:
        """The bundle the form describes, with this server's dataset version and hash."""
        limit = self.policy.max_bundle_bytes
        if samples.stat().st_size > limit:
            raise SubmissionRejected(
                f"larger than the limit of {limit} bytes", code="size", path=samples.name
            )
        data = samples.read_bytes()
        if samples.name.endswith(".gz"):
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as error:
                raise SubmissionRejected(
                    f"not a valid gzip file ({error})", code="format", path=samples.name
                ) from None
        benchmark = (benchmark or "").strip()
        subset = (subset or "").strip() or "full"
        _, loaded = self._benchmarks.get(
            benchmark, self.policy.dataset_versions.get(benchmark), subset, where="the form"
        )
        generation: dict[str, Any] = {}
        if (temperature or "").strip():
            generation["temperature"] = _number(temperature, "temperature")
        return make_bundle(
            data,
            model=(model or "").strip(),
            revision=(revision or "").strip(),
            benchmark=benchmark,
            dataset_version=loaded.version,
            dataset_sha256=loaded.sha256,
            split=(split or "").strip() or "complete",
            subset=subset,
            passbench_version=__version__,
            link=(link or "").strip() or None,
            size_b=_number(size_b, "size_b") if (size_b or "").strip() else None,
            generation=generation,
            name=samples.name,
        )

    def status(self, job: str | None) -> dict[str, Any]:
        """A job's status by its id (or the first 12 characters shown in the queue)."""
        with self.store.transaction() as session:
            return status_document(job_status(session, _job_id(session, job)))

    def manage(self, action: str, job: str | None, token: str | None) -> str:
        """`cancel` (the owner or an admin), `hide`, `show` (an admin), `delete` (the owner or
        an admin) the entry of `job`; one line saying what was done."""
        token = (token or "").strip()
        with self.store.transaction() as session:
            wanted = _job_id(session, job)
            try:
                if action == "cancel":
                    done = cancel_job(session, wanted, token, self.policy)
                    return (
                        f"job {wanted[:12]} cancelled"
                        if done
                        else f"job {wanted[:12]} had finished: nothing to cancel"
                    )
                if action in ("hide", "show"):
                    hide_submission(session, wanted, token, self.policy, hidden=action == "hide")
                    if action == "hide":
                        return f"job {wanted[:12]} hidden: left off the board and the queue"
                    return f"job {wanted[:12]} shown: back on the board and the queue"
                if action == "delete":
                    delete_submission(session, wanted, token, self.policy)
                    return f"job {wanted[:12]} deleted with its run"
            except PermissionDenied as error:
                raise _error(f"not allowed: {error}") from None
        raise _error(f"unknown action {action!r}")

    def listing(self) -> dict[str, Any]:
        """The queue tab's table: jobs in queue order, then the latest finished."""
        with self.store.transaction() as session:
            jobs = queue_listing(session)
        rows = [
            [
                s.job_id[:12],
                f"{s.model} {s.revision}".strip(),
                f"{s.benchmark} {s.subset} {s.split}",
                s.state,
                "" if s.position is None else s.position,
                "" if s.pass_at_1 is None else f"{100 * s.pass_at_1:.1f}%",
                s.reason or "",
                s.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
            ]
            for s in jobs
        ]
        return {"headers": QUEUE_HEADERS, "data": rows}


def _job_id(session: Any, job: str | None) -> str:
    """The full id of `job`: its id or a prefix of it (the 12 characters the queue shows)."""
    wanted = (job or "").strip()
    if 0 < len(wanted) < 64:
        from sqlalchemy import select

        found = session.scalars(
            select(Job.id).where(Job.id.startswith(wanted, autoescape=True)).limit(2)
        ).all()
        wanted = found[0] if len(found) == 1 else wanted
    if not wanted or session.get(Job, wanted) is None:
        raise _error(f"no job {wanted!r} in this leaderboard's queue")
    return wanted


def _number(text: str | None, name: str) -> float:
    try:
        return float((text or "").strip())
    except ValueError:
        raise SubmissionRejected(
            f"must be a number, got {text!r}", code="format", field=name
        ) from None


def _error(message: str) -> Exception:
    import gradio as gr

    return gr.Error(message, print_exception=False)


@dataclass(frozen=True)
class SubmissionTabs:
    """The components the app's page load fills when its address opens the Queue tab
    (`?tab=queue&job=ID`), and the tabs themselves (their `select` events)."""

    submit_tab: Any
    queue_tab: Any
    jobs: Any
    lookup: Any
    summary: Any


def submission_tabs(
    gr: Any, tabs: Any, submissions: Submissions, benchmarks: list[str]
) -> SubmissionTabs:
    """The Submit and Queue tabs, inside the app's gr.Tabs (`tabs`), with the `submit` and
    `status` API endpoints. A job sent from the form opens the queue tab, following it; the
    queue tab's buttons cancel, hide, show or delete the job looked up, with the token given."""
    with gr.Tab("Submit", id="submit") as submit_tab:
        gr.Markdown(
            "Send a **bundle** (`manifest.json` and `samples.jsonl` in a .zip or .tar.gz, see "
            "docs/leaderboard.md), or a **samples file** and its metadata: the server adds the "
            "dataset version and hash it scores. Your token identifies you: keep it to cancel "
            "or delete your entry. A worker scores the job in a sandbox; follow it here."
        )
        with gr.Row():
            bundle = gr.File(label="Bundle (.zip, .tar.gz)", type="filepath", elem_id="bundle")
            samples = gr.File(label="or samples (.jsonl)", type="filepath", elem_id="samples")
        with gr.Row():
            model = gr.Textbox(label="Model", elem_id="submit-model")
            revision = gr.Textbox(label="Revision", elem_id="submit-revision")
            link = gr.Textbox(label="Link", elem_id="submit-link")
            size_b = gr.Textbox(label="Size (B)", elem_id="submit-size")
        with gr.Row():
            benchmark = gr.Dropdown(benchmarks, label="Benchmark", elem_id="submit-benchmark")
            split = gr.Dropdown(["complete", "instruct"], value="complete", label="Split")
            subset = gr.Dropdown(["full", "hard"], value="full", label="Subset")
            temperature = gr.Textbox(label="Temperature", elem_id="submit-temperature")
        token = gr.Textbox(label="Token (16+ characters)", type="password", elem_id="token")
        send = gr.Button("Submit", variant="primary", elem_id="submit-button")
    with gr.Tab("Queue", id="queue") as queue_tab:
        with gr.Row():
            lookup = gr.Textbox(label="Job id", elem_id="job-id", scale=4)
            find = gr.Button("Look up", elem_id="job-lookup", scale=1)
        summary = gr.Markdown(elem_id="job-status")
        with gr.Row():
            manage_token = gr.Textbox(
                label="Your token (the submitter's, or an admin's)",
                type="password",
                elem_id="manage-token",
                scale=3,
            )
            buttons = {
                "cancel": gr.Button("Cancel job", elem_id="job-cancel", scale=1),
                "hide": gr.Button("Hide (admin)", elem_id="job-hide", scale=1),
                "show": gr.Button("Show (admin)", elem_id="job-show", scale=1),
                "delete": gr.Button("Delete", variant="stop", elem_id="job-delete", scale=1),
            }
        managed = gr.Markdown(elem_id="job-managed")
        log_tail = gr.Code(label="Log (tail)", elem_id="job-log", interactive=False)
        document = gr.JSON(visible=False)
        jobs = gr.Dataframe(
            headers=QUEUE_HEADERS, elem_id="queue", interactive=False, max_height=500
        )
    follow = gr.Timer(POLL_S, active=False)

    def shown(found: dict[str, Any] | None) -> list[Any]:
        """The status panel for `found`; the page keeps polling while the job can change."""
        if not found:
            return [gr.skip(), "", "", gr.Timer(active=False), submissions.listing()]
        return [
            found["job"],
            status_markdown(found),
            found["log_tail"],
            gr.Timer(active=found["state"] not in FINAL_STATES),
            submissions.listing(),
        ]

    panel = [lookup, summary, log_tail, follow, jobs]
    form = [bundle, samples, model, revision, benchmark, split, subset, link, size_b]
    sent = send.click(
        submissions.submit,
        inputs=[*form, temperature, token],
        outputs=document,
        api_name="submit",
        concurrency_limit=1,
    )
    sent.success(shown, document, panel, api_visibility="private").then(
        lambda: gr.Tabs(selected="queue"), None, tabs, api_visibility="private"
    )
    gr.on(
        [find.click, lookup.submit],
        submissions.status,
        inputs=lookup,
        outputs=document,
        api_name="status",
    ).success(shown, document, panel, api_visibility="private")
    follow.tick(
        submissions.status, lookup, document, api_visibility="private", queue=False
    ).success(shown, document, panel, api_visibility="private", queue=False)
    queue_tab.select(submissions.listing, None, jobs, api_visibility="private", queue=False)

    def refreshed(job: str | None) -> list[Any]:
        """The panel after a change: the job as it is now (a deleted one is gone)."""
        try:
            return shown(submissions.status(job))
        except Exception:  # deleted: gr.Error from the lookup
            return ["", "", "", gr.Timer(active=False), submissions.listing()]

    for action, button in buttons.items():
        button.click(
            functools.partial(submissions.manage, action),
            inputs=[lookup, manage_token],
            outputs=managed,
            api_visibility="private",
            concurrency_limit=1,
        ).success(refreshed, lookup, panel, api_visibility="private")
    return SubmissionTabs(submit_tab, queue_tab, jobs, lookup, summary)
