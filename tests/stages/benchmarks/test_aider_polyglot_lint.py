"""Aider's lint step for the polyglot benchmark (aider_polyglot/lint.py): the message sent back
for an edited file with errors is Aider's, and linting never runs the model's code.

The expected messages were made by running Aider's own linter (aider/linter.py of
Aider-AI/aider@5dc9490, in a scratch virtual environment outside this repository with Aider's
pins: grep-ast 0.9.0, tree-sitter-language-pack 0.13.0, tree-sitter 0.25.2, flake8 7.3.0,
Python 3.11) on these very files, each in a folder named after its exercise, through
`Linter(root=folder).lint(path)` wrapped as `Coder.lint_edited` wraps it ("\\n" + message +
"\\n"). Two parts of Aider's text name its machine and were replaced as passbench replaces
them (lint.py's docstring): the interpreter in the flake8 line (the scratch venv's python ->
`/usr/bin/python3`, Aider's benchmark image) and the folder above the exercise in the compile
traceback (removed: `zipper/zipper.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.datasets import DATA_DIR

from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.aider_polyglot.lint import lint_edited

FLAKE8 = (
    "## Running: /usr/bin/python3 -m flake8 "
    "--select=E9,F821,F823,F831,F406,F407,F701,F702,F704,F706 --show-source --isolated "
)

BOWLING = """class BowlingGame:
    def __init__(self):
        self.rolls = []

    def roll(self, pins):
        self.rolls.append(pins)

    def score(self):
        return sum(rols)
"""
#: Aider's message for an undefined name (flake8's F821; compile() finds nothing)
BOWLING_LINT = (
    "\n# Fix any errors below, if possible.\n\n"
    f"{FLAKE8}bowling.py\n\n"
    "bowling.py:9:20: F821 undefined name 'rols'\n"
    "        return sum(rols)\n"
    "                   ^\n"
    "\n## See relevant line below marked with █.\n\n"
    "bowling.py:\n"
    "...⋮...\n"
    "  2│    def __init__(self):\n"
    "...⋮...\n"
    "  6│        self.rolls.append(pins)\n"
    "  7│\n"
    "  8│    def score(self):\n"
    "  9█        return sum(rols)\n"
    "\n"
)

ZIPPER = """class Zipper:
    @staticmethod
    def from_tree(tree):
        return Zipper(tree, [])

    def value(self)
        return self.tree["value"]
"""
#: a syntax error: tree-sitter's lines, compile()'s traceback and flake8's E999, joined
ZIPPER_LINT = (
    "\n# Fix any errors below, if possible.\n\n"
    "Traceback (most recent call last):\n"
    '  File "zipper/zipper.py", line 6\n'
    "    def value(self)\n"
    "                   ^\n"
    "SyntaxError: expected ':'\n"
    f"\n{FLAKE8}zipper.py\n\n"
    "zipper.py:6:21: E999 SyntaxError: expected ':'\n"
    "    def value(self)\n"
    "                   \n"
    "^\n"
    "\n## See relevant lines below marked with █.\n\n"
    "zipper.py:\n"
    "  1█class Zipper:\n"
    "  2│    @staticmethod\n"
    "  3│    def from_tree(tree):\n"
    "  4│        return Zipper(tree, [])\n"
    "  5│\n"
    "  6█    def value(self)\n"
    '  7│        return self.tree["value"]\n'
    "\n"
)

GREP = """package grep

