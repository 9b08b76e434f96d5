"""Aider's lint step: the files an answer edited are linted, and their errors are what the
model is asked to fix next (Aider's "lint reflection").

Facts from Aider-AI/aider (aider/linter.py; base_coder.py `send_message`, `lint_edited`); the
code is passbench's own, on the libraries Aider uses (grep-ast with tree-sitter-language-pack,
flake8), at Aider's pins (`pip install 'passbench[aider]'`):

- Aider's benchmark leaves `auto_lint` on and answers yes to "Attempt to fix lint errors?": after
  an answer whose edits applied, each edited file whose language grep-ast knows is linted, and
  when any has errors their text goes back as the next user message, one of the same
  `max_reflections` (3) as a malformed edit's. An answer that did not apply is never linted.
- Python: the file's tree-sitter parse (lines only), `compile()` (its SyntaxError, as a
  traceback less Aider's own frame) and flake8 with Aider's fatal selection
  (`--select=E9,F821,F823,F831,F406,F407,F701,F702,F704,F706 --show-source --isolated`),
  stdout and stderr as they come, under "## Running: <the command>".
- Other languages (TypeScript excepted): the tree-sitter parse; its ERROR and missing nodes'
  lines are the errors, with no text.
- Each file with errors: "# Fix any errors below, if possible." + the text + "## See relevant
  line(s) below marked with █." + the file's name + grep-ast's tree context around those lines
  (lines of interest marked, 3 lines' padding); the files' messages each between newlines.

Where this differs from Aider, and why:
- Aider shows `sys.executable` in the flake8 line and the file's absolute path in the compile
  traceback, both of its machine; passbench shows what Aider's benchmark image shows for the
  first (`/usr/bin/python3`) and the exercise's folder by its name for the second (as the test
  output is cleaned: `bowling/bowling.py`), so a message does not depend on this machine.
- flake8 runs with passbench's own Python (`-I`: nothing of the current folder or environment
  on its path), in a fresh folder holding only the file it reads, with `--` before the name;
  files with unsafe names (absolute, `..`) are not linted (they never reach the tests either).
  No linter executes the code: compile() and tree-sitter only parse it, and flake8's checkers
  (pyflakes, pycodestyle, and any plugin installed beside passbench) read its tokens and AST;
  `--isolated` keeps flake8 from reading configuration, so an answer cannot add a
  `local-plugins` entry that would load code of its own.
- The edited files are linted in the order the answer edited them (Aider: set order); the
  tree-sitter walk has no depth limit (Aider's recursive walk gives up past Python's); a
  compile error without a line (ValueError, MemoryError, RecursionError), where Aider's linter
  would fail, gives no compile text; a tree context grep-ast cannot build (too deep) is left out.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passbench.core.errors import EnvironmentError_

#: flake8's codes Aider counts as fatal (linter.py `flake8_lint`)
FATAL = "E9,F821,F823,F831,F406,F407,F701,F702,F704,F706"
#: the interpreter the flake8 line names: `sys.executable` in Aider's benchmark image
SHOWN_PYTHON = "/usr/bin/python3"
HEADER = "# Fix any errors below, if possible.\n\n"
FLAKE8_TIMEOUT_S = 60.0
EXTRA = "pip install 'passbench[aider]'"
#: what `passbench env check` names: the modules the lint step imports or runs
LINTERS = "grep_ast, tree_sitter_language_pack, flake8"


@dataclass(frozen=True)
class Found:
    """What one check found: its text (tree-sitter's is empty) and the lines it points at,
    counted from 0."""

    text: str
    lines: frozenset[int]


def lint_edited(files: Mapping[str, str], edited: Iterable[str], folder: str) -> str:
    """Aider's lint reflection for the files an answer edited (name -> text in `files`, by the
    name the model saw), "" when none has errors. `folder` is where the names are, as the
    compile traceback names them ("bowling" for bowling/bowling.py)."""
    message = ""
    for name in dict.fromkeys(edited):
        if name not in files or not _safe(name):
            continue
        errors = lint(name, files[name], f"{folder}/{name}" if folder else name)
        if errors:
            message += "\n" + errors + "\n"
    return message


def lint(name: str, text: str, path: str) -> str:
    """One file's lint message (Aider's `Linter.lint`), "" when it has no errors or its
    language is unknown. `path` is the file's name in a compile traceback."""
    language = _language(name)
    if not language:
        return ""
    code = text.replace("\r\n", "\n").replace("\r", "\n")  # as Aider reads the file back
    found = python_checks(name, code, path) if language == "python" else parse_errors(name, code)
    if found is None:
        return ""
    return HEADER + found.text + "\n" + tree_context(name, code, found.lines)


