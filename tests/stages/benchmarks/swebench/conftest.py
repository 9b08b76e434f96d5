"""Fixtures built once per test process (once per xdist worker) and shared by test_testenvs.py,
test_ray.py and test_remote.py: the small bench with an official export for its first instance,
that instance's test environment (a real build of pytest's few pins from PyPI), the bench of
extras (elsewhere.py) and the loopback httpbin's tool environment, built in the same cache.

Sharing is safe because nothing a test does to them outlives the test: the one test that
changes an environment file (test_testenvs.py) puts it back in a `finally`, and the tests that
need a folder of their own (an empty cache, another node's mirrors) make it in tmp_path."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from passbench.core.errors import EnvironmentError_
from passbench.stages.benchmarks.swebench.services import build_httpbin, open_httpbin
from passbench.stages.benchmarks.swebench.testenvs import ENV_DIR_VARIABLE
from passbench.stages.sandbox.host.workdirs import default_scratch_root

from .elsewhere import CLI, INSTANCE, OTHER, ExtrasBench, make_extras, make_small
from .fixture import SmallBench


class EnvironmentBuilds:
    """The environment cache of the shared tests (not under /tmp, which the sandbox replaces:
    it shows environments at their own path) and the builds into it: `env create` of both
    instances started at once, in the background (while a cluster or a server starts), and
    waited for once."""

    def __init__(self, small: SmallBench) -> None:
        parent = default_scratch_root().parent / "test-venvs"
        parent.mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(prefix="swebench-envs-", dir=parent))
        environ = {
            **os.environ,
            "PASSBENCH_DATA_DIR": str(small.data_dir),
            ENV_DIR_VARIABLE: str(self.folder),
            "COLUMNS": "300",
        }
        # the instance with an export is built, the other has no lock (said in one line)
        command = [*CLI, "env", "create", "swebench-verified", "--tasks", f"{INSTANCE},{OTHER}"]
        self._process = subprocess.Popen(
            command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self._created: subprocess.CompletedProcess[str] | None = None
        self._httpbin: str | None = None

    def created(self) -> subprocess.CompletedProcess[str]:
        if self._created is None:
            out, err = self._process.communicate(timeout=600)
            self._created = subprocess.CompletedProcess(
                self._process.args, self._process.returncode, out, err
            )
        return self._created

    def instance_built(self) -> Path:
        """The folder, once the first instance's environment is in it."""
        done = self.created()
        assert any(len(entry.name) == 64 for entry in self.folder.iterdir()), done.stderr
        return self.folder

    def httpbin_built(self) -> Path:
        """The folder, once the loopback httpbin's tool environment is in it too (PyPI, the
        first time on a machine without pip's cache: about 40 s)."""
        if self._httpbin is None:
            try:
                if open_httpbin(self.folder) is None:
                    build_httpbin(self.folder)
                self._httpbin = ""
            except EnvironmentError_ as error:
                self._httpbin = str(error)
        if self._httpbin:
            pytest.skip(f"the loopback httpbin's environment cannot be built here: {self._httpbin}")
        return self.folder

    def close(self) -> None:
        self._process.kill()
        self._process.communicate()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def small(tmp_path_factory: pytest.TempPathFactory) -> SmallBench:
    return make_small(tmp_path_factory.mktemp("swebench"))


@pytest.fixture(scope="session")
def env_builds(small: SmallBench) -> Iterator[EnvironmentBuilds]:
    builds = EnvironmentBuilds(small)
    try:
        yield builds
    finally:
        builds.close()


@pytest.fixture(scope="session")
def created(env_builds: EnvironmentBuilds) -> subprocess.CompletedProcess[str]:
    """`env create` of both instances: the one with an export is built, the other has no lock."""
    return env_builds.created()


@pytest.fixture(scope="session")
def envs(env_builds: EnvironmentBuilds) -> Path:
    """The environment cache, once the first instance's environment is built."""
    return env_builds.instance_built()


@pytest.fixture(scope="session")
def extras(tmp_path_factory: pytest.TempPathFactory) -> ExtrasBench:
    return make_extras(tmp_path_factory.mktemp("swebench-extras"))


@pytest.fixture(scope="session")
def httpbin_envs(env_builds: EnvironmentBuilds) -> Path:
    """The environment cache with the loopback httpbin's tool environment built in it."""
    return env_builds.httpbin_built()
