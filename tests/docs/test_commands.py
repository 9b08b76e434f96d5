"""Every `passbench` command shown in a fenced code block of README.md or docs/*.md is one the
real CLI accepts as written.

Each command is parsed by the real click commands (sub-commands resolved, options and
arguments converted and checked, `--help` honoured) with every command's body replaced by a
no-op, so nothing runs: an unknown option, a missing option value, an unexpected positional
argument or a renamed sub-command fails here. Only a path that does not exist on this machine
is accepted (docs name placeholder files). Usage synopses are read as their fullest call:
`[--format table|json]` becomes `--format table`, `RESULTS...` becomes `RESULTS`.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest

from passbench.apps.cli import cli

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Shown:
    """A command as a document shows it."""

    document: str
    line: int
    text: str
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.text}"


#: Fenced blocks in these languages hold no shell commands.
NOT_SHELL = ("json", "python", "toml", "yaml", "text", "csv", "html")


def fenced_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the shell lines of every fenced code block, continuations
    joined. In a block that shows a session (some line starts with "$ "), only those lines
    are commands: the others are their output."""
    blocks: list[list[tuple[int, str]]] = []
    block: list[tuple[int, str]] | None = None
    fence, shell = "", False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if block is None:
            opening = re.match(r"(`{3,}|~{3,})\s*(\S*)", stripped)
            if opening:
                fence, block = opening.group(1), []
                shell = opening.group(2).lower() not in NOT_SHELL
            continue
        if stripped.startswith(fence) and not stripped[len(fence) :].strip():
            if shell:
                blocks.append(block)
            block = None
            continue
        block.append((number, stripped))
    lines: list[tuple[int, str]] = []
    for shell in blocks:
        session = any(line.startswith("$ ") for _, line in shell)
        pending, start = "", 0
        for number, line in shell:
            if session and not pending and not line.startswith("$ "):
                continue
            if not pending:
                start = number
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            lines.append((start, pending + line))
            pending = ""
    return lines


def _synopsis_to_call(words: list[str]) -> list[str]:
    """A usage synopsis's fullest call: optional parts kept, first alternative, no ellipses."""
    call = []
    for word in words:
        word = word.strip("[]")
        if word in ("", "...", "…"):
            continue
        if "|" in word and not word.startswith(("http", "/")):
            word = word.split("|")[0]
        word = word.removesuffix("...").removesuffix("…")
        if word:
            call.append(word)
    return call


def passbench_argv(line: str) -> list[list[str]]:
    """The argument vectors of the passbench commands on one shell line (none if none)."""
    line = line.removeprefix("$ ").split("──►")[0]
    line = re.split(r"\s#\s|\s{2,}#", line)[0]  # a trailing comment
    found = []
    for part in re.split(r"&&|\|\||;|\s\|\s", line):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]  # VAR=value before the command
        if not words or not (words[0] == "passbench" or words[0].endswith("bin/passbench")):
            continue
        for redirect in (">", ">>", "<", "2>"):
            if redirect in words:
                words = words[: words.index(redirect)]
        found.append(_synopsis_to_call(words[1:]))
    return found


def shown_commands() -> list[Shown]:
    shown = []
    for document in DOCUMENTS:
        name = str(document.relative_to(REPO))
        for number, line in fenced_lines(document.read_text(encoding="utf-8")):
            for argv in passbench_argv(line):
                shown.append(Shown(name, number, line.strip(), tuple(argv)))
    return shown


SHOWN = shown_commands()


def _no_op(**params: Any) -> None:
    """Stands for a command's body: the parameters were parsed, nothing runs."""


def _dry(command: click.Command) -> click.Command:
    """A copy of `command` (and of its sub-commands) whose bodies do nothing."""
    clone = copy.copy(command)
    clone.callback = _no_op
    if isinstance(command, click.Group):
        assert isinstance(clone, click.Group)
        clone.commands = {name: _dry(sub) for name, sub in command.commands.items()}
    return clone


