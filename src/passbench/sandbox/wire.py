"""Programs, limits and verdicts as JSON: what a remote backend sends and receives.

Plain JSON only (no pickle): a server reads programs from clients it does not trust, and a
client reads verdicts from a server it checks (`--verify-fraction`). Every reader validates
types and says which field is wrong (errors.WireError, one line).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any

from passbench.errors import WireError
from passbench.records import ErrorCategory, ExecResult, IOSpec, Isolation, Program
from passbench.sandbox.base import Limits

#: Version of this format; a server refuses requests of another.
PROTOCOL = 1

_STYLES = ("unittest", "script", "io")
_STATUSES = ("pass", "fail", "timeout")


def _need(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if name not in data:
        raise WireError(f"{where}: field '{name}' is missing")
    value = data[name]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise WireError(f"{where}: field '{name}' must be a number, got a boolean")
    if not isinstance(value, kind):
        raise WireError(f"{where}: field '{name}' has the wrong type ({type(value).__name__})")
    return value


def _optional(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if data.get(name) is None:
        return None
    return _need(data, name, kind, where)


def program_to_json(program: Program) -> dict[str, Any]:
    return asdict(program)


def program_from_json(data: Any, where: str = "program") -> Program:
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    style = _need(data, "style", str, where)
    if style not in _STYLES:
        raise WireError(f"{where}: field 'style' must be one of {', '.join(_STYLES)}")
    preload = _need(data, "preload", list, where)
    if not all(isinstance(module, str) for module in preload):
        raise WireError(f"{where}: field 'preload' must be a list of module names")
    io = None
    if data.get("io") is not None:
        spec = _need(data, "io", dict, where)
        limits = _need(spec, "time_limits", list, f"{where}.io")
        wanted = _need(spec, "want_values", list, f"{where}.io")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in limits):
            raise WireError(f"{where}.io: field 'time_limits' must be numbers")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in wanted):
            raise WireError(f"{where}.io: field 'want_values' must be integers")
        io = IOSpec(
            entry_point=_need(spec, "entry_point", str, f"{where}.io"),
            inputs_json=_need(spec, "inputs_json", str, f"{where}.io"),
            time_limits=tuple(float(x) for x in limits),
            want_values=tuple(wanted),
            guard=_need(spec, "guard", str, f"{where}.io"),
            reference=bool(_need(spec, "reference", bool, f"{where}.io")),
        )
    if (style == "io") != (io is not None):
        raise WireError(f"{where}: an 'io' program needs field 'io', and only it")
    timeout = float(_need(data, "timeout_s", (int, float), where))
    if not 0 < timeout <= 24 * 3600:
        raise WireError(f"{where}: field 'timeout_s' must be in (0, 86400]")
    expected = _optional(data, "expected_duration_s", (int, float), where)
    return Program(
        key=_need(data, "key", str, where),
        task_id=_need(data, "task_id", str, where),
        source=_need(data, "source", str, where),
        style=style,
        test_class=_need(data, "test_class", str, where),
        timeout_s=timeout,
        expected_duration_s=None if expected is None else float(expected),
        preload=tuple(preload),
        io=io,
    )


def limits_to_json(limits: Limits) -> dict[str, Any]:
    return asdict(limits)


def limits_from_json(data: Any, where: str = "limits") -> Limits:
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    known = {f.name for f in fields(Limits)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise WireError(f"{where}: unknown field '{unknown[0]}'")
    values: dict[str, Any] = {}
    for name in known & set(data):
        if name == "allow_network":
            values[name] = bool(_need(data, name, bool, where))
        elif name == "cpu_s":
            values[name] = _optional(data, name, (int, float), where)
        else:
            number = _need(data, name, int, where)
            if number < 1:
                raise WireError(f"{where}: field '{name}' must be at least 1")
            values[name] = number
    return Limits(**values)


def result_to_json(result: ExecResult) -> dict[str, Any]:
    data = asdict(result)
    data["category"] = result.category.value if result.category else None
    data["isolation"] = result.isolation.value
    data["details"] = dict(result.details)
    return data


def result_from_json(data: Any, where: str = "result") -> ExecResult:
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    status = _need(data, "status", str, where)
    if status not in _STATUSES:
        raise WireError(f"{where}: field 'status' must be one of {', '.join(_STATUSES)}")
    details = _need(data, "details", dict, where)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in details.items()):
        raise WireError(f"{where}: field 'details' must map test names to text")
    category = _optional(data, "category", str, where)
    isolation = _need(data, "isolation", str, where)
    try:
        parsed_category = ErrorCategory(category) if category else None
        parsed_isolation = Isolation(isolation)
    except ValueError as error:
        raise WireError(f"{where}: {error}") from None
    outputs = _optional(data, "outputs", dict, where)
    inputs_done = _optional(data, "inputs_done", int, where)
    return ExecResult(
        key=_need(data, "key", str, where),
        task_id=_need(data, "task_id", str, where),
        status=status,
        category=parsed_category,
        details=details,
        duration_s=float(_need(data, "duration_s", (int, float), where)),
        wall_s=float(_need(data, "wall_s", (int, float), where)),
        isolation=parsed_isolation,
        reason=_need(data, "reason", str, where),
        tests_run=_need(data, "tests_run", int, where),
        stdout_tail=_need(data, "stdout_tail", str, where),
        network=bool(_need(data, "network", bool, where)),
        outputs=outputs,
        inputs_done=inputs_done,
    )


def line(data: Mapping[str, Any]) -> bytes:
    """One NDJSON line."""
    return json.dumps(data, separators=(",", ":")).encode() + b"\n"
