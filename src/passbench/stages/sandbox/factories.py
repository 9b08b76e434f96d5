"""Factories the sandbox registry points at (kept apart so the registry imports nothing)."""

from __future__ import annotations

from collections.abc import Callable

from passbench.stages.sandbox.base import Sandbox, SandboxConfig
from passbench.stages.sandbox.host.local import LocalSandbox


def local(config: SandboxConfig, warn: Callable[[str], None] | None) -> Sandbox:
    return LocalSandbox(config, warn)


def local_rlimit(config: SandboxConfig, warn: Callable[[str], None] | None) -> Sandbox:
    return LocalSandbox(config, warn, force_fallback=True)


def remote(config: SandboxConfig, warn: Callable[[str], None] | None) -> Sandbox:
    from passbench.stages.sandbox.remote.remote import RemoteSandbox

    return RemoteSandbox(config, warn)


def e2b(config: SandboxConfig, warn: Callable[[str], None] | None) -> Sandbox:
    from passbench.stages.sandbox.remote.e2b_backend import E2BSandbox

    return E2BSandbox(config, warn)


def ray(config: SandboxConfig, warn: Callable[[str], None] | None) -> Sandbox:
    from passbench.stages.sandbox.remote.ray_backend import RaySandbox

    return RaySandbox(config, warn)


def docker(config: SandboxConfig, warn: Callable[[str], None] | None) -> Sandbox:
    from passbench.stages.sandbox.remote.container import ContainerSandbox

    return ContainerSandbox(config, "docker", warn)


def podman(config: SandboxConfig, warn: Callable[[str], None] | None) -> Sandbox:
    from passbench.stages.sandbox.remote.container import ContainerSandbox

    return ContainerSandbox(config, "podman", warn)
