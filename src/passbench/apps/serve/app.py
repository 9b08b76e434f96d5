"""`passbench serve`: the official evaluator's Gradio API over HTTP, answered by passbench.

    GET  /health          {"status": "ok", ...}: the server's version, environment, load
    /passbench/v1/...     passbench's program-level API for `--backend remote` (programs.py)
    POST /gradio_api/...  the Gradio API; `/predict` is the official Space's endpoint, so
                          `bigcodebench.evaluate --execution gradio --gradio_endpoint URL` and
                          `gradio_client.Client(URL).predict(..., api_name="/predict")` work
                          unchanged

Requests wait in Gradio's queue and at most `concurrency` run at once (each with its own
bounded number of sandbox workers); uploads over `max_upload_mb` are refused before they are
read; with a token set, every request but /health needs `Authorization: Bearer TOKEN`.
Samples run in passbench's sandbox, never in the server's process; every verdict is journaled
as it arrives, so a request repeated after a restart re-runs only what had no verdict yet.
"""

from __future__ import annotations

import hmac
import logging
import threading
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from passbench.apps.serve.config import ServeConfig
from passbench.apps.serve.official import OfficialRequest, answer
from passbench.apps.serve.programs import ProgramService, mount
from passbench.core.errors import PassbenchError

log = logging.getLogger("passbench.apps.serve")


class _Load:
    """How many requests are being evaluated (for /health)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running = 0
        self.served = 0

    def __enter__(self) -> None:
        with self._lock:
            self.running += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.running -= 1
            self.served += 1


class _GradioProgress:
    """passbench's Progress shown as the request's Gradio progress (what clients see)."""

    def __init__(self, tracker: Any) -> None:
        self.tracker = tracker
        self.total = 0
        self.done = 0
        self.description = ""

    def start(self, total: int, description: str) -> None:
        self.total, self.done, self.description = total, 0, description
        self.tracker((0, max(total, 1)), desc=description)

    def advance(self, n: int = 1, *, info: str = "") -> None:
        self.done += n
        self.tracker((min(self.done, self.total), max(self.total, 1)), desc=self.description)

    def warn(self, message: str) -> None:
        log.warning("%s", message)

    def finish(self) -> None:
        pass


def build_app(config: ServeConfig) -> Any:
    """The FastAPI application: /health, the bearer-token check, and the Gradio app with the
    official `/predict` mounted at /."""
    import gradio as gr
    from fastapi import FastAPI, Request, Response
    from fastapi.responses import JSONResponse

    load = _Load()
    service = ProgramService(config)
    # read once: /health answers without touching the disk
    environment = service.evaluation_environment()

    def predict(
        split: str,
        subset: str,
        samples: str | None,
        pass_k: str = "1,5,10",
        parallel: float = -1,
        min_time_limit: float = 1,
        max_as_limit: float = 30 * 1024,
        max_data_limit: float = 30 * 1024,
        max_stack_limit: float = 10,
        calibrated: bool = True,
        check_gt_only: bool = False,
        no_gt: bool = False,
        selective_evaluate: str | None = "",
        progress: gr.Progress = gr.Progress(),  # noqa: B008 (Gradio injects it)
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        request = OfficialRequest(
            split=split,
            subset=subset,
            samples=Path(samples) if samples else None,
            pass_k=str(pass_k),
            parallel=int(parallel),
            min_time_limit=float(min_time_limit),
            max_as_limit=int(max_as_limit),
            max_data_limit=int(max_data_limit),
            max_stack_limit=int(max_stack_limit),
            calibrated=bool(calibrated),
            check_gt_only=bool(check_gt_only),
            no_gt=bool(no_gt),
            selective_evaluate=selective_evaluate or "",
        )
        with load:
            try:
                return answer(
                    request,
                    config.base,
                    config.limits,
                    config.paths,
                    config.jobs_dir,
                    _GradioProgress(progress),
                )
            except PassbenchError as error:
                # the client sees this one line (gradio_client raises AppError with it)
                raise gr.Error(str(error)) from error

    interface = gr.Interface(
        fn=predict,
        inputs=[
            gr.Dropdown(["complete", "instruct"], label="BigCodeBench Split"),
            gr.Dropdown(["full", "hard"], label="BigCodeBench Subset"),
            gr.File(label="Samples Path (.jsonl)"),
            gr.Textbox(label="Pass k Values (comma-separated)", value="1,5,10"),
            gr.Slider(-1, 256, step=1, label="Parallel Workers", value=-1),
            gr.Slider(0.1, 10, step=0.1, label="Min Time Limit", value=1),
            gr.Slider(1, 100 * 1024, step=1024, label="Max AS Limit", value=30 * 1024),
            gr.Slider(1, 100 * 1024, step=1024, label="Max Data Limit", value=30 * 1024),
            gr.Slider(1, 100, step=1, label="Max Stack Limit", value=10),
            gr.Checkbox(label="Calibrated", value=True),
            gr.Checkbox(label="Check GT Only"),
            gr.Checkbox(label="No GT"),
            gr.Textbox(
                label="Selective Evaluated Task IDs (comma-separated, e.g. '0,1,2')", value=""
            ),
        ],
        outputs=[gr.JSON(label="Results"), gr.JSON(label="Eval Results")],
        title="passbench: BigCodeBench evaluator",
        api_name="predict",
        flagging_mode="never",
        time_limit=None,
    )
    interface.queue(default_concurrency_limit=config.concurrency, max_size=config.queue_size)

    app = FastAPI(title="passbench serve")
    mount(app, service)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "passbench": version("passbench"),
            "environment": environment,
            "running": load.running,
            "served": load.served,
            "concurrency": config.concurrency,
            "queue_size": config.queue_size,
            "max_upload_mb": config.max_upload_mb,
        }

    if config.token:
        expected = f"Bearer {config.token}".encode()

        @app.middleware("http")
        async def bearer_token(
            request: Request, call_next: Callable[[Request], Awaitable[Response]]
        ) -> Response:
            if request.url.path != "/health":
                given = request.headers.get("authorization", "").encode()
                if not hmac.compare_digest(given, expected):
                    return JSONResponse(
                        {"error": "missing or wrong bearer token (Authorization header)"},
                        status_code=401,
                        headers={"WWW-Authenticate": "Bearer"},
                    )
            return await call_next(request)

    return gr.mount_gradio_app(
        app,
        interface,
        path="/",
        max_file_size=config.max_upload_mb * 1024 * 1024,
        show_error=True,
    )


def serve(config: ServeConfig) -> None:
    """Run the server until interrupted (SIGINT/SIGTERM: requests in flight are ended; their
    finished verdicts are in their journals)."""
    import uvicorn

    config.jobs_dir.mkdir(parents=True, exist_ok=True)
    uvicorn.run(
        build_app(config),
        host=config.host,
        port=config.port,
        log_level="info",
        timeout_graceful_shutdown=5,
    )
