"""The backends the contract suite holds to the local sandbox's verdicts, each opened the way its
own tests open it (a real server, cluster or engine on this machine, or the loopback stand-in for
a vendor's cloud).

An opener is a context manager yielding a BackendUnderTest; one that cannot run here raises
`Unavailable` with the reason, which the suite reports as a skip.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from passbench.stages.sandbox import (
    ContainerConfig,
    E2BConfig,
    SandboxConfig,
    backend_config,
)


class Unavailable(Exception):
    """This backend cannot run on this machine (the reason says why)."""


@dataclass(frozen=True)
class BackendUnderTest:
    name: str  # the registry name (--backend)
    # what selects it, as EvaluateSettings / SandboxConfig fields (endpoint, token, image, ...)
    fields: dict[str, Any] = field(default_factory=dict)
    # why it cannot run BigCodeBench programs here ("" = it can)
    no_bigcodebench: str = ""

    def config(self, base: SandboxConfig) -> SandboxConfig:
        # the selecting fields become the backend's own config, as Execution makes it
        selecting = {key: value for key, value in self.fields.items() if key in _SELECTING}
        rest = {key: value for key, value in self.fields.items() if key not in _SELECTING}
        own = backend_config(self.name, **selecting)
        return replace(base, backend_config=own, **rest)


#: EvaluateSettings fields that backend_config turns into a backend's own config
_SELECTING = ("endpoint", "token", "image", "ray_address")


Opener = Callable[[Path], contextlib.AbstractContextManager[BackendUnderTest]]


@contextlib.contextmanager
def _remote(root: Path) -> Iterator[BackendUnderTest]:
    try:
        from tests.apps.serve.live import free_port, running_server

        from passbench.apps.serve import ServeConfig, ServerLimits
        from passbench.core.settings import Paths
        from passbench.stages.evaluate import EvaluateSettings
    except ImportError as error:  # gradio is the `serve` extra
        raise Unavailable(f"passbench serve needs gradio: {error}") from None
    token = "contract-token"
    # the server's defaults are the local ones: a request's smaller limits are honoured
    config = ServeConfig(
        base=EvaluateSettings(),
        paths=Paths(cache_dir=root / "cache", data_dir=None),
        jobs_dir=root / "jobs",
        port=free_port(),
        token=token,
        limits=ServerLimits(max_workers=2),
    )
    with running_server(config) as url:
        yield BackendUnderTest("remote", {"endpoint": url, "token": token})


@contextlib.contextmanager
def _e2b(root: Path) -> Iterator[BackendUnderTest]:
    """E2B's cloud cannot be reached here: its loopback stand-in speaks E2B's REST API and
    the in-sandbox agent's protocol to the real e2b SDK (tests/stages/sandbox/e2b_loopback.py)."""
    try:
        from tests.stages.sandbox.e2b_support import e2b_loopback
    except ImportError as error:  # the SDK is the `e2b` extra
        raise Unavailable(f"the e2b backend needs the e2b SDK: {error}") from None
    with e2b_loopback() as (name, config):
        yield BackendUnderTest(
            name,
            {
                "image": config.own(E2BConfig).template,
                "allow_unsandboxed": config.allow_unsandboxed,
            },
        )


@contextlib.contextmanager
def _ray(root: Path) -> Iterator[BackendUnderTest]:
    """A real two-node Ray cluster on this machine (`ray start --head` plus a node)."""
    try:
        from tests.stages.sandbox.ray_support import ray_available, ray_cluster
    except ImportError as error:
        raise Unavailable(f"ray: {error}") from None
    if not ray_available():
        raise Unavailable("ray is not installed (the 'ray' extra)")
    with ray_cluster() as address:
        yield BackendUnderTest("ray", {"ray_address": address})


@contextlib.contextmanager
def _podman(root: Path) -> Iterator[BackendUnderTest]:
    """Real podman containers of the runner image built from the Dockerfile (without the
    BigCodeBench environment, which takes ~25 min to build here, unless PASSBENCH_TEST_IMAGE
    names an image that has it)."""
    from tests.stages.sandbox.container_support import container_backend, podman_refusal

    from passbench.core.errors import PassbenchError
    from passbench.stages.sandbox.base import EnvironmentRef
    from passbench.stages.sandbox.remote.container import describe_podman

    refusal = podman_refusal()
    if refusal is not None:
        raise Unavailable(refusal)
    with container_backend() as (name, config):
        try:
            describe_podman(replace(config, environment=EnvironmentRef("bigcodebench")))
            lacking = ""
        except PassbenchError as error:
            lacking = f"{error} (set PASSBENCH_TEST_IMAGE to an image built with it)"
        image = config.own(ContainerConfig).image
        yield BackendUnderTest(name, {"image": image}, no_bigcodebench=lacking)


#: Every backend but the local one (the reference).
OPENERS: dict[str, Opener] = {
    "remote": _remote,
    "e2b": _e2b,
    "ray": _ray,
    "podman": _podman,
}
