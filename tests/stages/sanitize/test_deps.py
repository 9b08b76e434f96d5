from __future__ import annotations

import ast

from passbench.stages.sanitize.deps import bound_names, needed_names
from passbench.stages.sanitize.units import Unit


def unit(source: str) -> Unit:
    return Unit(node=ast.parse(source).body[0], source=source, region=0, position=0)


def test_needed_names_are_the_free_globals_only() -> None:
    source = (
        "@cache\n"
        "def f(a, b=DEFAULT) -> Result:\n"
        "    global COUNTER\n"
        "    local = [x * SCALE for x in a]\n"
        "    def inner():\n"
        "        return local + helper(b)\n"
        "    return np.array(inner())\n"
    )
    assert needed_names(unit(source)) == {
        "cache",
        "DEFAULT",
        "Result",
        "COUNTER",
        "SCALE",
        "helper",
        "np",
    }


def test_class_bodies_and_methods() -> None:
    source = (
        "class A(Base):\n    size = LIMIT\n    def m(self):\n        return self.size + OFFSET\n"
    )
    assert needed_names(unit(source)) == {"Base", "LIMIT", "OFFSET"}


def test_statements_symtable_refuses_fall_back_to_every_identifier() -> None:
    source = "def f():\n    nonlocal x\n    return x + y\n"
    assert {"x", "y"} <= needed_names(unit(source))


def test_bound_names() -> None:
    assert bound_names(ast.parse("import os.path as p, sys").body[0]) == {"p", "sys"}
    assert bound_names(ast.parse("import os.path").body[0]) == {"os"}
    assert bound_names(ast.parse("from a import b as c, d").body[0]) == {"c", "d"}
    assert bound_names(ast.parse("a, (b, *c) = x").body[0]) == {"a", "b", "c"}
    assert bound_names(ast.parse("A[k] = 1").body[0]) == {"A"}
    assert bound_names(ast.parse("A.b += 1").body[0]) == {"A"}
    assert bound_names(ast.parse("X: int = 1").body[0]) == {"X"}
    assert bound_names(ast.parse("if c:\n    import a\nelse:\n    a = None").body[0]) == {"a"}
    guard = 'if __name__ == "__main__":\n    result = 1'
    assert bound_names(ast.parse(guard).body[0]) == set()