func Search(pattern string, flags, files []string) []string {
	result := []string{}
	for _, f := range files {
		if f == pattern {
			result = append(result, f
		}
	}
	return result
}
"""
#: another language: tree-sitter's ERROR/missing lines alone, with no text
GREP_LINT = (
    "\n# Fix any errors below, if possible.\n\n"
    "\n## See relevant line below marked with █.\n\n"
    "grep.go:\n"
    "...⋮...\n"
    "  3│func Search(pattern string, flags, files []string) []string {\n"
    "  4│\tresult := []string{}\n"
    "  5│\tfor _, f := range files {\n"
    "  6│\t\tif f == pattern {\n"
    "  7█\t\t\tresult = append(result, f\n"
    "  8│\t\t}\n"
    "  9│\t}\n"
    " 10│\treturn result\n"
    "...⋮...\n"
    "\n"
)


def test_a_fatal_flake8_error_gets_aiders_message() -> None:
    assert lint_edited({"bowling.py": BOWLING}, ["bowling.py"], "bowling") == BOWLING_LINT


def test_a_python_syntax_error_gets_the_traceback_flake8_and_the_marked_lines() -> None:
    assert lint_edited({"zipper.py": ZIPPER}, ["zipper.py"], "zipper") == ZIPPER_LINT


def test_a_go_syntax_error_gets_the_marked_lines_of_its_parse() -> None:
    assert lint_edited({"grep.go": GREP}, ["grep.go"], "grep") == GREP_LINT


def test_only_the_edited_files_are_linted_each_message_between_newlines() -> None:
    files = {"grep.go": GREP, "bowling.py": BOWLING, "notes.txt": "((("}
    assert lint_edited(files, ["notes.txt", "bowling.py"], "x") == BOWLING_LINT  # no .txt linter
    both = lint_edited(files, ["grep.go", "bowling.py"], "grep")
    assert both == GREP_LINT + BOWLING_LINT
    fixed = BOWLING.replace("rols)", "self.rolls)")
    assert lint_edited({"bowling.py": fixed, "grep.go": GREP}, ["bowling.py"], "bowling") == ""


def test_linting_never_runs_the_answer(tmp_path: Path) -> None:
    """A file named like the module flake8 runs as: `python -m flake8` started in its folder
    would import it (the current folder leads sys.path); passbench's flake8 must not. Unsafe
    names are never written anywhere."""
    mark = tmp_path / "ran"
    code = f"import pathlib\npathlib.Path({str(mark)!r}).write_text('ran')\nundefined_name\n"
    message = lint_edited({"flake8.py": code}, ["flake8.py"], "x")
    assert not mark.exists()
    assert "flake8.py:3:1: F821 undefined name 'undefined_name'" in message
    escaping = {"../../outside.py": "x = (", "/tmp/abs.py": "x = ("}
    assert lint_edited(escaping, list(escaping), "x") == ""


@pytest.fixture(scope="module")
def bowling() -> Task:
    data = DataSettings(data_dir=DATA_DIR, download=False)
    loaded = get_benchmark("aider-polyglot").load(None, "python", data=data)
    (task,) = [t for t in loaded.tasks if t.metadata["exercise"] == "bowling"]
    return task


def test_the_reflection_is_the_malformed_edit_else_the_lint_of_what_the_answer_edited(
    bowling: Task,
) -> None:
    bench = get_benchmark("aider-polyglot")
    with_error = f"bowling.py\n```\n{BOWLING}```\n"
    assert bench.reflection([with_error], bowling, "whole") == BOWLING_LINT
    # the lint error is no malformed edit: the answer applied, it stands if not fixed
    assert bench.sanitize_answers([with_error], bowling, "whole").ok
    fixed = with_error.replace("rols)", "self.rolls)")
    assert bench.reflection([with_error, fixed], bowling, "whole") == ""
    # a malformed answer is sent back with its error, not linted (nothing applied)
    nothing = "bowling.py\n<<<<<<< SEARCH\nnot in the file\n=======\nx\n>>>>>>> REPLACE\n"
    malformed = bench.reflection([nothing], bowling, "diff")
    assert malformed.startswith("# 1 SEARCH/REPLACE block failed to match!\n")
    # an answer that edits nothing is not linted, even over files with errors
    assert bench.reflection([with_error, "I am done."], bowling, "whole") == ""
    reference = json.loads(bowling.canonical_solution)
    assert bench.reflection([json.dumps(reference)], bowling, "whole") == ""
