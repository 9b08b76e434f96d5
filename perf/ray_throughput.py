"""Throughput of the ray backend against the local one on the same cores and the same programs.

Both halves run in one invocation on this machine: the local sandbox with N workers, then a Ray
cluster of N one-CPU nodes started here (tests/stages/sandbox/ray_support.py: `ray start --head`
plus
`ray start --address=...`), each node running its own local sandbox with one worker. The
programs are BigCodeBench-Hard's canonical solutions (ground truth) by default. Reported:
samples/s of each (from opening the sandbox to the last verdict, so the warm-up of each is in
it), their ratio, whether every verdict agrees, and what Ray costs here (cluster start time, the
memory of its processes).

    .venv/bin/python perf/ray_throughput.py                 # Hard ground truth, 2 nodes
    .venv/bin/python perf/ray_throughput.py --tasks 13,15,16 --nodes 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from _common import REPO_ROOT, data_dir, machine_facts, ratio, write_result

from passbench.core.records import ExecResult, Program
from passbench.stages.benchmarks import get_benchmark
from passbench.stages.benchmarks.data import DataSettings
from passbench.stages.sandbox import RayConfig, SandboxConfig, open_sandbox
from passbench.stages.sandbox.base import EnvironmentRef, Limits
from passbench.stages.sandbox.remote.agent import RunnerSetup, sandbox_config
from passbench.stages.sandbox.remote.wire import RunRequest

# the test suite's cluster helper: one way of starting (and only ever stopping our own) nodes
sys.path.insert(0, str(REPO_ROOT / "tests" / "sandbox"))
from ray_support import RayCluster, running_cluster


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", help="task numbers or ids, comma-separated (default: Hard)")
    parser.add_argument("--nodes", type=int, default=2, help="Ray nodes of one CPU each")
    parser.add_argument("--address", help="use this running cluster instead of starting one")
    return parser.parse_args()


def programs(spec: str | None) -> list[Program]:
    benchmark = get_benchmark("bigcodebench")
    settings = DataSettings(data_dir=data_dir(), download=False)
    loaded = benchmark.load(subset="full" if spec else "hard", data=settings)
    tasks = loaded.tasks
    if spec:
        wanted = {
            f"BigCodeBench/{p.strip()}" if p.strip().isdigit() else p.strip()
            for p in spec.split(",")
        }
        tasks = tuple(task for task in tasks if task.task_id in wanted)
    return [
        benchmark.program(
            task,
            benchmark.canonical_code(task),
            key=task.task_id,
            timeout_s=benchmark.info.default_timeout_s,
        )
        for task in tasks
    ]


def timed(config: SandboxConfig, backend: str, batch: list[Program]) -> dict[str, Any]:
    started = time.monotonic()
    verdicts: dict[str, ExecResult] = {}
    served: dict[str, int] = {}
    with open_sandbox(config, backend=backend, warn=lambda m: print(f"  [{backend}] {m}")) as box:
        for result in box.run(batch):
            verdicts[result.key] = result
        wall = time.monotonic() - started
        served = dict(getattr(box, "served", {}))
    return {
        "backend": backend,
        "wall_s": round(wall, 2),
        "samples_per_s": round(len(verdicts) / wall, 3),
        "passed": sum(r.status == "pass" for r in verdicts.values()),
        "served_by_node": served,
        # the bound no scheduling beats: the longest program, and the programs' summed time
        "longest_program": max(((r.wall_s, k) for k, r in verdicts.items()), default=(0, "")),
        "programs_wall_sum_s": round(sum(r.wall_s for r in verdicts.values()), 1),
        "verdicts": {
            key: [r.status, r.category.value if r.category else None] for key, r in verdicts.items()
        },
        "wall_s_by_program": {key: round(r.wall_s, 2) for key, r in verdicts.items()},
    }


def cluster_memory_mb(cluster: RayCluster) -> float:
    """Resident memory of every process of the cluster's nodes (their sessions), in MiB."""
    sessions = {node.process.pid for node in cluster.nodes if node.alive}
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) not in sessions:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except (OSError, ProcessLookupError):
            continue
    return round(total / 1024, 1)


def main() -> int:
    options = parse_arguments()
    batch = programs(options.tasks)
    wanted = EnvironmentRef("bigcodebench")
    workers = options.nodes  # the same cores: N local workers, N one-CPU nodes
    # the local sandbox exactly as each node makes its own (environment by name, its NLTK data)
    local_config = sandbox_config(RunRequest(wanted, Limits(), workers, ()), RunnerSetup())
    print(f"{len(batch)} programs; local: {workers} workers")
    local = timed(local_config, "local", batch)
    print(f"  local: {local['wall_s']} s, {local['samples_per_s']} samples/s")
    print(f"  longest program {local['longest_program']}, sum {local['programs_wall_sum_s']} s")
    facts: dict[str, Any] = {}
    if options.address:
        config = SandboxConfig(
            python=local_config.python,
            environment=wanted,
            backend_config=RayConfig(options.address),
        )
        ray = timed(config, "ray", batch)
    else:
        started = time.monotonic()
        with running_cluster(nodes=options.nodes, cpus_per_node=1) as cluster:
            facts["cluster_start_s"] = round(time.monotonic() - started, 1)
            facts["cluster_idle_rss_mb"] = cluster_memory_mb(cluster)
            print(f"  ray cluster of {options.nodes} nodes up in {facts['cluster_start_s']} s")
            config = SandboxConfig(
                python=local_config.python,
                environment=wanted,
                backend_config=RayConfig(cluster.address),
            )
            ray = timed(config, "ray", batch)
            facts["cluster_rss_after_run_mb"] = cluster_memory_mb(cluster)
    print(f"  ray:   {ray['wall_s']} s, {ray['samples_per_s']} samples/s")
    print(f"  longest program {ray['longest_program']}, sum {ray['programs_wall_sum_s']} s")
    disagree = sorted(
        k for k in local["verdicts"] if local["verdicts"][k] != ray["verdicts"].get(k)
    )
    speed = ratio(ray["samples_per_s"], local["samples_per_s"])
    print(
        f"ray / local throughput: {speed}x; verdicts that differ: {len(disagree)} {disagree[:10]}"
    )
    path = write_result(
        "ray_throughput",
        {
            "machine": machine_facts(),
            "programs": len(batch),
            "tasks": options.tasks or "hard",
            "nodes": options.nodes,
            "local": local,
            "ray": ray,
            "ray_over_local": speed,
            "disagreements": disagree,
            "ray_costs": facts,
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
