"""The Benchmark protocol: load tasks, turn a candidate into the program the sandbox runs.

A benchmark is one module. Its class says, as data, what it offers (splits, subsets, versions,
limits, how its task ids look) in one frozen record, `info = BenchmarkInfo(...)`; it loads its
tasks, builds the program that tests a solution and, where one exists, the canonical solution.
Everything else passbench needs from a benchmark is also answered by the benchmark object (its
task-id parsing, the official file naming, the hooks below), so `pipeline`, `prompts`,
`results` and `evaluate` never special-case one by name. `BenchmarkBase` gives the defaults and
the load boilerplate; docs/writing-a-benchmark.md says what a new module must provide.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from passbench.core.errors import InputError, UnknownNameError
from passbench.core.progress import Progress
from passbench.core.records import Exchange, ExecResult, Program, Prompt, Sample, Task
from passbench.core.runs import RunResults, SampleResult
from passbench.core.taskset import DatasetFile, TaskSetIdentity
from passbench.stages.benchmarks.data import DataFile, DataSettings, ResolvedFile, resolve
from passbench.stages.benchmarks.prompting import PromptStyle
from passbench.stages.evalenv.check import EnvReport
from passbench.stages.sandbox.remote.images import Toolchains

if TYPE_CHECKING:
    from passbench.stages.sanitize import SanitizeResult

#: How a benchmark judges its programs' outputs on the host (`Benchmark.judging`): the identity
#: of a program's verdict for the journal, and the host-side verdict from the sandbox's report.
Judging = tuple[Callable[[Program], str], Callable[[Program, ExecResult], ExecResult]]


def require_name(
    kind: str, value: str, valid: Sequence[str], *, where: str = "", field: str | None = None
) -> str:
    """Return `value` when it is one of `valid`; otherwise raise UnknownNameError listing them."""
    if value not in valid:
        raise UnknownNameError(
            f"unknown {kind} '{value}'{where}; choose one of: {', '.join(valid)}", field=field
        )
    return value


@dataclass(frozen=True)
class TestFeedback:
    """What a failed attempt's tests said, for a follow-up request (`passbench run --tries`):
    `output` is the test output as the tests printed it (the run normalises and truncates it
    as Aider does before the model sees it); `files` are the files the model is to fix, named
    in Aider's message ("Fix the code in FILES ..."), empty where the answer is not a file."""

    __test__ = False  # not a pytest test class, whatever its name

    output: str
    files: tuple[str, ...] = ()


def recorded_test_output(result: SampleResult) -> str:
    """The test output a stored verdict keeps: each failing test's text (`details`, the
    official field; "ALL" for a whole-program error) under its name, else its one-line reason."""
    parts = []
    for name, text in result.details.items():
        text = str(text).rstrip("\n")
        if name == "ALL":
            parts.append(text)
        elif "\n" in text:
            parts.append(f"{name}:\n{text}")
        else:
            parts.append(f"{name}: {text}")
    if parts:
        return "\n".join(parts)
    return result.reason or f"the tests ended with status {result.status}"


def continued_prompt(prompt: Prompt, exchanges: Sequence[Exchange]) -> Prompt:
    """`prompt`'s messages, then per exchange the answer as the assistant's turn (after the
    response prefix) and the message as the user's: the default layout of a follow-up."""
    turns: list[Mapping[str, str]] = list(prompt.messages)
    for exchange in exchanges:
        turns.append({"role": "assistant", "content": prompt.response_prefix + exchange.answer})
        turns.append({"role": "user", "content": exchange.message})
    return Prompt(
        task_id=prompt.task_id,
        split=prompt.split,
        text=exchanges[-1].message if exchanges else prompt.text,
        messages=tuple(turns),
        response_prefix=prompt.response_prefix,
    )


