"""HumanEval-X: CodeGeeX's program assembly and completion cleaning, and per language, real
programs built and run in the bubblewrap sandbox: canonical solutions of a representative
slice pass (the ones that need boost, openssl, testify, js-md5, the Rust crates), a wrong answer
fails on its assertions, a compile error is a SyntaxError. The whole ground truth is measured by
`passbench evaluate -b humaneval-x-<lang> --ground-truth` (docs/performance.md)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.datasets import DATA_DIR
from tests.stages.sandbox.helpers import bwrap_usable

from passbench.core.records import ErrorCategory, ExecResult, Program, Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.humanevalx import (
    LANGUAGES,
    HumanEvalX,
    assemble,
    generated_completion,
)
from passbench.stages.sandbox import Limits, Sandbox, SandboxConfig, open_sandbox

KEYS = sorted(LANGUAGES)

# Completions of task 53 ("add two numbers") after each language's prompt: wrong, and not
# compiling (Python: not parsing; JavaScript: node's SyntaxError)
WRONG = {
    "cpp": "    return x-y;\n}\n",
    "go": "    return x - y\n}\n",
    "java": "        return x - y;\n    }\n}\n",
    "js": "  return x - y;\n}\n",
    "python": "    return x - y\n",
    "rust": "    return x - y;\n}\n",
}
BROKEN = {
    "cpp": "    return x+;\n}\n",
    "go": "    return x +\n}\n",
    "java": "        return x +;\n    }\n}\n",
    "js": "  return x +;\n}\n",
    "python": "    return x +\n",
    "rust": "    return x + ;\n}\n",
}
# Canonical solutions that exercise what the toolchains must bring: boost (CPP/22), openssl
# (CPP/162), testify and crypto/md5 (Go/162), java.security (Java/162), js-md5 (JavaScript/162),
# numpy among the imports and hashlib (Python/162), rand's 0.4 interface (Rust/32), regex
# (Rust/91), md5 (Rust/162); and the tasks whose upstream canonical solution is wrong
SLICE = {
    "cpp": ("CPP/0", "CPP/22", "CPP/162"),
    "go": ("Go/0", "Go/162"),
    "java": ("Java/0", "Java/162"),
    "js": ("JavaScript/0", "JavaScript/162"),
    "python": ("Python/32", "Python/162"),
    "rust": ("Rust/32", "Rust/91", "Rust/162"),
}
UPSTREAM_WRONG = {"js": ("JavaScript/112", "JavaScript/155")}
# Chat answers to task 53 with the whole function and a `main` or a demo call around it
CHAT = {
    "cpp": "```cpp\n#include <iostream>\nint add(int x, int y) {\n    return x + y;\n}\n"
    "int main() { std::cout << add(1, 2); }\n```",
    "go": '```go\npackage main\n\nimport "fmt"\n\nfunc Add(x int, y int) int {\n'
    "    return x + y\n}\n\nfunc main() {\n    fmt.Println(Add(1, 2))\n}\n```",
    "java": "```java\nimport java.util.*;\n\nclass Solution {\n"
    "    public int add(int x, int y) {\n        return x + y;\n    }\n}\n\n"
    "public class Main {\n"
    "    public static void main(String[] args) {}\n}\n```",
    "js": "```javascript\nconst add = (x, y) => {\n  return x + y;\n}\n"
    "console.log(add(1, 2));\n```",
    "python": "```python\ndef add(x: int, y: int):\n    return x + y\n\nprint(add(1, 2))\n```",
    "rust": "```rust\nfn add(x: i32, y: i32) -> i32 {\n    x + y\n}\n\nfn main() {}\n```",
}


@pytest.fixture(autouse=True)
def _data() -> None:
    """Missing data fails the run, never skips it."""
    if not (DATA_DIR / "humaneval-x").is_dir():
        pytest.fail(f"HumanEval-X data not found in {DATA_DIR}; set PASSBENCH_DATA_DIR")


def _benchmark(key: str) -> HumanEvalX:
    benchmark = get_benchmark(f"humaneval-x-{key}")
    assert isinstance(benchmark, HumanEvalX)
    return benchmark


def _tasks(key: str) -> dict[str, Task]:
    loaded = _benchmark(key).load(data=DataSettings(data_dir=DATA_DIR, download=False))
    return {task.task_id: task for task in loaded}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    if not bwrap_usable():
        pytest.skip("bubblewrap cannot run here")
    # passbench's own interpreter: HumanEval-X's Python programs import numpy
    config = SandboxConfig(python=Path(sys.executable), workers=2, limits=Limits())
    with open_sandbox(config) as opened:
        yield opened


def test_every_language_loads_with_its_entry_points() -> None:
    for key in KEYS:
        tasks = _tasks(key)
        assert len(tasks) == 164, key
        prefix = LANGUAGES[key].id_prefix
        add = tasks[f"{prefix}53"]
        assert add.entry_point.lower() == "add", key
        assert add.canonical_solution and add.entry_point in add.test
    assert _tasks("java")["Java/0"].entry_point == "hasCloseElements"
    assert _tasks("go")["Go/0"].entry_point == "HasCloseElements"
    # Rust's prompt is what precedes the completion: the declaration (uses, signature), then
    # the doc comment
    rust = _tasks("rust")["Rust/53"]
    assert rust.prompts["complete"].lstrip().startswith("use std::")
    assert rust.prompts["complete"].rstrip().endswith("*/")


def test_programs_are_assembled_as_codegeex_assembles_them() -> None:
    cpp = _tasks("cpp")["CPP/53"]
    program = assemble(cpp, _benchmark("cpp").canonical_code(cpp), LANGUAGES["cpp"])
    # the helper includes the prompt lacks come first; those it has are not repeated
    assert program.startswith("#include<algorithm>\n") and program.count("#include<stdio.h>") == 1
    go = _tasks("go")["Go/0"]  # its prompt imports "math", which the canonical does not use
    assert '"math"' in go.prompts["complete"]
    code = _benchmark("go").solution_from_completion(
        go, '    return strings.Repeat("", 0) == ""\n}\n'
    )
    source = assemble(go, code, LANGUAGES["go"])
    assert source.startswith("package main\n") and source.count("package ") == 1
    assert '"math"' not in source  # the prompt's import block is dropped ...
    assert 'import (\n"strings"\n)' in source  # ... and what the completion uses is imported
    python = _tasks("python")["Python/53"]
    source = assemble(
        python, python.prompts["complete"] + "    return x + y\nprint(1)\n", LANGUAGES["python"]
    )
    assert "import numpy as np\n" in source and "print(1)" not in source  # cut at column 0
    rust = _tasks("rust")["Rust/53"]
    source = assemble(rust, _benchmark("rust").canonical_code(rust), LANGUAGES["rust"])
    assert source.startswith("\nfn main(){ \n } \n") and source.endswith(rust.test)


def test_completions_are_cut_as_codegeex_generation_stops() -> None:
    # C++, Go, JavaScript: at the brace that closes the function, then at the last `}`
    assert (
        generated_completion("cpp", "    return x+y;\n}\nint main(){ }\n") == "    return x+y;\n}"
    )
    assert generated_completion("js", "  return x + y;\n}\n\nconsole.log(add(1, 2))\n") == (
        "  return x + y;\n}"
    )
    # Java: the method closed, then the class closed for it
    assert generated_completion("java", "        return x + y;\n    }\n\n    void more() {}\n") == (
        "        return x + y;\n    }\n}"
    )
    # Go: its cleanup also cuts at a comment at column 0 and at `func main(`
    assert generated_completion("go", "    return x + y\n}\n\nfunc main() {\n}\n") == (
        "    return x + y\n}"
    )
    # Python: at the end words; Rust: kept whole (CodeGeeX has no rule for it)
    assert generated_completion("python", "    return x + y\n\nprint(add(1, 2))\n") == (
        "    return x + y\n"
    )
    assert (
        generated_completion("rust", "    x + y\n}\nfn main() {}\n")
        == "    x + y\n}\nfn main() {}\n"
    )


@pytest.mark.parametrize("key", KEYS)
def test_chat_answers_are_shaped_as_prompt_and_completion(key: str) -> None:
    """A chat answer with the whole function (and a `main` or a demo call) becomes a program
    that defines the function once, closed as the tests expect."""
    from passbench.apps.samplerows import sanitize_task_answer

    benchmark, task = _benchmark(key), _tasks(key)[f"{LANGUAGES[key].id_prefix}53"]
    result = sanitize_task_answer(CHAT[key], task, "complete")
    assert result.ok, result.reason
    source = benchmark.program(task, result.code, key="chat", timeout_s=5.0).source
    definition = {
        "cpp": "int add(",
        "go": "func Add(",
        "java": "int add(",
        "js": "const add =",
        "python": "def add(",
        "rust": "fn add(",
    }[key]
    assert source.count(definition) == 1, source
    assert "fn main() {}" not in source and "func main" not in source
    assert "console.log" not in source and "print(add" not in source
    assert source.count("class Main") == (1 if key == "java" else 0)


def _run(sandbox: Sandbox, programs: list[Program]) -> dict[str, ExecResult]:
    return {result.key: result for result in sandbox.run(programs)}


@pytest.mark.slow
@pytest.mark.parametrize("key", KEYS)
def test_ground_truth_slice_and_known_bad_programs(sandbox: Sandbox, key: str) -> None:
    benchmark, tasks = _benchmark(key), _tasks(key)
    add = tasks[f"{LANGUAGES[key].id_prefix}53"]
    limit = benchmark.info.default_timeout_s
    programs = [
        benchmark.program(
            tasks[task_id], benchmark.canonical_code(tasks[task_id]), key=task_id, timeout_s=limit
        )
        for task_id in (*SLICE[key], *UPSTREAM_WRONG.get(key, ()))
    ]
    for name, completion in (("wrong", WRONG[key]), ("broken", BROKEN[key])):
        code = benchmark.solution_from_completion(add, completion)
        programs.append(benchmark.program(add, code, key=name, timeout_s=limit))
    results = _run(sandbox, programs)
    for task_id in SLICE[key]:
        assert results[task_id].status == "pass", (task_id, results[task_id].reason)
        assert results[task_id].isolation.value == "bubblewrap"
    for task_id in UPSTREAM_WRONG.get(key, ()):
        # the canonical solution itself is wrong upstream: listed as failing, not hidden
        assert results[task_id].status == "fail", task_id
    wrong, broken = results["wrong"], results["broken"]
    assert wrong.status == "fail" and wrong.category == ErrorCategory.ASSERTION_FAILED, wrong.reason
    assert broken.status == "fail" and broken.category == ErrorCategory.SYNTAX_ERROR, broken.reason
    if key != "python":  # built and run as CodeGeeX's harness does: MultiPL-E's statuses kept
        assert wrong.outputs is not None and wrong.outputs["multipl_e_status"] == "Exception"
        assert broken.outputs is not None and broken.outputs["multipl_e_status"] == "SyntaxError"


@pytest.mark.slow
def test_javascript_passes_only_when_it_prints_nothing(sandbox: Sandbox) -> None:
    """CodeGeeX's rule for JavaScript: a failed console.assert only prints (node exits 0), so
    any output fails the program, and an exit code alone does not."""
    benchmark = _benchmark("js")
    add = _tasks("js")["JavaScript/53"]
    chatty = benchmark.solution_from_completion(add, "  console.log('sum');\n  return x + y;\n}\n")
    quiet_exit = benchmark.solution_from_completion(
        add, "  process.exitCode = 3;\n  return x + y;\n}\n"
    )
    results = _run(
        sandbox,
        [
            benchmark.program(add, chatty, key="chatty", timeout_s=5.0),
            benchmark.program(add, quiet_exit, key="quiet", timeout_s=5.0),
        ],
    )
    assert results["chatty"].status == "fail"
    assert results["quiet"].status == "pass", results["quiet"].reason


def test_env_check_reports_humaneval_x_toolchains() -> None:
    """`passbench env check multipl-e` lists HumanEval-X's toolchains too: Debian's (which the
    runner image gets) and what scripts/setup.sh adds beside them (js-md5, the Rust crates)."""
    import json

    from click.testing import CliRunner

    from passbench.apps.cli import cli
    from passbench.stages.benchmarks import benchmark_toolchains

    merged = benchmark_toolchains()
    wanted = {"golang-github-stretchr-testify-dev", "libboost-dev", "libssl-dev"}
    assert wanted <= set(merged.packages)
    report = CliRunner().invoke(cli, ["env", "check", "multipl-e", "--json"])
    assert report.exit_code == 0, report.output
    items = {item["name"]: item for item in json.loads(report.output)["items"]}
    for key, language in LANGUAGES.items():
        for tool in (*language.tools, *language.local_tools):
            assert items[f"HumanEval-X {key}: {tool}"]["ok"], tool
    assert any(name.endswith("librand.rlib") for name in items)


def test_the_no_output_rule_crosses_the_wire_to_remote_backends() -> None:
    """docker, podman, ray, e2b and remote receive programs as JSON: JavaScript's pass rule
    must reach them, and a rule they do not know is refused."""
    import json

    from passbench.core.errors import PassbenchError
    from passbench.stages.sandbox.remote import wire

    benchmark = _benchmark("js")
    task = _tasks("js")["JavaScript/53"]
    program = benchmark.program(task, benchmark.canonical_code(task), key="w", timeout_s=5.0)
    data = json.loads(json.dumps(wire.program_to_json(program)))
    assert data["process"]["pass_rule"] == "silent"
    assert wire.program_from_json(data) == program
    del data["process"]["pass_rule"]  # a client from before the field: the exit code decides
    assert wire.program_from_json(data).process.pass_rule == "exit"  # type: ignore[union-attr]
    data["process"]["pass_rule"] = "never"
    with pytest.raises(PassbenchError, match="pass_rule"):
        wire.program_from_json(data)


@pytest.mark.slow
def test_chat_answers_pass_in_the_sandbox(sandbox: Sandbox) -> None:
    from passbench.apps.samplerows import sanitize_task_answer

    programs = []
    for key in KEYS:
        benchmark, task = _benchmark(key), _tasks(key)[f"{LANGUAGES[key].id_prefix}53"]
        code = sanitize_task_answer(CHAT[key], task, "complete").code
        programs.append(benchmark.program(task, code, key=key, timeout_s=5.0))
    results = _run(sandbox, programs)
    for key in KEYS:
        assert results[key].status == "pass", (key, results[key].reason)