def python_checks(name: str, code: str, path: str) -> Found | None:
    """Tree-sitter, then compile(), then flake8, joined as Aider's `py_lint` joins them."""
    text = ""
    lines: set[int] = set()
    for found in (parse_errors(name, code), compile_error(code, path), flake8_errors(name, code)):
        if found is None:
            continue
        if text:
            text += "\n"
        text += found.text
        lines |= found.lines
    return Found(text, frozenset(lines)) if text or lines else None


def compile_error(code: str, path: str) -> Found | None:
    """The SyntaxError compile() raises, as Aider shows it: the traceback's first line and the
    error, its lines those the error spans."""
    try:
        compile(code, path, "exec")  # parses and compiles only: nothing of it runs
    except SyntaxError as error:
        if error.lineno is None:
            return None
        end = error.end_lineno if error.end_lineno is not None else error.lineno
        text = "Traceback (most recent call last):\n"
        text += "".join(traceback.format_exception_only(type(error), error))
        return Found(text, frozenset(range(error.lineno - 1, end)))
    except (ValueError, MemoryError, RecursionError):
        return None
    return None


def flake8_errors(name: str, code: str) -> Found | None:
    """flake8's fatal errors in the file, under the command as Aider's benchmark shows it."""
    shown = f"{SHOWN_PYTHON} -m flake8 --select={FATAL} --show-source --isolated {name}"
    text = f"## Running: {shown}\n\n"
    _require("flake8")
    with tempfile.TemporaryDirectory(prefix="passbench-lint-") as folder:
        target = Path(folder, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code, encoding="utf-8", newline="")
        command = [sys.executable, "-I", "-m", "flake8", f"--select={FATAL}"]
        command += ["--show-source", "--isolated", "--", name]
        try:
            done = subprocess.run(
                command,
                cwd=folder,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=FLAKE8_TIMEOUT_S,
                env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
                check=False,
            )
            errors = done.stdout + done.stderr
        except (OSError, subprocess.SubprocessError) as error:  # Aider's words for a failure
            errors = f"Error running flake8: {error}"
    if not errors:
        return None
    return Found(text + errors, frozenset(n - 1 for n in _line_numbers(text + errors, name)))


def parse_errors(name: str, code: str) -> Found | None:
    """The lines of tree-sitter's ERROR and missing nodes (Aider's `basic_lint`); None when
    there are none, for TypeScript (Aider skips it) and without a parser."""
    language = _language(name)
    if not language or language == "typescript":
        return None
    tsl = _grep_ast("tsl")
    try:
        parser = tsl.get_parser(language)
    except Exception:  # Aider skips a language whose parser will not load
        return None
    tree = parser.parse(code.encode("utf-8"))
    lines: set[int] = set()
    pending = [tree.root_node]
    while pending:  # depth first, without recursion: any depth of nesting
        node = pending.pop()
        if node.type == "ERROR" or node.is_missing:
            lines.add(node.start_point[0])
        pending.extend(reversed(node.children))
    return Found("", frozenset(lines)) if lines else None


def tree_context(name: str, code: str, lines: frozenset[int]) -> str:
    """The lines of interest marked with █ in their scopes, as Aider's `tree_context` shows
    them (grep-ast's TreeContext with Aider's settings)."""
    plural = "s" if len(lines) > 1 else ""
    output = f"## See relevant line{plural} below marked with █.\n\n{name}:\n"
    grep_ast = _grep_ast()
    try:
        context = grep_ast.TreeContext(
            name,
            code,
            color=False,
            line_number=True,
            child_context=False,
            last_line=False,
            margin=0,
            mark_lois=True,
            loi_pad=3,
            show_top_of_file_parent_scope=False,
        )
        context.add_lines_of_interest(set(lines))
        context.add_context()
        return output + str(context.format())
    except RecursionError:  # grep-ast walks the tree recursively
        return output


def available() -> str | None:
    """Where the linters are missing, what installs them; None when they are all there."""
    import importlib.util

    for module in LINTERS.split(", "):
        if importlib.util.find_spec(module) is None:
            return f"{module} is missing ({EXTRA})"
    return None


def _line_numbers(text: str, name: str) -> set[int]:
    """The line numbers the text gives for the first `name:<n>` it names (Aider's
    `find_filenames_and_linenums`, for one file)."""
    return {int(n) for n in re.findall(rf"\b{re.escape(name)}:(\d+)\b", text)}


def _language(name: str) -> str | None:
    language = _grep_ast().filename_to_lang(name)
    return str(language) if language else None


def _grep_ast(part: str = "") -> Any:
    _require("grep_ast")
    if part == "tsl":
        from grep_ast import tsl  # type: ignore[import-untyped]

        return tsl
    import grep_ast

    return grep_ast


def _require(module: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise EnvironmentError_(
            f"Aider's lint step needs {module} (with grep-ast, tree-sitter-language-pack and "
            f"flake8 at Aider's versions): {EXTRA}"
        )


def _safe(name: str) -> bool:
    parts = name.split("/")
    return not name.startswith("/") and all(p not in ("", ".", "..") for p in parts)
