"""The one place where defaults < config file < environment < CLI flags are merged.

Every command that has settings declares them here (`COMMANDS`), and every command resolves
them through `resolve`:

    resolved = resolve("evaluate", flags={"workers": 4}, environ=os.environ)
    resolved["workers"], resolved["pass_k"], resolved.paths.cache_dir

- defaults: the `Setting.default` of each setting;
- the config file: `--config FILE`, else `./passbench.toml` when it exists. Its top-level keys
  apply to every command that has that setting; a command's own table (`[evaluate]`, ...)
  overrides them. `[models.NAME]` and `[prices.MODEL]` belong to the providers
  (passbench.stages.providers.config). Any other key or table is an error naming the file, the line
  and the key, so a typo never silently does nothing;
- the environment: the `PASSBENCH_*` variables of `ENVIRONMENT_VARIABLES`; an empty one counts
  as unset, a malformed one is an error naming the variable;
- the flags the user actually gave (the CLI passes only those).

Every value is checked and converted here, whatever its source. Nothing reads the environment at
import time: callers pass `os.environ` (or a dict in tests). docs/configuration.md documents every
setting; a test fails when one is missing there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from passbench.core.errors import InputError
from passbench.core.settings.configfile import (
    ConfigFile,
    check_config,
    find_config,
    from_config,
    normal,
    read_config,
)
from passbench.core.settings.registry import (
    COMMANDS,
    ENVIRONMENT_VARIABLES,
    GLOBAL,
    Setting,
    settings_of,
)
from passbench.core.settings.values import Invalid, convert


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("passbench"))


@dataclass(frozen=True)
class Paths:
    """Where passbench keeps data it can re-create, and whether it may download any."""

    cache_dir: Path
    data_dir: Path | None  # a folder laid out like shared/datasets, searched before the cache
    offline: bool = False  # PASSBENCH_OFFLINE: never download
    mirror: str | None = None  # PASSBENCH_DOWNLOAD_MIRROR
    repos_dir: Path | None = None  # PASSBENCH_REPOS: local git mirrors (SWE-bench)


@dataclass(frozen=True)
class Resolved:
    """One command's settings after merging, and the config file they came from (if any)."""

    command: str
    values: Mapping[str, Any]
    config: ConfigFile | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def paths(self) -> Paths:
        cache_dir = self.values.get("cache_dir")
        return Paths(
            cache_dir=cache_dir if cache_dir is not None else default_cache_dir(),
            data_dir=self.values.get("data_dir"),
            offline=bool(self.values.get("offline", False)),
            mirror=self.values.get("download_mirror"),
            repos_dir=self.values.get("repos_dir"),
        )


def _from_environment(setting: Setting, environ: Mapping[str, str]) -> tuple[bool, Any]:
    if setting.env is None:
        return False, None
    raw = environ.get(setting.env, "")
    if not raw.strip():
        return False, None
    try:
        return True, convert(setting, raw, text=True)
    except Invalid as error:
        raise InputError(f"environment variable {setting.env}: {error}") from None


def resolve(
    command: str,
    *,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str],
    config: ConfigFile | None = None,
    config_path: str | Path | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Resolved:
    """`command`'s settings: defaults < config file < environment < `flags`.

    `defaults` overrides the registry's defaults with what only a higher layer knows (the
    benchmark registry's default benchmark: core names no benchmark).

    `flags` holds the values the user gave on the command line, by setting key or CLI
    parameter name (None values count as not given). The config file is `config`, else
    `config_path`, else ./passbench.toml when it exists; it is checked whole (`check_config`).
    """
    if config is None:
        config = find_config(config_path)
    if config is not None:
        check_config(config)
    settings = settings_of(command)
    values: dict[str, Any] = {setting.key: setting.default for setting in settings}
    values.update((key, value) for key, value in (defaults or {}).items() if key in values)
    if config is not None:
        tables = [
            ("", {k: v for k, v in config.data.items() if not isinstance(v, Mapping)}),
            (f"{command}.", config.table(command)),
        ]
        by_key = {setting.key: setting for setting in settings}
        for prefix, table in tables:
            for key, value in table.items():
                setting = by_key.get(normal(key))
                if setting is not None:
                    values[setting.key] = from_config(config, setting, value, prefix + key)
    for setting in settings:
        found, value = _from_environment(setting, environ)
        if found:
            values[setting.key] = value
    for setting in settings:
        for name in (setting.param, setting.key):
            if name is None or (flags or {}).get(name) is None:
                continue
            try:
                values[setting.key] = convert(setting, (flags or {})[name], text=True)
            except Invalid as error:
                raise InputError(str(error), field=setting.flag) from None
            break
    return Resolved(command=command, values=values, config=config)


def paths_from(environ: Mapping[str, str], data_dir: str | Path | None = None) -> Paths:
    """Cache and data folders, offline and mirror from the environment (`data_dir` wins).

    For library callers; the CLI resolves these with every other setting (`resolve`)."""
    values: dict[str, Any] = {setting.key: setting.default for setting in GLOBAL}
    for setting in GLOBAL:
        found, value = _from_environment(setting, environ)
        if found:
            values[setting.key] = value
    if data_dir is not None:
        values["data_dir"] = Path(data_dir)
    return Resolved(command="", values=values).paths


__all__ = [
    "COMMANDS",
    "ENVIRONMENT_VARIABLES",
    "GLOBAL",
    "ConfigFile",
    "Paths",
    "Resolved",
    "check_config",
    "default_cache_dir",
    "find_config",
    "paths_from",
    "read_config",
    "resolve",
]
