"""passbench.apps.pipeline: official file names, per-sample appending and resuming, and the
sanitized file beside the raw one (the fake OpenAI server answers through the real SDK)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.stages.providers.servers.base import Recorded, Reply
from tests.stages.providers.servers.canonical_fake import NO_CODE, CanonicalChatServer

from passbench.apps.pipeline import (
    GenerationOutcome,
    GenerationSettings,
    SampleFiles,
    generate_samples,
    sample_files,
    sample_identifier,
)
from passbench.apps.samplerows import sanitized_row
from passbench.core.errors import PermanentProviderError, SampleFileError
from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.providers import load_model_config


@pytest.mark.parametrize(
    ("model", "provider", "flags", "subset", "split", "n", "prefill", "expected"),
    [
        # the names bigcodebench/generate.py's run_codegen gives (its `identifier`)
        (
            "bigcode/starcoder2-15b-instruct-v0.1",
            "vllm",
            {"temperature": 0.0},
            "hard",
            "instruct",
            1,
            None,
            "bigcode--starcoder2-15b-instruct-v0.1--main--bigcodebench-hard-instruct--vllm-0-1",
        ),
        (
            "gpt-4o-2024-08-06",
            "openai",
            {"temperature": 0.8},
            "full",
            "complete",
            5,
            None,
            "gpt-4o-2024-08-06--main--bigcodebench-complete--openai-0.8-5",
        ),
        (
            "gpt-4o",
            "openai",
            {"temperature": 0.0},
            "full",
            "complete",
            5,
            None,
            "gpt-4o--main--bigcodebench-complete--openai-0.0-5",
        ),
        (
            "deepseek-reasoner",
            "vllm",
            {},
            "full",
            "complete",
            1,
            None,
            "deepseek-reasoner--medium--main--bigcodebench-complete--vllm-0-1",
        ),
        (
            "o3-mini",
            "openai",
            {"reasoning_effort": "high"},
            "full",
            "instruct",
            1,
            None,
            "o3-mini--high--main--bigcodebench-instruct--openai-0-1",
        ),
        (
            "o1-mini",
            "openai",
            {},
            "hard",
            "complete",
            1,
            None,
            "o1-mini--medium--main--bigcodebench-hard-complete--openai-0-1",
        ),
        (
            "o1-mini",
            "vllm",
            {},
            "full",
            "complete",
            1,
            None,
            "o1-mini--main--bigcodebench-complete--vllm-0-1",
        ),
        (
            "claude-3-7-sonnet-20250219",
            "anthropic",
            {"thinking_budget": 16000},
            "full",
            "instruct",
            1,
            None,
            "claude-3-7-sonnet-20250219--16000-output-128k-2025-02-19--main--bigcodebench-instruct"
            "--anthropic-0-1",
        ),
        (
            "Qwen/Qwen2.5-7B-Instruct",
            "hf",
            {"options": {"revision": "abc123"}},
            "full",
            "complete",
            1,
            False,
            "Qwen--Qwen2.5-7B-Instruct--skip_prefill--abc123--bigcodebench-complete--hf-0-1",
        ),
    ],
)
def test_sample_identifier_is_the_official_name(
    model: str,
    provider: str,
    flags: dict[str, object],
    subset: str,
    split: str,
    n: int,
    prefill: bool | None,
    expected: str,
) -> None:
    config = load_model_config(model, flags={"provider": provider, **flags})
    identifier = sample_identifier(config, "bigcodebench", subset, split, n, prefill=prefill)
    assert identifier == expected
    files = sample_files(Path("out"), identifier)
    assert files.raw == Path("out") / f"{expected}.jsonl"
    assert files.sanitized == Path("out") / f"{expected}-sanitized_calibrated.jsonl"


@pytest.fixture
def tasks(data_dir: Path, tmp_path: Path) -> list[Task]:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    return list(get_benchmark("humaneval").load(None, "full", data=data))[:5]


@pytest.fixture
def server(tasks: list[Task]) -> Iterator[CanonicalChatServer]:
    fake = CanonicalChatServer(tasks, get_benchmark("humaneval"), unanswerable=("HumanEval/2",))
    yield fake
    fake.close()


def _generate(
    server: CanonicalChatServer, tasks: list[Task], files: SampleFiles, *, resume: bool = True
) -> GenerationOutcome:
    config = load_model_config(
        "fake-chat", flags={"provider": "openai", "base_url": f"{server.url}/v1"}
    )
    settings = GenerationSettings(config=config, n_samples=2, resume=resume)
    return asyncio.run(generate_samples(settings, tasks, files))


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_both_files_hold_every_sample_and_extraction_failures_are_marked(
    server: CanonicalChatServer, tasks: list[Task], tmp_path: Path
) -> None:
    files = SampleFiles.beside(tmp_path / "s.jsonl")
    outcome = _generate(server, tasks, files)
    raw, sanitized = _rows(files.raw), _rows(files.sanitized)
    keys = {(row["task_id"], row["sample_index"]) for row in raw}
    assert keys == {(t.task_id, i) for t in tasks for i in (0, 1)} and len(raw) == 10
    assert {(row["task_id"], row["sample_index"]) for row in sanitized} == keys
    for row in sanitized:
        assert list(row)[:3] == ["task_id", "solution", "raw_solution"]
        if row["task_id"] == "HumanEval/2":
            assert row["raw_solution"] == NO_CODE and row["sanitize_error"]
        else:
            assert "sanitize_error" not in row and "def " in str(row["solution"])
    assert outcome.new_samples == 10 and outcome.kept_samples == 0
    assert sorted(outcome.extraction_failures.popitem()[1]) == [
        "HumanEval/2#0",
        "HumanEval/2#1",
    ]


def test_an_interrupted_run_resumes_per_sample(
    server: CanonicalChatServer, tasks: list[Task], tmp_path: Path
) -> None:
    files = SampleFiles.beside(tmp_path / "s.jsonl")
    _generate(server, tasks, files)
    complete_raw = _rows(files.raw)
    # Interrupted: the last two raw samples lost, one of them cut mid-line; the sanitized file
    # one line behind the raw one (the crash fell between the two appends).
    lines = files.raw.read_text(encoding="utf-8").splitlines(keepends=True)
    files.raw.write_text("".join(lines[:8]) + lines[8][:25], encoding="utf-8")
    sanitized_lines = files.sanitized.read_text(encoding="utf-8").splitlines(keepends=True)
    files.sanitized.write_text("".join(sanitized_lines[:7]), encoding="utf-8")
    lost_tasks = {complete_raw[8]["task_id"], complete_raw[9]["task_id"]}
    before = len(server.requests)

    outcome = _generate(server, tasks, files)
    asked = [r.body["messages"][0]["content"] for r in server.requests[before:]]
    assert len(asked) == len(lost_tasks)  # only the prompts with a missing sample, no cache
    assert outcome.new_samples == 2 and outcome.kept_samples == 8
    raw, sanitized = _rows(files.raw), _rows(files.sanitized)
    pairs = [(row["task_id"], row["sample_index"]) for row in raw]
    assert len(pairs) == len(set(pairs)) == 10
    assert sorted((r["task_id"], r["sample_index"]) for r in sanitized) == sorted(pairs)

    # A whole last row whose newline was never written: the next row must not join its line.
    files.raw.write_text(files.raw.read_text(encoding="utf-8").rstrip("\n"), encoding="utf-8")
    files.sanitized.write_text("".join(sanitized_lines[:1]), encoding="utf-8")
    before = len(server.requests)
    again = _generate(server, tasks, files)
    assert len(_rows(files.raw)) == len(_rows(files.sanitized)) == 10
    assert len(server.requests) == before and again.new_samples == 0

    _generate(server, tasks[:1], files, resume=False)
    assert len(_rows(files.raw)) == 2  # --no-resume starts afresh


def test_a_damaged_line_before_the_end_is_an_error_naming_it(
    server: CanonicalChatServer, tasks: list[Task], tmp_path: Path
) -> None:
    files = SampleFiles.beside(tmp_path / "s.jsonl")
    files.raw.write_text('{"task_id": "HumanEval/0", "sample_index": 0\n{"task_id": 1}\n')
    with pytest.raises(SampleFileError, match=r"s\.jsonl:1: malformed JSON"):
        _generate(server, tasks, files)


class _RefusesOneTask(CanonicalChatServer):
    """Answers 401 (a permanent error: the run stops at once) to one task's prompt until
    `forgive()`, as a revoked key or an exhausted budget would mid-run."""

    def __init__(self, tasks: list[Task], refused: Task) -> None:
        super().__init__(tasks, get_benchmark("humaneval"))
        self.refused_answer = self.answers_by_task[refused.task_id]
        self.refusing = True

    def answer(self, request: Recorded) -> Reply:
        reply = super().answer(request)
        choices = reply.body.get("choices", []) if isinstance(reply.body, dict) else []
        if self.refusing and any(c["message"]["content"] == self.refused_answer for c in choices):
            return Reply(401, {"error": {"message": "key revoked", "type": "auth"}})
        return reply


def test_a_run_stopped_by_a_provider_error_keeps_its_samples_and_resumes(
    tasks: list[Task], tmp_path: Path
) -> None:
    server = _RefusesOneTask(tasks, refused=tasks[3])
    files = SampleFiles.beside(tmp_path / "s.jsonl")
    config = load_model_config(
        "fake-chat",
        flags={"provider": "openai", "base_url": f"{server.url}/v1", "concurrency": 1},
    )
    settings = GenerationSettings(config=config)
    try:
        with pytest.raises(PermanentProviderError):
            asyncio.run(generate_samples(settings, tasks, files))
        kept = {row["task_id"] for row in _rows(files.raw)}
        assert kept == {t.task_id for t in tasks[:3]}  # answered before the error, in order
        assert {row["task_id"] for row in _rows(files.sanitized)} == kept
        server.refusing = False
        before = len(server.requests)
        outcome = asyncio.run(generate_samples(settings, tasks, files))
    finally:
        server.close()
    assert len(server.requests) - before == 2 and outcome.new_samples == 2
    assert sorted(row["task_id"] for row in _rows(files.sanitized)) == sorted(
        t.task_id for t in tasks
    )


def test_the_summary_joins_verdicts_and_sanitizer_notes_on_sample_index(tmp_path: Path) -> None:
    """The sanitized file is in arrival order; the extraction failure is sample 1 of the task,
    though it is the file's first line: it must be counted as an extraction failure, and the
    failing sample 2 as a test failure."""
    from passbench.apps.pipeline import summarize
    from passbench.core.records import Isolation
    from passbench.stages.evaluate import EvaluationOutcome
    from passbench.stages.results import write_eval_results

    sanitized = tmp_path / "s-sanitized_calibrated.jsonl"
    rows = [
        {"task_id": "HumanEval/0", "sample_index": 1, "solution": "", "sanitize_error": "no def"},
        {"task_id": "HumanEval/0", "sample_index": 2, "solution": "def f(): pass"},
        {"task_id": "HumanEval/0", "sample_index": 0, "solution": "def f(): return 1"},
    ]
    sanitized.write_text("".join(json.dumps(row) + "\n" for row in rows))
    verdicts = [
        {
            "task_id": "HumanEval/0",
            "solution": "x",
            "status": status,
            "details": {},
            "sample_index": i,
        }
        for i, status in ((0, "pass"), (1, "fail"), (2, "fail"))
    ]
    results = write_eval_results(tmp_path / "s_eval_results.json", verdicts, {})
    outcome = EvaluationOutcome(
        eval_results_path=results,
        pass_at_k_path=tmp_path / "s_pass_at_k.json",
        pass_at_k={"pass@1": 1 / 3},
        n_tasks=1,
        n_samples=3,
        missing_tasks=(),
        ground_truth=None,
        isolation=Isolation.BUBBLEWRAP,
        reused=0,
    )
    summary = summarize(sanitized, outcome, ["HumanEval/0"])
    assert (summary.passed, summary.extraction_failures, summary.test_failures) == (1, 1, 1)


def test_generate_sanitizes_a_multiple_chat_answer_in_its_language() -> None:
    """`generate`'s sanitized row for a MultiPL-E task reads the language's fenced block."""
    task = Task(
        benchmark="multipl-e-lua",
        task_id="HumanEval_53_add",
        entry_point="add",
        prompts={"complete": "-- Add two numbers\nlocal function add(x, y)\n"},
        code_prompt="-- Add two numbers\nlocal function add(x, y)\n",
        test="os.exit(0)\n",
        canonical_solution="",
        metadata={"source": "humaneval", "language": "lua"},
    )
    answer = "```python\nx = 1\n```\n```lua\nlocal function add(x, y)\n  return x + y\nend\n```"
    row = sanitized_row({"task_id": task.task_id, "raw_solution": answer}, task, "complete")
    assert row["solution"] == ("-- Add two numbers\nlocal function add(x, y)\n  return x + y\nend")
    assert "sanitize_error" not in row and row["raw_solution"] == answer
