"""Every passbench command the README shows must be one the CLI accepts as written.

Commands that need a model API or a long run are not executed; their arguments are parsed by
the real click command, so a renamed option or sub-command fails here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from passbench.apps.cli import cli

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_commands() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    commands = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            for part in re.split(r"&&|;", line):
                words = shlex.split(part)
                while words and "=" in words[0] and not words[0].startswith("-"):
                    words = words[1:]  # VAR=value prefixes
                if words and words[0].endswith("bin/passbench"):
                    commands.append(words[1:])
    return commands


def test_readme_shows_passbench_commands() -> None:
    assert len(readme_commands()) >= 5


@pytest.mark.parametrize("argv", readme_commands(), ids=lambda argv: " ".join(argv[:3]))
def test_readme_command_parses(argv: list[str]) -> None:
    context = click.Context(cli)
    command: click.Command | None = cli
    while isinstance(command, click.Group):
        name, command, argv = command.resolve_command(context, argv)
        assert command is not None, f"unknown sub-command {name}"
        context = click.Context(command, parent=context, info_name=name)
    assert command is not None
    command.parse_args(context, list(argv))
