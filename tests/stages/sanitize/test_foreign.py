"""The MultiPL-E sanitizer: which block is read, and the program's shape (one definition of the
function, the prompt's header kept, the last `}` left to tests that close the function). The
programs these answers make are built and run in tests/stages/benchmarks/test_multiple.py."""

from __future__ import annotations

import re

import pytest
from tests.stages.sanitize import chat_answers

from passbench.stages.benchmarks.multiple import LANGUAGES
from passbench.stages.sanitize.foreign import sanitize_foreign, span_end

# MultiPL-E's prompts for "add" (their shape: header, doc comment, the open signature) and the
# start of each test, which in C++, Java and Rust closes the function (Java's also the class)
PROMPTS = {
    "js": "//Add two numbers x and y\nfunction add(x, y){\n",
    "cpp": (
        "#include<assert.h>\n#include<bits/stdc++.h>\n// Add two numbers\n"
        "long add(long x, long y) {\n"
    ),
    "java": (
        "import java.util.*;\nimport org.javatuples.*;\nclass Problem {\n"
        "    // Add two numbers\n    public static long add(long x, long y) {\n"
    ),
    "rs": "/// Add two numbers x and y\nfn add(x: isize, y: isize) -> isize {\n",
    "lua": "-- Add two numbers x and y\nlocal function add(x, y)\n",
    "go": (
        'package add_test\n\nimport (\n    "testing"\n    "fmt"\n)\n\n'
        "// Add two numbers x and y\nfunc add(x int, y int) int {\n"
    ),
    "ts": "//Add two numbers x and y\nfunction add(x: number, y: number): number {\n",
}
TESTS = {
    "js": "function test() { assert.deepEqual(add(2, 3), 5); }\n",
    "cpp": "}\nint main() {\n    assert(add(2, 3) == 5);\n}\n",
    "java": (
        "    }\n    public static void main(String[] args) {\n"
        "    assert(add(2l, 3l) == 5l);\n    }\n\n}\n"
    ),
    "rs": "}\n\nfn main() {\n    assert_eq!(add(2, 3), 5);\n}\n",
    "lua": "lu = require('luaunit')\nos.exit(lu.LuaUnit.run())\n",
    "go": 'func TestAdd(t *testing.T) {\n  fmt.Sprintf("%v", add(2, 3))\n}\n',
    "ts": "function test() { assert.deepEqual(add(2, 3), 5); }\n",
}
DEFINITION = {
    "js": r"function add\(",
    "cpp": r"long add\(",
    "java": r"long add\(",
    "rs": r"fn add\(",
    "lua": r"function add\(",
    "go": r"func add\(",
    "ts": r"function add\(",
}


def _sanitize(key: str, answer: str, entry_point: str = "add", prompt: str | None = None):  # type: ignore[no-untyped-def]
    return sanitize_foreign(
        answer,
        language=key,
        fence_names=LANGUAGES[key].fence_names,
        entry_point=entry_point,
        prompt=PROMPTS[key] if prompt is None else prompt,
    )


def _balanced(program: str, key: str) -> bool:
    """Braces (Lua: blocks) of the program with its tests balance: nothing left open twice."""
    if key == "lua":
        return span_end("do\n" + program + "\nend", 0, "lua") == len(program) + 7
    source = re.sub(r'"[^"\n]*"|\'[^\'\n]\'|//[^\n]*|`[^`]*`', "", program)
    return source.count("{") == source.count("}")


@pytest.mark.parametrize("key", sorted(LANGUAGES))
@pytest.mark.parametrize("kind", ["FULL", "BODY", "SEVERAL", "UNFENCED"])
def test_one_definition_in_the_prompts_shape(key: str, kind: str) -> None:
    answer = getattr(chat_answers, kind)[key]
    result = _sanitize(key, answer)
    assert result.ok, result.reason
    program = result.code + "\n" + TESTS[key]
    assert len(re.findall(DEFINITION[key], program)) == 1, program
    assert _balanced(program, key), program
    header = PROMPTS[key][: PROMPTS[key].index("\n", PROMPTS[key].index("Add two")) + 1]
    if key == "go" and kind == "FULL":  # the import the answer's code uses joins the prompt's
        header = header.replace('"fmt"\n', '"fmt"\n    "strings"\n')
    assert result.code.startswith(header)  # includes, imports, class Problem, doc comment
    assert "+ y" in result.code and "- y" not in result.code  # SEVERAL: the fix, last
    assert "def add" not in result.code  # the Python block is not read
    expected_origin = {"BODY": "prompt+body", "UNFENCED": "unfenced"}.get(kind, "fenced")
    assert result.origin == expected_origin


