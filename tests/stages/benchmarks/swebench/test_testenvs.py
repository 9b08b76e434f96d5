"""The SWE-bench environments in use: `passbench env check/create swebench-*` through the
benchmark's `task_environments` hook, and `evaluate` running an instance in its built
environment (a real build of pytest's few pins from PyPI, once for the file) on the small real
repository of fixture.py, with its verdict and pass@k file naming the environment. The bench
and the build are conftest.py's, shared with test_ray.py and test_remote.py."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.stages.sandbox.conftest import BWRAP

from passbench.core.settings import Paths
from passbench.stages.benchmarks import get_benchmark
from passbench.stages.benchmarks.data import DataSettings
from passbench.stages.benchmarks.swebench.environments import RECORD_FILE
from passbench.stages.benchmarks.swebench.testenvs import ENV_DIR_VARIABLE, NO_ENVIRONMENT
from passbench.stages.evalenv.manifest import verify_manifest
from passbench.stages.evaluate import EvaluateSettings, Evaluator

from .elsewhere import CLI, INSTANCE, OTHER, PYTHON, export
from .fixture import SmallBench

pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run")]


def cli(small: SmallBench, envs: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {
        **os.environ,
        "PASSBENCH_DATA_DIR": str(small.data_dir),
        ENV_DIR_VARIABLE: str(envs),
        "COLUMNS": "300",
    }
    return subprocess.run(
        [*CLI, *args], env=environ, capture_output=True, text=True, timeout=600, check=False
    )


def items(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    report = json.loads(done.stdout)
    return {item["name"]: item for item in report["items"]}


def test_check_before_and_after_create(
    small: SmallBench, envs: Path, created: subprocess.CompletedProcess[str]
) -> None:
    before = cli(small, envs / "empty", "env", "check", "swebench-verified", "--json")
    assert before.returncode == 1, before.stderr  # one instance has no lock
    found = items(before)
    assert found[INSTANCE]["ok"] is True
    assert str(found[INSTANCE]["detail"]).startswith("official: the exact pins")
    assert "not built: passbench env create swebench-verified" in str(found[INSTANCE]["detail"])
    assert found[OTHER]["ok"] is False and "no export" in str(found[OTHER]["detail"])
    assert str(found["octo/calc"]["detail"]) == (
        "1/1 can be evaluated here (1 official, 0 approximate); 0 with their environment built"
    )

    # the build: one environment, and the instance without a lock said so, one line
    assert created.returncode == 1, created.stdout + created.stderr
    assert "built in" in created.stderr and f"{OTHER}" in created.stderr
    after = cli(small, envs, "env", "check", "swebench-verified", "--tasks", INSTANCE, "--json")
    assert after.returncode == 0, after.stdout + after.stderr
    assert f"built (Python {PYTHON})" in str(items(after)[INSTANCE]["detail"])
    again = cli(small, envs, "env", "create", "swebench-verified", "--tasks", INSTANCE)
    assert again.returncode == 0 and "cached" in again.stderr, again.stderr
    # one build of the instance's lock (the loopback httpbin's tool environment, which other
    # tests build in the shared cache, is not one of the bench's)
    assert len([b for b in (envs / "builds").iterdir() if _repo_of(b) == "octo/calc"]) == 1


def _repo_of(build: Path) -> str:
    return str(json.loads((build / RECORD_FILE).read_text()).get("repo"))


def test_verify_and_info_name_each_environment_and_catch_a_changed_file(
    small: SmallBench, envs: Path, created: subprocess.CompletedProcess[str]
) -> None:
    info = cli(small, envs, "env", "info", "swebench-verified", "--tasks", f"{INSTANCE},{OTHER}")
    assert info.returncode == 0, info.stderr
    (described,) = json.loads(info.stdout)  # the instance without a lock needs none
    assert described["built"] is True and described["tasks"] == [INSTANCE]
    assert described["python_version"] == PYTHON and Path(described["python"]).is_file()
    intact = cli(small, envs, "env", "verify", "swebench-verified", "--tasks", INSTANCE, "--json")
    assert intact.returncode == 0, intact.stdout + intact.stderr
    assert "intact (every file's sha256)" in intact.stdout
    # one file's bytes changed, its size kept: only the full check reads it
    changed = next(Path(described["root"]).rglob("pytest/__init__.py"))
    original = changed.read_bytes()
    changed.write_bytes(original.replace(b"__all__", b"__ALL__", 1))
    try:
        broken = cli(small, envs, "env", "verify", "swebench-verified", "--tasks", INSTANCE)
        assert broken.returncode == 1, broken.stdout + broken.stderr
        assert "pytest/__init__.py has different contents" in " ".join(broken.stdout.split())
    finally:
        changed.write_bytes(original)
    missing = cli(small, envs / "empty", "env", "verify", "swebench-verified", "--tasks", INSTANCE)
    assert missing.returncode == 1 and "not built" in missing.stdout


def test_a_missing_python_is_one_line(small: SmallBench, tmp_path: Path) -> None:
    rows = [{"instance_id": INSTANCE, "environment_yml": export("3.99.1", ("pytest==8.3.3",))}]
    data = tmp_path / "data"
    (data / "swebench").mkdir(parents=True)
    for name in ("swebench-verified.jsonl.gz",):
        (data / "swebench" / name).write_bytes((small.data_dir / "swebench" / name).read_bytes())
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    (data / "swebench" / "swebench-verified-environments.jsonl.gz").write_bytes(
        gzip.compress(text, mtime=0)
    )
    bench = SmallBench(data, small.repos_dir, small.rows, "", "", "")
    done = cli(bench, tmp_path / "envs", "env", "create", "swebench-verified", "--tasks", INSTANCE)
    assert done.returncode != 0
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert "no Python 3.99 here: pyenv install 3.99.1" in message


#: The gold fix, and code run at import that tries to write into the environment.
PLANTING = (
    "diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n"
    "+++ b/calc/__init__.py\n@@ -1,5 +1,11 @@\n"
    "+import os, sys, sysconfig\n"
    '+for folder in (sys.prefix, sysconfig.get_paths()["purelib"]):\n'
    "+    try:\n"
    '+        open(os.path.join(folder, "planted-by-a-patch"), "w").close()\n'
    "+    except OSError:\n"
    "+        pass\n"
    " def add(a, b):\n-    return a - b\n+    return a + b\n \n \n def sub(a, b):\n"
)


def test_evaluate_runs_in_the_built_environment(
    small: SmallBench, envs: Path, created: subprocess.CompletedProcess[str], tmp_path: Path
) -> None:
    """The gold patch resolves in the environment and says so; the patch's attempt to write
    into the environment changes nothing; the instance without one keeps today's label."""
    predictions = tmp_path / "preds.json"
    predictions.write_text(
        json.dumps(
            {
                INSTANCE: {"model_name_or_path": "m", "model_patch": PLANTING},
                OTHER: {"model_name_or_path": "m", "model_patch": small.gold_patch},
            }
        )
    )
    os.environ[ENV_DIR_VARIABLE] = str(envs)
    try:
        settings = EvaluateSettings(
            benchmark="swebench-verified", workers=2, check_ground_truth=False
        )
        paths = Paths(
            cache_dir=tmp_path / "cache", data_dir=small.data_dir, repos_dir=small.repos_dir
        )
        outcome = Evaluator(settings, paths).evaluate_samples(predictions, tmp_path / "out")
    finally:
        del os.environ[ENV_DIR_VARIABLE]
    entries = json.loads(outcome.eval_results_path.read_text())["eval"]
    (mine,) = entries[INSTANCE]
    assert mine["status"] == "pass", mine
    assert mine["environment"] == "official"
    lock = mine["environment_lock"]
    root = (envs / lock["lock_sha256"]).resolve()
    assert root.parent == envs / "builds" and _repo_of(root) == "octo/calc"
    assert lock["python"] == PYTHON and lock["lock_source"] == "export"
    (log,) = (tmp_path / "out").rglob(f"{INSTANCE}/test_output.txt")
    assert "pytest-8.3.3" in log.read_text()  # the environment's pytest, not passbench's
    (other,) = entries[OTHER]
    assert other["status"] == "pass" and other["environment"] == NO_ENVIRONMENT
    assert other["environment_lock"] is None
    pass_at_k = json.loads(outcome.pass_at_k_path.read_text())
    assert pass_at_k["instances_in_official_environments"] == 1
    assert pass_at_k["instances_without_their_official_environment"] == 1
    assert pass_at_k[f"environment:official:python{PYTHON}:{lock['lock_sha256']}"] == 1
    # read-only: nothing planted, every file as built
    assert not list(root.rglob("planted-by-a-patch"))
    assert verify_manifest(root, full=True).intact


