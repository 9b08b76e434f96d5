"""Extract a program in another language (MultiPL-E's JavaScript, TypeScript, C++, Java, Rust,
Go, Lua; HumanEval-X's) from a chat model's answer.

    sanitize_foreign(answer, language=..., fence_names=..., entry_point=..., prompt=...)

MultiPL-E's program is prompt + completion + "\\n" + tests, and in C++, Java and Rust the tests
begin by closing the function the prompt opened (Java's also close the class `Problem`). A chat
answer usually repeats the whole function, often with helpers, includes, a `main` or a class of
its own around it. So the answer is cut into pieces and put back in the shape the tests expect:

    the prompt up to the function's signature (its includes, imports, `use` lines, doc comment;
    in Java up to and including `class Problem {`)
    + the answer's other items (includes, helpers, structs; before the function, so C++ and Lua
      see them declared), less any `main` and less lines the prompt already has
    + the answer's function: closed in JavaScript, TypeScript, Go and Lua, its last `}` left to
      the tests in C++, Java and Rust.

An answer holding only the function's body continues the prompt instead (prompt + body), closed
or left open the same way. Where the tests do not close the function (`tests_close=False`:
HumanEval-X, whose completions end the function, and in Java the class too) it is kept closed.
Go has no semicolons: its top-level items start at a line beginning with a keyword; the answer's
`package` clause is dropped, and its imports that the kept code uses are added to the prompt's
import block (`merge_imports`; HumanEval-X's evaluator adds imports by its own rule instead).

The function is found with a regular expression on its name per language (below) and its end
by a scanner that skips strings and comments and counts braces (or, in Lua, block keywords
against `end`): no grammar is needed for that, and no parser dependency.
Known limits: a JavaScript regular-expression literal or a Rust raw string holding an unbalanced
brace, and a C++ macro that opens a brace, mislead the scanner (the program then fails, honestly).

Which code is read: the fenced blocks whose info string names the language (`fence_names`),
else the untagged blocks, else, when the answer has no fence at all, the answer itself (from its
first line that looks like code); blocks of other languages are ignored. Thinking sections are
read only when the answer outside them has nothing. The last block defining the function wins (a
model correcting itself writes the fix last).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from passbench.stages.sanitize.extract import SanitizeResult
from passbench.stages.sanitize.fences import find_blocks
from passbench.stages.sanitize.thinking import split_thinking

BRACE_LANGUAGES = ("js", "ts", "cpp", "java", "rs", "go")
# JavaScript's rules (template literals, arrow functions) hold for TypeScript too
_JS_LIKE = ("js", "ts")
LANGUAGE_KEYS = (*BRACE_LANGUAGES, "lua")
# The tests close the function (and Java's the class) in these languages.
_TESTS_CLOSE = ("cpp", "java", "rs")


def _definition(language: str, name: str) -> re.Pattern[str]:
    """Where a definition of the function `name` starts (the match begins at its line)."""
    n = re.escape(name)
    if language == "ts":
        pattern = (
            rf"^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?function\b[ \t]*\*?[ \t]*{n}[ \t]*"
            r"(?:<[^>\n]*>)?[ \t]*\("
            rf"|^[ \t]*(?:export[ \t]+)?(?:const|let|var)[ \t]+{n}[ \t]*(?::[^=\n]+)?=[ \t]*"
            r"(?:async\b[ \t]*)?(?:function\b|\([^()]*\)[ \t]*(?::[^=\n]+)?=>|\w+[ \t]*=>)"
        )
    elif language == "go":
        pattern = rf"^func[ \t]+{n}[ \t]*(?:\[[^\]\n]*\])?[ \t]*\("
    elif language == "js":
        pattern = (
            rf"^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?function\b[ \t]*\*?[ \t]*{n}[ \t]*\("
            rf"|^[ \t]*(?:export[ \t]+)?(?:const|let|var)[ \t]+{n}[ \t]*=[ \t]*"
            r"(?:async\b[ \t]*)?(?:function\b|\([^()]*\)[ \t]*=>|\w+[ \t]*=>)"
        )
    elif language == "cpp":
        # only the name and its parenthesis; `_cpp_starts` checks the rest without a regex
        # (a pattern spanning lines of words backtracks quadratically on prose)
        pattern = rf"\b{n}[ \t]*\("
    elif language == "java":
        pattern = (
            r"^[ \t]*(?:@\w+[ \t\n]+)*(?:(?:public|private|protected|static|final|synchronized)"
            # the return type starts with a word character: not a doc line (`>>> add(2, 3)`)
            r"[ \t]+)*(?:<[^;{}]*>[ \t]+)?\w[\w<>\[\],.? \t]*?[ \t]"
            rf"{n}[ \t]*\([^;{{}}]*\)[^;{{}}]*\{{"
        )
    elif language == "rs":
        pattern = (
            rf"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:(?:const|async|unsafe)[ \t]+)*fn[ \t]+{n}\b"
        )
    elif language == "lua":
        pattern = (
            rf"^[ \t]*(?:local[ \t]+)?function[ \t]+{n}[ \t]*\("
            rf"|^[ \t]*(?:local[ \t]+)?{n}[ \t]*=[ \t]*function\b"
        )
    else:
        raise ValueError(f"no sanitizer for language {language!r}")
    return re.compile(pattern, re.MULTILINE)


# Lines where code starts in an answer without fences (prose before them is dropped).
_CODE_START = {
    "js": r"(?:function|const|let|var|class|import|export|'use strict'|\"use strict\")\b",
    "ts": r"(?:function|const|let|var|class|import|export|type|interface|enum|declare)\b",
    "go": r"(?:package|import|func|type|var|const)\b",
    "cpp": r"(?:#include|#define|using|template|struct|class|union|namespace|typedef)\b"
    r"|[\w:<>]+[ \t]+\w+[ \t]*\(",
    "java": r"(?:import|class|public|private|protected|static|final)\b",
    "rs": r"(?:use|fn|pub|struct|enum|impl|const|static|type|mod|trait|#\[)\b|#!?\[",
    "lua": r"(?:local|function)\b",
}

_LUA_OPENERS = frozenset({"function", "if", "do", "repeat"})
_LUA_CLOSERS = frozenset({"end", "until"})
_WORD = re.compile(r"[A-Za-z_]\w*")
_LUA_LONG = re.compile(r"\[(=*)\[")
_RUST_CHAR = re.compile(r"'(?:\\.[^'\n]*|[^\\'\n])'")


def _skip_lua_long(code: str, index: int) -> int | None:
    """After a Lua long bracket ([[ ... ]], [==[ ... ]==]) opening at `index`, or None."""
    match = _LUA_LONG.match(code, index)
    if match is None:
        return None
    close = "]" + match.group(1) + "]"
    end = code.find(close, match.end())
    return len(code) if end < 0 else end + len(close)


def _skip_string(code: str, index: int, quote: str) -> int:
    """After the string literal whose opening `quote` is at `index` (to the line's end when it
    is not closed there, except template literals, which may span lines)."""
    position = index + 1
    while position < len(code):
        char = code[position]
        if char == "\\":
            position += 2
            continue
        if char == quote:
            return position + 1
        if char == "\n" and quote != "`":
            return position
        position += 1
    return len(code)


def _skip_comment(code: str, index: int, language: str) -> int | None:
    """After the comment starting at `index`, or None when none starts there."""
    if language == "lua":
        if code.startswith("--", index):
            long_end = _skip_lua_long(code, index + 2)
            if long_end is not None:
                return long_end
            end = code.find("\n", index)
            return len(code) if end < 0 else end
        return None
    if code.startswith("//", index):
        end = code.find("\n", index)
        return len(code) if end < 0 else end
    if code.startswith("/*", index):
        end = code.find("*/", index + 2)
        return len(code) if end < 0 else end + 2
    return None


def _is_char_literal(code: str, index: int, language: str) -> bool:
    """A `'` in Rust starts a char literal, unless it is a lifetime (`'a`, `'static`)."""
    if language != "rs":
        return True
    return _RUST_CHAR.match(code, index) is not None


def span_end(code: str, start: int, language: str) -> int | None:
    """The end of the definition starting at `start`: just after the `}` (Lua: `end`) that
    closes its body, or for a JavaScript arrow function without braces, its `;` or line end.
    None when the code ends first (a truncated answer)."""
    depth = 0  # braces ({}) or Lua blocks
    parens = 0
    opened = False
    index = start
    lua = language == "lua"
    while index < len(code):
        skipped = _skip_comment(code, index, language)
        if skipped is not None:
            index = skipped
            continue
        char = code[index]
        if char in '"`' or (char == "'" and _is_char_literal(code, index, language)):
            if char == "`" and language not in _JS_LIKE and language != "go":
                index += 1
                continue
            index = _skip_string(code, index, char)
            continue
        if lua:
            if char == "[":
                long_end = _skip_lua_long(code, index)
                if long_end is not None:
                    index = long_end
                    continue
            word = _WORD.match(code, index) if (char.isalpha() or char == "_") else None
            if word is not None:
                before = code[index - 1] if index else " "
                token = word.group()
                if before not in ".:":
                    if token in _LUA_OPENERS:
                        depth += 1
                        opened = True
                    elif token in _LUA_CLOSERS:
                        depth -= 1
                        if opened and depth == 0:
                            return word.end()
                index = word.end()
                continue
            index += 1
            continue
        if char in "([":
            parens += 1
        elif char in ")]":
            parens -= 1
        elif char == "{" and not opened and _type_brace(code, index, parens, language):
            index = _matching_brace(code, index)
            continue
        elif char == "{":
            depth += 1
            opened = True
        elif char == "}":
            depth -= 1
            if opened and depth == 0:
                return index + 1
        elif not opened and parens == 0 and language in _JS_LIKE:
            # an arrow function with an expression body: `const f = (x) => x + 1;`
            if char == ";":
                return index + 1
            if (
                char == "\n"
                and "=>" in code[start:index]
                and not code[index:]
                .lstrip(" \t\n")
                .startswith((".", "?", ":", "+", "-", "*", "/", "&", "|"))
            ):
                return index
        elif not opened and char == ";" and parens == 0:
            return None  # a declaration, not a definition
        index += 1
    return None


_GO_TYPE_KEYWORD = re.compile(r"(?:interface|struct)[ \t]*$")
_TS_TYPE_COLON = re.compile(r":[ \t]*$")


def _type_brace(code: str, index: int, parens: int, language: str) -> bool:
    """Whether the `{` at `index`, before a function's body opened, belongs to a type in its
    signature: a TypeScript object type among the parameters or as the return type
    (`{[key: string]: number}`), a Go `interface{}` or `struct{...}`."""
    if language == "ts":  # among the parameters, or a return type (`): {[k: string]: number} {`)
        return parens > 0 or _TS_TYPE_COLON.search(code, max(0, index - 20), index) is not None
    if language == "go":
        return parens > 0 or _GO_TYPE_KEYWORD.search(code, max(0, index - 20), index) is not None
    return False


def _matching_brace(code: str, index: int) -> int:
    """Just after the `}` that closes the `{` at `index` (a type's braces hold no strings)."""
    depth = 0
    for position in range(index, len(code)):
        if code[position] == "{":
            depth += 1
        elif code[position] == "}":
            depth -= 1
            if depth == 0:
                return position + 1
    return len(code)


@dataclass(frozen=True)
class _Found:
    start: int
    end: int | None  # None: not closed before the code ended


_CPP_TYPE = re.compile(r"(?:template[ \t]*<[^;{}\n]*>[ \t]*)?[\w:<>,*&\[\] \t]*")
_NOT_A_TYPE = frozenset({"return", "else", "case", "new", "delete", "throw", "co_return"})


def _cpp_start(code: str, name_at: int) -> int | None:
    """The start of the line of a C++ function definition whose name is at `name_at`: a
    return type before it (on its line, or alone on the line above), its parameters, then `{`
    before any `;`. None for a call, a declaration or an expression."""
    line_start = code.rfind("\n", 0, name_at) + 1
    prefix = code[line_start:name_at]
    if not prefix.strip() and line_start > 0:  # `long\nadd(...)`: the type on the line above
        line_start = code.rfind("\n", 0, line_start - 1) + 1
        prefix = code[line_start:name_at].replace("\n", " ")
    words = prefix.split()
    if not words or words[0] in _NOT_A_TYPE or not _CPP_TYPE.fullmatch(prefix):
        return None
    depth = 0
    index = code.index("(", name_at)
    while index < len(code):
        char = code[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                break
        elif char in ";{}":
            return None
        index += 1
    after = index + 1
    brace, semicolon = code.find("{", after), code.find(";", after)
    if brace < 0 or (0 <= semicolon < brace) or "}" in code[after:brace]:
        return None
    return line_start


def _find(code: str, language: str, name: str) -> list[_Found]:
    """Every definition of `name` in `code`, outermost first, skipping nested ones."""
    found: list[_Found] = []
    for match in _definition(language, name).finditer(code):
        start: int | None = match.start()
        if language == "cpp":
            start = _cpp_start(code, match.start())
            if start is None:
                continue
        assert start is not None
        if code[start] == "\n":
            start += 1
        if found and (found[-1].end is None or start < found[-1].end):
            continue  # inside the previous definition
        found.append(_Found(start, span_end(code, start, language)))
    return found


def _items(code: str, language: str) -> list[tuple[int, int]]:
    """Top-level items of brace-language code: each ends at a `;` or at the `}` that returns to
    depth 0 (with a `;` right after it, as in `struct S { ... };`). Comments and blank lines
    belong to the item after them."""
    items: list[tuple[int, int]] = []
    depth = 0
    start = 0
    index = 0
    while index < len(code):
        skipped = _skip_comment(code, index, language)
        if skipped is not None:
            index = skipped
            continue
        char = code[index]
        if char in '"`' or (char == "'" and _is_char_literal(code, index, language)):
            index = (
                _skip_string(code, index, char)
                if char != "`" or language in _JS_LIKE or language == "go"
                else index + 1
            )
            continue
        preprocessor = char == "#" and language == "cpp" and depth == 0
        if preprocessor and not _strip_comments_head(code[start:index], language).strip():
            # a preprocessor line is an item of its own
            end = code.find("\n", index)
            end = len(code) if end < 0 else end
            items.append((start, end))
            start = index = end
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                end = index + 1
                rest = code[end:]
                if rest.lstrip(" \t").startswith(";"):
                    end += rest.index(";") + 1
                items.append((start, end))
                start = index = end
                continue
        elif char == ";" and depth == 0:
            items.append((start, index + 1))
            start = index + 1
        index += 1
    if code[start:].strip():
        items.append((start, len(code)))
    return items


_LUA_RETURN = re.compile(r"^return\b.*$", re.M)
_LUA_FUNCTION = re.compile(r"^(?:local[ \t]+)?function\b|^[\w.]+[ \t]*=[ \t]*function\b", re.M)


def _lua_items(code: str) -> list[tuple[int, int]]:
    """Lua top-level chunks: each starts at a line at column 0 that is not `end`/`until`
    and outside any block."""
    items: list[tuple[int, int]] = []
    start = 0
    position = 0
    while position < len(code):
        match = _LUA_FUNCTION.search(code, position)
        if match is None:
            break
        end = span_end(code, match.start(), "lua")
        if end is None:
            break
        if code[start : match.start()].strip():
            items.append((start, match.start()))
        items.append((match.start(), end))
        start = position = end
    if code[start:].strip():
        items.append((start, len(code)))
    return items


_MAIN = {
    "cpp": re.compile(r"^\s*(?:int|void|auto)\s+main\s*\("),
    "java": re.compile(r"^\s*(?:@\w+\s+)*(?:public\s+)?static\s+void\s+main\s*\("),
    "rs": re.compile(r"^\s*(?:#\[[^\]]*\]\s*)*fn\s+main\s*\("),
    "go": re.compile(r"^\s*func\s+main\s*\("),
}

_GO_HEADER = re.compile(r"(?:package|import)\b")
_GO_ITEM = re.compile(r"^(?:package|import|func|type|var|const)\b", re.M)
_GO_IMPORT_BLOCK = re.compile(r"^import[ \t]*\((.*?)^\)", re.M | re.S)
_GO_SPEC = re.compile(r'^(?:([\w.]+)[ \t]+)?"([^"\n]+)"')


def _depth_zero(code: str, positions: list[int], language: str) -> set[int]:
    """Those of `positions` (ascending) that are outside any brace or parenthesis."""
    wanted = iter(positions)
    target = next(wanted, None)
    found: set[int] = set()
    depth = 0
    index = 0
    while target is not None:
        while target is not None and index >= target:
            if index == target and depth == 0:
                found.add(target)
            target = next(wanted, None)
        if target is None or index >= len(code):
            break
        skipped = _skip_comment(code, index, language)
        if skipped is not None:
            index = skipped
            continue
        char = code[index]
        if char in "\"`'":
            index = _skip_string(code, index, char)
            continue
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        index += 1
    return found


def _go_items(code: str) -> list[tuple[int, int]]:
    """Go's top-level items: each starts at a line beginning with a declaration keyword outside
    any block; the comments and blank lines right above it belong to it."""
    starts = [match.start() for match in _GO_ITEM.finditer(code)]
    starts = sorted(_depth_zero(code, starts, "go"))
    bounds = []
    for start in starts:
        line_start = start
        while line_start > 0:
            previous = code.rfind("\n", 0, line_start - 1) + 1
            line = code[previous : line_start - 1].strip()
            if line and not line.startswith("//"):
                break
            line_start = previous
        bounds.append(line_start)
    items = []
    edges = [0, *[b for b in bounds if b > 0], len(code)]
    for a, b in itertools.pairwise(edges):
        if code[a:b].strip():
            items.append((a, b))
    return items


def _go_import_specs(code: str) -> list[str]:
    """The import specs (`"strings"`, `str "strings"`) of the code's import declarations."""
    specs: list[str] = []
    for a, b in _go_items(code):
        head = _strip_comments_head(code[a:b], "go").strip()
        if not head.startswith("import"):
            continue
        rest = head[len("import") :].strip()
        lines = rest[1 : rest.rfind(")")].split("\n") if rest.startswith("(") else [rest]
        for line in lines:
            spec = line.split("//", 1)[0].strip().rstrip(";")
            if _GO_SPEC.match(spec):
                specs.append(spec)
    return specs


def _merge_go_imports(header: str, answer: str, kept: str) -> str:
    """The prompt's header with the answer's imports that the kept code uses and the header
    lacks, added to its import block (Go rejects an unused import and an undeclared one)."""
    block = _GO_IMPORT_BLOCK.search(header)
    have = set(re.findall(r'"([^"\n]+)"', block.group(1) if block else header))
    missing = []
    for spec in _go_import_specs(answer):
        match = _GO_SPEC.match(spec)
        assert match is not None
        alias, path = match.group(1), match.group(2)
        name = alias or path.rsplit("/", 1)[-1]
        used = alias in ("_", ".") or re.search(rf"\b{re.escape(name)}\.", kept)
        if path not in have and used and spec not in missing:
            missing.append(spec)
    if not missing:
        return header
    lines = "".join(f"    {spec}\n" for spec in missing)
    if block is not None:
        at = block.end() - 1  # the closing parenthesis
        return header[:at] + lines + header[at:]
    package = re.search(r"^package[ \t]+\w+[ \t]*\n", header, re.M)
    at = package.end() if package else 0
    return header[:at] + f"\nimport (\n{lines})\n" + header[at:]


def _strip_comments_head(text: str, language: str) -> str:
    """The item's text after its leading blank lines and comments."""
    index = 0
    while index < len(text):
        if text[index].isspace():
            index += 1
            continue
        skipped = _skip_comment(text, index, language)
        if skipped is None:
            break
        index = skipped
    return text[index:]


def _keep_item(text: str, language: str, header: str) -> bool:
    """Whether an item of the answer goes into the program: not a `main` (the tests bring
    theirs), not a line the prompt already has (Rust rejects a `use` twice), not a type the
    prompt already defines (C++'s unions of some prompts)."""
    head = _strip_comments_head(text, language)
    if not head.strip():
        return False
    if language == "go" and _GO_HEADER.match(head):
        return False  # one package clause (the prompt's); imports are merged separately
    main = _MAIN.get(language)
    if main is not None and main.match(head):
        return False
    first = head.split("\n", 1)[0].strip()
    if "\n" not in head.strip() and first in {line.strip() for line in header.split("\n")}:
        return False
    declared = re.match(r"(?:union|struct|class|enum)\s+(\w+)", first)
    return not (
        declared is not None
        and re.search(rf"\b(?:union|struct|class|enum)\s+{declared.group(1)}\b", header)
    )


_JS_DEFINITION = re.compile(
    r"(?:export\s+)?(?:async\s+)?function\b|class\b|(?:type|interface|enum)\s+\w+"
    r"|(?:const|let|var)\s+\w+\s*=\s*(?:async\s*)?(?:function\b|\(|\w+\s*=>)"
)


def _rest(code: str, language: str, header: str, *, after: bool = False) -> str:
    """The answer's other items, less `main` and what the prompt already has. After the
    function, only definitions are kept: statements there (`console.log(add(2, 3))`) are a
    demonstration, and they move before the function, where they would call it too early."""
    if not code.strip():
        return ""
    if language == "lua":
        spans = _lua_items(code)
    elif language == "go":
        spans = _go_items(code)
    else:
        spans = _items(code, language)
    kept = [code[a:b].strip("\n") for a, b in spans if _keep_item(code[a:b], language, header)]
    if after and language in _JS_LIKE:
        kept = [part for part in kept if _JS_DEFINITION.match(_strip_comments_head(part, "js"))]
    if language == "lua":
        if after:
            kept = [part for part in kept if _LUA_FUNCTION.match(part.strip())]
        # a module's `return M`: Lua allows `return` only at a block's end
        kept = [part if _LUA_FUNCTION.match(part) else _LUA_RETURN.sub("", part) for part in kept]
    return "\n".join(part for part in kept if part.strip())


def _java_class(code: str, start: int) -> tuple[int, int, int] | None:
    """(class start, body start, class end) of the class around `start`, if any."""
    best: tuple[int, int, int] | None = None
    for match in re.finditer(
        r"^[ \t]*(?:(?:public|final|abstract|static)[ \t]+)*class[ \t]+\w+[^{;]*\{", code, re.M
    ):
        if match.start() >= start:
            break
        end = span_end(code, match.start(), "java")
        if end is None or end > start:
            best = (match.start(), match.end(), end if end is not None else len(code))
    return best


def _prompt_split(prompt: str, language: str, entry_point: str) -> tuple[str, str]:
    """(the prompt before the function's definition, the definition's opening: its doc comment
    is in the first part, its signature in the second)."""
    found = _find(prompt, language, entry_point)
    if not found:
        return prompt, ""
    start = found[-1].start
    return prompt[:start], prompt[start:]


def _static(method: str) -> str:
    """A Java method made `static` (the tests call it from `main`), when it is not already."""
    match = re.match(
        r"(\s*(?:@\w+\s+)*)((?:(?:public|private|protected|final|synchronized)\s+)*)", method
    )
    assert match is not None
    if re.search(r"\bstatic\b", method[: method.find("(")] if "(" in method else ""):
        return method
    return method[: match.end()] + "static " + method[match.end() :]


def _java_members(code: str, static: Callable[[str], str]) -> list[str]:
    parts: list[str] = []
    for a, b in _items(code, "java"):
        text = code[a:b].strip("\n")
        if not _keep_item(text, "java", ""):
            continue
        head = _strip_comments_head(text, "java")
        if re.match(r"[^;{=]*\(", head) and not re.match(
            r"\s*(?:class|interface|enum|record)\b", head
        ):
            text = text[: len(text) - len(head)] + static(head)
        parts.append(text)
    return parts


@dataclass(frozen=True)
class _Shape:
    """How the program around the function looks: whether the tests close the function (and
    Java's class), and whether a Go answer's imports join the prompt's."""

    tests_close: bool
    merge_imports: bool = True


def _build(
    code: str, found: _Found, language: str, entry_point: str, prompt: str, shape: _Shape
) -> str:
    """The program (less the tests) for `code`, which defines the function at `found`."""
    header, _ = _prompt_split(prompt, language, entry_point)
    end = found.end
    target = code[found.start : end] if end is not None else code[found.start :].rstrip()
    if end is None:  # truncated: close it, the tests will run what there is
        target += "\nend" if language == "lua" else "\n}"
    if language == "java":
        return _build_java(code, found, target, header, shape)
    before = code[: found.start]
    after = code[end:] if end is not None else ""
    rest = "\n".join(
        part
        for part in (_rest(before, language, header), _rest(after, language, header, after=True))
        if part
    )
    if language == "go" and shape.merge_imports:
        header = _merge_go_imports(header, code, rest + "\n" + target)
    program = header + (rest + "\n" if rest else "") + target
    if shape.tests_close:
        program = program[: program.rstrip().rfind("}")].rstrip() + "\n"
    return program


_JAVA_MAIN_CLASS = re.compile(r"(?:(?:public|final)\s+)*class\s+Main\b")


def _build_java(code: str, found: _Found, target: str, header: str, shape: _Shape) -> str:
    around = _java_class(code, found.start)
    end = found.end if found.end is not None else len(code)
    if around is None:
        outside, members_code = "", code[: found.start] + "\n" + code[end:]
    else:
        class_start, body_start, class_end = around
        body_end = code.rfind("}", body_start, class_end)
        outside = code[:class_start] + "\n" + code[class_end:]
        members_code = code[body_start : found.start] + "\n" + code[end:body_end]
    # the prompt's header ends with its class's opening (MultiPL-E's `class Problem {`,
    # HumanEval-X's `class Solution {`) and the method's doc comment
    opening = re.search(r"^(?:public[ \t]+)?class[ \t]+\w+[ \t]*\{[ \t]*\n", header, re.M)
    imports, inside = (
        (header[: opening.start()], header[opening.start() :]) if opening else ("", header)
    )
    extra_top = []
    for a, b in _items(outside, "java"):
        text = outside[a:b].strip("\n")
        if not shape.tests_close and _JAVA_MAIN_CLASS.match(_strip_comments_head(text, "java")):
            continue  # HumanEval-X's tests are `public class Main`
        if _keep_item(text, "java", imports):
            extra_top.append(re.sub(r"^(\s*)public\s+", r"\1", text))
    # MultiPL-E's tests call the methods from `main` in the same class: they must be static
    static = _static if shape.tests_close else (lambda method: method)
    members = _java_members(members_code, static)
    program = imports + "".join(part + "\n" for part in extra_top)
    program += inside
    program += "".join(part + "\n" for part in members)
    program += static(target)
    if shape.tests_close:
        return program[: program.rstrip().rfind("}")].rstrip() + "\n"
    return program.rstrip() + "\n}\n"  # the class, which a HumanEval-X completion closes


def _body_program(
    code: str, language: str, entry_point: str, prompt: str, shape: _Shape
) -> str | None:
    """prompt + `code`, when `code` is only the function's body (it defines nothing itself)."""
    header, opening = _prompt_split(prompt, language, entry_point)
    if not opening:
        return None
    program = opening.rstrip("\n") + "\n" + code.strip("\n") + "\n"
    if language == "java" and not shape.tests_close and span_end(program, 0, "java") is None:
        program += "}\n"  # a body without the method's closing brace (the class's is added)
    found = _find(program, language, entry_point)
    if not found:
        return None
    return _build(
        header + program,
        _Found(len(header) + found[0].start, _shift(found[0], len(header))),
        language,
        entry_point,
        prompt,
        shape,
    )


def _shift(found: _Found, by: int) -> int | None:
    return None if found.end is None else found.end + by


def _code_start(text: str, language: str) -> str:
    match = re.search(rf"^[ \t]*(?:{_CODE_START[language]})", text, re.M)
    return text[match.start() :] if match else text


def _blocks(text: str, fence_names: Sequence[str]) -> list[str]:
    blocks = find_blocks(text)
    named = [block.code for block in blocks if block.language in fence_names]
    if named:
        return named
    return [block.code for block in blocks if block.language == ""]


def sanitize_foreign(
    answer: str,
    *,
    language: str,
    fence_names: Sequence[str],
    entry_point: str,
    prompt: str,
    tests_close: bool | None = None,
    merge_imports: bool = True,
) -> SanitizeResult:
    """The program (prompt-shaped, tests not included) a chat answer in `language` stands for.

    language: MultiPL-E's key ("js", "ts", "cpp", "java", "rs", "go", "lua"); fence_names: the
    info strings that name it; prompt: the task's prompt (it opens the function the tests
    close); tests_close: whether the tests close the function (default: MultiPL-E's rule per
    language); merge_imports: Go only, whether the answer's imports join the prompt's.
    """
    if language not in LANGUAGE_KEYS:
        raise ValueError(f"no sanitizer for language {language!r}")
    closes = language in _TESTS_CLOSE if tests_close is None else tests_close
    shape = _Shape(tests_close=closes, merge_imports=merge_imports)
    text = answer.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return SanitizeResult(code="", ok=False, reason="empty answer")
    split = split_thinking(text)
    places = [("", split.answer)]
    if split.thinking:
        places.append(("thinking-", "\n".join(split.thinking)))
    body_candidate: tuple[str, str] | None = None
    for label, body in places:
        blocks = _blocks(body, fence_names)
        has_fences = bool(find_blocks(body))
        regions = [("fenced", block) for block in blocks]
        if not has_fences:
            regions = [("unfenced", _code_start(body, language))]
        for kind, code in reversed(regions):
            found = _find(code, language, entry_point)
            if found:
                program = _build(code, found[-1], language, entry_point, prompt, shape)
                return SanitizeResult(code=program, ok=True, origin=label + kind)
        if body_candidate is None and regions and any(code.strip() for _, code in regions):
            body_candidate = (label, next(code for _, code in regions if code.strip()))
    if body_candidate is not None:
        label, code = body_candidate
        continued = _body_program(code, language, entry_point, prompt, shape)
        if continued is not None:
            return SanitizeResult(code=continued, ok=True, origin=label + "prompt+body")
    fallback = prompt + (split.answer.strip() + "\n" if split.answer.strip() else "")
    return SanitizeResult(code=fallback, ok=False, reason=f"no definition of {entry_point!r} found")