@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_full_answer_keeps_helpers_and_drops_main_and_demo_calls(key: str) -> None:
    code = _sanitize(key, chat_answers.FULL[key]).code
    assert re.search(r"\bhelper\b", code.split("add(")[0])  # declared before the function
    assert "main" not in code
    assert "print" not in code and "console.log" not in code and "module.exports" not in code
    assert "export {" not in code
    if key in ("cpp", "java", "rs"):  # the tests close the function
        assert code.rstrip().endswith("+ y;") or code.rstrip().endswith("+ y")
    if key == "java":
        assert "class Solution" not in code and code.count("class Problem {") == 1
        assert "private static long helper" in code  # called from static code: made static
        assert "public static long add" in code
    if key == "lua":
        assert "return add" not in code  # a module's return would end the chunk early
    if key == "go":  # one package clause; the import the kept code uses joins the prompt's
        assert code.count("package ") == 1 and code.count("import (") == 1
        assert '"strings"' in code and code.count('"fmt"') == 1
    if key == "ts":
        assert "type Num = number;" in code.split("function add")[0]


def test_block_of_another_language_only_is_not_read() -> None:
    answer = "```python\ndef add(x, y):\n    return x + y\n```\n"
    result = _sanitize("js", answer)
    assert not result.ok and result.reason == "no definition of 'add' found"
    assert "def add" in result.code  # kept for the record; the program then fails honestly


def test_untagged_block_is_read_when_none_names_the_language() -> None:
    answer = "```\nfunction add(x, y) {\n  return x + y;\n}\n```\n"
    assert _sanitize("js", answer).code.endswith("function add(x, y) {\n  return x + y;\n}")
    tagged = answer + "```js\nfunction add(x, y) {\n  return y + x;\n}\n```\n"
    assert "y + x" in _sanitize("js", tagged).code and "x + y" not in _sanitize("js", tagged).code


@pytest.mark.parametrize(
    ("key", "answer"),
    [
        ("js", "const add = (x, y) => x + y;\n"),
        ("js", "const add = (x, y) => {\n  return x + y;\n};\n"),
        ("js", "export function add(x, y) {\n  return x + y;\n}\n"),
        (
            "cpp",
            "template <typename T>\nT helper(T a) { return a; }\n"
            "long add(long x, long y)\n{\n    return helper(x) + y;\n}\n",
        ),
        ("cpp", "long add(long x, long y);\nlong add(long x, long y) {\n    return x + y;\n}\n"),
        (
            "rs",
            "pub fn add(x: isize, y: isize) -> isize\nwhere\n    isize: Copy,\n{\n    x + y\n}\n",
        ),
        ("lua", "function add(x, y)\n  local t = {[[end]]}\n  -- end\n  return x + y\nend\n"),
        ("lua", "add = function(x, y)\n  repeat x = x until true\n  return x + y\nend\n"),
    ],
)
def test_definition_forms(key: str, answer: str) -> None:
    fence = LANGUAGES[key].fence_names[0]
    result = _sanitize(key, f"```{fence}\n{answer}```\n")
    assert result.ok and result.origin == "fenced", result.reason
    program = result.code + "\n" + TESTS[key]
    assert _balanced(program, key), program
    assert "+ y" in program


def test_truncated_answer_is_closed_where_the_tests_expect_it() -> None:
    answer = "```rust\nfn add(x: isize, y: isize) -> isize {\n    x + y\n"  # the answer stops
    code = _sanitize("rs", answer).code
    assert code.endswith("fn add(x: isize, y: isize) -> isize {\n    x + y\n")
    lua = _sanitize("lua", "```lua\nlocal function add(x, y)\n  return x + y\n").code
    assert lua.rstrip().endswith("return x + y\nend")


