"""BigCodeBench: loading the real data, the official joins, and programs that really run."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from passbench.core.errors import DatasetError, UnknownNameError
from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.bigcodebench import BigCodeBench, parse_tasks
from passbench.stages.benchmarks.preload import FORK_SAFE_HEAVY

# Runs a "unittest"-style Program the way the official evaluator does (code + test in one
# module, then the TestCases class); prints "run failures errors".
UNITTEST_RUNNER = """
import sys, unittest
namespace = {"__name__": "__test__"}
exec(compile(sys.stdin.read(), "__test__.py", "exec"), namespace)
result = unittest.TestResult()
unittest.TestLoader().loadTestsFromTestCase(namespace["TestCases"]).run(result)
print(result.testsRun, len(result.failures), len(result.errors))
"""

# Quick tasks whose code and tests use the standard library only.
STDLIB_TASKS = ("BigCodeBench/1", "BigCodeBench/4", "BigCodeBench/7", "BigCodeBench/25")


def run_unittest_program(source: str, cwd: Path) -> tuple[int, int, int]:
    done = subprocess.run(
        [sys.executable, "-c", UNITTEST_RUNNER],
        input=source,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run, failures, errors = (int(n) for n in done.stdout.split())
    return run, failures, errors


@pytest.fixture
def bench() -> BigCodeBench:
    return BigCodeBench()


def test_full_and_hard(bench: BigCodeBench, offline: DataSettings, data_dir: Path) -> None:
    full = bench.load(data=offline)
    assert (full.version, full.subset, len(full)) == ("v0.1.4", "full", 1140)
    assert len({task.task_id for task in full}) == 1140
    hard = bench.load("v0.1.4", "hard", data=offline)
    assert len(hard) == 148
    assert hard.files[1].path == data_dir / "bigcodebench" / "hard-task-ids.json"
    ids = json.loads((data_dir / "bigcodebench" / "hard-task-ids.json").read_text())["task_ids"]
    assert {task.task_id for task in hard} == set(ids)
    assert all(task in full.tasks for task in hard)
    assert hard.all_tasks == full.tasks == full.all_tasks


def test_fields(bench: BigCodeBench, offline: DataSettings) -> None:
    task = bench.load(data=offline).get("BigCodeBench/0")
    # libs is the text of a Python list in the raw data
    assert task.libs == ("random", "itertools")
    assert task.entry_point == "task_func"
    assert task.prompts["complete"].startswith("import itertools\nfrom random import shuffle\n")
    assert task.prompts["instruct"].startswith("Calculates the average of the sums")
    assert task.code_prompt.endswith("def task_func(numbers=list(range(1, 3))):\n")
    assert "class TestCases(unittest.TestCase)" in task.test
    assert json.loads(task.metadata["doc_struct"])["description"]


def test_v015_adds_nltk_downloads(bench: BigCodeBench, offline: DataSettings) -> None:
    old = {task.task_id: task for task in bench.load("v0.1.4", data=offline)}
    new = bench.load("v0.1.5", data=offline)
    changed = [task for task in new if task != old[task.task_id]]
    assert len(changed) == 9
    assert all("nltk.download" in bench.canonical_code(task) for task in changed)


def test_official_joins(bench: BigCodeBench, offline: DataSettings) -> None:
    task = bench.load(data=offline).get("BigCodeBench/13")
    complete, canonical = task.prompts["complete"], task.canonical_solution
    assert bench.canonical_code(task) == complete + "\n" + canonical
    assert bench.solution_from_completion(task, "    return 1\n") == complete + "    return 1\n"
    assert bench.calibrated_code(task, "S") == task.code_prompt + "\n    pass\nS"
    program = bench.program(task, "CODE", key="BigCodeBench/13#0", timeout_s=12.5)
    assert program.source == "CODE\n" + task.test
    assert (program.style, program.test_class) == ("unittest", "TestCases")
    assert (program.key, program.task_id, program.timeout_s) == (
        "BigCodeBench/13#0",
        task.task_id,
        12.5,
    )
    assert program.expected_duration_s is None


def test_programs_run(bench: BigCodeBench, offline: DataSettings, tmp_path: Path) -> None:
    loaded = bench.load(data=offline)
    for task_id in STDLIB_TASKS:
        task = loaded.get(task_id)
        canonical = bench.canonical_code(task)
        for code in (
            canonical,
            bench.calibrated_code(task, canonical),
            bench.solution_from_completion(task, task.canonical_solution),
        ):
            run, failures, errors = run_unittest_program(
                bench.program(task, code, key=task_id, timeout_s=30).source, tmp_path
            )
            assert run > 0 and failures == errors == 0, task_id
        wrong = task.code_prompt + "    return None\n"
        run, failures, errors = run_unittest_program(
            bench.program(task, wrong, key=task_id, timeout_s=30).source, tmp_path
        )
        assert failures + errors > 0, task_id


def test_preload(bench: BigCodeBench, offline: DataSettings) -> None:
    """What a program asks its warm worker to import (`Program.preload`, from the task's
    libs): the heavy fork-safe libraries only, sorted."""
    loaded = bench.load(data=offline)
    preloads = [bench.program(task, "", key="k", timeout_s=1).preload for task in loaded]
    assert all(list(preload) == sorted(preload) for preload in preloads)
    modules = {module for preload in preloads for module in preload}
    assert {"numpy", "pandas", "matplotlib.pyplot", "sklearn", "scipy"} <= modules
    tops = {module.split(".")[0] for module in modules}
    assert tops <= FORK_SAFE_HEAVY
    assert not tops & {"tensorflow", "keras", "torch", "os", "random"}
    stdlib_only = loaded.get("BigCodeBench/1")
    assert bench.program(stdlib_only, "", key="k", timeout_s=1).preload == ()
    pandas_task = next(task for task in loaded if task.libs == ("pandas", "matplotlib"))
    assert bench.program(pandas_task, "", key="k", timeout_s=1).preload == (
        "matplotlib",
        "matplotlib.pyplot",
        "pandas",
    )


def _write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))
    return path


def _records(data_dir: Path, count: int) -> list[dict[str, object]]:
    lines = gzip.decompress((data_dir / "bigcodebench/BigCodeBench-v0.1.4.jsonl.gz").read_bytes())
    return [json.loads(line) for line in lines.splitlines()[:count]]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda r: r.pop("test"), r":3: field 'test': missing"),
        (lambda r: r.update(libs="pandas"), r":3: field 'libs': not a list literal"),
        (lambda r: r.update(libs=[1, 2]), r":3: field 'libs': expected a list of strings"),
        (lambda r: r.update(entry_point=7), r":3: field 'entry_point': expected a string"),
        (lambda r: r.update(task_id="BigCodeBench/0"), r":3: field 'task_id': .* line 1"),
    ],
)
def test_corrupt_records_name_file_line_field(
    data_dir: Path, tmp_path: Path, damage: object, message: str
) -> None:
    records = _records(data_dir, 4)
    damage(records[2])  # type: ignore[operator]
    path = _write_jsonl(tmp_path / "bad.jsonl.gz", records)
    with pytest.raises(DatasetError, match="bad.jsonl.gz" + message):
        parse_tasks(path)


def test_corrupt_files(tmp_path: Path) -> None:
    not_json = tmp_path / "a.jsonl"
    not_json.write_text("\n\n{oops\n")  # blank lines count
    with pytest.raises(DatasetError, match=r"a.jsonl:3: not valid JSON"):
        parse_tasks(not_json)
    garbage = tmp_path / "b.jsonl.gz"
    garbage.write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(DatasetError, match=r"b\.jsonl\.gz: cannot read"):
        parse_tasks(garbage)
    empty = tmp_path / "c.jsonl"
    empty.write_text("\n")
    with pytest.raises(DatasetError, match="no tasks"):
        parse_tasks(empty)


def test_explicit_file_and_hard_subset(
    bench: BigCodeBench, offline: DataSettings, data_dir: Path, tmp_path: Path
) -> None:
    path = _write_jsonl(tmp_path / "first20.jsonl.gz", _records(data_dir, 20))
    settings = DataSettings(dataset_path=path, data_dir=data_dir, download=False)
    small = bench.load(data=settings)
    assert len(small) == 20 and small.source.source == "file"
    # the hard subset needs every hard task; a partial file says which are missing
    with pytest.raises(DatasetError, match=r"first20.jsonl.gz: lacks 14\d task\(s\) of the hard"):
        bench.load(subset="hard", data=settings)


def test_hard_ids_file_is_checked(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "bigcodebench").mkdir()
    (tmp_path / "bigcodebench/BigCodeBench-v0.1.4.jsonl.gz").symlink_to(
        data_dir / "bigcodebench/BigCodeBench-v0.1.4.jsonl.gz"
    )
    ids = tmp_path / "bigcodebench/hard-task-ids.json"
    ids.write_text(json.dumps({"count": 3, "task_ids": ["BigCodeBench/13"]}))
    settings = DataSettings(data_dir=tmp_path, cache_dir=tmp_path / "cache", download=False)
    with pytest.raises(DatasetError, match="field 'count' is 3, but 1 ids"):
        get_benchmark("bigcodebench").load(subset="hard", data=settings)
    ids.write_text(json.dumps(["BigCodeBench/13", "BigCodeBench/15"]))
    loaded = get_benchmark("bigcodebench").load(subset="hard", data=settings)
    assert [task.task_id for task in loaded] == ["BigCodeBench/13", "BigCodeBench/15"]


def test_task_lookup(bench: BigCodeBench, offline: DataSettings) -> None:
    loaded = bench.load(data=offline)
    assert isinstance(loaded.get("BigCodeBench/1139"), Task)
    with pytest.raises(UnknownNameError, match=r"no task 'BigCodeBench/1140'.*1140 tasks"):
        loaded.get("BigCodeBench/1140")
