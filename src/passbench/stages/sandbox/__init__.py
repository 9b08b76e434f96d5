"""Run untrusted programs and return verdicts: the Sandbox protocol and its backends.

Backends register by name with a lazy factory ("module:attribute"), so choosing one imports only
that backend:

    with open_sandbox(SandboxConfig(python=Path(".../bin/python"))) as sandbox:
        for result in sandbox.run(programs):
            ...

Names: "local" (bubblewrap and warm workers; where bubblewrap cannot isolate it refuses, unless
`SandboxConfig.allow_unsandboxed` lets it fall back to resource limits only, loudly) and
"local-rlimit" (that fallback on purpose, for tests), "remote" (a `passbench serve` elsewhere
runs them: sandbox/remote/remote.py), "e2b" (E2B cloud sandboxes made from a template:
sandbox/remote/e2b_backend.py), "ray" (the nodes of a Ray cluster run them, each in its own
local sandbox: sandbox/remote/ray_backend.py), "docker" and "podman" (containers of the runner image
run them: sandbox/remote/container.py).

Every backend but the local ones also registers a `describe` function in TARGETS: where it will
run programs and with which environment (a BackendTarget), asked before anything runs, so that
results can record it and journals key on it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from passbench.core.errors import UnknownNameError
from passbench.stages.sandbox.base import (
    BackendConfig,
    BackendTarget,
    ContainerConfig,
    E2BConfig,
    Limits,
    RayConfig,
    RemoteConfig,
    Sandbox,
    SandboxConfig,
    WarnCallback,
)
from passbench.stages.sandbox.host.isolation import check_isolation

__all__ = [
    "BACKENDS",
    "TARGETS",
    "BackendConfig",
    "BackendTarget",
    "ContainerConfig",
    "E2BConfig",
    "Limits",
    "RayConfig",
    "RemoteConfig",
    "Sandbox",
    "SandboxConfig",
    "backend_config",
    "check_isolation",
    "describe_backend",
    "open_sandbox",
]


# name -> "module:attribute" of a factory(config, warn) -> Sandbox
BACKENDS: dict[str, str] = {
    "local": "passbench.stages.sandbox.factories:local",
    "local-rlimit": "passbench.stages.sandbox.factories:local_rlimit",
    "remote": "passbench.stages.sandbox.factories:remote",
    "e2b": "passbench.stages.sandbox.factories:e2b",
    "ray": "passbench.stages.sandbox.factories:ray",
    "docker": "passbench.stages.sandbox.factories:docker",
    "podman": "passbench.stages.sandbox.factories:podman",
}

# name -> "module:attribute" of describe(config) -> BackendTarget (backends other than local)
TARGETS: dict[str, str] = {
    "remote": "passbench.stages.sandbox.remote.remote:describe",
    "e2b": "passbench.stages.sandbox.remote.e2b_backend:describe",
    "ray": "passbench.stages.sandbox.remote.ray_backend:describe",
    "docker": "passbench.stages.sandbox.remote.container:describe_docker",
    "podman": "passbench.stages.sandbox.remote.container:describe_podman",
}


def backend_config(
    backend: str,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    image: str | None = None,
    ray_address: str | None = None,
) -> BackendConfig | None:
    """The chosen backend's own settings from the flags and config-file keys that select one
    (--endpoint and its token, --image, --ray-address): the one place they are resolved. The
    local backends take none; a flag meant for another backend is ignored, as it always was."""
    configs: dict[str, BackendConfig] = {
        "remote": RemoteConfig(endpoint, token),
        "docker": ContainerConfig(image),
        "podman": ContainerConfig(image),
        "e2b": E2BConfig(image),
        "ray": RayConfig(ray_address),
    }
    return configs.get(backend)


def open_sandbox(
    config: SandboxConfig, backend: str = "local", warn: WarnCallback | None = None
) -> Sandbox:
    """Start the named sandbox backend. Raises UnknownNameError for an unknown name and
    SandboxError when the backend cannot run, or cannot isolate and is not allowed to run
    unsandboxed."""
    target = BACKENDS.get(backend)
    if target is None:
        known = ", ".join(sorted(BACKENDS))
        raise UnknownNameError(f"unknown sandbox backend '{backend}' (known: {known})")
    factory: Callable[[SandboxConfig, WarnCallback | None], Sandbox] = _load(target)
    return factory(config, warn)


def describe_backend(config: SandboxConfig, backend: str) -> BackendTarget | None:
    """Where `backend` would run programs and with which environment (None for the local
    backends, which run them here). Raises InputError for settings the backend lacks,
    BackendUnavailable when it cannot be reached, SandboxError when it cannot serve them."""
    if backend not in BACKENDS:
        known = ", ".join(sorted(BACKENDS))
        raise UnknownNameError(f"unknown sandbox backend '{backend}' (known: {known})")
    target = TARGETS.get(backend)
    if target is None:
        return None
    describe: Callable[[SandboxConfig], BackendTarget] = _load(target)
    return describe(config)


def _load(target: str) -> Any:
    module_name, attribute = target.split(":")
    return getattr(importlib.import_module(module_name), attribute)