def test_prompt_lines_are_not_repeated() -> None:
    """Rust rejects a `use` twice; some C++ prompts define a union the answer repeats."""
    prompt = "use std::collections::HashMap;\nfn count(d: HashMap<String, isize>) -> isize {\n"
    answer = (
        "```rust\nuse std::collections::HashMap;\nuse std::collections::HashSet;\n\n"
        "fn count(d: HashMap<String, isize>) -> isize {\n    d.len() as isize\n}\n```\n"
    )
    code = _sanitize("rs", answer, entry_point="count", prompt=prompt).code
    assert code.count("use std::collections::HashMap;") == 1 and "HashSet" in code
    union = "union U{\n    long f0;\n    float f1;\n};\n"
    cpp_prompt = "#include<bits/stdc++.h>\n" + union + "U pick(long x) {\n"
    cpp_answer = (
        f"```cpp\n#include <bits/stdc++.h>\n{union}U pick(long x) {{\n    return U{{}};\n}}\n```"
    )
    cpp = _sanitize("cpp", cpp_answer, entry_point="pick", prompt=cpp_prompt).code
    assert cpp.count("union U") == 1


def test_java_methods_without_a_class_and_other_classes() -> None:
    answer = (
        "```java\nclass Pair {\n    long a;\n}\n\npublic class Main {\n"
        "    static long twice(long v) { return 2 * v; }\n"
        "    public static long add(long x, long y) {\n        return twice(x) / 2 + y;\n"
        "    }\n}\n```\n"
    )
    code = _sanitize("java", answer).code
    assert code.index("class Pair") < code.index("class Problem {")  # a top-level class
    assert "class Main" not in code and "static long twice" in code
    methods = "```java\npublic long add(long x, long y) {\n    return x + y;\n}\n```"
    assert (
        "public static long add(long x, long y) {\n    return x + y;"
        in _sanitize("java", methods).code
    )


def test_thinking_drafts_are_not_read() -> None:
    answer = (
        "<think>\n```js\nfunction add(x, y) {\n  return x * y;\n}\n```\n</think>\n"
        "```js\nfunction add(x, y) {\n  return x + y;\n}\n```\n"
    )
    code = _sanitize("js", answer).code
    assert "x + y" in code and "x * y" not in code
    only_thinking = "<think>\n```js\nfunction add(x, y) {\n  return x + y;\n}\n```\n</think>\nDone."
    result = _sanitize("js", only_thinking)
    assert result.ok and result.origin == "thinking-fenced"


@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_a_direct_completion_is_left_as_it_is(key: str) -> None:
    """prompt + completion (what `passbench sanitize` reads from a `completion` field) comes
    out as it went in."""
    body = {
        "js": "  return x + y;\n}",
        "cpp": "    return x + y;",
        "java": "        return x + y;",
        "rs": "    x + y",
        "lua": "    return x + y\nend",
        "go": "    return x + y\n}",
        "ts": "  return x + y;\n}",
    }[key]
    program = PROMPTS[key] + body
    assert _sanitize(key, program).code.rstrip() == program.rstrip()


def test_empty_answer() -> None:
    result = _sanitize("lua", "  \n")
    assert not result.ok and result.reason == "empty answer"


@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_long_answers_cost_linear_time(key: str) -> None:
    """Prose and code of 60 kB each take well under a second (a definition pattern spanning
    lines of words once took 30 s on the prose)."""
    import time

    prose = "alpha beta gamma delta\n" * 2600
    code = {
        "lua": "local function add(x, y)\n" + "  if x then x = [[a]] end\n" * 2400 + "end\n",
    }.get(key, "long add(long x, long y) {\n" + "    x = x + 'a' + \"}\";\n" * 2400 + "}\n")
    for answer in (prose, code, f"```\n{prose}```\n```\n{code}```"):
        started = time.perf_counter()
        _sanitize(key, answer)
        assert time.perf_counter() - started < 1.5
