"""The `passbench` command. Each sub-command lives in its own module and is imported lazily,
so `passbench --help` stays fast and a stage's dependencies load only when it runs."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

from passbench.core.errors import PassbenchError

# sub-command name -> "module:attribute" of its click command
_COMMANDS: dict[str, str] = {
    "tasks": "passbench.apps.cli.tasks:tasks",
    "evaluate": "passbench.apps.cli.evaluate:evaluate",
    "env": "passbench.apps.cli.env:env",
    "generate": "passbench.apps.cli.generate:generate",
    "sanitize": "passbench.apps.cli.sanitize:sanitize",
    "syncheck": "passbench.apps.cli.sanitize:syncheck",
    "run": "passbench.apps.cli.run:run",
    "inspect": "passbench.apps.cli.inspect:inspect",
    "compare": "passbench.apps.cli.compare:compare",
    "corrections": "passbench.apps.cli.corrections:corrections",
    "contamination": "passbench.apps.cli.contamination:contamination",
    "serve": "passbench.apps.cli.serve:serve",
    "image": "passbench.apps.cli.image:image",
    "db": "passbench.apps.cli.db:db",
    "leaderboard": "passbench.apps.cli.db:leaderboard",
    "security": "passbench.apps.cli.security:security",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in _COMMANDS if self._module_exists(name))

    @staticmethod
    def _module_exists(name: str) -> bool:
        module = _COMMANDS[name].split(":")[0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None or not self._module_exists(cmd_name):
            return None
        module_name, attribute = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="passbench")
def cli() -> None:
    """passbench: measure how well language models write code."""


def main(argv: list[str] | None = None) -> Any:
    """Entry point: turns PassbenchError into a one-line message and its exit code."""
    try:
        return cli.main(args=argv, standalone_mode=False)
    except PassbenchError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(error.exit_code)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted; finished work is kept and a re-run resumes", err=True)
        sys.exit(130)
