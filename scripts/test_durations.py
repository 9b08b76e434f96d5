"""Where the test suite's time goes: seconds per folder and per file from a pytest JUnit XML.

    bash scripts/check.sh            # writes build/junit.xml
    .venv/bin/python scripts/test_durations.py build/junit.xml [--top 25] \
        [--write tests/durations.json]

`--write` records the seconds per file for tests/ordering.py, which sends the slowest files to
pytest-xdist's workers first; refresh it when the suite's slow files change.

Times are pytest's per-test times (setup + call + teardown, as JUnit records them), so they add
up to the session's wall time minus collection and start-up. A module-scoped fixture's setup is
counted in the first test that uses it.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import PurePosixPath


def _test_file(case: ElementTree.Element) -> str:
    """tests/stages/sandbox/test_x.py from a testcase's classname (tests.stages.sandbox.test_x
    or tests.stages.sandbox.test_x.TestClass)."""
    parts = (case.get("classname") or "").split(".")
    while parts and not parts[-1].startswith("test_") and len(parts) > 1:
        parts.pop()  # a test class
    return "/".join(parts) + ".py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit_xml")
    parser.add_argument("--top", type=int, default=25, help="how many files to list")
    parser.add_argument("--write", default=None, help="also write the seconds per file (JSON)")
    args = parser.parse_args(argv)
    root = ElementTree.parse(args.junit_xml).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    by_file: dict[str, float] = defaultdict(float)
    by_folder: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for suite in suites:
        for case in suite.iter("testcase"):
            seconds = float(case.get("time") or 0.0)
            path = _test_file(case)
            by_file[path] += seconds
            count[path] += 1
            by_folder[str(PurePosixPath(path).parent)] += seconds
    total = sum(by_file.values())
    wall = sum(float(suite.get("time") or 0.0) for suite in suites)
    print(f"tests: {sum(count.values())}, test time {total:.0f} s, session {wall:.0f} s")
    print("\nper folder")
    for folder, seconds in sorted(by_folder.items(), key=lambda item: -item[1]):
        print(f"  {seconds:8.1f} s  {folder}")
    print(f"\nslowest {args.top} files")
    for path, seconds in sorted(by_file.items(), key=lambda item: -item[1])[: args.top]:
        print(f"  {seconds:8.1f} s  {count[path]:4d} tests  {path}")
    if args.write:
        slowest = sorted(by_file.items(), key=lambda item: (-item[1], item[0]))
        rounded = {path: round(seconds, 1) for path, seconds in slowest}
        with open(args.write, "w", encoding="utf-8") as out:
            out.write(json.dumps(rounded, indent=1) + "\n")
        print(f"\nwritten: {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