@dataclass(frozen=True)
class LoadedBenchmark:
    """The tasks of one benchmark version and subset, with the data files they came from."""

    benchmark: str
    version: str
    subset: str
    tasks: tuple[Task, ...]  # the subset's tasks, in dataset order
    files: tuple[ResolvedFile, ...]  # files[0] is the task file; then e.g. the hard-subset ids
    all_tasks: tuple[Task, ...] = ()  # every task of the version (a subset's superset)

    def __post_init__(self) -> None:
        if not self.all_tasks:
            object.__setattr__(self, "all_tasks", self.tasks)

    @property
    def source(self) -> ResolvedFile:
        """The task file: its path, sha256 and where it was found (str() describes it)."""
        return self.files[0]

    @property
    def sha256(self) -> str:
        """sha256 of the task file's bytes, recorded in results as `dataset_sha256`."""
        return self.files[0].sha256

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def get(self, task_id: str) -> Task:
        """The task with this id; UnknownNameError naming the data file when there is none."""
        for task in self.tasks:
            if task.task_id == task_id:
                return task
        raise UnknownNameError(
            f"no task '{task_id}' in {self.benchmark} {self.version} ({self.subset} subset, "
            f"{len(self.tasks)} tasks)",
            path=self.source.path,
        )


@dataclass(frozen=True)
class TaskId:
    """A task id taken apart: `prefix`, `number`, `suffix` (`str()` gives the id back).

    "BigCodeBench/12" -> ("BigCodeBench/", 12, ""); MultiPL-E's "HumanEval_0_has_close_elements"
    -> ("HumanEval_", 0, "_has_close_elements")."""

    prefix: str
    number: int
    suffix: str = ""

    def __str__(self) -> str:
        return f"{self.prefix}{self.number}{self.suffix}"


@dataclass(frozen=True)
class ToolCheck:
    """One line of `passbench env check`: a tool (or a task that needs one) and whether it is
    usable here; `detail` says where it is, or what is missing and how to get it."""

    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class Original:
    """The benchmark release a corrected benchmark's version replaces, task for task.

    `excluded` are the original's tasks the correction left out: samples for them are
    skipped (never scored as failures) when the original's sample files are evaluated on the
    correction."""

    benchmark: str
    version: str
    excluded: tuple[str, ...] = ()


