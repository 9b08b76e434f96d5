#!/usr/bin/env bash
# The test command: lint, format, types, then the test suite (run after scripts/setup.sh --dev).
# The suite fails when the sandbox, hostile-sample or real-environment tests were skipped
# (tests/conftest.py); PASSBENCH_TESTS_ALLOW_ESSENTIAL_SKIPS=1 accepts that on a machine that
# cannot run them.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check src tests perf
.venv/bin/ruff format --check src tests perf
.venv/bin/mypy src
.venv/bin/lint-imports
# build/junit.xml: where the time went (scripts/test_durations.py build/junit.xml)
# The modules spread over two pytest-xdist workers (one per core; the sandbox tests start their
# own workers, so more would only queue), the slowest files first (tests/ordering.py); `-n 0`
# (or any -n/--dist of the caller's) overrides.
spread=(-n 2 --dist loadfile --no-loadscope-reorder)
for argument in "$@"; do
    case "$argument" in -n | -n* | --numprocesses* | --dist*) spread=() ;; esac
done
.venv/bin/python -m pytest --junitxml=build/junit.xml "${spread[@]}" "$@"
