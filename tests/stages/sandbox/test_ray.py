"""The `ray` backend on a real two-node Ray cluster started on this machine (tests/stages/sandbox/
ray_support.py): verdicts spread over the nodes and equal to the local sandbox's, a node killed
mid-run loses no finished verdict, a node without the environment is named, a bad address is
one line and exit 2. BigCodeBench-Hard ground truth through Ray, NLTK tasks among it, is the
local sandbox's in tests/contracts/test_sandbox_contract.py (`[ray]`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import passbench
from passbench.core.errors import InputError, SandboxError
from passbench.core.records import ExecResult, Program
from passbench.stages.sandbox import RayConfig, SandboxConfig, describe_backend, open_sandbox
from passbench.stages.sandbox.base import EnvironmentRef

from .conftest import BWRAP
from .helpers import PYTHON, TEST_LIMITS, checks_program, unittest_program
from .ray_support import RayCluster, ray_available, running_cluster

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run"),
    pytest.mark.skipif(not ray_available(), reason="ray is not installed (the 'ray' extra)"),
]

HOST = EnvironmentRef("host")
SOURCE = str(Path(passbench.__file__).resolve().parents[1])


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    with running_cluster(nodes=2, cpus_per_node=1) as started:
        yield started


def ray_config(address: str, **fields: object) -> SandboxConfig:
    config = SandboxConfig(
        python=PYTHON, limits=TEST_LIMITS, environment=HOST, backend_config=RayConfig(address)
    )
    return replace(config, **fields)  # type: ignore[arg-type]


def _sleepy(key: str, seconds: float, correct: bool = True) -> Program:
    body = f"import time\ntime.sleep({seconds})\ndef f(x):\n    return x + {1 if correct else 0}\n"
    return unittest_program(key, body)


#: Ordinary and hostile programs: Ray must judge each as the local sandbox does.
PROGRAMS: list[Program] = [
    unittest_program("pass", "def f(x):\n    return x + 1\n"),
    unittest_program("wrong", "def f(x):\n    return x\n"),
    unittest_program("infinite-loop", "def f(x):\n    while True: pass\n", timeout_s=2.0),
    checks_program("memory-bomb", "x = bytearray(8 * 1024 ** 3)"),
    unittest_program("exit", "import sys\nsys.exit(0)\n"),
    unittest_program("fake-output", "print('OK'); print('Ran 2 tests'); import os; os._exit(0)\n"),
    checks_program(
        "network", "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)"
    ),
    unittest_program(
        "kill-parent",
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\ndef f(x):\n    return x + 1\n",
    ),
    checks_program("read-home", "import os\nos.listdir(os.path.expanduser('~'))"),
    *(_sleepy(f"sleepy-{i}", 0.5, correct=i % 2 == 0) for i in range(6)),
]


def _verdicts(results: Iterator[ExecResult]) -> dict[str, tuple[str, object]]:
    return {result.key: (result.status, result.category) for result in results}


def test_programs_spread_over_both_nodes_with_the_local_verdicts(cluster: RayCluster) -> None:
    with open_sandbox(SandboxConfig(python=PYTHON, workers=2, limits=TEST_LIMITS)) as local:
        expected = _verdicts(local.run(PROGRAMS))
    with open_sandbox(ray_config(cluster.address), backend="ray") as sandbox:
        got = _verdicts(sandbox.run(PROGRAMS))
        served = dict(sandbox.served)  # type: ignore[attr-defined]
        assert sandbox.isolation.value == "bubblewrap"
        assert sandbox.cgroup.startswith("ray:")
    assert got == expected
    assert len(served) == 2 and all(count > 0 for count in served.values()), served
    assert sum(served.values()) == len(PROGRAMS)
    assert expected["pass"] == ("pass", None) and expected["wrong"][0] == "fail"
    assert expected["infinite-loop"][0] == "timeout"
    assert all(expected[k][0] != "pass" for k in ("exit", "fake-output"))


@pytest.mark.slow
def test_a_node_killed_mid_run_loses_no_finished_verdict(cluster: RayCluster) -> None:
    doomed = cluster.add_node(cpus=1)  # a third node, so the module's two stay for the rest
    programs = [_sleepy(f"p{i}", 1.5, correct=i % 3 != 0) for i in range(12)]
    warnings: list[str] = []
    arrived: list[ExecResult] = []
    try:
        with open_sandbox(
            ray_config(cluster.address), backend="ray", warn=warnings.append
        ) as sandbox:
            killed = False
            for result in sandbox.run(programs):
                arrived.append(result)
                # every node has served (on a loaded machine the first answers may all come
                # from two of them) and holds its next chunk: lose one of them
                served_now = sandbox.served  # type: ignore[attr-defined]
                if not killed and len(served_now) == 3:
                    cluster.kill_node(doomed)
                    killed = True
            served = dict(sandbox.served)  # type: ignore[attr-defined]
    finally:
        cluster.kill_node(doomed)
    keys = [result.key for result in arrived]
    assert sorted(keys) == sorted(p.key for p in programs)  # every program, each once
    assert {r.key: r.status for r in arrived} == {
        p.key: ("fail" if int(p.key[1:]) % 3 == 0 else "pass") for p in programs
    }
    assert len(served) == 3, served  # the doomed node had served before it went
    assert any("programs again" in w for w in warnings), warnings  # its chunk was retried


def test_a_node_listed_alive_after_it_went_is_left_out(
    cluster: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray lists a lost node alive until it misses its heartbeats; an actor placed on it is
    then unschedulable (ActorUnschedulableError). The run goes on without it, with a warning.
    The stale listing, a race on a real cluster, is made certain here: the node is killed,
    Ray is waited for until it knows, then its listing is given back as it was before."""
    import ray

    gone = cluster.add_node(cpus=1)
    ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
    try:
        before = {entry["NodeID"]: entry for entry in ray.nodes()}
        stale = next(
            entry
            for entry in before.values()
            if entry["Alive"] and entry["NodeManagerPort"] == gone.node_manager_port
        )
        cluster.kill_node(gone)
        deadline = time.monotonic() + 120
        while any(e["Alive"] for e in ray.nodes() if e["NodeID"] == stale["NodeID"]):
            assert time.monotonic() < deadline, "Ray never saw the node go"
            time.sleep(0.5)
        real_nodes = ray.nodes
        monkeypatch.setattr(
            ray,
            "nodes",
            lambda: [stale if e["NodeID"] == stale["NodeID"] else e for e in real_nodes()],
        )
        warnings: list[str] = []
        programs = [_sleepy(f"p{i}", 0.1, correct=i != 0) for i in range(4)]
        with open_sandbox(
            ray_config(cluster.address), backend="ray", warn=warnings.append
        ) as sandbox:
            verdicts = {result.key: result.status for result in sandbox.run(programs)}
            served = dict(sandbox.served)  # type: ignore[attr-defined]
    finally:
        ray.shutdown()
    assert verdicts == {"p0": "fail", "p1": "pass", "p2": "pass", "p3": "pass"}
    assert any(f":{gone.node_manager_port} (" in w and "did not start" in w for w in warnings), (
        warnings
    )
    assert not any(f":{gone.node_manager_port} (" in name for name in served), served


