"""Fixtures for the sandbox tests: real sandboxes running a stdlib-only interpreter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passbench.stages.sandbox import Sandbox, SandboxConfig, open_sandbox

from .helpers import PYTHON, TEST_LIMITS, bwrap_usable

BWRAP = bwrap_usable()
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run here")


@pytest.fixture(scope="module")
def bwrap_sandbox() -> Iterator[Sandbox]:
    if not BWRAP:
        pytest.skip("bubblewrap cannot run here")
    config = SandboxConfig(python=PYTHON, workers=2, limits=TEST_LIMITS)
    with open_sandbox(config) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def rlimit_sandbox() -> Iterator[Sandbox]:
    config = SandboxConfig(python=PYTHON, workers=2, limits=TEST_LIMITS)
    with open_sandbox(config, backend="local-rlimit", warn=lambda message: None) as sandbox:
        yield sandbox


@pytest.fixture(scope="module", params=["bubblewrap", "rlimit"])
def any_sandbox(request: pytest.FixtureRequest) -> Sandbox:
    """Both isolation levels: verdicts must not depend on the backend."""
    name = "bwrap_sandbox" if request.param == "bubblewrap" else "rlimit_sandbox"
    sandbox: Sandbox = request.getfixturevalue(name)
    return sandbox
