"""Run untrusted programs and return verdicts: the Sandbox protocol and its backends.

Backends register by name with a lazy factory ("module:attribute"), so choosing one imports only
that backend:

    with open_sandbox(SandboxConfig(python=Path(".../bin/python"))) as sandbox:
        for result in sandbox.run(programs):
            ...

Names: "local" (bubblewrap and warm workers; where bubblewrap cannot isolate it refuses, unless
`SandboxConfig.allow_unsandboxed` lets it fall back to resource limits only, loudly) and
"local-rlimit" (that fallback on purpose, for tests), "remote" (a `passbench serve` elsewhere
runs them: sandbox/remote.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from passbench.errors import UnknownNameError
from passbench.sandbox.base import Limits, ResultCallback, Sandbox, SandboxConfig
from passbench.sandbox.isolation import check_isolation

__all__ = [
    "BACKENDS",
    "Limits",
    "ResultCallback",
    "Sandbox",
    "SandboxConfig",
    "check_isolation",
    "open_sandbox",
]

WarnCallback = Callable[[str], None]

# name -> "module:attribute" of a factory(config, warn) -> Sandbox
BACKENDS: dict[str, str] = {
    "local": "passbench.sandbox.factories:local",
    "local-rlimit": "passbench.sandbox.factories:local_rlimit",
    "remote": "passbench.sandbox.factories:remote",
}


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
    module_name, attribute = target.split(":")
    factory: Callable[[SandboxConfig, WarnCallback | None], Sandbox] = getattr(
        importlib.import_module(module_name), attribute
    )
    return factory(config, warn)
