"""Does a program parse? The official `syncheck` criterion: `ast.parse` succeeds."""

from __future__ import annotations

import ast
import warnings


def syncheck(code: str) -> tuple[bool, str]:
    """(True, "") when `code` parses as Python; else (False, a one-line reason with its line)."""
    if not code.strip():
        return False, "empty solution"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(code)
    except SyntaxError as error:
        where = f"line {error.lineno}" if error.lineno else "unknown line"
        if error.lineno and error.offset:
            where += f", column {error.offset}"
        return False, f"{where}: {error.msg}"
    except (ValueError, RecursionError, MemoryError) as error:  # null bytes, deep nesting
        return False, f"cannot parse: {error or type(error).__name__}"
    return True, ""
