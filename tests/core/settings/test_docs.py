"""Every setting and environment variable is documented in docs/configuration.md, in its
command's section, and nothing documented there is missing from passbench (as Datasette's
test_settings_are_documented)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from passbench.core.settings import COMMANDS, ENVIRONMENT_VARIABLES, GLOBAL

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
#: Commands whose section says "every key of these tables" instead of listing them.
COMPOSED = {"run": ("generate", "evaluate")}


def sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)
    found: dict[str, str] = {}
    for part in parts[1:]:
        title, _, body = part.partition("\n")
        table = re.fullmatch(r"`\[(\w+)\]`", title.strip())
        found[table[1] if table else title.strip()] = body
    return found


def documented_keys(body: str) -> set[str]:
    """Keys in the first cell of the section's table rows."""
    keys: set[str] = set()
    for line in body.splitlines():
        if line.startswith("| `"):
            keys.update(re.findall(r"`(\w+)`", line.split("|")[1]))
    return keys


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_setting_is_documented_in_its_section(command: str) -> None:
    found = sections()
    assert command in found, f"docs/configuration.md has no section `[{command}]`"
    documented = documented_keys(found[command])
    for part in COMPOSED.get(command, ()):
        documented |= documented_keys(found[part])
    keys = {setting.key for setting in COMMANDS[command]}
    assert keys - documented == set(), f"undocumented settings of [{command}]"
    assert documented - keys == set(), f"[{command}] documents settings passbench lacks"


def test_global_settings_and_variables_are_documented() -> None:
    found = sections()
    body = next(text for title, text in found.items() if title.startswith("Settings of every"))
    assert documented_keys(body) == {setting.key for setting in GLOBAL}
    text = DOC.read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(PASSBENCH_\w+)` \| `(\w+)` \|", text, flags=re.M))
    assert rows == set(ENVIRONMENT_VARIABLES.items())
