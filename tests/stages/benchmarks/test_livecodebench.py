"""LiveCodeBench: the hub loader (through a loopback HTTP server), the restricted unpickler,
prompts and extraction, and LiveCodeBench's grading through the real sandbox (bubblewrap) on
problems written here in the hub's format, both styles, every error code."""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import pickle
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli
from passbench.apps.samplerows import sanitized_row
from passbench.core.errors import DatasetError, InputError
from passbench.core.settings import Paths
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.livecodebench.benchmark import (
    HUB,
    RELEASE_FILES,
    LiveCodeBench,
    decode_private_tests,
    encode_private_tests,
    extract_code,
    make_function,
)
from passbench.stages.benchmarks.livecodebench.eval_all import (
    ROW_KEYS,
    read_eval_all,
    write_eval_all,
)
from passbench.stages.benchmarks.livecodebench.grade import compare_stdout, truncatefn
from passbench.stages.benchmarks.selection import DateWindow, select_tasks
from passbench.stages.benchmarks.windows import window_score
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.prompts import build_prompt, stop_sequences
from passbench.stages.results import load_results

# -- problems in the hub's format ---------------------------------------------------------------


def row(
    question_id: str,
    date: str,
    public: list[dict[str, str]],
    private: list[dict[str, str]],
    *,
    func_name: str | None = None,
    starter_code: str = "",
    difficulty: str = "easy",
    platform: str = "atcoder",
) -> dict[str, Any]:
    """One row as code_generation_lite stores it (private tests base64-zlib-pickled)."""
    return {
        "question_title": f"Problem {question_id}",
        "question_content": f"Solve {question_id}.",
        "platform": platform,
        "question_id": question_id,
        "contest_id": question_id.split("_")[0],
        "contest_date": f"{date}T00:00:00",
        "starter_code": starter_code,
        "difficulty": difficulty,
        "public_test_cases": json.dumps(public),
        "private_test_cases": encode_private_tests(private),
        "metadata": json.dumps({"func_name": func_name} if func_name else {}),
    }


def stdin_test(given: str, expected: str) -> dict[str, str]:
    return {"input": given, "output": expected, "testtype": "stdin"}


def call_test(given: str, expected: str) -> dict[str, str]:
    return {"input": given, "output": expected, "testtype": "functional"}


