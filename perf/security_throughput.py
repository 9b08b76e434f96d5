"""How many samples a second does `passbench security` scan, and what does it find?

Writes BigCodeBench's 1,140 canonical solutions (v0.1.4, from PASSBENCH_DATA_DIR) as a samples
file, then runs `passbench security` on it as a user would (a fresh process, the `security`
tool environment: bandit, semgrep, CyberSecEval's rules), timed from launch to exit:

  - the whole set at each `--batch-size` (default 200, 1000 and 1140: one tool invocation per
    batch)
  - `--per-sample N`: the first N samples with `--batch-size 1`, i.e. one bandit + one semgrep
    + one regex process per sample, the cost that batching saves

and reports samples/s, CPU seconds, the other load on the machine, and the findings on the
canonical solutions (insecure / vulnerable rates, the top CWEs and rules).
Usage: python perf/security_throughput.py [--batch-size 1000 --batch-size 1140]
       [--per-sample 20] [--limit N] [--env-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from _common import data_dir, machine_facts, run_dir, run_timed, write_jsonl, write_result


def canonical_samples(limit: int | None) -> list[dict[str, str]]:
    from passbench.stages.benchmarks import DataSettings
    from passbench.stages.results.taskinfo import load_catalog

    catalog = load_catalog("bigcodebench", "v0.1.4", DataSettings(data_dir=data_dir()))
    if not catalog.canonical:
        raise SystemExit(f"no BigCodeBench data: {catalog.note}")
    rows = [{"task_id": task, "solution": code} for task, code in catalog.canonical.items()]
    return rows[:limit] if limit else rows


def scan(folder: Path, name: str, samples: Path, batch: int, env_dir: str | None) -> dict[str, Any]:
    output = folder / f"{name}_security.json"
    argv = [sys.executable, "-m", "passbench.apps.cli", "security", str(samples), "-o", str(output)]
    argv += ["--batch-size", str(batch)]
    if env_dir:
        argv += ["--env-dir", env_dir]
    run = run_timed(name, argv, log_path=folder / f"{name}.log")
    if run.returncode != 0:
        raise SystemExit(f"{name} failed (exit {run.returncode}); see {run.log_path}")
    document = json.loads(output.read_text(encoding="utf-8"))
    count = len(document["samples"])
    summary = document["summary"]
    return {
        **run.as_dict(),
        "samples": count,
        "batch_size": batch,
        "samples_per_s": round(count / run.wall_s, 2),
        "cpu_s_per_sample": round(run.cpu_s / count, 4),
        "tools": document["tools"],
        "ruleset_sha256": document["ruleset_sha256"],
        "insecure": summary["insecure"],
        "vulnerable": summary["vulnerable"],
        "findings": summary["findings"],
        "top_cwe": dict(list(summary["by_cwe"].items())[:8]),
        "top_rules": dict(list(summary["by_rule"].items())[:8]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-size", type=int, action="append")
    parser.add_argument("--per-sample", type=int, default=20)
    parser.add_argument("--limit", type=int, help="only the first N tasks (a smoke test)")
    parser.add_argument("--env-dir", default=os.environ.get("PASSBENCH_SECURITY_ENV_DIR"))
    parser.add_argument("--name", default="security_throughput")
    args = parser.parse_args()
    folder = run_dir("security")
    rows = canonical_samples(args.limit)
    samples = folder / "bigcodebench-canonical.jsonl"
    write_jsonl(samples, rows)
    runs = [
        scan(folder, f"batch-{batch}", samples, batch, args.env_dir)
        for batch in args.batch_size or [200, 1000, len(rows)]
    ]
    if args.per_sample:
        few = folder / "first.jsonl"
        write_jsonl(few, rows[: args.per_sample])
        runs.append(scan(folder, "per-sample", few, 1, args.env_dir))
    for run in runs:
        print(
            f"{run['name']:>12}: {run['samples']} samples in {run['wall_s']:.1f} s = "
            f"{run['samples_per_s']:.1f} samples/s ({run['cpu_s_per_sample']:.3f} CPU s/sample, "
            f"other load {run['other_load_cores']:.1f} cores); insecure "
            f"{run['insecure']['count']}, vulnerable {run['vulnerable']['count']}"
        )
    path = write_result(args.name, {"machine": machine_facts(), "runs": runs})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
