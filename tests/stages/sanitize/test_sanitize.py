"""sanitize(): what is kept, what is dropped, and when extraction fails."""

from __future__ import annotations

import ast
import textwrap

from passbench.stages.sanitize import sanitize


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def top_level(code: str) -> list[str]:
    """`name` of each top-level def/class/assignment and `import x` forms, in order."""
    names = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.append("import " + ", ".join(a.asname or a.name for a in node.names))
        elif isinstance(node, ast.Assign):
            names.append(ast.unparse(node.targets[0]))
        else:
            names.append(type(node).__name__)
    return names


SOLUTION = dedent(
    """
    import os

    def task_func(path):
        return sorted(os.listdir(path))
    """
)


def test_plain_code_comes_back_unchanged_in_substance() -> None:
    result = sanitize(SOLUTION, "task_func")
    assert result.ok
    assert result.reason == ""
    assert ast.dump(ast.parse(result.code)) == ast.dump(ast.parse(SOLUTION))


def test_prose_around_a_block() -> None:
    answer = f"Sure! Here you go:\n\n```python\n{SOLUTION}```\n\nThis sorts the names."
    result = sanitize(answer, "task_func")
    assert result.ok
    assert result.origin == "fenced"
    assert top_level(result.code) == ["import os", "task_func"]


def test_example_usage_and_main_guard_are_dropped() -> None:
    answer = dedent(
        """
        ```python
        import os

        def task_func(path):
            result = sorted(os.listdir(path))
            return result

        # Example usage
        result = task_func(".")
        print(result)

        if __name__ == "__main__":
            print(task_func("/"))
        ```
        """
    )
    result = sanitize(answer, "task_func")
    assert top_level(result.code) == ["import os", "task_func"]


def test_locals_never_pull_in_usage_assignments() -> None:
    # `df` is a parameter of the solution and a usage variable whose creation would crash.
    answer = dedent(
        """
        ```python
        import pandas as pd

        def task_func(df):
            return df.sum()
        ```
        Usage:
        ```python
        df = pd.read_csv("data.csv")
        print(task_func(df))
        ```
        """
    )
    assert top_level(sanitize(answer, "task_func").code) == ["import pd", "task_func"]


def test_constants_and_helpers_the_solution_needs_are_kept() -> None:
    answer = dedent(
        """
        ```python
        import math
        import random

        SCALE = 2
        UNUSED = 3

        def _area(r):
            return math.pi * r ** 2 * SCALE

        class Shape:
            pass

        def task_func(r):
            return _area(r)

        def unrelated():
            return random.random()

        print(task_func(1))
        ```
        """
    )
    result = sanitize(answer, "task_func")
    assert top_level(result.code) == ["import math", "import random", "SCALE", "_area", "task_func"]


def test_definitions_split_over_several_blocks() -> None:
    answer = dedent(
        """
        First the imports:
        ```python
        import numpy as np
        import pandas as pd
        ```
        A helper:
        ```python
        def helper(x):
            return np.asarray(x)
        ```
        And the function:
        ```python
        def task_func(x):
            return helper(x).sum()
        ```
        Usage:
        ```python
        import sys
        print(task_func([1, 2]), file=sys.stderr)
        ```
        """
    )
    result = sanitize(answer, "task_func")
    assert result.ok
    assert top_level(result.code) == ["import np", "import pd", "helper", "task_func"]


def test_test_blocks_and_their_self_imports_are_dropped() -> None:
    answer = dedent(
        """
        ```python
        def task_func(a):
            return a + 1
        ```
        ```python
        import unittest
        from solution import task_func

        class TestIt(unittest.TestCase):
            def test_one(self):
                self.assertEqual(task_func(1), 2)
        ```
        """
    )
    assert top_level(sanitize(answer, "task_func").code) == ["task_func"]


def test_an_import_that_would_shadow_the_solution_is_dropped_from_its_block() -> None:
    answer = "def task_func():\n    return 1\n\nfrom mymodule import task_func, other\n"
    result = sanitize(answer, "task_func")
    assert top_level(result.code) == ["task_func", "import other"]


def test_the_last_complete_definition_wins() -> None:
    answer = dedent(
        """
        ```python
        def task_func(x):
            return x
        ```
        Wait, that is wrong. Fixed:
        ```python
        def task_func(x):
            return x * 2
        ```
        The key part is:
        ```python
        def task_func(x):
            ...
            return x * 2
        ```
        """
    )
    result = sanitize(answer, "task_func")
    assert "return x * 2" in result.code
    assert "..." not in result.code


def test_a_repeated_prompt_is_not_the_solution() -> None:
    prompt = 'import os\n\ndef task_func(path):\n    """List a folder."""\n'
    answer = f"You asked:\n```python\n{prompt}```\nAnswer:\n```python\n{SOLUTION}```\n"
    result = sanitize(answer, "task_func", prompt=prompt)
    assert result.ok
    assert "sorted" in result.code


def test_only_a_stub_is_a_failure_with_a_reason() -> None:
    answer = '```python\ndef task_func(path):\n    """TODO"""\n    pass\n```'
    result = sanitize(answer, "task_func")
    assert not result.ok
    assert "stub" in result.reason
    assert "def task_func" in result.code


def test_thinking_drafts_are_ignored_when_there_is_an_answer() -> None:
    answer = (
        "<think>\n```python\ndef task_func(path):\n    return 'draft'\n```\n</think>\n"
        f"```python\n{SOLUTION}```"
    )
    result = sanitize(answer, "task_func")
    assert "draft" not in result.code
    assert result.origin == "fenced"


