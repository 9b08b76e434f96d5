"""Keep the entry point and what it needs; drop the rest (tests, example usage, drafts).

The official sanitizer keeps every top-level import, and every function, class and assignment
whose name appears anywhere in the entry point's text (tree-sitter identifiers). That pulls in
example-usage assignments whenever a local variable of the solution shares their name (`df`,
`data`, `result`), and running those at import time can crash an otherwise correct solution.
Here a statement's needs are its *free global* names, found with the compiler's own scope
analysis (`symtable`), so locals and parameters never pull anything in.

Which definition of a needed name: the one in the entry point's own code block when it has one;
otherwise the nearest block before it, then the nearest after it (an answer may split imports,
helpers and the solution into several blocks). Imports are kept whole from the entry point's
block and from every block that provided a definition, since the benchmark's tests may use a
library the solution imported without using it itself; imports that would rebind the entry
point or a kept definition (`from solution import task_func` in a test block) are dropped.
"""

from __future__ import annotations

import ast
import functools
import symtable
import warnings
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from passbench.stages.sanitize.units import Unit

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)

# How complete a definition of the entry point is; the last one of the best grade wins.
STUB, PARTIAL, COMPLETE = 0, 1, 2


@dataclass(frozen=True)
class Selection:
    """The statements to keep, in answer order, and how good the entry point found was."""

    units: tuple[Unit, ...]
    grade: int  # STUB, PARTIAL or COMPLETE of the chosen entry point


def select(
    units: Sequence[Unit], entry_point: str, *, context_names: Collection[str] = ()
) -> Selection | None:
    """The entry point's definition and its dependencies, or None when it is not defined.

    context_names: names the task's own code defines (constants of the prompt); the tests may
    use them, so the answer's definitions of them are kept even when the solution does not
    need them.
    """
    candidates = [
        unit
        for unit in units
        if isinstance(unit.node, _DEFINITIONS) and unit.node.name == entry_point
    ]
    if not candidates:
        return None
    grades = [_grade(unit) for unit in candidates]
    best = max(grades)
    chosen = next(
        u for u, g in zip(reversed(candidates), reversed(grades), strict=True) if g == best
    )

    binders = _binders(units, entry_point)
    regions = sorted({unit.region for unit in units})
    kept: dict[int, Unit] = {chosen.position: chosen}
    # The official rule, kept for what it catches that scope analysis does not: a name the
    # entry point mentions at all (even as a local that shadows it) keeps its definition when
    # that stands before the entry point in the same block; tests may read it.
    earlier = [
        unit
        for unit in units
        if unit.region == chosen.region
        and unit.position < chosen.position
        and not isinstance(unit.node, _IMPORTS)
    ]
    if earlier:  # walking the entry point's tree is most of the cost of an answer
        mentioned = _all_names(chosen.node) - {entry_point}
        for unit in earlier:
            if bound_names(unit.node) & mentioned:
                kept[unit.position] = unit
    resolved: set[str] = {entry_point}
    pending = [*context_names]
    for unit in kept.values():
        pending.extend(needed_names(unit))
    while pending:
        name = pending.pop()
        if name in resolved:
            continue
        resolved.add(name)
        for unit in _definitions_of(name, chosen.region, regions, binders):
            if unit.position not in kept:
                kept[unit.position] = unit
                pending.extend(needed_names(unit))

    # Imports come whole from every block that gave something, and from blocks of imports
    # alone ("First the imports: ...").
    contributing = {unit.region for unit in kept.values()}
    only_imports = {unit.region for unit in units} - {
        unit.region for unit in units if not isinstance(unit.node, _IMPORTS)
    }
    for unit in units:
        if (unit.region in contributing or unit.region in only_imports) and isinstance(
            unit.node, _IMPORTS
        ):
            kept.setdefault(unit.position, unit)
    defined = {
        name
        for unit in kept.values()
        if not isinstance(unit.node, _IMPORTS)
        for name in bound_names(unit.node)
    }
    forbidden = defined | {entry_point}
    final: list[Unit] = []
    for position in sorted(kept):
        statement: Unit | None = kept[position]
        if statement is not None and isinstance(statement.node, _IMPORTS):
            statement = _without_names(statement, forbidden)
        if statement is not None:
            final.append(statement)
    return Selection(units=tuple(final), grade=best)


def render(units: Iterable[Unit]) -> str:
    """Join statements: definitions set apart by blank lines, simple statements line by line."""
    parts: list[str] = []
    previous: Unit | None = None
    for unit in units:
        if previous is not None:
            roomy = isinstance(unit.node, _DEFINITIONS) or isinstance(previous.node, _DEFINITIONS)
            parts.append("\n\n\n" if roomy else "\n")
        parts.append(unit.source)
        previous = unit
    return "".join(parts)