def test_the_ground_truth_names_the_environment_each_gold_patch_ran_in(
    small: SmallBench,
    envs: Path,
    created: subprocess.CompletedProcess[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`evaluate --ground-truth` records, per instance, the environment its gold patch ran in
    (as each sample's entry does), so a ground truth says how official it was."""
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    done = cli(
        small,
        envs,
        "evaluate",
        "-b",
        "swebench-verified",
        "--ground-truth",
        "--repos",
        str(small.repos_dir),
        "--output-dir",
        str(tmp_path / "gt"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    tasks = json.loads((tmp_path / "gt" / "ground_truth.json").read_text())["tasks"]
    assert tasks[INSTANCE]["status"] == "pass" and tasks[INSTANCE]["environment"] == "official"
    assert tasks[INSTANCE]["environment_lock"]["python"] == PYTHON
    assert tasks[OTHER]["status"] == "pass" and tasks[OTHER]["environment"] == NO_ENVIRONMENT


def test_the_hook_is_the_benchmarks(small: SmallBench) -> None:
    bench = get_benchmark("swebench-lite")
    bench.load(data=DataSettings(data_dir=small.data_dir, repos_dir=small.repos_dir))
    hook = bench.task_environments()
    assert hook is not None
    assert get_benchmark("humaneval").task_environments() is None


def test_channel_statuses_take_the_official_parsers_names() -> None:
    """requests' PASS_TO_PASS lists `test_unzipped_paths_unchanged[/test_utils.py]`, the name
    `parse_log_pytest_options` gives the test pytest reports with the absolute path."""
    from passbench.stages.benchmarks.swebench.benchmark import _as_official_names

    reported = {
        "tests/test_utils.py::T::test_unzipped[/testbed/tests/test_utils.py]": "PASSED",
        "tests/test_utils.py::T::test_other[a-b]": "FAILED",
    }
    assert _as_official_names(reported, "parse_log_pytest_options") == {
        "tests/test_utils.py::T::test_unzipped[/test_utils.py]": "PASSED",
        "tests/test_utils.py::T::test_other[a-b]": "FAILED",
    }
    assert _as_official_names(reported, "parse_log_pytest") == reported


def test_parser_artifacts_come_from_the_log_real_tests_from_the_channel() -> None:
    """pytest-dev__pytest-5262 lists `[100%]` (a line of an inner pytest run the official parser
    read as a test): only such names, never a node id, are taken from the log."""
    from passbench.stages.benchmarks.swebench.benchmark import _with_parser_artifacts

    channel = {"t.py::test_a": "PASSED"}
    official = {
        "t.py::test_a": "PASSED",
        "t.py::test_b": "PASSED",  # printed: t.py reported, so its tests are the channel's
        "[100%]": "PASSED",
        "test_inner.py::test_hello": "PASSED",  # an inner pytester run's test
    }
    listed = tuple(official)
    assert _with_parser_artifacts(channel, official, listed) == {
        "t.py::test_a": "PASSED",
        "[100%]": "PASSED",
        "test_inner.py::test_hello": "PASSED",
    }
