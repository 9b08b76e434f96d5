"""Fixtures: the real `security` tool environment (bandit, semgrep, CyberSecEval's rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.analysis.security.tools import Toolset, open_toolset
from passbench.core.errors import PassbenchError
from passbench.stages.evalenv import create_env, locate_env

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def security_env() -> Path:
    """The tool environment CI built (scripts/setup.sh: the default place, or
    PASSBENCH_SECURITY_ENV_DIR), else one built once into build/security-env, where a later
    session finds it. Never a skip: without the tools these tests fail, saying why."""
    try:
        return locate_env("security").root
    except PassbenchError:
        pass
    try:
        return create_env("security", path=REPO / "build" / "security-env").info.root
    except PassbenchError as error:
        pytest.fail(
            f"the security tool environment is missing and could not be built: {error}. "
            "Run `passbench env create security` (scripts/setup.sh does)."
        )


@pytest.fixture(scope="session")
def toolset(security_env: Path) -> Toolset:
    return open_toolset(security_env)
