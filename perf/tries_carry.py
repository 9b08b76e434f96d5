"""What a second try costs: `passbench run --tries 2` on HumanEval against a loopback server
whose model answers every task with its canonical solution, except one task in four, which it
answers wrongly until it has seen its test output.

Try 1 runs alone first (`--tries 1`), then the same command with `--tries 2` in the same folder:
try 1 resumes from its files and journal, so the second command's time is what try 2 adds. It
should ask and run only the failing quarter: the passing samples and their verdicts are carried.

    .venv/bin/python perf/tries_carry.py                 # all 164 tasks
    .venv/bin/python perf/tries_carry.py --tasks 40
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.stages.providers.servers.base import Recorded, Reply
from tests.stages.providers.servers.canonical_fake import CanonicalChatServer

from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.prompts import build_prompt

REPO = Path(__file__).resolve().parent.parent


class SlowLearner(CanonicalChatServer):
    """Canonical answers, but a wrong one (the entry point returning None) to every fourth
    task's first request; a follow-up gets the canonical answer."""

    def __init__(self, tasks: list[Task]) -> None:
        super().__init__(tasks, get_benchmark("humaneval"))
        wrong = {task.task_id: task.entry_point for task in tasks[1::4]}
        self.wrong = {
            build_prompt(task, "complete", chat=True, prefill=False, chat_template=False).text: (
                f"```python\ndef {wrong[task.task_id]}(*args):\n    return None\n```\n"
            )
            for task in tasks
            if task.task_id in wrong
        }

    def answer(self, request: Recorded) -> Reply:
        messages = request.body["messages"]
        first = messages[0]["content"]
        body = {**request.body, "messages": messages[:1]}  # a follow-up: as the first prompt
        reply = super().answer(Recorded(request.method, request.path, request.headers, body))
        if len(messages) == 1 and first in self.wrong:
            for choice in reply.body["choices"]:
                choice["message"]["content"] = self.wrong[first]
        return reply


def run(server: SlowLearner, out: Path, tries: int, count: int, data_dir: Path) -> float:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "PASSBENCH_DATA_DIR": str(data_dir),
    }
    command = [
        sys.executable, "-m", "passbench.apps.cli", "run", "-m", "slow-learner", "-p", "openai",
        "--base-url", f"{server.url}/v1", "-b", "humaneval", "--id-range", f"0-{count}",
        "--output-dir", str(out), "--no-cache", "--tries", str(tries),
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ["PASSBENCH_DATA_DIR"]))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = DataSettings(data_dir=args.data_dir, cache_dir=Path(folder) / "c", download=False)
        tasks = list(get_benchmark("humaneval").load(None, "full", data=data))[: args.tasks]
        server = SlowLearner(tasks)
        try:
            out = Path(folder) / "out"
            first = run(server, out, 1, args.tasks, args.data_dir)
            asked_first = len(server.requests)
            second = run(server, out, 2, args.tasks, args.data_dir)
            asked_second = len(server.requests) - asked_first
        finally:
            server.close()
        stem = "slow-learner--main--humaneval-complete--openai-0-1"
        scores = json.loads((out / f"{stem}_try2-sanitized_calibrated_pass_at_k.json").read_text())
    print(f"{args.tasks} HumanEval tasks, {len(server.wrong)} answered wrongly at first")
    print(f"try 1 alone:        {first:6.1f} s, {asked_first} requests")
    print(f"adding try 2:       {second:6.1f} s, {asked_second} requests")
    print(f"pass_rate_1 {scores['pass_rate_1']:.3f}, pass_rate_2 {scores['pass_rate_2']:.3f}")


if __name__ == "__main__":
    main()