ADD = row(
    "abc001_a",
    "2023-06-10",
    [stdin_test("1 2\n", "3\n")],
    [stdin_test("10 20\n", "30\n"), stdin_test("0 0\n", "0\n")],
)
HALF = row("abc002_b", "2024-02-01", [stdin_test("3\n", "1.5\n")], [], difficulty="medium")
STARTER = "class Solution:\n    def addTwo(self, a: int, b: List[int]) -> List[int]:\n        "
LEET = row(
    "3001",
    "2024-07-15",
    [call_test("1\n[2, 3]", "[3, 4]")],
    [call_test("0\n[]", "[]"), call_test("5\n[1]", "[6]")],
    func_name="addTwo",
    starter_code=STARTER,
    difficulty="hard",
    platform="leetcode",
)
LATER = row("abc003_c", "2024-09-01", [stdin_test("4\n", "8\n")], [], difficulty="hard")


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A loopback HTTP server laid out like the hub: test.jsonl and test2.jsonl."""
    root = tmp_path_factory.mktemp("hub")
    folder = root / "datasets/livecodebench/code_generation_lite/resolve/main"
    write_jsonl(folder / "test.jsonl", [LEET, ADD])
    write_jsonl(folder / "test2.jsonl", [HALF, LATER])
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


# -- loading --------------------------------------------------------------------------------


def test_load_downloads_the_release_files_from_the_hub_layout(hub: str, tmp_path: Path) -> None:
    data = DataSettings(cache_dir=tmp_path, mirror=hub)
    loaded = get_benchmark("livecodebench").load("release_v2", data=data)
    assert [task.task_id for task in loaded] == ["3001", "abc001_a", "abc002_b", "abc003_c"]
    assert [file.source for file in loaded.files] == ["download", "download"]
    home = f"{hub}/datasets/livecodebench/code_generation_lite/resolve/main"
    assert loaded.files[0].url == f"{home}/test.jsonl"
    add = loaded.get("abc001_a")
    assert add.metadata["testtype"] == "stdin" and add.metadata["public_tests"] == 1
    assert [t.input for t in add.metadata["tests"]] == ["1 2\n", "10 20\n", "0 0\n"]
    leet = loaded.get("3001")
    assert leet.entry_point == "addTwo" and leet.metadata["func_name"] == "addTwo"
    assert leet.metadata["platform"] == "leetcode" and leet.metadata["difficulty"] == "hard"
    assert leet.metadata["contest_date"] == "2024-07-15T00:00:00"
    # release_v1 is test.jsonl alone, now from the cache
    first = get_benchmark("livecodebench").load("release_v1", data=data)
    assert [t.task_id for t in first] == ["3001", "abc001_a"]
    assert first.files[0].source == "cache"


def test_release_versions_are_livecodebenchs_file_sets() -> None:
    assert RELEASE_FILES["release_v1"] == ("test.jsonl",)
    assert RELEASE_FILES["release_v5"] == RELEASE_FILES["release_v6"][:5]
    assert RELEASE_FILES["release_v5"][-1] == "test5.jsonl"
    assert RELEASE_FILES["release_latest"] == RELEASE_FILES["release_v6"]
    assert RELEASE_FILES["v3"] == ("test3.jsonl",)
    assert RELEASE_FILES["v2_v4"] == ("test2.jsonl", "test3.jsonl", "test4.jsonl")


def test_a_damaged_row_names_file_line_and_field(tmp_path: Path) -> None:
    bad = dict(ADD, private_test_cases="not base64 !!")
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [LEET, bad])
    with pytest.raises(DatasetError, match=r"rows.jsonl:2: field 'private_test_cases'"):
        LiveCodeBench().load(data=DataSettings(dataset_path=path, download=False))


# -- the restricted unpickler ------------------------------------------------------------------


class Exploit:
    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("touch /tmp/passbench-lcb-pwned",))


def test_private_tests_decode_as_the_hub_encodes_them() -> None:
    tests = [stdin_test("1\n", "2\n")]
    assert decode_private_tests(encode_private_tests(tests)) == tests
    assert decode_private_tests(json.dumps(tests)) == tests  # older rows: plain JSON


def test_a_pickle_with_a_global_is_refused_before_anything_runs(tmp_path: Path) -> None:
    hostile = base64.b64encode(zlib.compress(pickle.dumps(Exploit()))).decode()
    with pytest.raises(ValueError, match=r"unsafe or damaged pickle: refusing to load the global"):
        decode_private_tests(hostile)
    assert not Path("/tmp/passbench-lcb-pwned").exists()
    # a pickle of anything but a string is refused too
    a_list = base64.b64encode(zlib.compress(pickle.dumps([1, 2]))).decode()
    with pytest.raises(ValueError, match="holds a list, not a JSON string"):
        decode_private_tests(a_list)
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [dict(ADD, private_test_cases=hostile)])
    with pytest.raises(DatasetError, match="refusing to load the global"):
        LiveCodeBench().load(data=DataSettings(dataset_path=path, download=False))


# -- prompts and extraction ------------------------------------------------------------------


def test_prompts_are_livecodebenchs_generic_chat_prompt(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [LEET, ADD])
    loaded = LiveCodeBench().load(data=DataSettings(dataset_path=path, download=False))
    stdin = build_prompt(loaded.get("abc001_a"), "complete", chat=True)
    assert stdin.text == (
        "### Question:\nSolve abc001_a.\n\n### Format: Read the inputs from stdin solve the "
        "problem and write the answer to stdout (do not directly test on the sample inputs). "
        "Enclose your code within delimiters as follows. Ensure that when the python program "
        "runs, it reads the inputs, runs the algorithm and writes output to STDOUT.\n"
        "```python\n# YOUR CODE HERE\n```\n\n### Answer: (use the provided format with "
        "backticks)\n\n"
    )
    assert stdin.messages[0] == {
        "role": "system",
        "content": "You are an expert Python programmer. You will be given a question (problem "
        "specification) and will generate a correct Python program that matches the "
        "specification and passes all tests.",
    }
    assert stdin.messages[1] == {"role": "user", "content": stdin.text}
    assert stdin.response_prefix == ""
    leet = build_prompt(loaded.get("3001"), "complete", chat=True)
    assert (
        "### Format: You will use the following starter code to write the solution to the "
        f"problem and enclose your code within delimiters.\n```python\n{STARTER}\n```\n\n"
    ) in leet.text
    with pytest.raises(InputError, match="base model"):
        build_prompt(loaded.get("3001"), "complete", chat=False)
    assert stop_sequences(True, benchmark="livecodebench") == ()


def test_extraction_takes_the_last_fenced_block() -> None:
    answer = "First:\n```python\nprint(1)\n```\nBetter:\n```\nprint(2)\n```\nDone."
    assert extract_code(answer) == "print(2)"
    assert extract_code("no code here") == ""
    assert extract_code("```python\nprint(3)") == ""


def test_stdin_code_is_wrapped_as_livecodebench_wraps_it() -> None:
    wrapped = make_function("import sys\nx = int(input())\nprint(x)\n")
    body = "\nimport sys\ndef wrapped_function():\n    x = int(input())\n    print(x)"
    assert wrapped.endswith(body)
    assert wrapped.startswith("from string import *\n")
    assert make_function("def broken(:\n") == "def broken(:\n"


def test_output_comparison_rules() -> None:
    assert compare_stdout("3\n", "3") is None
    assert compare_stdout("  1 2  \n3.0\n\n", "1 2\n3") is None  # stripped, then Decimal
    assert compare_stdout("1.50", "1.5") is None
    assert compare_stdout("4\n", "3\n") == "Wrong answer at output_line_idx=0: 4 != 3"
    assert compare_stdout("1\n2\n", "1\n") == "Wrong answer: mismatched output length"
    assert compare_stdout("yes", "YES") == "Wrong answer at output_line_idx=0: yes != YES"
    assert truncatefn("x" * 301) == "x" * 150 + "...(truncated) ..." + "x" * 150


# -- grading through the sandbox ------------------------------------------------------------


@pytest.fixture(scope="module")
def graded_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("lcb-data")
    write_jsonl(data / "livecodebench/code_generation_lite/test.jsonl", [LEET, ADD, HALF])
    return data


LEET_HEAD = "class Solution:\n    def addTwo(self, a, b):\n        "
STDIN_RIGHT = "a, b = map(int, input().split())\nprint(a + b)\n"
SOLUTIONS: list[tuple[str, str, int | None, str]] = [
    # (task, code, LiveCodeBench error code or None for a pass, error_message start)
    ("abc001_a", STDIN_RIGHT, None, ""),
    (
        "abc001_a",
        "import sys\n\ndef main():\n    a, b = map(int, sys.stdin.read().split())\n"
        "    print(a + b)\n    exit()\n\nif __name__ == '__main__':\n    main()\n",
        None,
        "",
    ),
    ("abc002_b", "n = int(input())\nprint(f'{n / 2:.4f}')\n", None, ""),
    ("abc001_a", "a, b = map(int, input().split())\nprint(a + b + 1)\n", -2, "Wrong answer at"),
    ("abc001_a", STDIN_RIGHT + "print()\nprint(0)\n", -2, "Wrong answer: mismatched output length"),
    ("abc001_a", "while True:\n    pass\n", -3, "Time Limit Exceeded"),
    (
        "abc001_a",
        "class TimeoutException(Exception):\n    pass\nraise TimeoutException()\n",
        -3,
        "Time Limit Exceeded",
    ),
    ("abc001_a", "raise ValueError('boom')\n", -4, "Runtime Error"),
    ("abc001_a", "def broken(:\n    pass\n", -4, "Error during testing: invalid syntax"),
    ("abc001_a", "import os\nos._exit(0)\n", -5, "TestRunnerError"),
    (
        "3001",
        "class Solution:\n    def addTwo(self, a, b):\n        return tuple(a + x for x in b)\n",
        None,
        "",
    ),
    ("3001", LEET_HEAD + "return b\n", -2, "Wrong Answer"),
    (
        "3001",
        "class Solution:\n    def other(self, a, b):\n        return b\n",
        -4,
        "Error during testing: cannot unpack non-iterable NoneType object",
    ),
    ("3001", LEET_HEAD + "return b[5]\n", -4, "Runtime Error"),
    ("3001", "while True:\n    pass\nclass Solution:\n    pass\n", -1, "Global Timeout"),
]


@pytest.mark.bwrap
def test_every_error_code_through_the_sandbox(graded_rows: Path, tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"task_id": task, "solution": code, "sample_index": i}) + "\n"
            for i, (task, code, _, _) in enumerate(SOLUTIONS)
        )
    )
    paths = Paths(cache_dir=tmp_path / "cache", data_dir=graded_rows, offline=True)
    settings = EvaluateSettings(
        benchmark="livecodebench",
        version="release_v1",
        timeout_per_task_s=1.0,
        workers=2,
    )
    outcome = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    document = json.loads(outcome.eval_results_path.read_text())
    entries = {
        (e["task_id"], e["sample_index"]): e for task in document["eval"].values() for e in task
    }
    for index, (task, _, code, message) in enumerate(SOLUTIONS):
        entry = entries[(task, index)]
        metadata = json.loads(entry["details"]["livecodebench"])
        if code is None:
            assert entry["status"] == "pass", (index, entry)
            assert set(metadata) == {"execution time"}
            continue
        assert entry["status"] != "pass", (index, entry)
        assert metadata["error_code"] == code, (index, metadata)
        assert metadata["error_message"].startswith(message), (index, metadata)
    wrong = json.loads(entries[("abc001_a", 3)]["details"]["livecodebench"])
    assert wrong == {
        "output": "4\n",
        "inputs": "1 2\n",
        "expected": "3\n",
        "error_code": -2,
        "error_message": "Wrong answer at output_line_idx=0: 4 != 3",
    }
    runtime = json.loads(entries[("abc001_a", 7)]["details"]["livecodebench"])
    assert runtime["error"] == "ValueError('boom')" and list(runtime) == [
        "error",
        "error_code",
        "error_message",
        "inputs",
        "expected",
    ]
    leet_wrong = json.loads(entries[("3001", 11)]["details"]["livecodebench"])
    assert leet_wrong["inputs"] == "[1, [2, 3]]" and leet_wrong["expected"] == "[3, 4]"
    assert leet_wrong["output"] == "[2, 3]"
    tle = json.loads(entries[("abc001_a", 5)]["details"]["livecodebench"])
    assert tle["error"] == "TimeoutException()" and tle["inputs"] == "1 2\n"
    # evaluate also wrote LiveCodeBench's own file, with its keys and metadata strings
    official = outcome.eval_results_path.with_name("samples_codegeneration_output_eval_all.json")
    rows = json.loads(official.read_text())
    assert [r["question_id"] for r in rows] == ["3001", "abc001_a", "abc002_b"]
    assert all(tuple(r) == ROW_KEYS for r in rows)
    add = rows[1]
    assert add["contest_date"] == "2023-06-10T00:00:00" and add["platform"] == "atcoder"
    assert len(add["graded_list"]) == len(add["metadata"]) == len(add["code_list"]) == 9
    assert add["graded_list"][:4] == [True, True, False, False]
    assert add["pass@1"] == 2 / 9
    assert json.loads(add["metadata"][2]) == wrong
    assert add["code_list"][0] == STDIN_RIGHT
    # and reads back as a run, with the same verdicts
    run = load_results(official)
    assert run.benchmark == "livecodebench" and run.counts()["abc001_a"] == (9, 2)


# -- date windows ------------------------------------------------------------------------------


def test_date_windows_select_by_contest_date(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [LEET, ADD, HALF, LATER])
    tasks = LiveCodeBench().load(data=DataSettings(dataset_path=path, download=False)).tasks
    since = DateWindow.parse("2024-02-01", None)  # inclusive
    assert [t.task_id for t in select_tasks(tasks, window=since)] == [
        "3001",
        "abc002_b",
        "abc003_c",
    ]
    until = DateWindow.parse(None, "2024-07-15")  # inclusive, as LiveCodeBench's --end_date
    assert [t.task_id for t in select_tasks(tasks, window=until)] == [
        "3001",
        "abc001_a",
        "abc002_b",
    ]
    both = DateWindow.parse("2024-02-02", "2024-08-31")
    assert [t.task_id for t in select_tasks(tasks, window=both)] == ["3001"]
    assert [t.task_id for t in select_tasks(tasks, ["abc003_c", "3001"], window=both)] == ["3001"]
    with pytest.raises(InputError, match="no contest date of the 4 tasks is since 2025-01-01"):
        select_tasks(tasks, window=DateWindow.parse("2025-01-01", None))
    with pytest.raises(InputError, match="is after --until"):
        DateWindow.parse("2024-02-02", "2024-01-01")


# -- LiveCodeBench's official result file --------------------------------------------------------

OFFICIAL = "livecodebench/lcb-submissions.O1-Mini-2024-09-12.N1.codegeneration_eval_all.json"


def test_the_official_files_windowed_scores_are_reproduced(data_dir: Path) -> None:
    """PROVENANCE.md's figures for o1-mini's official output (880 problems, release_v5)."""
    rows = read_eval_all(data_dir / OFFICIAL)
    figures = {
        None: (880, 68.41),
        "2023-09-01": (717, 65.69),
        "2024-01-01": (554, 62.27),
        "2024-06-01": (368, 55.98),
        "2024-08-01": (279, 51.97),
    }
    for since, (problems, percent) in figures.items():
        score = window_score(rows, DateWindow.parse(since, None))
        assert (score.problems, round(100 * score.pass_at_1, 2)) == (problems, percent), since
    full = window_score(rows, DateWindow())
    assert {k: n for k, (n, _) in full.by_difficulty.items()} == {
        "easy": 279,
        "medium": 331,
        "hard": 270,
    }
    assert {k: n for k, (n, _) in full.by_platform.items()} == {
        "atcoder": 490,
        "codeforces": 9,
        "leetcode": 381,
    }


def test_inspect_reads_the_official_file_with_windows(data_dir: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["inspect", str(data_dir / OFFICIAL), "--since", "2024-06-01", "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    full, window = document["livecodebench"]["windows"]
    assert (full["problems"], round(100 * full["pass@1"], 2)) == (880, 68.41)
    assert (window["problems"], round(100 * window["pass@1"], 2)) == (368, 55.98)
    assert window["since"] == "2024-06-01" and window["by_difficulty"]["hard"]["problems"] == 147
    # the rest of the report covers the window's problems
    assert document["summary"]["n_tasks"] == 368
    table = CliRunner().invoke(cli, ["inspect", str(data_dir / OFFICIAL), "--until", "2023-08-31"])
    assert table.exit_code == 0, table.output
    assert "68.41% of 880" in table.output and "of 163" in table.output


def test_a_window_on_a_run_without_dates_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "x_eval_results.json"
    sample = {"task_id": "HumanEval/0", "solution": "", "status": "pass", "details": {}}
    path.write_text(json.dumps({"date": "2024-01-01 00:00", "eval": {"HumanEval/0": [sample]}}))
    result = CliRunner().invoke(cli, ["inspect", str(path), "--since", "2024-01-01"])
    assert isinstance(result.exception, InputError) and result.exception.exit_code == 2
    assert "no contest dates for 1 task(s), e.g. HumanEval/0" in str(result.exception)


def test_the_official_file_is_written_as_the_runner_writes_it(
    data_dir: Path, tmp_path: Path
) -> None:
    rows = json.loads((data_dir / OFFICIAL).read_text())[:3]
    target = tmp_path / "copy_codegeneration_output_eval_all.json"
    write_eval_all(target, list(reversed(rows)))
    assert target.read_text() == json.dumps(rows, indent=4)


def test_sanitizing_uses_livecodebenchs_extraction(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [ADD])
    task = LiveCodeBench().load(data=DataSettings(dataset_path=path, download=False)).tasks[0]
    answer = "Idea.\n```python\nprint(1)\n```\nFinal:\n```python\nprint(2)\n```"
    row = sanitized_row({"task_id": "abc001_a", "raw_solution": answer}, task, "complete")
    assert row["solution"] == "print(2)" and "sanitize_error" not in row
    empty = sanitized_row({"task_id": "abc001_a", "raw_solution": "no code"}, task, "complete")
    assert (
        empty["solution"] == ""
        and "LiveCodeBench grades the empty program" in (empty["sanitize_error"])
    )


def test_the_hub_is_the_default_download_home() -> None:
    assert DataSettings().url_for("datasets/x/test.jsonl", HUB) == (
        "https://huggingface.co/datasets/x/test.jsonl"
    )
    assert DataSettings(mirror="http://127.0.0.1:9").url_for("a/b", HUB) == "http://127.0.0.1:9/a/b"


def test_every_real_question_id_parses_and_round_trips(data_dir: Path) -> None:
    """The 880 question ids of release_v5 (AtCoder's abc306_e, LeetCode's 2730, Codeforces'
    1873_A) are this benchmark's ids, and a wrong shape is not."""
    bench = get_benchmark("livecodebench")
    ids = [row["question_id"] for row in json.loads((data_dir / OFFICIAL).read_text())]
    assert len(ids) == 880
    for question_id in ids:
        parsed = bench.parse_task_id(question_id)
        assert parsed is not None and str(parsed) == question_id, question_id
    assert bench.parse_task_id("BigCodeBench/1") is None
    assert bench.parse_task_id("HumanEval_0_has_close_elements") is None
