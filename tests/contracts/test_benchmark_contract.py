"""The Benchmark contract, run against every registered benchmark (a new one is covered by
registering it). Cheap checks only: no sandbox runs (the per-benchmark tests run programs).

The data comes from tests/contracts/benchmark_data.py (the shared folder unless a benchmark
registers its own provider there); a benchmark whose data cannot be loaded fails, naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.contracts.benchmark_data import provider_for

from passbench.core.errors import DatasetError, InputError
from passbench.core.records import Program, Task
from passbench.stages.benchmarks import (
    Benchmark,
    LoadedBenchmark,
    PromptStyle,
    benchmark_names,
    get_benchmark,
)
from passbench.stages.prompts import build_prompt, stop_sequences
from passbench.stages.results import guess_benchmark, model_name

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
    return _load(bench.name, "full", loaded, data_dir, tmp_path)


def _names(values: tuple[str, ...]) -> bool:
    return bool(values) and len(set(values)) == len(values) and all(values)


def test_metadata_is_consistent(bench: Benchmark, request: pytest.FixtureRequest) -> None:
    assert bench.name == request.node.callspec.params["bench"]
    assert bench.title
    assert _names(bench.splits) and _names(bench.subsets) and _names(bench.versions)
    assert "full" in bench.subsets
    assert bench.default_version in bench.versions
    assert bench.default_timeout_s > 0
    assert bench.env_name is None or bench.env_name
    assert bench.id_prefix or not bench.guess_from_ids  # bare ids cannot name a benchmark
    # a benchmark without tests names the command that scores its samples instead
    assert isinstance(bench.executable, bool) and bench.scored_by.startswith("passbench ")
    assert bench.executable or bench.scored_by != "passbench evaluate"
    assert isinstance(bench.prompt_style, PromptStyle)
    assert bench.prompt_style.direct_splits <= set(bench.splits)
    label = bench.file_label("full", bench.splits[0])
    assert label.startswith(f"{bench.name}-")
    # the official sample file stem gives back its model
    stem = f"org--model--main--{label}--openai-0.8-5"
    assert model_name(stem, bench.name) == "org--model--main"


def test_every_subset_loads(
    bench: Benchmark,
    full: LoadedBenchmark,
    loaded: dict[str, LoadedBenchmark],
    data_dir: Path,
    tmp_path: Path,
) -> None:
    assert full.benchmark == bench.name and full.version == bench.default_version
    ids = [task.task_id for task in full.all_tasks]
    assert ids and len(set(ids)) == len(ids)
    assert all(task.benchmark == bench.name for task in full.all_tasks)
    for subset in bench.subsets:
        part = _load(bench.name, subset, loaded, data_dir, tmp_path)
        assert part.subset == subset and len(part) > 0
        assert {task.task_id for task in part} <= set(ids)


def test_task_ids_parse_and_round_trip(bench: Benchmark, full: LoadedBenchmark) -> None:
    prefixes = set()
    for task in full.all_tasks:
        parsed = bench.parse_task_id(task.task_id)
        assert parsed is not None, task.task_id
        assert str(parsed) == task.task_id
        prefixes.add(parsed.prefix)
    assert bench.id_prefix in prefixes
    assert bench.parse_task_id("no-such-task") is None
    assert bench.parse_task_id(bench.id_prefix + "x") is None
    if bench.guess_from_ids:
        guessed = guess_benchmark({task.task_id: [] for task in full})
        assert guessed is not None
        assert all(get_benchmark(guessed).parse_task_id(task.task_id) for task in full)


def test_every_task_has_a_prompt_for_each_split(bench: Benchmark, full: LoadedBenchmark) -> None:
    for task in full.all_tasks:
        assert set(bench.splits) <= set(task.prompts), task.task_id
        assert all(task.prompts[split].strip() for split in bench.splits), task.task_id


@pytest.mark.parametrize("chat_template", [False, True])
def test_prompts_build_for_chat_and_base_models(
    bench: Benchmark, full: LoadedBenchmark, chat_template: bool
) -> None:
    style = bench.prompt_style
    for task in full.all_tasks:
        for split in bench.splits:
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
            stops = stop_sequences(chat, benchmark=bench.name, prefill=prefill)
            # LiveCodeBench's runner sends none; every other official tool does
            assert stops or style.build is not None
            assert all(isinstance(stop, str) and stop for stop in stops)


def test_programs_for_the_canonical_solution(bench: Benchmark, full: LoadedBenchmark) -> None:
    tasks = full.all_tasks[:PROGRAM_SAMPLE]
    if not bench.executable:
        _check_refuses_programs(bench, tasks)
        return
    for task in tasks:
        if bench.has_reference:
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
        answer = "COMPLETION" if bench.prompt_style.direct_splits else "```\nCOMPLETION\n```"
        completed = bench.solution_from_completion(task, answer)
        assert "COMPLETION" in bench.calibrated_code(task, completed)


def _check_refuses_programs(bench: Benchmark, tasks: tuple[Task, ...]) -> None:
    """A benchmark without tests builds no program and says which command scores it; a chat
    answer still becomes the solution that is scored."""
    for task in tasks:
        with pytest.raises(InputError, match=f"no tests to execute.*`{bench.scored_by} "):
            bench.program(task, "x = 1\n", key=f"{task.task_id}#0", timeout_s=5.0)
        assert "COMPLETION" in bench.solution_from_completion(task, "```\nCOMPLETION\n```")
