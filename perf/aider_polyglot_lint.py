"""Aider's lint step over every exercise of the polyglot benchmark: each reference solution and
each stub, linted as an answer that edited all of its files would have them linted
(`benchmarks/aider_polyglot/lint.py`), with the time each took.

    PASSBENCH_DATA_DIR=../shared/datasets python perf/aider_polyglot_lint.py [--show]

Per language: how many references and stubs draw a lint reflection (Aider would send one back
for them too: the linters and their versions are Aider's), which ones, and the mean and slowest
time to lint one exercise's files. `--show` prints each message.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.aider_polyglot.lint import lint_edited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every lint message")
    show = parser.parse_args().show
    data = DataSettings(data_dir=Path(os.environ.get("PASSBENCH_DATA_DIR", ".")), download=False)
    tasks = get_benchmark("aider-polyglot").load(data=data).tasks
    times: dict[str, list[float]] = {}
    flagged: dict[str, list[str]] = {}
    for task in tasks:
        language, exercise = str(task.metadata["language"]), str(task.metadata["exercise"])
        shown = task.metadata["shown"]
        reference = json.loads(task.canonical_solution)["files"]
        for kind, source in (("reference", reference), ("stub", task.metadata["stubs"])):
            files = {name: source[path] for name, path in shown.items()}
            start = time.perf_counter()
            message = lint_edited(files, list(files), exercise)
            if kind == "reference":
                times.setdefault(language, []).append(time.perf_counter() - start)
            if message:
                names = [n for n in files if f"\n{n}:\n" in message]
                flagged.setdefault(language, []).append(f"{kind} {exercise} ({', '.join(names)})")
                if show:
                    print(f"==== {language} {kind} {exercise}{message}")
    print("language   exercises  references linted with errors  stubs  mean s  slowest s")
    for language, spent in times.items():
        found = flagged.get(language, [])
        references = sum(item.startswith("reference") for item in found)
        stubs = len(found) - references
        print(
            f"{language:<10} {len(spent):>9}  {references:>29}  {stubs:>5}  "
            f"{sum(spent) / len(spent):>6.3f}  {max(spent):>9.3f}"
        )
    for language, found in flagged.items():
        for item in found:
            print(f"  {language}: {item}")


if __name__ == "__main__":
    main()
