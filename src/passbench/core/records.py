"""Records that cross stage boundaries.

Every stage reads the previous stage's records and writes its own (see docs/architecture.md):

    Task -> Prompt -> Completion -> Sample -> Program -> ExecResult

All are frozen dataclasses; they are validated where they are read from files (the I/O edges),
not here.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: Version of the result files passbench writes; bump when a field changes meaning.
RESULT_SCHEMA_VERSION = 1

Status = Literal["pass", "fail", "timeout"]


class ErrorCategory(str, enum.Enum):
    """Why a sample did not pass. A passing sample has no category (None)."""

    SYNTAX_ERROR = "syntax_error"
    IMPORT_ERROR = "import_error"
    ASSERTION_FAILED = "assertion_failed"
    EXCEPTION = "exception"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out_of_memory"
    KILLED = "killed"
    TAMPERED = "tampered"


class Isolation(str, enum.Enum):
    """How strongly a sample was isolated from the host."""

    BUBBLEWRAP = "bubblewrap"  # namespaces + read-only system + rlimits
    RLIMIT = "rlimit"  # fallback: subprocess + rlimits only (weaker; recorded loudly)


@dataclass(frozen=True)
class Task:
    """One benchmark problem."""

    benchmark: str  # registry name: "bigcodebench", "humaneval", "humanevalplus"
    task_id: str  # e.g. "BigCodeBench/0", "HumanEval/0"
    entry_point: str
    prompts: Mapping[str, str]  # split name -> prompt text ("complete", "instruct")
    code_prompt: str  # the code a calibrated solution is prefixed with (imports + signature)
    test: str  # test code (unittest TestCases for BigCodeBench, check() for HumanEval)
    canonical_solution: str  # body as published; see Benchmark.canonical_program()
    libs: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Prompt:
    """What a model is asked for one task."""

    task_id: str
    split: str
    text: str  # direct-completion text (base models) or the user message (chat models)
    messages: tuple[Mapping[str, str], ...] = ()  # chat form, when the model is a chat model
    response_prefix: str = ""  # assistant prefill, where the provider supports it


@dataclass(frozen=True)
class Exchange:
    """One turn of a conversation after its first request: the model's answer, and the user
    message that followed it (a reflection, a later try's test output). A follow-up request is
    the first request and the exchanges so far, laid out by the benchmark (`follow_up`)."""

    answer: str
    message: str


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


@dataclass(frozen=True)
class Completion:
    """A raw model answer with what produced it."""

    task_id: str
    sample_index: int
    text: str
    model: str
    provider: str
    params: Mapping[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str | None = None
    # the model's thinking, kept apart from `text` and never read as the answer: sent out of
    # band (reasoning_content, thinking blocks, thought parts) or inline sections taken out
    reasoning: str = ""
    truncated: str = ""  # why the answer was cut (core.thinking.truncation), "" when it was not


@dataclass(frozen=True)
class Sample:
    """One candidate solution for one task, after sanitizing.

    Exactly one of `solution` (a whole program) and `completion` (text appended to the
    Complete prompt) is set, as in the official sample files.
    """

    task_id: str
    solution: str | None = None
    completion: str | None = None
    raw_solution: str | None = None
    sample_index: int = 0  # the index the generator gave it (file order where the file has none)
    source_line: int = 0  # 1-based line in the samples file, for messages
    model: str | None = None  # the model the answers file names per answer (SWE-bench's)
    # why the answer was cut (token limit, unclosed thinking), "" when it was not: such a
    # sample that fails is recorded as "no answer (truncated)", not as a test failure
    truncated: str = ""
    sanitize_error: str = ""  # why the sanitizer found no usable program ("" when it did)


@dataclass(frozen=True)
class IOSpec:
    """How an "io" program is fed: one call of `entry_point` per input, each under its own
    time limit, enforced by the sandbox worker outside the candidate's process."""

    entry_point: str
    inputs_json: str  # tagged JSON (sandbox/inside/_values.py) of the list of argument lists
    time_limits: tuple[float, ...]  # seconds, one per input
    want_values: tuple[int, ...] = ()  # inputs whose output the judge needs whole
    guard: str = "evalplus"  # the reliability guard the child applies: "evalplus" or "lcb"
    reference: bool = False  # computing expected outputs: report EvalPlus's is_floats too


@dataclass(frozen=True)
class ProcessSpec:
    """How a "process" program runs: its source written to `filename` in a fresh folder, then
    each `build` command, then `run`, as subprocesses inside the sandbox under the sample's
    limits (compiled and other-language programs: MultiPL-E). It passes when `run` exits 0."""

    filename: str  # the source's file name, e.g. "Problem.java" (no folders)
    build: tuple[tuple[str, ...], ...]  # commands run first; one failing is a SyntaxError
    run: tuple[str, ...]  # the test run
    build_timeout_s: float
    run_timeout_s: float
    output_cap: int = 2048  # bytes of stdout and of stderr kept (MultiPL-E's max_output_size)
    syntax_markers: tuple[str, ...] = ()  # a failed run whose stderr has one: SyntaxError
    # when the run passes: "exit" (it exits 0) or "silent" (it writes nothing to stdout or
    # stderr, whatever its exit code: HumanEval-X's JavaScript rule, where console.assert only
    # prints)
    pass_rule: Literal["exit", "silent"] = "exit"
    # more files written beside the source before the build, as (relative path, text): a
    # project of several files (Aider's polyglot exercises: stubs, tests, build files); a path
    # may name folders under the program's folder, never leave it
    files: tuple[tuple[str, str], ...] = ()

    @property
    def longest_s(self) -> float:
        """The longest its builds and run may take, for the worker's backstop behind them: a
        build waiting for a core on a loaded machine may go on up to BUILD_WALL_CAP times its
        limit (sandbox/inside/_process_style.py times builds out by their CPU work)."""
        builds = len(self.build) * self.build_timeout_s * BUILD_WALL_CAP
        return builds + self.run_timeout_s + 5.0


#: How many times its limit a build may take in wall time while it waits for a core (the same
#: number as _BUILD_WALL_CAP in sandbox/inside/_process_style.py, which cannot import this).
BUILD_WALL_CAP = 10.0


@dataclass(frozen=True)
class RepositoryEnvironment:
    """A repository program's test environment by identity, for a machine that does not share
    this one's files (a node of a Ray cluster): a Python prefix published in the environment
    cache `cache` ($PASSBENCH_<CACHE>_ENV_DIR, else envs/<cache> in the user data folder) as a
    link named by its lock's sha256, holding the record file `record` (its lock's sha256, its
    Python version, the base interpreter's prefix) and an integrity manifest. `root` and
    `base_prefix` are where the caller has it; a node that has it elsewhere puts its own paths
    in their place, in the spec's paths, variables, script and the files named in `rewrite`."""

    cache: str  # the cache's name: "mycache" -> $PASSBENCH_MYCACHE_ENV_DIR
    lock_sha256: str
    python_version: str  # of the interpreter inside ("3.9.18"): a node's must be the same
    root: str  # the caller's real path of it
    base_prefix: str  # the caller's base interpreter prefix (shown read-only beside it)
    record: str  # the record file's name, in the environment's folder
    rewrite: tuple[str, ...] = ()  # names of the program's files that name root or base_prefix


@dataclass(frozen=True)
class LoopbackService:
    """A network service a repository's tests reach on the internet in the official images
    (requests' httpbin), run on 127.0.0.1 inside the run's own network namespace instead:
    started before the tests as a user of its own (the tests can neither signal, trace nor
    replace it), from `read_only` host folders, and gone with the run."""

    name: str  # what the run's output calls it ("httpbin")
    argv: tuple[str, ...]  # the command; the port is appended as its last argument
    port: int  # on 127.0.0.1 inside the run
    read_only: tuple[str, ...] = ()  # host folders it needs (its environment), read-only
    # (variable, value) for the tests' environment; "{port}" in a value is the port
    variables: tuple[tuple[str, str], ...] = ()
    start_timeout_s: float = 60.0
    # its tool environment by identity (`argv`'s interpreter and `read_only` are in it), for
    # a machine that finds its own build of the same lock; None: the caller's paths only
    environment: RepositoryEnvironment | None = None


@dataclass(frozen=True)
class RepositorySubmodule:
    """A git submodule checked out in a repository program's working copy as `git submodule
    update --init` leaves it: a working copy of `commit` (nothing later) at `path`, its git
    directory absorbed under .git/modules."""

    path: str  # in the working copy
    git_dir: str  # host path of the submodule repository's git directory
    commit: str
    # the submodule's repository by name ("owner/name"): a machine that does not share this
    # one's files finds its own mirror of it, as it finds the repository's
    repo: str = ""


@dataclass(frozen=True)
class RepositorySpec:
    """How a "repository" program runs (SWE-bench): a working copy of the git directory
    `git_dir` at `commit` (that commit's tree and history only: no later commit, branch or tag),
    writable at /testbed inside the sandbox; `files` (name, text) readable at
    /run/passbench/files/<name> (the patches); then `script` run by bash in /testbed with `env`,
    the `read_only` host folders (the test environment and its interpreter) visible at their own
    paths and nothing else of the host. The sandbox reports the script's output and exit code
    and, with `channel`, one record per pytest report written where the repository's code
    does not print; the benchmark judges them (`Benchmark.judging`)."""

    git_dir: str  # host path of a git directory (bare, or without a work tree)
    commit: str
    script: str
    # git submodules checked out in the working copy (astropy's astropy_helpers)
    submodules: tuple[RepositorySubmodule, ...] = ()
    # the test environment's interpreter (a virtualenv's bin/python): its folders are shown
    # read-only and its bin folder is first on PATH; None: the sandbox's own interpreter
    python: str | None = None
    files: tuple[tuple[str, str], ...] = ()
    read_only: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    # paths inside the read-only folders where the run gets a fresh, empty, writable folder of
    # its own (a test environment's per-instance install prefix), removed after the run
    fresh_dirs: tuple[str, ...] = ()
    channel: bool = True
    # started before the tests on the run's loopback (`LoopbackService`), stopped with the run
    services: tuple[LoopbackService, ...] = ()
    # a connect to an address nothing answers waits until its timeout (as on a networked
    # machine) instead of failing at once: the run's network namespace routes it into a link
    # whose other end drops it; no real network either way
    tarpit: bool = False
    memory_mb: int = 16384  # the tests' processes together (a cgroup where the host has one)
    output_cap: int = 8 * 2**20  # bytes of output kept for the log parser
    # the repository by name ("owner/name"): a machine that does not share this one's files
    # finds its own mirror of it, `<owner>__<name>.git` in its repos folder; "" = git_dir only
    repo: str = ""
    # the test environment by identity (`python`, `read_only`, `fresh_dirs` are in it); None:
    # the sandbox's own interpreter
    environment: RepositoryEnvironment | None = None


@dataclass(frozen=True)
class Program:
    """What the sandbox runs: a whole Python source and how to read its verdict.

    `style` says how the runner decides pass/fail:
      - "unittest": exec `source`, then run the `unittest.TestCase` class named `test_class`
        found in its namespace; pass when every test passes (BigCodeBench).
      - "script": exec `source`; pass when it finishes without an exception (HumanEval with
        its original tests).
      - "io": exec `source` (the candidate alone), then call `io.entry_point` on each input
        and report the outputs; the verdict is decided outside the sandbox by comparing them
        with the expected outputs (HumanEval+, EvalPlus's base and plus inputs).
      - "process": build and run `source` as `process` says (other languages: MultiPL-E).
      - "repository": a repository's tests with `source` (a patch) applied, as `repository`
        says (SWE-bench); the benchmark judges the test log on the host.
    """

    key: str  # unique within one run, e.g. "BigCodeBench/12#3"
    task_id: str
    source: str
    style: Literal["unittest", "script", "io", "process", "repository"] = "unittest"
    test_class: str = "TestCases"
    timeout_s: float = 240.0  # wall-clock limit for the test run
    expected_duration_s: float | None = None  # from ground truth, to schedule slowest first
    # the share of a core it is expected to use while it runs (from ground truth: CPU time over
    # the duration, the time it waited for a busy CPU taken off): below half a core it waits
    # (and may be split), above it computes (and long computing programs are spread)
    expected_cpu_share: float | None = None
    preload: tuple[str, ...] = ()  # modules the warm worker should have imported
    io: IOSpec | None = None  # set for style "io"
    process: ProcessSpec | None = None  # set for style "process"
    repository: RepositorySpec | None = None  # set for style "repository"


@dataclass(frozen=True)
class ExecResult:
    """The verdict on one Program."""

    key: str
    task_id: str
    status: Status
    category: ErrorCategory | None  # None when status == "pass"
    details: Mapping[str, str]  # failing test name -> traceback text (official "details")
    duration_s: float  # time the tests themselves ran, inside the sandbox
    wall_s: float  # wall time from dispatch to verdict, as seen by the host
    isolation: Isolation
    reason: str = ""  # one line a person can read: "AssertionError: 3 != 4", "timed out after 10s"
    tests_run: int = 0
    stdout_tail: str = ""  # last bytes of the program's output, for triage only
    network: bool = False  # the program could reach the host network (Limits.allow_network)
    # io programs: the worker's report (records of outputs, limits hit), which the judge reads;
    # never stored, and None on every verdict the judge has decided
    # (process programs: MultiPL-E's status, the exit code, build and run seconds)
    outputs: Mapping[str, Any] | None = None
    # io programs: how many inputs were judged (EvalPlus's `progress`), the last being the
    # failing one when the status is not "pass"
    inputs_done: int | None = None
    # user + system seconds of the program's process tree (None where not measured); a
    # program that used far less than its duration waited (sleep, subprocess, network)
    cpu_s: float | None = None
    # seconds it was ready to run but waited for a CPU (the machine's other load; None where
    # not measured, as for programs shorter than the runner's first reading)
    cpu_wait_s: float | None = None
