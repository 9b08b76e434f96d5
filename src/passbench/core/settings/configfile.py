"""The config file: `--config FILE` or ./passbench.toml, checked key by key.

Its top-level keys are settings of any command; a command's table (`[evaluate]`, ...) holds that
command's settings; `[models.NAME]` and `[prices.MODEL]` are the providers'. Anything else is an
error naming the file, the line and the key.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passbench.core.errors import InputError
from passbench.core.settings.registry import (
    COMMANDS,
    CONFIG_FILE_NAME,
    GLOBAL,
    PROVIDER_TABLES,
    Setting,
    settings_of,
)
from passbench.core.settings.values import Invalid, convert

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_HEADER = re.compile(r"^\s*\[\[?\s*(?P<name>[^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*(?P<key>"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")
_TOML_POSITION = re.compile(r"\s*\(at line (?P<line>\d+), column (?P<column>\d+)\)")


def _dotted(name: str) -> str:
    """`models."gpt-4o"` -> `models.gpt-4o`: a header or key as the fields of errors name it."""
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([^.\s]+)', name)
    return ".".join(next(part for part in groups if part) for groups in parts)


@dataclass(frozen=True)
class ConfigFile:
    """A parsed config file, with the line of each key for error messages."""

    path: Path
    data: Mapping[str, Any]
    lines: Mapping[str, int] = field(default_factory=dict)  # "table.key" / "key" -> line

    def line_of(self, dotted_key: str) -> int | None:
        """The line that sets `dotted_key` ("evaluate.workers", "models.m.temperature")."""
        return self.lines.get(dotted_key)

    def table(self, name: str) -> Mapping[str, Any]:
        value = self.data.get(name, {})
        return value if isinstance(value, Mapping) else {}

    def error(self, message: str, dotted_key: str) -> InputError:
        return InputError(message, path=self.path, line=self.line_of(dotted_key), field=dotted_key)


def _key_lines(text: str) -> dict[str, int]:
    lines: dict[str, int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _dotted(header["name"])
            lines.setdefault(table, number)
            continue
        key = _KEY.match(line)
        if key:
            dotted = _dotted(key["key"])
            lines.setdefault(f"{table}.{dotted}" if table else dotted, number)
    return lines


def read_config(path: str | Path) -> ConfigFile:
    """Parse a TOML config file; InputError (file, line) when it cannot be read or parsed.
    Only syntax is checked here: `check_config` checks the keys and values."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("config file not found", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a TOML file", path=path) from None
    except UnicodeDecodeError:
        raise InputError("not valid UTF-8", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", path=path) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        position = _TOML_POSITION.search(message)
        line = int(position["line"]) if position else None
        if position:
            message = message[: position.start()] + f" (column {position['column']})"
        raise InputError(f"invalid TOML: {message}", path=path, line=line) from None
    return ConfigFile(path=path, data=data, lines=_key_lines(text))


def parse_toml_value(text: str) -> Any:
    """One TOML value (`4096`, `true`, `"x"`, `[1, 2]`); ValueError when `text` is none."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError as error:
        raise ValueError(str(error)) from None


def find_config(explicit: str | Path | None, cwd: Path | None = None) -> ConfigFile | None:
    """`explicit` (which must exist), else ./passbench.toml when there is one, else None."""
    if explicit is not None:
        return read_config(explicit)
    candidate = (cwd or Path.cwd()) / CONFIG_FILE_NAME
    return read_config(candidate) if candidate.is_file() else None


def normal(key: str) -> str:
    return key.replace("-", "_")


def _known(settings: tuple[Setting, ...]) -> str:
    return ", ".join(sorted(setting.key for setting in settings))


def check_config(config: ConfigFile) -> None:
    """Every key of the file must be a setting (or a provider table): InputError otherwise,
    naming the file, the line and the key; every value must fit its setting."""
    every = {s.key: s for settings in (GLOBAL, *COMMANDS.values()) for s in settings}
    for key, value in config.data.items():
        name = normal(key)
        if key in PROVIDER_TABLES:
            if not isinstance(value, Mapping):
                raise config.error("must be a table", key)
            continue
        if name in COMMANDS:
            if not isinstance(value, Mapping):
                raise config.error(f"must be a table (the settings of `passbench {key}`)", key)
            own = {s.key: s for s in settings_of(name)}
            for inner, item in value.items():
                setting = own.get(normal(inner))
                if setting is None:
                    known = _known(settings_of(name))
                    raise config.error(
                        f"unknown setting for `passbench {key}` (known: {known})", f"{key}.{inner}"
                    )
                from_config(config, setting, item, f"{key}.{inner}")
            continue
        if isinstance(value, Mapping):
            tables = ", ".join([*COMMANDS, *PROVIDER_TABLES])
            raise config.error(f"unknown table (known: {tables})", key)
        setting = every.get(name)
        if setting is None:
            raise config.error(
                "unknown setting (top-level keys are settings of some command; see "
                "docs/configuration.md)",
                key,
            )
        from_config(config, setting, value, key)


def from_config(config: ConfigFile, setting: Setting, value: Any, dotted_key: str) -> Any:
    try:
        return convert(setting, value, text=False, base=config.path.parent)
    except Invalid as error:
        raise config.error(str(error), dotted_key) from None