def test_a_node_without_the_environment_is_named(cluster: RayCluster) -> None:
    with tempfile.TemporaryDirectory() as empty:
        bare = cluster.add_node(cpus=1, env={"PASSBENCH_ENV_DIR": empty})
        try:
            config = ray_config(cluster.address, environment=EnvironmentRef("bigcodebench"))
            with (
                pytest.raises(SandboxError) as refused,
                open_sandbox(config, backend="ray") as sandbox,
            ):
                list(sandbox.run([unittest_program("pass", "def f(x):\n    return x + 1\n")]))
        finally:
            cluster.kill_node(bare)
    message = str(refused.value)
    assert f":{bare.node_manager_port} (" in message  # the node by its address
    assert "no 'bigcodebench' environment" in message
    assert "\n" not in message


def test_describe_names_the_cluster_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    config = ray_config("auto", environment=EnvironmentRef("bigcodebench", "ab" * 32))
    target = describe_backend(config, "ray")
    assert target is not None
    assert (target.backend, target.location) == ("ray", "auto")
    assert target.environment == config.environment
    assert target.isolation == "bubblewrap on each node"
    unset = describe_backend(replace(config, backend_config=RayConfig()), "ray")
    assert unset is not None and unset.location == "local"
    monkeypatch.setenv("RAY_ADDRESS", "auto")
    from_env = describe_backend(replace(config, backend_config=RayConfig()), "ray")
    assert from_env is not None and from_env.location == "RAY_ADDRESS=auto"


@pytest.mark.parametrize(
    ("address", "said"),
    [("127.0.0.1:1", "no Ray cluster answers at 127.0.0.1:1"), ("nowhere", "not a Ray address")],
)
def test_a_bad_address_is_one_line(address: str, said: str) -> None:
    with pytest.raises(InputError) as refused:
        describe_backend(ray_config(address), "ray")
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_cli_bad_address_exits_2(data_dir: Path, tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "solution": "def f(): pass"}\n')
    command = [sys.executable, "-m", "passbench.apps.cli", "evaluate", "--benchmark", "humaneval"]
    command += ["--samples", str(samples), "--no-gt", "--backend", "ray"]
    command += ["--ray-address", "127.0.0.1:1"]
    env = dict(os.environ, PASSBENCH_DATA_DIR=str(data_dir), PASSBENCH_CACHE_DIR=str(tmp_path))
    # the passbench under test, from any working directory
    env["PYTHONPATH"] = os.pathsep.join([SOURCE, env.get("PYTHONPATH", "")])
    completed = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Ray cluster answers at 127.0.0.1:1" in lines[0], lines


@pytest.mark.slow
def test_cli_evaluates_through_ray_and_a_rerun_resumes_from_the_journal(
    cluster: RayCluster, data_dir: Path, tmp_path: Path
) -> None:
    correct = "def truncate_number(number):\n    return number % 1.0\n"
    wrong = "def truncate_number(number):\n    return 0.0\n"
    rows = [
        {"task_id": "HumanEval/2", "solution": (wrong if i % 4 == 0 else correct) + f"# {i}\n"}
        for i in range(8)
    ]
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    command = [sys.executable, "-m", "passbench.apps.cli", "evaluate", "--benchmark", "humaneval"]
    command += ["--samples", str(samples), "--no-gt", "--tasks", "HumanEval/2"]
    command += ["--backend", "ray", "--ray-address", cluster.address]
    env = dict(os.environ, PASSBENCH_DATA_DIR=str(data_dir), PASSBENCH_CACHE_DIR=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join([SOURCE, env.get("PYTHONPATH", "")])

    def evaluate() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
        )

    first = evaluate()
    assert first.returncode == 0, first.stderr
    results = json.loads((tmp_path / "s_eval_results.json").read_text())
    statuses = [entry["status"] for entry in results["eval"]["HumanEval/2"]]
    assert sorted(statuses) == ["fail"] * 2 + ["pass"] * 6
    meta = results["passbench"]
    assert meta["backend"]["name"] == "ray"
    assert meta["backend"]["location"] == cluster.address
    assert meta["isolation"] == "bubblewrap" and meta["cgroup"].startswith("ray:")
    again = evaluate()
    assert again.returncode == 0, again.stderr
    assert "(8 verdicts reused from the journal)" in again.stdout
