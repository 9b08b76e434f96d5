"""Build and run times of MultiPL-E programs in the local bubblewrap sandbox, per language.

    PASSBENCH_DATA_DIR=../shared/datasets python perf/multiple_times.py [--repeat 3]

Runs the known-good completion of HumanEval_53_add of each language (the same as
tests/stages/benchmarks/test_multiple.py) one program at a time (one worker), `--repeat` times, and
prints the median build and run seconds MultiPL-E's status reports, and the wall time per
program as the host sees it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.multiple import LANGUAGES, MultiPLE
from passbench.stages.sandbox import Limits, SandboxConfig, open_sandbox

GOOD = {
    "js": "  return x + y;\n}\n",
    "cpp": "    return x + y;\n",
    "java": "        return x + y;\n",
    "rs": "    x + y\n",
    "lua": "    return x + y\nend\n",
    "go": "    return x + y\n}\n",
    "ts": "  return x + y;\n}\n",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = DataSettings(data_dir=Path(os.environ.get("PASSBENCH_DATA_DIR", "../shared/datasets")))
    config = SandboxConfig(python=Path(sys.executable), workers=1, limits=Limits())
    with open_sandbox(config) as sandbox:
        for key in LANGUAGES:
            benchmark = get_benchmark(f"multipl-e-{key}")
            assert isinstance(benchmark, MultiPLE)
            task = benchmark.load(data=data).get("HumanEval_53_add")
            code = benchmark.solution_from_completion(task, GOOD[key])
            builds, runs, walls = [], [], []
            for index in range(args.repeat):
                program = benchmark.program(
                    task, code, key=f"{key}-{index}", timeout_s=benchmark.info.default_timeout_s
                )
                (result,) = list(sandbox.run([program]))
                assert result.status == "pass" and result.outputs is not None, result.reason
                builds.append(float(result.outputs["build_s"]))
                runs.append(float(result.outputs["run_s"]))
                walls.append(result.wall_s)
            print(
                f"{key:5} build {statistics.median(builds):6.2f}s  run "
                f"{statistics.median(runs):6.3f}s  wall {statistics.median(walls):6.2f}s "
                f"(median of {args.repeat})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