def test_thinking_is_used_when_the_answer_never_came() -> None:
    answer = f"<think>\nThe code will be:\n```python\n{SOLUTION}```\nLet me check the edge"
    result = sanitize(answer, "task_func")
    assert result.ok
    assert result.origin == "thinking-fenced"
    assert "sorted" in result.code


def test_unfenced_answer_with_prose() -> None:
    answer = f"Here's the code:\n\n{SOLUTION}\nExplanation: it lists.\n- one\n- two\n"
    result = sanitize(answer, "task_func")
    assert result.ok
    assert result.origin == "unfenced"
    assert top_level(result.code) == ["import os", "task_func"]


def test_code_in_a_bash_block_is_found_by_the_unfenced_reading() -> None:
    answer = f"```sh\npip install x\n```\n\n{SOLUTION}"
    assert sanitize(answer, "task_func").ok


def test_truncated_answer_keeps_what_is_complete() -> None:
    answer = f"```python\n{SOLUTION}\n\ndef extra():\n    return [1,\n"
    result = sanitize(answer, "task_func")
    assert result.ok
    assert top_level(result.code) == ["import os", "task_func"]


def test_truncated_entry_point_is_a_failure() -> None:
    answer = "```python\nimport os\n\ndef task_func(path):\n    return sorted(os.listdir(\n"
    result = sanitize(answer, "task_func")
    assert not result.ok
    assert "no definition of 'task_func'" in result.reason


def test_function_body_alone_is_completed_with_the_prompt() -> None:
    prompt = "import os\ndef task_func(path):\n"
    answer = "```python\n    return sorted(os.listdir(path))\n```"
    result = sanitize(answer, "task_func", prompt=prompt)
    assert result.ok
    assert result.origin == "prompt+body"
    assert top_level(result.code) == ["import os", "task_func"]
    assert not sanitize(answer, "task_func").ok


def test_prompt_constants_are_kept_for_the_tests() -> None:
    # The solution shadows the constant with a local, but the tests may read the global.
    prompt = "import os\nTARGET = 'out.txt'\ndef task_func():\n"
    answer = dedent(
        """
        ```python
        import os

        def task_func():
            TARGET = 'out.txt'
            return os.path.exists(TARGET)

        TARGET = 'out.txt'
        ```
        """
    )
    assert top_level(sanitize(answer, "task_func", prompt=prompt).code) == [
        "import os",
        "task_func",
        "TARGET",
    ]
    assert top_level(sanitize(answer, "task_func").code) == ["import os", "task_func"]


def test_constants_mentioned_before_the_solution_are_kept_like_the_official_tool() -> None:
    answer = "import os\nTARGET = 'x'\n\ndef task_func():\n    TARGET = 'y'\n    return TARGET\n"
    assert top_level(sanitize(answer, "task_func").code) == ["import os", "TARGET", "task_func"]


def test_conditional_imports_the_solution_needs_are_kept() -> None:
    answer = dedent(
        """
        try:
            import ujson as json
        except ImportError:
            import json

        def task_func(s):
            return json.loads(s)

        for case in ["1", "2"]:
            print(task_func(case))
        """
    )
    assert top_level(sanitize(answer, "task_func").code) == ["Try", "task_func"]


def test_mutations_of_kept_constants_are_kept() -> None:
    answer = "TABLE = {}\nTABLE['a'] = 1\nresult = {}\n\ndef task_func():\n    return TABLE\n"
    assert top_level(sanitize(answer, "task_func").code) == ["TABLE", "TABLE['a']", "task_func"]


def test_async_entry_points_and_classes() -> None:
    assert sanitize("async def task_func():\n    return 1\n", "task_func").ok
    assert sanitize("class Solution:\n    def f(self):\n        return 1\n", "Solution").ok


def test_empty_and_codeless_answers() -> None:
    empty = sanitize("  \n", "task_func")
    assert (empty.ok, empty.reason, empty.code) == (False, "empty answer", "")
    refusal = sanitize("I cannot help with that.", "task_func")
    assert not refusal.ok
    assert refusal.reason == "no definition of 'task_func' found"


def test_windows_line_endings() -> None:
    result = sanitize(f"Code:\r\n```python\r\n{SOLUTION}```\r\n".replace("\n", "\r\n"), "task_func")
    assert result.ok
    assert "\r" not in result.code


def test_markdown_fences_inside_a_docstring() -> None:
    answer = dedent(
        '''
        ```python
        def task_func(text):
            """Parse lines like:
            ```
            a - b
            ```
            """
            return text.split(" - ")
        ```
        '''
    )
    result = sanitize(answer, "task_func")
    assert result.ok
    assert 'return text.split(" - ")' in result.code


def test_sanitizing_twice_changes_nothing() -> None:
    answer = f"Sure:\n```python\n{SOLUTION}\nprint(task_func('.'))\n```\n"
    once = sanitize(answer, "task_func").code
    assert sanitize(once, "task_func").code == once


def test_earlier_drafts_of_a_recursive_entry_point_are_not_kept() -> None:
    answer = (
        "def task_func(n):\n    pass\n\n"
        "def task_func(n):\n    return 1 if n < 2 else n * task_func(n - 1)\n"
    )
    result = sanitize(answer, "task_func")
    assert top_level(result.code) == ["task_func"]
    assert "pass" not in result.code
