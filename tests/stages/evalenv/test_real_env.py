"""The real BigCodeBench environment, when one has been built (passbench env create)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from tests.stages.evalenv.conftest import USER_ENV_DIR

from passbench.core.errors import EnvironmentError_
from passbench.stages.evalenv.check import check_env
from passbench.stages.evalenv.locate import EnvInfo, locate_env
from passbench.stages.evalenv.lock import normalize_name, packaged_lock_path, read_lock
from passbench.stages.evalenv.specs import get_spec, minor_version

pytestmark = [pytest.mark.evalenv, pytest.mark.slow]


@pytest.fixture
def real_env(monkeypatch: pytest.MonkeyPatch) -> EnvInfo:
    # The autouse fixture points PASSBENCH_ENV_DIR at tmp; look where users build it instead.
    if USER_ENV_DIR:
        monkeypatch.setenv("PASSBENCH_ENV_DIR", USER_ENV_DIR)
    else:
        monkeypatch.delenv("PASSBENCH_ENV_DIR", raising=False)
    try:
        return locate_env("bigcodebench")
    except EnvironmentError_ as error:
        pytest.skip(str(error))


def test_every_module_imports_and_the_record_matches(real_env: EnvInfo) -> None:
    report = check_env("bigcodebench", real_env.root)
    problems = [(item.kind, item.name, item.detail) for item in report.problems]
    # NLTK packages depend on what could be fetched where the env was built (punkt and
    # wordnet cannot be fetched offline); everything else must be there.
    assert [problem for problem in problems if problem[0] != "nltk"] == []


def test_installed_packages_are_exactly_the_lock(real_env: EnvInfo) -> None:
    script = (
        "import importlib.metadata as m, json\n"
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    # the env's Python alone: a PYTHONPATH of the caller's (a checkout's src) is not the env's
    alone = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [str(real_env.python), "-c", script], capture_output=True, text=True, check=True, env=alone
    )
    installed = {
        normalize_name(name): version for name, version in json.loads(result.stdout).items()
    }
    installed.pop("pip")
    # The lock of the env's own Python version (a PASSBENCH_ENV_DIR may name a 3.10 env).
    minor = minor_version(real_env.python_version)
    lock = read_lock(packaged_lock_path(get_spec("bigcodebench").lock_for(minor)))
    assert real_env.metadata.lock_file == lock.path.rsplit("/", 1)[-1]
    assert installed == lock.versions()
