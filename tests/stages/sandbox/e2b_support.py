"""Open the e2b backend on a loopback E2B, for any suite that runs programs through backends:

    with e2b_loopback() as (backend, config):
        with open_sandbox(replace(config, environment=...), backend=backend) as sandbox:
            ...

The e2b SDK is pointed at the loopback server through its own environment variables for the
duration; sandboxes run the agent on this host with the interpreter running the tests (and
this checkout's passbench), as the template's image runs its own.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import platformdirs

import passbench
from passbench.stages.sandbox.base import E2BConfig, EnvironmentRef, SandboxConfig
from passbench.stages.sandbox.host.isolation import check_isolation
from passbench.stages.sandbox.remote.e2b_backend import DEFAULT_TEMPLATE

from .e2b_loopback import LoopbackE2B, LoopbackTemplate, loopback_environment
from .helpers import TEST_LIMITS

API_KEY = "e2b_loopback_test_key"


def template_profile(env_dir: Path | None = None, nltk_data: Path | None = None) -> str:
    """What deploy/e2b's image puts in the login shell's profile, for this host: passbench's
    interpreter first on PATH, this checkout's passbench importable, and where the evaluation
    environment (default: where this user's is) and NLTK data are."""
    # a sandbox's HOME is its own folder: XDG_DATA_HOME keeps this user's data folder, where
    # `passbench env create` puts evaluation environments by default
    data_home = Path(platformdirs.user_data_dir("passbench")).parent
    lines = [
        f"export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH",
        f"export PYTHONPATH={shlex.quote(str(Path(passbench.__file__).parent.parent))}",
        f"export XDG_DATA_HOME={shlex.quote(str(data_home))}",
    ]
    if env_dir is not None:
        lines.append(f"export PASSBENCH_ENV_DIR={shlex.quote(str(env_dir))}")
    if nltk_data is not None:
        lines.append(f"export PASSBENCH_NLTK_DATA={shlex.quote(str(nltk_data))}")
    return "\n".join(lines) + "\n"


def bubblewrap_here() -> bool:
    """Whether the agent's bubblewrap can isolate on this host (where loopback sandboxes run)."""
    return check_isolation(Path(sys.executable), Path("/tmp/passbench-e2b-probe")) is None


@contextlib.contextmanager
def e2b_loopback(
    *, env_dir: Path | None = None, nltk_data: Path | None = None
) -> Iterator[tuple[str, SandboxConfig]]:
    """A loopback E2B serving the default template, the SDK pointed at it: yields the backend
    name and a SandboxConfig for it (environment "host", the tests' small limits; set
    `environment` to run BigCodeBench programs, with `env_dir` its environment's folder and
    `nltk_data` the NLTK data). Where bubblewrap cannot run here, the agent runs programs with
    resource limits only (allow_unsandboxed), as the local backend's fallback does."""
    with loopback(env_dir=env_dir, nltk_data=nltk_data):
        yield "e2b", loopback_config()


@contextlib.contextmanager
def loopback(
    *, env_dir: Path | None = None, nltk_data: Path | None = None
) -> Iterator[LoopbackE2B]:
    """The server itself (with the SDK pointed at it), for tests that look at what it saw."""
    template = LoopbackTemplate(DEFAULT_TEMPLATE, profile=template_profile(env_dir, nltk_data))
    with LoopbackE2B([template], API_KEY) as server, loopback_environment(server, API_KEY):
        yield server


def loopback_config() -> SandboxConfig:
    return SandboxConfig(
        python=Path(sys.executable),
        workers=2,
        limits=TEST_LIMITS,
        environment=EnvironmentRef("host"),
        backend_config=E2BConfig(DEFAULT_TEMPLATE),
        allow_unsandboxed=not bubblewrap_here(),
    )
