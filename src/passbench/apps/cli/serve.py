"""`passbench serve`: an evaluation server that speaks the official BigCodeBench evaluator's API."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import click

from passbench.apps.cli.options import (
    config_option,
    data_dir_option,
    repos_option,
    resolve_options,
)
from passbench.apps.serve import ServeConfig, ServerLimits
from passbench.apps.serve import serve as run_server
from passbench.core.errors import InputError, SandboxError
from passbench.stages.evaluate import EvaluateSettings
from passbench.stages.sandbox import check_isolation
from passbench.stages.sandbox.base import Limits


@click.command()
@click.option("--host", help="Address to listen on (default 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default 7860).")
@click.option("--concurrency", type=int, help="Requests evaluated at once (default 1).")
@click.option("--queue-size", type=int, help="Requests that may wait (default 64).")
@click.option("--max-upload-mb", type=int, help="Largest samples file accepted (default 200).")
@click.option("--workers", type=int, help="Most concurrent samples of one request (0: cores).")
@click.option("--memory-mb", type=int, help="Most address space per sample, MiB (4096).")
@click.option("--tmp-mb", type=int, help="What a sample may store in its /tmp, MiB (512).")
@click.option("--env-dir", type=click.Path(path_type=Path), help="The evaluation environment.")
@click.option("--nltk-data", type=click.Path(path_type=Path), help="NLTK data for samples.")
@data_dir_option
@repos_option
@click.option(
    "--jobs-dir",
    type=click.Path(path_type=Path),
    help="Where requests' files and journals are kept (default: the cache's serve/jobs).",
)
@config_option
@click.pass_context
def serve(ctx: click.Context, /, **options: Any) -> None:
    """Serve the official BigCodeBench evaluator's API (/predict) over HTTP.

    `bigcodebench.evaluate --execution gradio --gradio_endpoint http://HOST:PORT` works
    against it unchanged. Samples run in passbench's sandbox; a server never runs without
    sandbox isolation. Set PASSBENCH_SERVE_TOKEN to require `Authorization: Bearer TOKEN`.
    Repository programs (SWE-bench, `--backend remote`) find their repositories in --repos
    and their test environments in this machine's environment cache.
    """
    if importlib.util.find_spec("gradio") is None:  # an optional extra
        raise InputError("passbench serve needs Gradio: pip install 'passbench[serve]'")
    resolved = resolve_options(ctx, "serve", options)
    paths = resolved.paths
    # strangers' samples: never without isolation, never with the network
    refused = check_isolation(Path(sys.executable), paths.cache_dir / "scratch")
    if refused is not None:
        raise SandboxError(refused)
    base = EvaluateSettings(
        limits=Limits(memory_mb=resolved["memory_mb"], tmp_mb=resolved["tmp_mb"]),
        env_dir=resolved["env_dir"],
        nltk_data=resolved["nltk_data"],
    )
    config = ServeConfig(
        base=base,
        paths=paths,
        jobs_dir=resolved["jobs_dir"] or paths.cache_dir / "serve" / "jobs",
        host=resolved["host"],
        port=resolved["port"],
        concurrency=resolved["concurrency"],
        queue_size=resolved["queue_size"],
        max_upload_mb=resolved["max_upload_mb"],
        token=resolved["token"],
        limits=ServerLimits(max_workers=resolved["workers"], max_memory_mb=resolved["memory_mb"]),
    )
    click.echo(
        f"passbench serve on http://{config.host}:{config.port} "
        f"({config.concurrency} at once, queue {config.queue_size}"
        f"{', bearer token required' if config.token else ''})",
        err=True,
    )
    run_server(config)
