"""Turn a model's raw answer into the program to evaluate.

Where the code is looked for, in order, stopping at the first place that defines the entry point:

1. the answer outside its thinking sections: its Python code blocks (fenced, each block a
   region), then the whole answer read as unfenced code;
2. the thinking sections, the same two ways (the model ran out of tokens before answering);
3. with `prompt` given, the first code that starts indented (only a function body): the prompt
   followed by that body, as the official `--calibrate` does.

Among several definitions of the entry point the last complete one wins (a model that corrects
itself writes the fix last), before any with `...` placeholders, before stubs (a repeated
prompt: signature and docstring only). Then `deps.select` keeps what it needs.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from passbench.stages.sanitize import deps
from passbench.stages.sanitize.fences import find_blocks
from passbench.stages.sanitize.syntax import syncheck
from passbench.stages.sanitize.thinking import split_thinking
from passbench.stages.sanitize.units import Unit, split_units


@dataclass(frozen=True)
class SanitizeResult:
    """The program extracted from one answer.

    ok is False when no usable definition of the entry point was found; `code` is then the
    best the answer offers (its parseable statements, else its largest code block, else the
    answer itself), so evaluating it still yields an honest failure, and `reason` says why.
    """

    code: str
    ok: bool
    reason: str = ""
    origin: str = ""  # "fenced", "unfenced", "thinking-fenced", "thinking-unfenced", "prompt+body"
    # what to send back to the model when the answer could not be applied (Aider's error text
    # for a malformed edit, its "reflection"); "" when nothing is to be sent
    reflection: str = ""


def sanitize(answer: str, entry_point: str, *, prompt: str | None = None) -> SanitizeResult:
    """Extract the solution defining `entry_point` from a raw model answer.

    prompt: the task's code the model was given (the Complete prompt, or `code_prompt`). The
    answer's definitions of the names it binds are kept (the tests may use them), and an
    answer holding nothing but a function body is completed with it.
    """
    text = answer.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return SanitizeResult(code="", ok=False, reason="empty answer")
    split = split_thinking(text)
    places: list[tuple[str, str]] = [("", split.answer)]
    if split.thinking:
        places.append(("thinking-", "\n".join(split.thinking)))

    context = _prompt_names(prompt, entry_point) if prompt is not None else frozenset()
    stub: SanitizeResult | None = None
    fallback_units: list[Unit] = []
    for label, body in places:
        for kind, regions in _readings(body):
            units = _units_of(regions)
            if units and not fallback_units:
                fallback_units = units
            selection = deps.select(units, entry_point, context_names=context)
            if selection is None:
                continue
            result = _result(selection, entry_point, origin=label + kind)
            if result.ok:
                return result
            stub = stub or result
    if prompt is not None:
        body_only = _with_prompt(split.answer, prompt, entry_point, context)
        if body_only is not None:
            return body_only
    if stub is not None:
        return stub
    return SanitizeResult(
        code=_best_effort(split.answer, fallback_units),
        ok=False,
        reason=f"no definition of {entry_point!r} found",
    )


@functools.lru_cache(maxsize=256)  # a task's samples share its prompt
def _prompt_names(prompt: str, entry_point: str) -> frozenset[str]:
    names: set[str] = set()
    for unit in split_units(prompt, 0, 0):
        names.update(deps.bound_names(unit.node))
    names.discard(entry_point)
    return frozenset(names)


def _readings(body: str) -> list[tuple[str, list[str]]]:
    """The ways to read a text as code: its Python blocks (if any), then all of it."""
    blocks = [block.code for block in find_blocks(body) if block.is_python]
    readings: list[tuple[str, list[str]]] = []
    if blocks:
        readings.append(("fenced", blocks))
    readings.append(("unfenced", [body]))
    return readings


def _units_of(regions: Sequence[str]) -> list[Unit]:
    units: list[Unit] = []
    for region, code in enumerate(regions):
        units.extend(split_units(code, region, len(units)))
    return units


def _result(selection: deps.Selection, entry_point: str, *, origin: str) -> SanitizeResult:
    code = deps.render(selection.units)
    if selection.grade == deps.STUB:
        return SanitizeResult(
            code=code,
            ok=False,
            reason=f"{entry_point!r} is only a stub (signature and docstring, no body)",
            origin=origin,
        )
    parses, message = syncheck(code)
    if not parses:  # cannot happen for statements that each parsed; kept as a guard
        return SanitizeResult(code=code, ok=False, reason=f"result does not parse: {message}")
    return SanitizeResult(code=code, ok=True, origin=origin)


def _with_prompt(
    answer: str, prompt: str, entry_point: str, context: Collection[str]
) -> SanitizeResult | None:
    blocks = [block.code for block in find_blocks(answer) if block.is_python] or [answer]
    for code in blocks:
        stripped = code.lstrip("\n")
        if stripped[:1] not in (" ", "\t"):
            continue
        program = prompt if prompt.endswith("\n") else prompt + "\n"
        units = split_units(program + stripped, 0, 0)
        selection = deps.select(units, entry_point, context_names=context)
        if selection is not None:
            result = _result(selection, entry_point, origin="prompt+body")
            if result.ok:
                return result
    return None


def _best_effort(answer: str, units: list[Unit]) -> str:
    if units:
        return deps.render(units)
    blocks = [block.code for block in find_blocks(answer)]
    if blocks:
        return max(blocks, key=len)
    return answer.strip()