def _dry_cli() -> click.Group:
    context = click.Context(cli)
    commands = {}
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None, name
        commands[name] = _dry(command)
    return click.Group(
        name="passbench",
        commands=commands,
        params=list(cli.params),
        context_settings=dict(cli.context_settings),
    )


DRY_CLI = _dry_cli()


def parse(argv: list[str] | tuple[str, ...]) -> None:
    """Parse `argv` with the real commands; raises click's error when the CLI rejects it."""
    try:
        DRY_CLI.main(list(argv), prog_name="passbench", standalone_mode=False)
    except click.BadParameter as error:
        # a file the document names only as an example is not on this machine, or a
        # synopsis's placeholder (RUN_ID, N) stands where a number goes
        missing = "does not exist" in error.message or "No such file" in error.message
        is_path = error.param is not None and isinstance(error.param.type, click.Path | click.File)
        placeholder = re.match(r"'[A-Z][A-Z0-9_]*' is not a valid", error.message)
        if not ((missing and is_path) or placeholder):
            raise


def test_the_documents_show_many_commands() -> None:
    documents = {shown.document for shown in SHOWN}
    assert len(SHOWN) >= 40, [str(shown) for shown in SHOWN]
    assert "README.md" in documents and "docs/evaluate.md" in documents


@pytest.mark.parametrize("shown", SHOWN, ids=str)
def test_documented_command_parses(shown: Shown, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        parse(shown.argv)
    except click.ClickException as error:
        pytest.fail(f"{shown}\n  the CLI rejects it: {error.format_message()}")


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--no-such-option"],
        ["evaluate", "-b", "bigcodebench", "samples.jsonl"],  # samples go with --samples
        ["no-such-command"],
        ["tasks", "list", "--subset"],  # an option without its value
        ["evaluate", "--workers", "many"],  # not a number
    ],
)
def test_what_the_cli_rejects_fails_the_check(argv: list[str]) -> None:
    with pytest.raises(click.ClickException):
        parse(argv)


def test_a_usage_synopsis_is_read_as_its_fullest_call() -> None:
    line = "passbench inspect RESULTS... [--format table|json|csv] [--output FILE]  # note"
    assert passbench_argv(line) == [["inspect", "RESULTS", "--format", "table", "--output", "FILE"]]
    assert passbench_argv("$ X=1 .venv/bin/passbench tasks show 13 --field prompt > p.txt") == [
        ["tasks", "show", "13", "--field", "prompt"]
    ]
    assert passbench_argv("bash scripts/setup.sh && passbench env check bigcodebench") == [
        ["env", "check", "bigcodebench"]
    ]
    assert passbench_argv("the passbench version is printed") == []


def _leaf_commands(command: click.Command, path: tuple[str, ...] = ()) -> dict[str, click.Command]:
    if not isinstance(command, click.Group):
        return {" ".join(path): command}
    context = click.Context(command)
    found: dict[str, click.Command] = {}
    for name in command.list_commands(context):
        sub = command.get_command(context, name)
        assert sub is not None
        found |= _leaf_commands(sub, (*path, name))
    return found


def test_date_windows_are_documented_on_exactly_the_commands_that_take_them() -> None:
    """docs/benchmarks.md's "Date windows" paragraph names every command with --since and
    --until, and the commands without them (it once said "every command")."""
    text = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    paragraph = text.split("**Date windows.**")[1].split("\n\n")[0]
    named = set(re.findall(r"`([a-z][a-z ]*[a-z])`", paragraph))
    commands = _leaf_commands(cli)
    windowed = {
        name
        for name, command in commands.items()
        if {"since", "until"} <= {param.name for param in command.params}
    }
    claimed_with, claimed_without = paragraph.split("take whole files and no window")[0].rsplit(
        ".", 1
    )
    with_window = set(re.findall(r"`([a-z][a-z ]*[a-z])`", claimed_with)) & set(commands)
    without_window = set(re.findall(r"`([a-z][a-z ]*[a-z])`", claimed_without)) & set(commands)
    assert named & set(commands) == with_window | without_window
    assert with_window == windowed
    assert not without_window & windowed
