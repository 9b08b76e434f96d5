"""The official client against `passbench serve`: same pass@1 as a local passbench run?

    python perf/serve_official.py [--client-venv ../baseline/official-client]
        [--split complete] [--subset hard] [--tasks 0,1,...]

Starts `passbench serve` on a free loopback port, runs the official command
`bigcodebench.evaluate --execution gradio --gradio_endpoint http://127.0.0.1:PORT/ ...`
(bigcodebench 0.2.5 in its own venv: perf/setup_official_client.sh) on a sample file,
then `passbench evaluate` locally on the same file, and compares pass@1, ground-truth pass rate,
failed tasks and every sample's status. The samples: each task's canonical solution and a
solution that returns None (which fails every test that checks a result). Writes
perf/results/serve-official.json.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from _common import REPO_ROOT, data_dir, load_dataset, run_dir, write_jsonl, write_result
from _passbench import default_command


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_healthy(url: str, server: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"passbench serve exited with {server.returncode}")
        try:
            if httpx.get(url + "health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("passbench serve did not answer /health")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--client-venv", type=Path, default=REPO_ROOT.parent / "baseline" / "official-client"
    )
    parser.add_argument("--split", default="complete", choices=("complete", "instruct"))
    parser.add_argument("--subset", default="hard", choices=("full", "hard"))
    parser.add_argument("--tasks", help="only these task numbers (comma-separated)")
    args = parser.parse_args(argv)
    official = args.client_venv / "bin" / "bigcodebench.evaluate"
    if not official.exists():
        raise SystemExit(f"no official client at {official}: run setup_official_client.sh")

    tasks = load_dataset()
    if args.subset == "hard":
        hard = json.loads((data_dir() / "bigcodebench" / "hard-task-ids.json").read_text())
        ids = [task_id for task_id in tasks if task_id in set(hard["task_ids"])]
    else:
        ids = list(tasks)
    if args.tasks:
        wanted = {f"BigCodeBench/{n.strip()}" for n in args.tasks.split(",")}
        ids = [task_id for task_id in ids if task_id in wanted]
    folder = run_dir("serve-official")
    rows = []
    for task_id in ids:
        task = tasks[task_id]
        canonical = task["complete_prompt"] + "\n" + task["canonical_solution"]
        rows.append({"task_id": task_id, "solution": canonical})
        rows.append({"task_id": task_id, "solution": "def task_func(*a, **k):\n    return None\n"})
    name = f"canonical-and-none--bigcodebench-{args.split}--serve-0-1-sanitized_calibrated.jsonl"
    for side in ("official", "local"):
        (folder / side).mkdir()
        write_jsonl(folder / side / name, rows)

    environ = dict(os.environ, PASSBENCH_DATA_DIR=str(data_dir()))
    nltk = (
        ["--nltk-data", str(data_dir() / "nltk_data")]
        if (data_dir() / "nltk_data").is_dir()
        else []
    )
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    log = (folder / "serve.log").open("wb")
    server = subprocess.Popen(
        [
            *default_command(),
            "serve",
            "--port",
            str(port),
            "--jobs-dir",
            str(folder / "jobs"),
            *nltk,
        ],
        env=environ,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=REPO_ROOT,
    )
    try:
        _wait_healthy(url, server)
        selective = ",".join(task_id.split("/")[1] for task_id in ids) if args.tasks else ""
        started = time.monotonic()
        subprocess.run(
            [
                str(official),
                "--execution",
                "gradio",
                "--gradio_endpoint",
                url,
                "--split",
                args.split,
                "--subset",
                args.subset,
                "--samples",
                str(folder / "official" / name),
                "--pass_k",
                "1",
                *(["--selective_evaluate", selective] if selective else []),
            ],
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=sys.stdout,
            stderr=sys.stderr,
        )
        official_s = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(30)
        log.close()

    started = time.monotonic()
    subprocess.run(
        [
            *default_command(),
            "evaluate",
            "--benchmark",
            "bigcodebench",
            "--split",
            args.split,
            "--subset",
            args.subset,
            "--pass-k",
            "1",
            "--samples",
            str(folder / "local" / name),
            *nltk,
            *(["--tasks", ",".join(ids)] if args.tasks else []),
        ],
        check=True,
        env=environ,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
    )
    local_s = time.monotonic() - started

    stem = name.removesuffix(".jsonl")
    remote_k = json.loads((folder / "official" / f"{stem}_pass_at_k.json").read_text())
    local_k = json.loads((folder / "local" / f"{stem}_pass_at_k.json").read_text())
    remote_eval = json.loads((folder / "official" / f"{stem}_eval_results.json").read_text())
    local_eval = json.loads((folder / "local" / f"{stem}_eval_results.json").read_text())

    def statuses(document: dict[str, Any]) -> dict[str, list[str]]:
        return {t: [e["status"] for e in es] for t, es in document["eval"].items()}

    differing = sorted(
        task
        for task in set(statuses(remote_eval)) | set(statuses(local_eval))
        if statuses(remote_eval).get(task) != statuses(local_eval).get(task)
    )
    report = {
        "split": args.split,
        "subset": args.subset,
        "tasks": len(ids),
        "samples": len(rows),
        "official_client_via_serve": {
            "pass@1": remote_k.get("pass@1"),
            "gt_pass_rate": remote_k.get("gt_pass_rate"),
            "failed_tasks": remote_k.get("failed_tasks"),
            "wall_s": round(official_s, 1),
        },
        "passbench_local": {
            "pass@1": local_k.get("pass@1"),
            "gt_pass_rate": local_k.get("gt_pass_rate"),
            "failed_tasks": local_k.get("failed_tasks"),
            "wall_s": round(local_s, 1),
        },
        "same_pass_at_1": remote_k.get("pass@1") == local_k.get("pass@1"),
        "tasks_with_differing_statuses": differing,
    }
    path = write_result("serve-official", report)
    print(json.dumps(report, indent=1))
    print(f"report: {path}")
    return 0 if report["same_pass_at_1"] and not differing else 1


if __name__ == "__main__":
    raise SystemExit(main())
