"""`passbench run` end to end: a fake OpenAI-compatible server on 127.0.0.1 answers with the
canonical solutions wrapped in chat prose; generate -> sanitize -> evaluate must then score
exactly the ground truth's pass rate."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from tests.stages.providers.servers.canonical_fake import CanonicalChatServer

from passbench.apps.cli import cli
from passbench.apps.cli._progress import RichProgress
from passbench.core.errors import PassbenchError
from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.evalenv import locate_env
from passbench.stages.providers.base import Choice
from passbench.stages.providers.reasoning import separate


def _evalenv_missing() -> str:
    """Why the BigCodeBench evaluation environment cannot be used here ("" when it can)."""
    try:
        locate_env("bigcodebench")
    except PassbenchError as error:
        return str(error)
    return ""


EVALENV_MISSING = _evalenv_missing()
#: A few BigCodeBench tasks of different kinds: itertools, files and regex, csv, sklearn,
#: pandas with seaborn plots, and ftplib (whose ground truth needs no network).
# BigCodeBench/0 would add ~50 s (it sums over every permutation of its inputs)
BIGCODEBENCH_TASKS = (
    "BigCodeBench/1",
    "BigCodeBench/6",
    "BigCodeBench/7",
    "BigCodeBench/13",
    "BigCodeBench/29",
    "BigCodeBench/57",
)


def _tasks(name: str, data_dir: Path, tmp_path: Path) -> list[Task]:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    return list(get_benchmark(name).load(None, "full", data=data))


def _invoke(args: list[str], data_dir: Path, tmp_path: Path) -> tuple[int, str]:
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def humaneval_server(data_dir: Path, tmp_path: Path) -> Iterator[CanonicalChatServer]:
    tasks = _tasks("humaneval", data_dir, tmp_path)
    server = CanonicalChatServer(tasks, get_benchmark("humaneval"))
    yield server
    server.close()


@pytest.mark.bwrap
@pytest.mark.slow
def test_run_on_all_of_humaneval_scores_the_ground_truth_pass_rate(
    humaneval_server: CanonicalChatServer, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    args = [
        "run",
        "--model",
        "org/fake-chat",
        "-p",
        "openai",
        "--base-url",
        f"{humaneval_server.url}/v1",
        "-b",
        "humaneval",
        "--output-dir",
        str(out),
        "--cache",
        str(tmp_path / "responses.sqlite"),
    ]
    code, text = _invoke(args, data_dir, tmp_path)
    assert code == 0, text
    stem = "org--fake-chat--main--humaneval-complete--openai-0-1"
    raw = [json.loads(line) for line in (out / f"{stem}.jsonl").read_text().splitlines()]
    sanitized_path = out / f"{stem}-sanitized_calibrated.jsonl"
    sanitized = [json.loads(line) for line in sanitized_path.read_text().splitlines()]
    assert len(raw) == len(sanitized) == 164
    # the answers as sent, with their thinking sections kept apart in `reasoning`
    answers = {
        task: separate(Choice(text=text)) for task, text in humaneval_server.answers_by_task.items()
    }
    for row in sanitized:
        answer = answers[row["task_id"]]
        assert row["raw_solution"] == answer.answer
        assert row.get("reasoning", "") == answer.reasoning
    # a model still thinking when it stopped gave no answer: the code in its thinking is
    # never taken for one
    cut = sorted(t for t, style in humaneval_server.styles.items() if style == "thinking_unclosed")
    assert cut and all(answers[task].truncated for task in cut)
    assert not [
        row["task_id"] for row in sanitized if "sanitize_error" in row and row["task_id"] not in cut
    ]

    stem_sanitized = f"{stem}-sanitized_calibrated"
    scores = json.loads((out / f"{stem_sanitized}_pass_at_k.json").read_text())
    verdicts = json.loads((out / f"{stem_sanitized}_eval_results.json").read_text())["eval"]
    assert len(verdicts) == 164
    assert scores["gt_pass_rate"] == 1.0
    # every canonical answer passes but HumanEval/32's, which EvalPlus 0.3.1 fails whatever
    # the root (docs/benchmarks.md), so passbench does too
    failed = [task for task, entries in verdicts.items() if entries[0]["status"] != "pass"]
    assert sorted(failed) == sorted(["HumanEval/32", *cut])
    assert all(verdicts[task][0]["verdict"] == "no answer (truncated)" for task in cut)
    assert scores["pass@1"] == pytest.approx((163 - len(cut)) / 164)
    summary = " ".join(text.split())
    assert f"extraction failures 0, no answer (truncated) {len(cut)}" in summary

    requests = len(humaneval_server.requests)
    code, text = _invoke(args, data_dir, tmp_path)  # resumes: nothing left to ask or run
    assert code == 0, text
    assert len(humaneval_server.requests) == requests
    assert len((out / f"{stem}.jsonl").read_text().splitlines()) == 164
    assert "all 164 samples for 164 tasks were kept" in " ".join(text.split()), text


@pytest.mark.bwrap
def test_extraction_failures_are_counted_apart_from_test_failures(
    data_dir: Path, tmp_path: Path
) -> None:
    tasks = _tasks("humaneval", data_dir, tmp_path)[:6]
    server = CanonicalChatServer(
        tasks, get_benchmark("humaneval"), unanswerable=("HumanEval/1", "HumanEval/4")
    )
    try:
        code, text = _invoke(
            [
                "run",
                "-m",
                "fake-chat",
                "-p",
                "openai",
                "--base-url",
                f"{server.url}/v1",
                "-b",
                "humaneval",
                "--id-range",
                "0-6",
                "--output-dir",
                str(tmp_path / "out"),
                "--no-cache",
            ],
            data_dir,
            tmp_path,
        )
    finally:
        server.close()
    assert code == 0, text
    assert "2 extraction failures" in text
    assert "passed 4, failed tests 0, extraction failures 2" in text
    scores = json.loads(
        next((tmp_path / "out").glob("*_pass_at_k.json")).read_text(encoding="utf-8")
    )
    assert scores["pass@1"] == pytest.approx(4 / 6)


@pytest.mark.evalenv
@pytest.mark.bwrap
@pytest.mark.slow
@pytest.mark.skipif(bool(EVALENV_MISSING), reason=EVALENV_MISSING)
def test_run_on_bigcodebench_scores_the_ground_truth_pass_rate(
    data_dir: Path, tmp_path: Path
) -> None:
    tasks = [
        t for t in _tasks("bigcodebench", data_dir, tmp_path) if t.task_id in BIGCODEBENCH_TASKS
    ]
    server = CanonicalChatServer(tasks, get_benchmark("bigcodebench"), split="instruct")
    try:
        code, text = _invoke(
            [
                "run",
                "-m",
                "fake-chat",
                "-p",
                "openai",
                "--base-url",
                f"{server.url}/v1",
                "--split",
                "instruct",
                "--tasks",
                ",".join(BIGCODEBENCH_TASKS),
                "--output-dir",
                str(tmp_path / "out"),
                "--no-cache",
            ],
            data_dir,
            tmp_path,
        )
    finally:
        server.close()
    assert code == 0, text
    stem = "fake-chat--main--bigcodebench-instruct--openai-0-1-sanitized_calibrated"
    scores = json.loads((tmp_path / "out" / f"{stem}_pass_at_k.json").read_text())
    assert scores["n_tasks"] == len(BIGCODEBENCH_TASKS)
    assert scores["pass@1"] == pytest.approx(scores["gt_pass_rate"])


def test_each_stage_bar_is_drawn_once_with_its_tokens_and_cost() -> None:
    console = Console(file=io.StringIO(), width=140)
    progress = RichProgress(console)
    progress.start(2, "openai:fake-chat")
    progress.advance(2, info="1,200 in / 300 out tok, $0.0100")
    progress.finish()
    progress.start(1, "evaluating")
    progress.advance(1, info="HumanEval/0: pass")
    progress.finish()
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [line.split()[0] for line in lines] == ["openai:fake-chat", "evaluating"]
    assert "1,200 in / 300 out tok, $0.0100" in lines[0] and "eta" in lines[0]


def test_generate_writes_officially_named_raw_and_sanitized_files(
    data_dir: Path, tmp_path: Path
) -> None:
    tasks = [
        t
        for t in _tasks("bigcodebench", data_dir, tmp_path)
        if t.task_id in ("BigCodeBench/13", "BigCodeBench/15")
    ]
    server = CanonicalChatServer(tasks, get_benchmark("bigcodebench"), split="instruct")
    try:
        code, text = _invoke(
            [
                "generate",
                "-m",
                "org/fake-chat",
                "-p",
                "openai",
                "--base-url",
                f"{server.url}/v1",
                "--split",
                "instruct",
                "--subset",
                "hard",
                "--tasks",
                "13,15",
                "-n",
                "2",
                "--temperature",
                "0.8",
                "--output-dir",
                str(tmp_path / "out"),
                "--no-cache",
            ],
            data_dir,
            tmp_path,
        )
    finally:
        server.close()
    assert code == 0, text
    stem = "org--fake-chat--main--bigcodebench-hard-instruct--openai-0.8-2"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        f"{stem}-sanitized_calibrated.jsonl",
        f"{stem}.jsonl",
    ]
    rows = [
        json.loads(line)
        for line in (tmp_path / "out" / f"{stem}-sanitized_calibrated.jsonl")
        .read_text()
        .splitlines()
    ]
    assert sorted((row["task_id"], row["sample_index"]) for row in rows) == [
        ("BigCodeBench/13", 0),
        ("BigCodeBench/13", 1),
        ("BigCodeBench/15", 0),
        ("BigCodeBench/15", 1),
    ]
    for row in rows:
        assert row["raw_solution"] == server.answers_by_task[row["task_id"]]
        assert row["solution"] != row["raw_solution"] and "def task_func" in row["solution"]


@pytest.mark.bwrap
def test_run_refuses_before_asking_the_model_when_samples_cannot_be_isolated(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = _tasks("humaneval", data_dir, tmp_path)[:2]
    server = CanonicalChatServer(tasks, get_benchmark("humaneval"))
    empty = tmp_path / "bin-without-bwrap"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # as on a machine without bubblewrap
    args = ["run", "-m", "fake-chat", "-p", "openai", "--base-url", f"{server.url}/v1"]
    args += ["-b", "humaneval", "--id-range", "0-2", "--no-cache"]
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}
    try:
        refused = CliRunner().invoke(
            cli,
            [*args, "--output-dir", str(tmp_path / "out")],
            env=env,
        )
        assert refused.exit_code != 0
        assert "refusing to run samples without sandbox isolation" in str(refused.exception)
        assert server.requests == [] and not (tmp_path / "out").exists()
        allowed = CliRunner().invoke(
            cli,
            [*args, "--output-dir", str(tmp_path / "out2"), "--allow-unsandboxed"],
            env=env,
            catch_exceptions=False,
        )
        assert allowed.exit_code == 0, allowed.output
        assert "isolation: rlimit" in allowed.output
    finally:
        server.close()
