"""What a server is configured with: where it evaluates, and what it allows a request."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings


@dataclass(frozen=True)
class ServerLimits:
    """What the server allows a request at most, whatever the request asks."""

    max_workers: int = 0  # concurrent samples of one request; 0 = from the cores
    max_memory_mb: int = 4096  # a request's max_as_limit / max_data_limit are capped here
    max_stack_mb: int = 64


@dataclass(frozen=True)
class ServeConfig:
    """Everything a server needs; `base` carries the evaluation settings requests start from."""

    base: EvaluateSettings
    paths: Paths
    jobs_dir: Path
    host: str = "127.0.0.1"
    port: int = 7860
    concurrency: int = 1  # requests evaluated at once
    queue_size: int = 64  # requests waiting at most; more are refused
    max_upload_mb: int = 200
    token: str | None = field(default=None, repr=False)
    limits: ServerLimits = field(default_factory=ServerLimits)
    # repository programs' (SWE-bench) test environment caches by name, over
    # $PASSBENCH_<CACHE>_ENV_DIR where the server runs (its mirrors: `paths.repos_dir`)
    env_caches: tuple[tuple[str, Path], ...] = ()