class TaskEnvironments(Protocol):
    """Test environments a benchmark builds per task rather than one per benchmark (SWE-bench:
    one per instance's lock), for `passbench env check` and `env create`. Both answer with the
    report `env check` prints: one item per task or environment, ok or not, with why."""

    def check(self, tasks: Sequence[Task], folder: Path | None) -> EnvReport:
        """What of `tasks` can be evaluated on this machine, how faithfully, and why not."""
        ...

    def create(
        self,
        tasks: Sequence[Task],
        folder: Path | None,
        *,
        force: bool = False,
        pip_args: Sequence[str] = (),
        progress: Progress | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> EnvReport:
        """Build (or find, integrity-checked) the environments `tasks` need under `folder`
        (None: the default place `evaluate` looks in); each build is atomic, so an interrupted
        run resumes where it stopped."""
        ...

    def verify(self, tasks: Sequence[Task], folder: Path | None) -> EnvReport:
        """Whether every file of each environment `tasks` need still has the sha256 it was
        built with (`env verify`); one not built is not ok."""
        ...

    def describe(self, tasks: Sequence[Task], folder: Path | None) -> list[dict[str, Any]]:
        """Each environment `tasks` need: its lock, its tasks, and where it is and what it
        was built from when it is built (`env info`, as JSON)."""
        ...


class Benchmark(Protocol):
    """One benchmark: its data, and how a candidate solution becomes a tested program.

    `info` is its data, one frozen record: what it offers, without loading anything.
    """

    # read-only, so that a plain class attribute implements it
    @property
    def info(self) -> BenchmarkInfo: ...

    def load(
        self,
        version: str | None = None,
        subset: str = "full",
        *,
        data: DataSettings | None = None,
        progress: Progress | None = None,
    ) -> LoadedBenchmark:
        """Tasks of `version` (None: the default version) and `subset`.

        `data` None uses only the user cache and the public download (no environment is read).
        Raises UnknownNameError for an unknown version or subset and DatasetError when the data
        cannot be found, downloaded or parsed (the message names the file and line).
        """
        ...

    def program(
        self,
        task: Task,
        code: str,
        *,
        key: str,
        timeout_s: float,
        expected_duration_s: float | None = None,
    ) -> Program:
        """The whole program the sandbox runs to test `code` (a complete solution) on `task`."""
        ...

    def canonical_code(self, task: Task) -> str:
        """The ground-truth solution, joined exactly as the official evaluator joins it;
        InputError when the benchmark has no reference solutions."""
        ...

    def calibrated_code(self, task: Task, solution: str) -> str:
        """`solution` as the official evaluator runs it with calibration on (or unchanged)."""
        ...

    def solution_from_completion(self, task: Task, completion: str) -> str:
        """The solution a raw completion (text appended to the Complete prompt) stands for."""
        ...

    def parse_task_id(self, task_id: str) -> TaskId | None:
        """`task_id` taken apart, or None when it is not an id of this benchmark."""
        ...

    def file_label(self, subset: str, split: str) -> str:
        """The benchmark's part of an official sample file name ("bigcodebench-hard-complete");
        it starts with `f"{name}-"` (results.model_name reads the model before it)."""
        ...

    def read_official_results(self, path: Path) -> RunResults | None:
        """The run stored in `path` when it is a file in this benchmark's own result format
        (not passbench's `_eval_results.json`), else None; ResultsFileError when it is one
        but is malformed."""
        ...

    def read_samples(self, path: Path, known_task_ids: Iterable[str]) -> list[Sample] | None:
        """The samples in `path` when it is in this benchmark's own answer format (SWE-bench's
        predictions files), else None (a passbench sample file); SampleFileError naming file,
        line and field when it is one but is malformed."""
        ...

    def attach_official_results(self, run: RunResults) -> RunResults:
        """`run` (a passbench run of this benchmark) with what the benchmark's own result
        files beside it add, e.g. per-task facts in `task_info`; `run` itself when none."""
        ...

    def write_official_results(
        self,
        eval_path: Path,
        samples: Sequence[Sample],
        codes: Sequence[str],
        results: Sequence[ExecResult],
        tasks: Mapping[str, Task],
    ) -> None:
        """Write the benchmark's own result file beside passbench's `eval_path` (nothing when
        its official tool has none)."""
        ...

    # ---- the hooks below have defaults in BenchmarkBase; each is asked of every benchmark

    def language_of(self, task: Task) -> str:
        """The language of one task's code, as reports show it (where tasks differ)."""
        ...

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """The program a raw model answer to `task` stands for."""
        ...

    def sanitize_answers(self, answers: Sequence[str], task: Task, split: str) -> SanitizeResult:
        """The program the model's answers in one conversation stand for, oldest first (earlier
        tries and reflections, then the last answer). Where answers are edits (Aider's), each
        applies over what the ones before left, and `reflection` is the error text to send back
        when the last cannot be applied (asked again at most `max_reflections` times a request)."""
        ...

    def reflection(self, answers: Sequence[str], task: Task, split: str) -> str:
        """What `run` sends back to the model after the last of a conversation's answers,
        within the same request ("" when the answer stands): the `reflection` of
        `sanitize_answers`, or more (Aider's lint errors of the files a usable answer edited)."""
        ...

    def follow_up(
        self, prompt: Prompt, exchanges: Sequence[Exchange], task: Task, split: str
    ) -> Prompt:
        """The request that continues a conversation (a reflection, a later try): `prompt`,
        its first request, and `exchanges`, each answer of the model with the user message
        that followed it, oldest first (the last message is the new one), laid out as the
        benchmark's own tool lays them out (Aider's chat chunks); by default the first
        request's messages, then each answer as the assistant's turn and each message as the
        user's."""
        ...

    def sample_fields(self, task: Task) -> Mapping[str, Any]:
        """What the benchmark records about `task` in each of its sample rows."""
        ...

    def judging(self, tasks: Mapping[str, Task]) -> Judging | None:
        """How the host judges the programs' outputs (None: the sandbox's verdict stands)."""
        ...

    def verdict_fields(self, task: Task, result: ExecResult) -> Mapping[str, Any]:
        """Fields beyond pass/fail a verdict adds to its sample's entry."""
        ...

    def reference_verdict(self, task: Task, result: ExecResult) -> ExecResult:
        """A canonical solution's verdict as the benchmark reads it (its own self-check)."""
        ...

    def extra_scores(
        self, entries: Sequence[Mapping[str, Any]], ks: Iterable[int]
    ) -> Mapping[str, Any]:
        """Scores beyond pass@k over the scored sample entries, for the pass@k file: fractions
        (None when undefined) are scores; whole numbers are counts kept beside them."""
        ...

    def insecure_reference(self, task: Task) -> str | None:
        """Code known to be insecure for `task` (what a security detector must flag)."""
        ...

    def toolchains(self) -> Toolchains | None:
        """The compilers and runtimes its programs need in the runner image besides Python
        (`passbench image build` adds them); None for Python's."""
        ...

    def toolchain_checks(self) -> tuple[ToolCheck, ...]:
        """What this machine has of the toolchains its programs need, and which tasks cannot run
        here and why (`passbench env check NAME`); () when it needs nothing beyond Python."""
        ...

    def task_environments(self) -> TaskEnvironments | None:
        """Its per-task test environments (`passbench env check/create NAME`), or None when
        its programs run in one named environment (`env_name`) or any Python."""
        ...

    def corrects(self, version: str) -> Original | None:
        """The benchmark release whose tasks `version` of this benchmark corrects (a curated
        re-release with fixed specs, tests and references, e.g. BigCodeBench+), or None.
        `passbench corrections` sets the two side by side."""
        ...

    def test_feedback(self, task: Task, result: SampleResult) -> TestFeedback:
        """What the tests said about a failed sample, for the follow-up request of
        `passbench run --tries` (a benchmark with richer test output of its own overrides it)."""
        ...

    def task_set(self, loaded: LoadedBenchmark) -> TaskSetIdentity:
        """The identity of the tasks `loaded` holds, as every result records it (benchmark,
        version, the sha256 of each data file read): runs of different identities are never
        ranked together."""
        ...


@dataclass(frozen=True, kw_only=True)
class BenchmarkInfo:
    """What a benchmark is, as one frozen record: everything the registry can say about it
    without loading a task. A benchmark declares it once (`info = BenchmarkInfo(...)`, the
    defaults below covering what most benchmarks share); `benchmark_info(name)` and
    `BenchmarkInfo.of(benchmark)` return it. It checks itself when made: a record that
    contradicts itself raises InputError naming the benchmark and the field."""

    name: str  # the registry name (--benchmark)
    title: str  # for people: "BigCodeBench", "HumanEval+"
    id_prefix: str  # task ids look like f"{id_prefix}{n}"; a bare n means that id
    versions: tuple[str, ...]
    default_version: str
    default_timeout_s: float  # the official per-task limit
    # functions (closures, per instance for MultiPL-E's languages): not part of equality
    prompt_style: PromptStyle = field(compare=False)
    programming_language: str = "Python"  # as reports show it: "Python", "C++"
    splits: tuple[str, ...] = ("complete",)
    subsets: tuple[str, ...] = ("full",)
    env_name: str | None = None  # evaluation environment; None: any Python 3
    has_reference: bool = True  # canonical solutions exist (a ground truth to run)
    guess_from_ids: bool = True  # task ids alone may name it (results.guess_benchmark)
    # False: a prompt set without tests (CyberSecEval's), scored by another command than
    # evaluate; its `program` raises `no_tests_error`
    executable: bool = True
    scored_by: str = "passbench evaluate"  # the command that scores its samples
    # tasks per subset as the benchmark publishes them (a reported score's interval needs
    # them when the per-task results are not published); {}: unknown
    subset_sizes: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    has_insecure_references: bool = False  # `insecure_reference` gives code
    quarantine_failed_references: bool = False  # leave failing references' tasks out
    # the canonical programs' outputs are judged on the host as the samples' are (SWE-bench's
    # gold patches); False: the sandbox's verdict, then `reference_verdict` (CWEval's self-check)
    judges_references: bool = False
    # an answer that cannot be applied is sent back with its error this many times in one
    # request before the last answer stands (Aider's reflections); 0: answers stand as given
    max_reflections: int = 0

    def __post_init__(self) -> None:
        # tuples and a read-only mapping, whatever was passed: the record cannot change
        for name in ("versions", "splits", "subsets"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "subset_sizes", MappingProxyType(dict(self.subset_sizes)))
        for name, problem in self._problems():
            raise InputError(f"benchmark '{self.name}': {problem}", field=name)

    def _problems(self) -> Iterator[tuple[str, str]]:
        """(field, what is wrong with it) for each way the record contradicts itself."""
        if not self.name or self.name != self.name.strip():
            yield "name", f"must be a non-empty name without surrounding spaces, not {self.name!r}"
        if not self.title:
            yield "title", "must not be empty"
        if not self.id_prefix and self.guess_from_ids:
            yield (
                "id_prefix",
                "is empty, so ids cannot name the benchmark: set guess_from_ids=False",
            )
        for name in ("versions", "splits", "subsets"):
            values: tuple[str, ...] = getattr(self, name)
            if not values or len(set(values)) != len(values):
                yield name, f"must be non-empty and without repeats, not {values!r}"
        if self.default_version not in self.versions:
            yield (
                "default_version",
                f"'{self.default_version}' is not one of the versions ({', '.join(self.versions)})",
            )
        if "full" not in self.subsets:
            yield "subsets", f"must contain 'full', not {self.subsets!r}"
        unknown = [subset for subset in self.subset_sizes if subset not in self.subsets]
        if unknown:
            yield "subset_sizes", f"names subsets it does not have: {', '.join(unknown)}"
        if any(size <= 0 for size in self.subset_sizes.values()):
            yield "subset_sizes", f"sizes must be positive, not {dict(self.subset_sizes)!r}"
        if not self.default_timeout_s > 0:
            yield "default_timeout_s", f"must be positive, not {self.default_timeout_s!r}"
        if not self.scored_by:
            yield "scored_by", "must name the command that scores its samples"
        if self.max_reflections < 0:
            yield "max_reflections", f"must be 0 or more, not {self.max_reflections}"

    @classmethod
    def of(cls, benchmark: Benchmark) -> BenchmarkInfo:
        """The record `benchmark` declares."""
        return benchmark.info


_DIGITS = re.compile(r"\d+")


class BenchmarkBase:
    """The defaults and the load/program boilerplate every benchmark module can share.

    A subclass declares its data once, `info = BenchmarkInfo(...)`, and implements `data_file`
    and `parse_tasks` (loading), `program_fields` (the program) and, when it has references,
    `canonical_code`. `load` and `program` are written once here.
    """

    info: BenchmarkInfo
    # the task metadata field whose (lower-cased) value names a task's subset, other than
    # `full` (MultiPL-E's source, CyberSecEval's language, SALLM's technique): how the default
    # `select_subset` chooses, not something the registry says about the benchmark
    subset_field: str | None = None

    # ---- loading -----------------------------------------------------------------------

    def data_file(self, version: str) -> DataFile:
        """Where the task file of `version` is found (data folders, cache, download)."""
        raise NotImplementedError

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        """Every task of the task file at `path` (DatasetError names file, line and field)."""
        raise NotImplementedError

    def select_subset(
        self,
        tasks: tuple[Task, ...],
        subset: str,
        version: str,
        source: ResolvedFile,
        data: DataSettings,
        progress: Progress | None,
    ) -> tuple[tuple[Task, ...], tuple[ResolvedFile, ...]]:
        """The subset's tasks, and any further data files read to choose them: by default every
        task for `full`, else the tasks whose `metadata[subset_field]` (lower-cased) is the
        subset's name."""
        if subset == "full" or self.subset_field is None:
            return tasks, ()
        field = self.subset_field
        return tuple(t for t in tasks if str(t.metadata[field]).lower() == subset), ()

    def load(
        self,
        version: str | None = None,
        subset: str = "full",
        *,
        data: DataSettings | None = None,
        progress: Progress | None = None,
    ) -> LoadedBenchmark:
        version = check_version(self, version)
        subset = check_subset(self, subset)
        data = data or DataSettings()
        source = resolve(
            self.data_file(version), data, explicit=data.dataset_path, progress=progress
        )
        every = self.parse_tasks(source.path)
        tasks, more = self.select_subset(every, subset, version, source, data, progress)
        return LoadedBenchmark(
            self.info.name, version, subset, tasks, (source, *more), all_tasks=every
        )

    # ---- programs ----------------------------------------------------------------------

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        """The `Program` fields this benchmark sets (source, style, timeout_s, ...)."""
        raise NotImplementedError

    def program(
        self,
        task: Task,
        code: str,
        *,
        key: str,
        timeout_s: float,
        expected_duration_s: float | None = None,
    ) -> Program:
        return Program(
            key=key,
            task_id=task.task_id,
            expected_duration_s=expected_duration_s,
            **self.program_fields(task, code, timeout_s),
        )

    def canonical_code(self, task: Task) -> str:
        raise InputError(
            f"{self.info.name} has no reference solutions ({task.task_id}): there is no ground "
            "truth to run"
        )

    def calibrated_code(self, task: Task, solution: str) -> str:
        return solution  # calibration is a BigCodeBench notion

    def solution_from_completion(self, task: Task, completion: str) -> str:
        return task.prompts["complete"] + completion

    # ---- task ids and file names -------------------------------------------------------

    def parse_task_id(self, task_id: str) -> TaskId | None:
        """`id_prefix` followed by a number and nothing else."""
        if not task_id.startswith(self.info.id_prefix):
            return None
        rest = task_id[len(self.info.id_prefix) :]
        if not _DIGITS.fullmatch(rest) or str(int(rest)) != rest:
            return None
        return TaskId(self.info.id_prefix, int(rest))

    def file_label(self, subset: str, split: str) -> str:
        """`bigcodebench.generate`'s naming: the name, `-<subset>` unless full, `-<split>`."""
        extra = f"-{subset}" if subset != "full" else ""
        return f"{self.info.name}{extra}-{split}"

    # ---- its own result files ----------------------------------------------------------

    def read_official_results(self, path: Path) -> RunResults | None:
        return None  # no result format of its own: passbench's files are read by results/

    def read_samples(self, path: Path, known_task_ids: Iterable[str]) -> list[Sample] | None:
        return None  # answers come in passbench's sample files

    def attach_official_results(self, run: RunResults) -> RunResults:
        return run

    def write_official_results(
        self,
        eval_path: Path,
        samples: Sequence[Sample],
        codes: Sequence[str],
        results: Sequence[ExecResult],
        tasks: Mapping[str, Task],
    ) -> None:
        return None  # passbench's own files are the only record

    # ---- what the other stages ask of every benchmark, with the common answer ------------

    def language_of(self, task: Task) -> str:
        return self.info.programming_language

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """Python's sanitizer: the entry point's definition, with the prompt's code (the
        Complete prompt, or the code of the Instruct prompt) for the imports it needs."""
        from passbench.stages.sanitize import sanitize

        prompt = task.prompts["complete"] if split == "complete" else task.code_prompt
        return sanitize(answer, task.entry_point, prompt=prompt)

    def sanitize_answers(self, answers: Sequence[str], task: Task, split: str) -> SanitizeResult:
        """The last answer alone, by `sanitize_answer`: a whole program replaces the ones
        before it."""
        return self.sanitize_answer(answers[-1], task, split)

    def reflection(self, answers: Sequence[str], task: Task, split: str) -> str:
        """The unusable answer's error text (`sanitize_answers`' `reflection`)."""
        return self.sanitize_answers(answers, task, split).reflection

    def follow_up(
        self, prompt: Prompt, exchanges: Sequence[Exchange], task: Task, split: str
    ) -> Prompt:
        """The first request's conversation continued: each answer as the assistant's turn
        (after the response prefix it was given, if any), then its message from the user. The
        prefix is given again for the new answer, as it was for the first."""
        return continued_prompt(prompt, exchanges)

    def sample_fields(self, task: Task) -> Mapping[str, Any]:
        return {}

    def judging(self, tasks: Mapping[str, Task]) -> Judging | None:
        return None

    def verdict_fields(self, task: Task, result: ExecResult) -> Mapping[str, Any]:
        return {}

    def reference_verdict(self, task: Task, result: ExecResult) -> ExecResult:
        return result

    def extra_scores(
        self, entries: Sequence[Mapping[str, Any]], ks: Iterable[int]
    ) -> Mapping[str, Any]:
        return {}

    def insecure_reference(self, task: Task) -> str | None:
        return None

    def toolchains(self) -> Toolchains | None:
        return None

    def toolchain_checks(self) -> tuple[ToolCheck, ...]:
        return ()

    def task_environments(self) -> TaskEnvironments | None:
        return None

    def corrects(self, version: str) -> Original | None:
        return None  # the benchmark's own tasks, not a correction of another's

    def test_feedback(self, task: Task, result: SampleResult) -> TestFeedback:
        return TestFeedback(recorded_test_output(result))

    def task_set(self, loaded: LoadedBenchmark) -> TaskSetIdentity:
        # every file the load read, task file first: what the tasks are made of
        files = tuple(DatasetFile(file.path.name, file.sha256) for file in loaded.files)
        return TaskSetIdentity(loaded.benchmark, loaded.version, files)


@dataclass(frozen=True)
class Phase:
    """One set of inputs of a differential task, run in its own process (EvalPlus runs the base
    inputs and the plus inputs separately, each with its own verdict)."""

    name: str  # "base", "plus"
    inputs: tuple[Any, ...]  # argument lists, as the reference solution receives them
    inputs_json: str  # the same, as tagged JSON (sandbox/inside/_values.py) for the sandbox
    atol: float
    # (argument list, candidate output, tolerance) -> passes; replaces the comparison
    oracle: Callable[[Sequence[Any], Any, float], bool] | None = None
    # modules already imported in the process the reference evaluator runs candidates in,
    # which a candidate may therefore import even after the reliability guard
    preload: tuple[str, ...] = ()
    # (argument list, candidate output, expected output, out == exp) -> the exact match to use:
    # MBPP+'s special oracles, which, unlike `oracle`, still go on to the tolerance rules
    match: Callable[[Sequence[Any], Any, Any, bool], bool] | None = None
    # the inputs as the reference evaluator writes them in its `*_fail_tests` fields (MBPP+
    # serialises a few tasks' sets and complex numbers as text); empty: `inputs`
    reported_inputs: tuple[Any, ...] = ()


@runtime_checkable
class DifferentialBenchmark(Protocol):
    """A benchmark judged by comparing outputs with a reference's (HumanEval+, MBPP+).

    Its programs are "io" programs: the candidate alone, fed one input at a time; expected
    outputs are computed from `canonical_code` once (ground-truth time) and never enter the
    candidate's process. The evaluator recognises these benchmarks by this method."""

    def phases(self, task: Task) -> tuple[Phase, ...]:
        """The task's input sets, in the order they are run and reported."""
        ...


class _Described(Protocol):
    """What the checks below read of a Benchmark: its record."""

    @property
    def info(self) -> BenchmarkInfo: ...


def no_tests_error(benchmark: _Described) -> InputError:
    """The one-line refusal for running a benchmark that has no tests: it names the command
    that scores its samples instead."""
    return InputError(
        f"{benchmark.info.name} has no tests to execute: score its samples with "
        f"`{benchmark.info.scored_by} SAMPLES`",
        field="benchmark",
    )


def check_executable(benchmark: _Described) -> None:
    """Raise `no_tests_error` when `benchmark` has no tests for the sandbox to run."""
    if not benchmark.info.executable:
        raise no_tests_error(benchmark)


def check_split(benchmark: _Described, split: str | None) -> str:
    """`split`, or the benchmark's first split when None; UnknownNameError when unknown."""
    if split is None:
        return benchmark.info.splits[0]
    where = f" for {benchmark.info.name}"
    return require_name("split", split, benchmark.info.splits, where=where, field="split")


def check_subset(benchmark: _Described, subset: str) -> str:
    where = f" for {benchmark.info.name}"
    return require_name("subset", subset, benchmark.info.subsets, where=where, field="subset")


def check_version(benchmark: _Described, version: str | None) -> str:
    """`version`, or the default version when None; UnknownNameError when unknown."""
    if version is None:
        return benchmark.info.default_version
    where = f" of {benchmark.info.name}"
    return require_name("version", version, benchmark.info.versions, where=where, field="version")
