"""Checking and converting a setting's value, from whichever source it came."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from passbench.core.settings.registry import Setting

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class Invalid(ValueError):
    """A value that does not fit its setting; the message says what was expected."""


def convert(setting: Setting, value: Any, *, text: bool, base: Path | None = None) -> Any:
    """`value` as the setting's type. `text`: it came from the environment (a string);
    `base`: the folder relative paths in a config file are relative to."""
    kind = setting.kind
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if text and isinstance(value, str):
            word = value.strip().lower()
            if word in _TRUE or word in _FALSE:
                return word in _TRUE
            raise Invalid(f"expected 1/true/yes/on or 0/false/no/off, got {value!r}")
        raise Invalid(f"expected true or false, got {value!r}")
    if kind == "integer":
        number: Any = value
        if text and isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                raise Invalid(f"expected an integer, got {value!r}") from None
        if isinstance(number, bool) or not isinstance(number, int):
            raise Invalid(f"expected an integer, got {value!r}")
        return _bounded(setting, number)
    if kind == "number":
        number = value
        if text and isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                raise Invalid(f"expected a number, got {value!r}") from None
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise Invalid(f"expected a number, got {value!r}")
        return _bounded(setting, float(number))
    if kind == "path":
        if isinstance(value, Path):
            return value
        if not isinstance(value, str) or not value:
            raise Invalid(f"expected a path (a string), got {value!r}")
        path = Path(value).expanduser()
        return base / path if base is not None and not path.is_absolute() else path
    if kind == "ks":
        return parse_ks(value)
    if not isinstance(value, str):
        raise Invalid(f"expected a string, got {value!r}")
    if setting.choices and value not in setting.choices:
        raise Invalid(f"expected one of {', '.join(setting.choices)}, got {value!r}")
    return value


def _bounded(setting: Setting, value: float) -> Any:
    if setting.minimum is not None and value < setting.minimum:
        raise Invalid(f"must be at least {setting.minimum:g}, got {value!r}")
    if setting.above is not None and value <= setting.above:
        raise Invalid(f"must be greater than {setting.above:g}, got {value!r}")
    if setting.below is not None and value >= setting.below:
        raise Invalid(f"must be less than {setting.below:g}, got {value!r}")
    return value


def parse_ks(value: Any) -> tuple[int, ...]:
    """k values for pass@k: "1,5,10", a list of integers, or one integer; sorted, unique."""
    if isinstance(value, str):
        try:
            items: list[Any] = [int(part) for part in value.split(",") if part.strip()]
        except ValueError:
            raise Invalid(f"expected comma-separated integers, got {value!r}") from None
    elif isinstance(value, (list, tuple)):
        items = list(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        items = [value]
    else:
        raise Invalid(f"expected comma-separated integers, got {value!r}")
    if not items or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in items):
        raise Invalid(f"expected positive integers, got {value!r}")
    return tuple(sorted(set(items)))
