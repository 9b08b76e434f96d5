"""MultiPL-E: HumanEval (and MBPP, for Lua, Rust and Go) translated to other languages.

One `Language` record per language in ONE table (`LANGUAGES`); one registered benchmark per
language (`multipl-e-js`, `multipl-e-cpp`, ...), because the registry, the results and pass@k
are per benchmark name and a language's tasks, limits and toolchain are its own.

As MultiPL-E evaluates (nuprl/MultiPL-E: evaluation/src/eval_*.py, safe_subprocess.run, the
stop tokens of its dataset builders): the program is prompt + completion + "\\n" + tests, the
completion first cut at the language's first stop token; it is built and run in the sandbox
("process" programs, sandbox/inside/_process_style.py); statuses OK / SyntaxError / Exception /
Timeout; it passes when the run exits 0. No reference solutions exist for the translations, so
there is no ground truth to check (`has_reference = False`).

Prompts (`prompt_style`, one per language): a base model completes the dataset's prompt
unchanged and stops at the language's stop tokens, as MultiPL-E's own generation does
(`multipl_e/completions.py` sends `problem["prompt"]` with `stop=problem["stop_tokens"]`, the same
for every task of a language; our data files dropped that field, so `Language.stop_tokens` holds
them, and a record that still carries it must agree). MultiPL-E has no chat protocol: a chat
model gets passbench's own instruction, which names the language and asks for a fenced code
block, and a prefilled response opens a fence with the language's name (`chat_style`).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passbench.core.records import ProcessSpec, Task
from passbench.stages.benchmarks._fields import json_array_records
from passbench.stages.benchmarks.base import BenchmarkBase, BenchmarkInfo, TaskId
from passbench.stages.benchmarks.data import DataFile
from passbench.stages.benchmarks.prompting import PromptStyle, other_language_style
from passbench.stages.sandbox.remote.images import Toolchains

if TYPE_CHECKING:
    from passbench.stages.sanitize import SanitizeResult


@dataclass(frozen=True)
class Language:
    """How MultiPL-E builds, runs and judges one language. In argv, `{file}` is the source's
    path, `{dir}` its folder and `{stem}` its name without the extension."""

    key: str  # MultiPL-E's language key, also the registry suffix: "js", "cpp", ...
    title: str
    filename: str  # the source file's name ("Problem.java": Java's class is `Problem`)
    build: tuple[tuple[str, ...], ...]
    run: tuple[str, ...]
    build_timeout_s: float
    run_timeout_s: float
    stop_tokens: tuple[str, ...]
    data_file: str  # under multipl-e/ in a data folder
    tools: tuple[str, ...]  # executables `passbench env check` looks for
    debian_packages: tuple[str, ...]
    output_cap: int = 2048  # safe_subprocess.run's max_output_size, per stream
    # a run that fails with one of these in its stderr is a SyntaxError (interpreted languages
    # have no build step to fail)
    syntax_markers: tuple[str, ...] = ()
    fence_names: tuple[str, ...] = ()  # info strings of a chat answer's fenced block
    has_mbpp: bool = False  # the data file holds MBPP tasks too (subsets humaneval and mbpp)
    data_language: str = ""  # the records' `language` field when it is not `key` (Go's)
    # what comes from the npm registry instead (`npm install -g`, scripts/setup.sh), and the
    # executables it provides; the runner image has Debian's packages only
    npm_packages: tuple[str, ...] = ()
    npm_tools: tuple[str, ...] = ()


_JAVATUPLES = "/usr/share/java/javatuples.jar"
#: `go test` offline: no module proxy, no toolchain download, no GOFLAGS from anywhere, its
#: build cache and GOPATH in the sample's own folder (emptied after every sample)
GO_OFFLINE = (
    "GOPROXY=off",
    "GOTOOLCHAIN=local",
    "GOFLAGS=",
    "GOENV=off",
    "GOCACHE={dir}/.gocache",
)
_JAVAC = ("javac", "-J-Xmx1g", "-encoding", "UTF8", "-cp", _JAVATUPLES)
# The JVM reserves its heap and class space up front; with the default heap (a quarter of the
# machine's memory) it does not start under the sample's address-space limit.
_JVM = ("-Xmx1g", "-Xss8m", "-XX:+UseSerialGC", "-XX:-UsePerfData")

#: Every language, in one table. Time limits are MultiPL-E's: safe_subprocess.run's default 15 s
#: for each build and run, but Rust's run, which eval_rust.py gives 5 s, and Go's `go test`
#: (build and run in one), which eval_go.py gives 30 s.
LANGUAGES: dict[str, Language] = {
    language.key: language
    for language in (
        Language(
            key="js",
            title="JavaScript",
            filename="program.js",
            build=(),
            run=("node", "{file}"),
            build_timeout_s=15.0,
            run_timeout_s=15.0,
            stop_tokens=("\nfunction ", "\n/*", "\n//", "\nconsole.log"),
            data_file="multipl-e-humaneval-js.json",
            tools=("node",),
            debian_packages=("nodejs",),
            syntax_markers=("SyntaxError:",),
            fence_names=("javascript", "js"),
        ),
        Language(
            key="cpp",
            title="C++",
            filename="program.cpp",
            build=(("g++", "{file}", "-o", "{dir}/{stem}", "-std=c++17"),),
            run=("{dir}/{stem}",),
            build_timeout_s=15.0,
            run_timeout_s=15.0,
            stop_tokens=("\n}",),
            data_file="multipl-e-humaneval-cpp.json",
            tools=("g++",),
            debian_packages=("g++",),
            fence_names=("cpp", "c++", "cc"),
        ),
        Language(
            key="java",
            title="Java",
            filename="Problem.java",
            build=((*_JAVAC, "-d", "{dir}", "{file}"),),
            run=("java", *_JVM, "-ea", "-cp", "{dir}:" + _JAVATUPLES, "Problem"),
            build_timeout_s=15.0,
            run_timeout_s=15.0,
            stop_tokens=("\n    }\n",),
            data_file="multipl-e-humaneval-java.json",
            tools=("javac", "java", _JAVATUPLES),
            debian_packages=("default-jdk", "libjavatuples-java"),
            fence_names=("java",),
        ),
        Language(
            key="rs",
            title="Rust",
            filename="program.rs",
            build=(("rustc", "{file}", "-o", "{dir}/{stem}"),),
            run=("{dir}/{stem}",),
            build_timeout_s=15.0,
            run_timeout_s=5.0,
            stop_tokens=("\n}",),
            data_file="multipl-e-rs.json",
            tools=("rustc",),
            debian_packages=("rustc",),
            fence_names=("rust", "rs"),
            has_mbpp=True,
        ),
        Language(
            key="lua",
            title="Lua",
            filename="program.lua",
            build=(),
            run=("lua5.3", "{file}"),
            build_timeout_s=15.0,
            run_timeout_s=15.0,
            stop_tokens=("\nlocal", "\nfunction", "\n--", "\n\n"),
            data_file="multipl-e-lua.json",
            tools=("lua5.3", "/usr/share/lua/5.3/luaunit.lua"),
            debian_packages=("lua5.3", "lua-unit"),
            # lua reports a parse error as "lua5.3: <file>:<line>: <message> near <token>"
            syntax_markers=("' expected near", "unexpected symbol near", "syntax error near"),
            fence_names=("lua",),
            has_mbpp=True,
        ),
        Language(
            key="go",
            title="Go",
            # `go test` takes only *_test.go files; the prompt's package is `<name>_test`
            filename="program_test.go",
            build=(),
            run=("env", *GO_OFFLINE, "GOPATH={dir}/.gopath", "go", "test", "{file}"),
            build_timeout_s=30.0,
            run_timeout_s=30.0,
            stop_tokens=("\nfunc", "struct", "\n// "),
            data_file="multipl-e-go.json",
            tools=("go",),
            debian_packages=("golang-go",),
            # eval_go.py: "[setup failed]" or "[build failed]" on go test's stdout is a
            # SyntaxError; go prints the compiler's (and vet's) messages under this header on
            # its stderr then, and only then (the tests' own output goes to stdout)
            syntax_markers=("# command-line-arguments",),
            fence_names=("go", "golang"),
            has_mbpp=True,
            data_language="go_test.go",
        ),
        Language(
            key="ts",
            title="TypeScript",
            filename="program.ts",
            # eval_ts.py: tsc writes program.js beside the source; a failed tsc (a type error
            # too) is a SyntaxError
            build=(("tsc", "--target", "esnext", "{file}"),),
            run=("node", "{dir}/{stem}.js"),
            build_timeout_s=15.0,
            run_timeout_s=15.0,
            stop_tokens=("\nfunction ", "\n/*", "\n//", "\nclass"),
            data_file="multipl-e-humaneval-ts.json",
            tools=("node",),
            debian_packages=("nodejs",),
            syntax_markers=("SyntaxError",),
            fence_names=("typescript", "ts"),
            # MultiPL-E's image installs the latest release; 5.x is the line it was run with
            # (TypeScript 6 and 7 change the defaults a file compiles under, e.g. `strict`)
            npm_packages=("typescript@5.9.3",),
            npm_tools=("tsc",),
        ),
    )
}

_SOURCE_URL = "deep-diver/evalchemy-multipl-e-runner/raw/1a8db7cc2852c521fff618144e58af557e438dd4"


def truncate_at_stop(completion: str, stop_tokens: Iterable[str]) -> str:
    """The completion up to the first stop token (MultiPL-E's generation stops there)."""
    cut = len(completion)
    for token in stop_tokens:
        index = completion.find(token)
        if index != -1:
            cut = min(cut, index)
    return completion[:cut]


_SIGNATURE = re.compile(r"(\w+)\s*(?:<[^()]*>)?\s*\(")


def signature_name(prompt: str) -> str | None:
    """The name of the function a MultiPL-E prompt opens: on its last line (`function add(x,
    y){`, `long add(long x, long y) {`, `fn add<T>(...)`, `local function add(x, y)`), the
    identifier before the first parenthesis."""
    lines = [line for line in prompt.split("\n") if line.strip()]
    match = _SIGNATURE.search(lines[-1]) if lines else None
    return match.group(1) if match else None


def parse_multiple(path: Path, language: Language, benchmark: str) -> tuple[Task, ...]:
    """Tasks of one MultiPL-E JSON file (an array of {task_id, prompt, test, language})."""
    tasks: list[Task] = []
    seen: set[str] = set()
    for record in json_array_records(path, "MultiPL-E", "tasks"):
        task_id = record.text("task_id")
        if task_id in seen:
            raise record.error("task_id", f"'{task_id}' appears twice")
        seen.add(task_id)
        expected = language.data_language or language.key
        if record.text("language") != expected:
            raise record.error("language", f"expected '{expected}'")
        stops = (
            record.string_list("stop_tokens")
            if "stop_tokens" in record.record
            else language.stop_tokens
        )
        if stops != language.stop_tokens:
            raise record.error("stop_tokens", f"expected {list(language.stop_tokens)!r}")
        prompt = record.text("prompt")
        # the function the prompt opens (Java's is camelCase: hasCloseElements; HumanEval_23_strlen
        # is string_length); else the name after the number in the id
        entry_point = signature_name(prompt) or (
            task_id.split("_", 2)[2] if task_id.count("_") >= 2 else task_id
        )
        tasks.append(
            Task(
                benchmark=benchmark,
                task_id=task_id,
                entry_point=entry_point,
                prompts={"complete": prompt},
                code_prompt=prompt,
                test=record.text("test"),
                canonical_solution="",
                metadata={
                    "source": "mbpp" if task_id.startswith("mbpp_") else "humaneval",
                    "language": language.key,  # the sanitizer reads chat answers by it
                },
            )
        )
    return tuple(tasks)


def chat_style(language: Language) -> PromptStyle:
    """How passbench prompts a model for one MultiPL-E language (see the module docstring)."""
    return other_language_style(language.title, language.fence_names[0], language.stop_tokens)


#: MultiPL-E's task ids: the source benchmark, its task number, the function's name.
_TASK_ID = re.compile(r"(HumanEval_|mbpp_)(0|[1-9][0-9]*)(_\w+)")


def language_info(language: Language) -> BenchmarkInfo:
    """The record of MultiPL-E in one language: the languages differ in name, subsets, limit
    and prompts, and share the rest."""
    return BenchmarkInfo(
        name=f"multipl-e-{language.key}",
        title=f"MultiPL-E {language.title}",
        programming_language=language.title,
        id_prefix="HumanEval_",  # and mbpp_ for Lua, Rust and Go: see parse_task_id
        subsets=("full", "humaneval", "mbpp") if language.has_mbpp else ("full",),
        versions=("v3",),  # the Hugging Face dataset's current prompts (see its PROVENANCE)
        default_version="v3",
        default_timeout_s=language.run_timeout_s,
        env_name=None,  # the worker only starts the toolchain: any Python 3 will do
        has_reference=False,  # no reference solutions: no ground truth to check
        guess_from_ids=False,  # every language has the same ids
        prompt_style=chat_style(language),
    )


class MultiPLE(BenchmarkBase):
    """One language of MultiPL-E (the subclasses below pick it and its record)."""

    language: Language
    subset_field = "source"  # humaneval / mbpp

    def toolchains(self) -> Toolchains:
        """This language's Debian packages, and the executables and files to check after."""
        return Toolchains(self.language.debian_packages, self.language.tools)

    def data_file(self, version: str) -> DataFile:
        name = self.language.data_file
        return DataFile(
            relpath=f"multipl-e/{name}",
            url_path=f"{_SOURCE_URL}/.patched/multipl_{self.language.key}/data/{name}",
            check=lambda path: parse_multiple(path, self.language, self.info.name),
        )

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return parse_multiple(path, self.language, self.info.name)

    def parse_task_id(self, task_id: str) -> TaskId | None:
        """ "HumanEval_0_has_close_elements" -> ("HumanEval_", 0, "_has_close_elements");
        "mbpp_" ids only for the languages that have MBPP tasks."""
        match = _TASK_ID.fullmatch(task_id)
        if match is None or (match[1] == "mbpp_" and "mbpp" not in self.info.subsets):
            return None
        return TaskId(match[1], int(match[2]), match[3])

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        """`code` (prompt + completion) followed by the task's tests, built and run as
        MultiPL-E does; `timeout_s` is the run's limit."""
        language = self.language
        spec = ProcessSpec(
            filename=language.filename,
            build=language.build,
            run=language.run,
            build_timeout_s=language.build_timeout_s,
            run_timeout_s=timeout_s,
            output_cap=language.output_cap,
            syntax_markers=language.syntax_markers,
        )
        return {
            "source": code + "\n" + task.test,
            "style": "process",
            # the worker's own backstop, behind the child's build and run limits
            "timeout_s": spec.longest_s,
            "process": spec,
        }

    def solution_from_completion(self, task: Task, completion: str) -> str:
        return task.prompts["complete"] + truncate_at_stop(completion, self.language.stop_tokens)

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """A base model's answer (the prompt followed by its continuation, no fence) is cut at
        the language's stop tokens, as MultiPL-E's generation cuts it. A chat answer's fenced
        block in this language is shaped as prompt + completion so that the tests that follow it
        find one definition (sanitize/foreign.py)."""
        from passbench.stages.sanitize import SanitizeResult
        from passbench.stages.sanitize.foreign import sanitize_foreign

        prompt = task.prompts["complete"]
        if answer.startswith(prompt) and "```" not in answer[len(prompt) :]:
            continuation = answer[len(prompt) :]
            return SanitizeResult(self.solution_from_completion(task, continuation), True)

        return sanitize_foreign(
            answer,
            language=self.language.key,
            fence_names=self.language.fence_names,
            entry_point=task.entry_point,
            prompt=task.prompts["complete"],
        )


class MultiPLEJavaScript(MultiPLE):
    language = LANGUAGES["js"]
    info = language_info(language)


class MultiPLECpp(MultiPLE):
    language = LANGUAGES["cpp"]
    info = language_info(language)


class MultiPLEJava(MultiPLE):
    language = LANGUAGES["java"]
    info = language_info(language)


class MultiPLERust(MultiPLE):
    language = LANGUAGES["rs"]
    info = language_info(language)


class MultiPLELua(MultiPLE):
    language = LANGUAGES["lua"]
    info = language_info(language)


class MultiPLEGo(MultiPLE):
    language = LANGUAGES["go"]
    info = language_info(language)


class MultiPLETypeScript(MultiPLE):
    language = LANGUAGES["ts"]
    info = language_info(language)


#: The sandbox's PATH (sandbox/host/launch.py) less the interpreter's folder: toolchains must be
#: there, not in a user's own folders (~/.cargo/bin is not visible inside)
_PATH = "/usr/local/bin:/usr/bin:/bin"


def tool_location(tool: str) -> str | None:
    """Where a language's executable (on the sandbox's PATH) or file is; None when missing."""
    if tool.startswith("/"):
        return tool if Path(tool).exists() else None
    return shutil.which(tool, path=_PATH)


def missing_tools(language: Language) -> list[str]:
    """The language's executables and files missing here; empty when its toolchain is complete."""
    wanted = (*language.tools, *language.npm_tools)
    return [tool for tool in wanted if tool_location(tool) is None]