def _grade(unit: Unit) -> int:
    node = unit.node
    if isinstance(node, ast.ClassDef):
        return COMPLETE
    body = list(getattr(node, "body", []))
    if body and _is_docstring(body[0]):
        body = body[1:]
    if all(_is_placeholder(statement) for statement in body):
        return STUB
    if "..." not in unit.source:  # the node is parsed from its source: no `...` in it
        return COMPLETE
    for child in ast.walk(node):
        if isinstance(child, ast.Expr) and _is_ellipsis(child.value):
            return PARTIAL
    return COMPLETE


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _is_ellipsis(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is Ellipsis


def _is_placeholder(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        return _is_ellipsis(statement.value)
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, in either order of the comparison."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    return any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides)


def bound_names(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds or changes (`X = ...`, `X[k] = ...`, `X += ...`)."""
    names: set[str] = set()
    if isinstance(node, _DEFINITIONS):
        names.add(node.name)
    elif isinstance(node, ast.Import):
        names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            names.update(_target_names(target))
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        names.update(_target_names(node.target))
    elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) and not _is_main_guard(
        node
    ):
        # Conditional imports and constants built by a loop; example usage rarely binds a
        # name the solution needs, and only needed names are looked up.
        for child in _child_statements(node):
            names.update(bound_names(child))
        if isinstance(node, ast.For):
            names.update(_target_names(node.target))
    return names


def _child_statements(node: ast.stmt) -> list[ast.stmt]:
    children: list[ast.stmt] = []
    for field in ("body", "orelse", "finalbody"):
        children.extend(getattr(node, field, []))
    for handler in getattr(node, "handlers", []):
        children.extend(handler.body)
    return children


def _target_names(target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {name for element in target.elts for name in _target_names(element)}
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, (ast.Attribute, ast.Subscript)):
        return _target_names(target.value)  # a change to the object the base name holds
    return set()


def needed_names(unit: Unit) -> set[str]:
    """The global names a statement reads when it runs (or when its functions run)."""
    names = _free_globals(unit.source)
    return _all_names(unit.node) if names is None else set(names)


@functools.lru_cache(maxsize=4096)
def _free_globals(source: str) -> frozenset[str] | None:
    """`needed_names` by the compiler's scope analysis; None when it refuses the statement.
    Cached: an answer's statements are read again in each of its readings (fenced, unfenced,
    thinking), and a task's samples share their helpers."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = symtable.symtable(source, "<answer>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = {symbol.get_name() for symbol in table.get_symbols() if symbol.is_referenced()}
    stack = list(table.get_children())
    while stack:
        scope = stack.pop()
        names.update(symbol.get_name() for symbol in scope.get_symbols() if symbol.is_global())
        stack.extend(scope.get_children())
    return frozenset(names)


def _all_names(node: ast.AST) -> set[str]:
    # Fallback when symtable refuses the statement: every identifier, like the official tool.
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            names.add(child.id)
        elif isinstance(child, ast.Global):
            names.update(child.names)
    return names


def _binders(units: Sequence[Unit], entry_point: str) -> dict[tuple[int, str], list[Unit]]:
    """(region, name) -> statements of that region binding the name, in order."""
    binders: dict[tuple[int, str], list[Unit]] = {}
    for unit in units:
        if isinstance(unit.node, _DEFINITIONS) and unit.node.name == entry_point:
            continue  # other drafts of the entry point are never dependencies
        for name in bound_names(unit.node):
            binders.setdefault((unit.region, name), []).append(unit)
    return binders


def _definitions_of(
    name: str,
    home: int,
    regions: Sequence[int],
    binders: dict[tuple[int, str], list[Unit]],
) -> list[Unit]:
    if (home, name) in binders:
        return binders[(home, name)]
    before = [region for region in regions if region < home]
    after = [region for region in regions if region > home]
    for region in [*reversed(before), *after]:
        if (region, name) in binders:
            return binders[(region, name)]
    return []


def _without_names(unit: Unit, forbidden: set[str]) -> Unit | None:
    """The import without the aliases that would bind a forbidden name; None if none is left."""
    node = unit.node
    assert isinstance(node, _IMPORTS)
    aliases = [alias for alias in node.names if _alias_name(node, alias) not in forbidden]
    if len(aliases) == len(node.names):
        return unit
    if not aliases:
        return None
    trimmed: ast.Import | ast.ImportFrom
    if isinstance(node, ast.Import):
        trimmed = ast.Import(names=aliases)
    else:
        trimmed = ast.ImportFrom(module=node.module, names=aliases, level=node.level)
    ast.copy_location(trimmed, node)
    return Unit(
        node=trimmed, source=ast.unparse(trimmed), region=unit.region, position=unit.position
    )


def _alias_name(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> str:
    if isinstance(node, ast.Import):
        return (alias.asname or alias.name).split(".")[0]
    return alias.asname or alias.name
