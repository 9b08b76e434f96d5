"""The Benchmark contract, run against every registered benchmark (a new one is covered by
registering it). Cheap checks only: no sandbox runs (the per-benchmark tests run programs).

The data comes from tests/contracts/benchmark_data.py (the shared folder unless a benchmark
registers its own provider there); a benchmark whose data cannot be loaded fails, naming it.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from tests.contracts.benchmark_data import provider_for

from passbench.core.errors import DatasetError, InputError
from passbench.core.records import (
    ErrorCategory,
    Exchange,
    ExecResult,
    Isolation,
    Program,
    Prompt,
    Sample,
    Status,
    Task,
)
from passbench.core.runs import RunResults, SampleResult
from passbench.core.samplefile import write_jsonl_atomic
from passbench.stages.benchmarks import (
    Benchmark,
    BenchmarkBase,
    BenchmarkInfo,
    LoadedBenchmark,
    PromptStyle,
    TestFeedback,
    benchmark_info,
    benchmark_language,
    benchmark_names,
    benchmark_toolchains,
    get_benchmark,
    task_language,
)
from passbench.stages.feedback import TEST_FAILURES, feedback_message
from passbench.stages.prompts import build_prompt, stop_sequences
from passbench.stages.results import (
    guess_benchmark,
    load_results,
    model_name,
    result_paths,
    sample_entry,
    write_eval_results,
)
from passbench.stages.sandbox.remote.images import Toolchains
from passbench.stages.sanitize import SanitizeResult

NAMES = benchmark_names()
#: How many tasks per benchmark get a program built (a differential task encodes its inputs).
PROGRAM_SAMPLE = 3


@pytest.fixture(scope="module")
def loaded() -> dict[str, LoadedBenchmark]:
    """name/subset -> tasks of the default version, loaded once per module."""
    return {}


def _load(
    name: str, subset: str, cache: dict[str, LoadedBenchmark], data_dir: Path, tmp: Path
) -> LoadedBenchmark:
    key = f"{name}/{subset}"
    if key not in cache:
        data = provider_for(name)(data_dir, tmp)
        try:
            cache[key] = get_benchmark(name).load(None, subset, data=data)
        except DatasetError as error:
            pytest.fail(
                f"no test data for {name} ({error}); register a provider in "
                "tests/contracts/benchmark_data.py"
            )
    return cache[key]


@pytest.fixture(params=NAMES)
def bench(request: pytest.FixtureRequest) -> Benchmark:
    return get_benchmark(str(request.param))


@pytest.fixture
def full(
    bench: Benchmark, loaded: dict[str, LoadedBenchmark], data_dir: Path, tmp_path: Path
) -> LoadedBenchmark:
    return _load(bench.info.name, "full", loaded, data_dir, tmp_path)


def _names(values: tuple[str, ...]) -> bool:
    return bool(values) and len(set(values)) == len(values) and all(values)


def test_metadata_is_consistent(bench: Benchmark, request: pytest.FixtureRequest) -> None:
    info = bench.info
    assert info.name == request.node.callspec.params["bench"]
    assert info.title
    assert _names(info.splits) and _names(info.subsets) and _names(info.versions)
    assert "full" in info.subsets
    assert info.default_version in info.versions
    assert info.default_timeout_s > 0
    assert info.env_name is None or info.env_name
    assert info.id_prefix or not info.guess_from_ids  # bare ids cannot name a benchmark
    # a benchmark without tests names the command that scores its samples instead
    assert isinstance(info.executable, bool) and info.scored_by.startswith("passbench ")
    assert info.executable or info.scored_by != "passbench evaluate"
    assert isinstance(info.prompt_style, PromptStyle)
    assert info.prompt_style.direct_splits <= set(info.splits)
    label = bench.file_label("full", info.splits[0])
    assert label.startswith(f"{info.name}-")
    # the official sample file stem gives back its model
    stem = f"org--model--main--{label}--openai-0.8-5"
    assert model_name(stem, bench.info.name) == "org--model--main"


def test_every_subset_loads(
    bench: Benchmark,
    full: LoadedBenchmark,
    loaded: dict[str, LoadedBenchmark],
    data_dir: Path,
    tmp_path: Path,
) -> None:
    assert full.benchmark == bench.info.name and full.version == bench.info.default_version
    ids = [task.task_id for task in full.all_tasks]
    assert ids and len(set(ids)) == len(ids)
    assert all(task.benchmark == bench.info.name for task in full.all_tasks)
    for subset in bench.info.subsets:
        part = _load(bench.info.name, subset, loaded, data_dir, tmp_path)
        assert part.subset == subset and len(part) > 0
        assert {task.task_id for task in part} <= set(ids)


def test_task_ids_parse_and_round_trip(bench: Benchmark, full: LoadedBenchmark) -> None:
    prefixes = set()
    for task in full.all_tasks:
        parsed = bench.parse_task_id(task.task_id)
        assert parsed is not None, task.task_id
        assert str(parsed) == task.task_id
        prefixes.add(parsed.prefix)
    assert bench.info.id_prefix in prefixes
    assert bench.parse_task_id("no-such-task") is None
    assert bench.parse_task_id(bench.info.id_prefix + "x") is None
    if bench.info.guess_from_ids:
        guessed = guess_benchmark({task.task_id: [] for task in full})
        assert guessed is not None
        assert all(get_benchmark(guessed).parse_task_id(task.task_id) for task in full)


def test_every_task_has_a_prompt_for_each_split(bench: Benchmark, full: LoadedBenchmark) -> None:
    for task in full.all_tasks:
        assert set(bench.info.splits) <= set(task.prompts), task.task_id
        assert all(task.prompts[split].strip() for split in bench.info.splits), task.task_id


@pytest.mark.parametrize("chat_template", [False, True])
def test_prompts_build_for_chat_and_base_models(
    bench: Benchmark, full: LoadedBenchmark, chat_template: bool
) -> None:
    style = bench.info.prompt_style
    for task in full.all_tasks:
        for split in bench.info.splits:
            chat = build_prompt(task, split, chat=True, chat_template=chat_template)
            assert chat.task_id == task.task_id and chat.split == split
            assert task.prompts[split].strip() in chat.text
            # the user's message last; a benchmark that builds its prompts may add a system one
            assert chat.messages[-1] == {"role": "user", "content": chat.text}
            if style.build is None:
                assert len(chat.messages) == 1
                assert chat.response_prefix.endswith(f"```{style.fence}\n")
            if split in style.direct_splits:
                base = build_prompt(task, split, chat=False)
                assert task.prompts[split].strip() in base.text and not base.messages
            else:
                with pytest.raises(InputError, match="base model"):
                    build_prompt(task, split, chat=False)
    for chat in (False, True):
        for prefill in (False, True):
            stops = stop_sequences(chat, benchmark=bench.info.name, prefill=prefill)
            # LiveCodeBench's runner sends none; every other official tool does
            assert stops or style.build is not None
            assert all(isinstance(stop, str) and stop for stop in stops)


def test_programs_for_the_canonical_solution(bench: Benchmark, full: LoadedBenchmark) -> None:
    tasks = full.all_tasks[:PROGRAM_SAMPLE]
    if not bench.info.executable:
        _check_refuses_programs(bench, tasks)
        return
    for task in tasks:
        if bench.info.has_reference:
            code = bench.canonical_code(task)
            assert task.canonical_solution.strip() in code
        else:
            with pytest.raises(InputError, match="no reference solutions"):
                bench.canonical_code(task)
            code = bench.solution_from_completion(task, "")
        program = bench.program(task, code, key=f"{task.task_id}#0", timeout_s=5.0)
        assert isinstance(program, Program)
        assert program.key == f"{task.task_id}#0" and program.task_id == task.task_id
        # verbatim, or as a string literal the program executes (CWEval imports it as a module)
        assert code in program.source or repr(code) in program.source
        assert program.timeout_s >= 5.0
        # a solution built from a completion is the text the program tests (where a model
        # can complete a prompt; LiveCodeBench's "completion" is a chat answer to extract from)
        answer = "COMPLETION" if bench.info.prompt_style.direct_splits else "```\nCOMPLETION\n```"
        completed = bench.solution_from_completion(task, answer)
        assert "COMPLETION" in bench.calibrated_code(task, completed)


def _check_refuses_programs(bench: Benchmark, tasks: tuple[Task, ...]) -> None:
    """A benchmark without tests builds no program and says which command scores it; a chat
    answer still becomes the solution that is scored."""
    for task in tasks:
        with pytest.raises(InputError, match=f"no tests to execute.*`{bench.info.scored_by} "):
            bench.program(task, "x = 1\n", key=f"{task.task_id}#0", timeout_s=5.0)
        assert "COMPLETION" in bench.solution_from_completion(task, "```\nCOMPLETION\n```")


# ---- the hooks every benchmark answers (BenchmarkBase's defaults or its own) ------------------

#: Keys a sample's row or entry already has: a benchmark's own fields must not replace them.
_ROW_KEYS = {"task_id", "sample_index", "solution", "raw_solution", "status", "details"}


def _verdict(task: Task, status: Status, key: str = "k#0") -> ExecResult:
    failed = status != "pass"
    return ExecResult(
        key=key,
        task_id=task.task_id,
        status=status,
        category=ErrorCategory.ASSERTION_FAILED if failed else None,
        details={"ALL": "AssertionError"} if failed else {},
        duration_s=0.1,
        wall_s=0.2,
        isolation=Isolation.BUBBLEWRAP,
        reason="AssertionError" if failed else "",
    )


def test_info_is_one_frozen_record(bench: Benchmark) -> None:
    info = bench.info
    assert type(info) is BenchmarkInfo
    # what the registry reports is the record the benchmark declares
    assert benchmark_info(info.name) == info and BenchmarkInfo.of(bench) is info
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):  # its sizes are read-only too
        info.subset_sizes["full"] = 1  # type: ignore[index]
    assert isinstance(info.splits, tuple) and isinstance(info.subsets, tuple)
    assert isinstance(info.versions, tuple)
    # the record is the one source: no field of it is also set loose on the benchmark
    loose = [
        field.name for field in dataclasses.fields(BenchmarkInfo) if hasattr(bench, field.name)
    ]
    assert not loose, f"{info.name} sets {loose} beside its info record"


def test_languages(bench: Benchmark, full: LoadedBenchmark) -> None:
    assert isinstance(bench.info.programming_language, str) and bench.info.programming_language
    assert benchmark_language(bench.info.name) == bench.info.programming_language
    for task in full.all_tasks[:PROGRAM_SAMPLE]:
        language = bench.language_of(task)
        assert isinstance(language, str) and language
        assert task_language(task) == language


def test_sanitize_answer(bench: Benchmark, full: LoadedBenchmark) -> None:
    """Every benchmark turns any answer into a SanitizeResult (never raises); a fenced
    reference solution is a usable program."""
    for task in full.all_tasks[:PROGRAM_SAMPLE]:
        for split in bench.info.splits:
            empty = bench.sanitize_answer("", task, split)
            assert isinstance(empty, SanitizeResult) and isinstance(empty.code, str)
            if bench.info.has_reference:
                fence = bench.info.prompt_style.fence
                answer = f"```{fence}\n{bench.canonical_code(task)}\n```\n"
                result = bench.sanitize_answer(answer, task, split)
                assert result.ok, (task.task_id, split, result.reason)
                assert result.code.strip()


def test_answers_of_one_conversation(bench: Benchmark, full: LoadedBenchmark) -> None:
    """`sanitize_answers` of one answer is `sanitize_answer`'s; by default the last answer
    stands alone. A reflection (what `run` sends back within the same request) is only ever
    asked of a benchmark that reflects (`max_reflections`): `sanitize_answers`' for an answer
    that is not usable, which `reflection` sends as it is; never for a usable reference."""
    limit = bench.info.max_reflections
    assert isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
    inherited = type(bench).sanitize_answers is BenchmarkBase.sanitize_answers
    for task in full.all_tasks[:PROGRAM_SAMPLE]:
        for split in bench.info.splits:
            last = "no code here"
            if bench.info.has_reference:
                last = f"```{bench.info.prompt_style.fence}\n{bench.canonical_code(task)}\n```\n"
            answers = ["", "```\nnot it\n```\n", last]
            alone = bench.sanitize_answers(answers[-1:], task, split)
            assert alone == bench.sanitize_answer(last, task, split)
            together = bench.sanitize_answers(answers, task, split)
            assert isinstance(together, SanitizeResult) and isinstance(together.reflection, str)
            if inherited:
                assert together == alone
            for result in (alone, together):
                if result.reflection:
                    assert limit > 0 and not result.ok
                if bench.info.has_reference:
                    assert result.ok and not result.reflection, (task.task_id, split)
            # what `run` sends back: an unusable answer's error, or more (Aider's lint errors)
            for given, result in ((answers[-1:], alone), (answers, together)):
                sent = bench.reflection(given, task, split)
                assert isinstance(sent, str) and (not sent or limit > 0)
                if result.reflection:
                    assert sent == result.reflection
                if bench.info.has_reference:
                    assert sent == "", (task.task_id, split)


def test_follow_up_requests(bench: Benchmark, full: LoadedBenchmark) -> None:
    """A follow-up request (a reflection, a later try) continues the task's conversation: the
    same task and split, text messages only, the new message in the user's last one, every
    earlier message in the conversation; by default the first request's messages, then each
    answer as the assistant's turn and each message as the user's."""
    inherited = type(bench).follow_up is BenchmarkBase.follow_up
    for task in full.all_tasks[:PROGRAM_SAMPLE]:
        for split in bench.info.splits:
            if not task.prompts[split].strip():
                continue
            first = build_prompt(task, split, chat=True)
            exchanges = [Exchange("no code here", "first marker"), Exchange("", "second marker")]
            asked = bench.follow_up(first, exchanges, task, split)
            assert isinstance(asked, Prompt)
            assert (asked.task_id, asked.split) == (task.task_id, split)
            assert all(
                set(m) == {"role", "content"} and isinstance(m["content"], str)
                for m in asked.messages
            )
            last = asked.messages[-1]
            assert last["role"] == "user" and last["content"].startswith("second marker")
            assert asked.text == last["content"]
            said = [m["content"] for m in asked.messages]
            assert "first marker" in said and "no code here" in "".join(said)
            if inherited:
                prefix = first.response_prefix
                assert asked.messages == (
                    *first.messages,
                    {"role": "assistant", "content": prefix + "no code here"},
                    {"role": "user", "content": "first marker"},
                    {"role": "assistant", "content": prefix},
                    {"role": "user", "content": "second marker"},
                )


def test_sample_and_verdict_fields(bench: Benchmark, full: LoadedBenchmark) -> None:
    """What a benchmark adds to sample rows and entries is JSON and keeps the common keys."""
    for task in full.all_tasks[:PROGRAM_SAMPLE]:
        fields = bench.sample_fields(task)
        assert not set(fields) & _ROW_KEYS
        json.dumps(dict(fields))
        for status in ("pass", "fail"):
            extra = bench.verdict_fields(task, _verdict(task, status))
            assert not set(extra) & _ROW_KEYS
            json.dumps(dict(extra))


def test_reference_verdict_keeps_the_verdict_of_its_task(
    bench: Benchmark, full: LoadedBenchmark
) -> None:
    assert isinstance(bench.info.quarantine_failed_references, bool)
    for task in full.all_tasks[:PROGRAM_SAMPLE]:
        given = _verdict(task, "fail")
        decided = bench.reference_verdict(task, given)
        assert isinstance(decided, ExecResult)
        assert (decided.key, decided.task_id) == (given.key, given.task_id)
        # a failing reference stays failed: a benchmark's own reading may only explain it
        assert decided.status != "pass"


def test_test_feedback(bench: Benchmark, full: LoadedBenchmark) -> None:
    """A failed verdict gives the test output a follow-up try shows (`run --tries`), and the
    files to fix; the default is the verdict's recorded output, every failing test's."""
    inherited = type(bench).test_feedback is BenchmarkBase.test_feedback
    for task in full.all_tasks[:PROGRAM_SAMPLE]:
        verdict = SampleResult(
            task_id=task.task_id,
            sample_index=0,
            status="fail",
            solution="",
            details={
                "test_one": "Traceback (most recent call last):\nAssertionError: 7 != 8",
                "test_two": "ValueError: marker",
            },
            category=ErrorCategory.ASSERTION_FAILED,
            reason="AssertionError: 7 != 8",
        )
        feedback = bench.test_feedback(task, verdict)
        assert isinstance(feedback, TestFeedback)
        assert isinstance(feedback.output, str) and feedback.output.strip()
        assert isinstance(feedback.files, tuple)
        assert all(isinstance(name, str) and name for name in feedback.files)
        if inherited:
            assert "AssertionError: 7 != 8" in feedback.output
            assert "test_two: ValueError: marker" in feedback.output
        message = feedback_message(feedback, verdict.status, lines=50)
        assert message.endswith(TEST_FAILURES.split("{file_list}")[1])


def test_judging(bench: Benchmark, full: LoadedBenchmark) -> None:
    """None, or the identity and host verdict of each program, for an executable benchmark."""
    tasks = full.all_tasks[:PROGRAM_SAMPLE]
    judging = bench.judging({task.task_id: task for task in tasks})
    if judging is None:
        return
    assert bench.info.executable
    identity, finalize = judging
    for task in tasks:
        code = bench.solution_from_completion(task, "")
        program = bench.program(task, code, key=f"{task.task_id}#0", timeout_s=5.0)
        assert isinstance(identity(program), str) and identity(program) == identity(program)
        # a program the sandbox could not finish stays a failure whatever the judge reads
        judged = finalize(program, _verdict(task, "timeout", key=program.key))
        assert isinstance(judged, ExecResult) and judged.status != "pass"


def test_extra_scores(bench: Benchmark, full: LoadedBenchmark) -> None:
    """Scores beyond pass@k are fractions in [0, 1] (None when undefined) or counts."""
    tasks = full.all_tasks[:PROGRAM_SAMPLE]
    entries: list[dict[str, Any]] = []
    for number, task in enumerate(tasks):
        status: Status = "pass" if number % 2 == 0 else "fail"
        entry = {"task_id": task.task_id, "sample_index": 0, "status": status}
        entry.update(bench.verdict_fields(task, _verdict(task, status)))
        entries.append(entry)
    scores = bench.extra_scores(entries, (1,))
    assert not set(scores) & {"pass@1", "pass@10"}  # pass@k is passbench's own
    for name, value in scores.items():
        assert isinstance(name, str) and name
        assert value is None or isinstance(value, (int, float)), name
        if isinstance(value, float):
            assert 0.0 <= value <= 1.0, name
    json.dumps(dict(scores))


def test_insecure_references(bench: Benchmark, full: LoadedBenchmark) -> None:
    assert isinstance(bench.info.has_insecure_references, bool)
    assert isinstance(bench.info.judges_references, bool)
    assert not bench.info.judges_references or bench.judging({}) is not None
    for task in full.all_tasks[:PROGRAM_SAMPLE]:
        code = bench.insecure_reference(task)
        if bench.info.has_insecure_references:
            assert isinstance(code, str) and code.strip(), task.task_id
        else:
            assert code is None


def test_toolchains(bench: Benchmark) -> None:
    chains = bench.toolchains()
    if chains is None:
        return
    assert isinstance(chains, Toolchains)
    assert chains.packages and all(isinstance(p, str) and p for p in chains.packages)
    assert all(isinstance(tool, str) and tool for tool in chains.tools)
    merged = benchmark_toolchains()
    assert set(chains.packages) <= set(merged.packages)


def test_official_result_files(bench: Benchmark, full: LoadedBenchmark, tmp_path: Path) -> None:
    """A benchmark's own result file, when it writes one, is read back as the same run by its
    own reader and by `load_results`; a passbench file is never taken for one."""
    tasks = full.all_tasks[:PROGRAM_SAMPLE]
    samples = [
        Sample(task.task_id, solution=f"# {task.task_id}\n", sample_index=index)
        for task in tasks
        for index in range(2)
    ]
    codes = [sample.solution or "" for sample in samples]
    by_id = {task.task_id: task for task in tasks}
    results = [
        _verdict(by_id[s.task_id], "pass" if s.sample_index == 0 else "fail", f"{s.task_id}#{i}")
        for i, s in enumerate(samples)
    ]
    entries = [
        sample_entry(sample, code, result)
        for sample, code, result in zip(samples, codes, results, strict=True)
    ]
    folder = tmp_path / "results"
    folder.mkdir()
    eval_path, _ = result_paths(folder, f"org--model--{bench.file_label('full', 'complete')}")
    write_eval_results(eval_path, entries, {"benchmark": bench.info.name})
    assert bench.read_official_results(eval_path) is None
    samples_path = tmp_path / "samples.jsonl"
    write_jsonl_atomic(
        samples_path, [{"task_id": s.task_id, "solution": s.solution} for s in samples]
    )
    assert bench.read_samples(samples_path, list(by_id)) is None  # a passbench sample file

    bench.write_official_results(eval_path, samples, codes, results, by_id)
    # its own result files beside passbench's (a folder of logs beside them is not one)
    written = sorted(path for path in set(folder.iterdir()) - {eval_path} if path.is_file())
    for path in written:
        json.loads(path.read_text(encoding="utf-8"))  # valid JSON
        run = bench.read_official_results(path)
        assert run is not None, f"{bench.info.name} cannot read the {path.name} it wrote"
        assert run.benchmark == bench.info.name
        assert set(run.tasks) == set(by_id)
        # both samples of each task, or (a format with one answer per task and run, such as
        # SWE-bench's run report) one file per sample index
        per_task = {len(samples) for samples in run.tasks.values()}
        assert per_task == {2} or (per_task == {1} and len(written) == 2), (path, per_task)
        assert load_results(path).tasks.keys() == run.tasks.keys()

    ours = load_results(eval_path)
    assert ours.benchmark == bench.info.name
    attached = bench.attach_official_results(ours)
    assert isinstance(attached, RunResults) and attached.tasks == ours.tasks
    if written:  # what its own file adds is about the run's tasks only
        assert set(attached.task_info) <= set(ours.tasks)


def test_task_set_identity(
    bench: Benchmark,
    full: LoadedBenchmark,
    loaded: dict[str, LoadedBenchmark],
    data_dir: Path,
    tmp_path: Path,
) -> None:
    """Every result records the task set: the benchmark, its version and the sha256 of every
    data file the tasks were read from (task file first), stable across loads and written as
    JSON that reads back as the same identity."""
    from passbench.core.taskset import TaskSetIdentity, identity_from_meta
    from passbench.stages.benchmarks.data import sha256_of

    identity = bench.task_set(full)
    assert identity.benchmark == bench.info.name and identity.version == full.version
    assert identity.files and identity.files[0].name == full.source.path.name
    assert [f.sha256 for f in identity.files] == [sha256_of(f.path) for f in full.files]
    assert identity.sha256 == full.sha256
    again = json.loads(json.dumps({"task_set": identity.to_json()}))
    assert identity_from_meta(again) == identity
    assert TaskSetIdentity.from_json(identity.to_json()) == identity
    # a subset's tasks are the same tasks: its identity has the full set's key
    for subset in bench.info.subsets:
        part = _load(bench.info.name, subset, loaded, data_dir, tmp_path)
        assert bench.task_set(part).key == identity.key
