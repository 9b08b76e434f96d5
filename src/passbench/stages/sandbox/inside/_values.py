"""Python values across the sandbox boundary, without pickle: encode inside, decode outside.

Differential benchmarks (HumanEval+, MBPP+) send a candidate only the inputs and compare what it
returns with the expected outputs on the trusted side. Outputs therefore cross the boundary as
data, and the trusted side must never run code while reading them. This module is the one codec
both sides use: the runner in the sandbox imports it to encode inputs' results (and decode the
inputs it is given), passbench imports it to decode outputs and encode inputs. It must stay
self-contained: standard library only, no passbench imports, Python 3.8+.

Encoding ("tagged JSON"): JSON's own types stand for themselves (str, int, finite float, bool,
None, list); everything else is a one-key object whose key is a tag:

    {"t": [...]} tuple        {"d": [[k, v], ...]} dict     {"S": [...]} set
    {"F": [...]} frozenset    {"q": [...]} deque            {"f": "nan" | "inf" | "-inf"}
    {"i": "<hex>"} large int  {"b": "<hex>"} bytes          {"B": "<hex>"} bytearray
    {"c": [re, im]} complex   {"r": [start, stop, step]} range
    {"o": "<type>", "repr": "..."} anything else (opaque: equal to nothing)

Subclasses of the builtin containers and scalars are encoded as their base type; the exact type
name travels beside the value (`Encoded.type_name`) because EvalPlus compares `type(out)` with
`type(exp)` in its tolerance rule.

Large outputs are not shipped whole: the sender also computes an *equality digest* — sha256 of a
canonical form in which values that Python's `==` holds equal coincide (1 == 1.0 == True, dict
and set order, bytes == bytearray) — so the trusted side can decide exact equality of a
100 MB string from 64 hex digits. A digest the sandbox sends cannot forge a match: producing the
expected digest requires producing the expected value (the expected digest never enters the
sandbox).
"""

from __future__ import annotations

import array
import collections
import hashlib
import itertools
import json
import math
import operator
import os
import struct
import sys
from typing import Any

#: Bump when the encoding or the digest's canonical form changes (cached expected outputs and
#: journaled verdicts depend on it).
CODEC_VERSION = 1

#: Deeper values are opaque: JSON parsers and `==` recurse, and no benchmark nests this deep.
MAX_DEPTH = 100

_SMALL_INT = 1 << 53  # beyond this, ints travel as hex: linear time, no 4300-digit limit

#: Values with more parts are not carried: a shared sub-list repeated at every level would
#: otherwise unfold into an astronomical tree.
MAX_NODES = 20_000_000


class TooLarge(ValueError):
    """The value has more than MAX_NODES parts."""


class _Budget:
    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_NODES

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise TooLarge(f"more than {MAX_NODES} parts")


class Opaque:
    """A value the codec could not carry: its type name and a short repr. Equal to nothing."""

    __slots__ = ("repr", "type_name")

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name = type_name
        self.repr = text

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<{self.type_name} {self.repr}>"


def type_name(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", kind.__name__)
    return name if module == "builtins" else f"{module}.{name}"


def _short_repr(value: Any, limit: int = 200) -> str:
    try:
        text = repr(value)
    except BaseException:  # a hostile __repr__ must not break the encoder
        text = "<unrepresentable>"
    return text if len(text) <= limit else text[:limit] + "..."


# --------------------------------------------------------------------------- tagged JSON


def to_tagged(value: Any) -> Any:
    """`value` as tagged JSON data (see the module docstring). Raises TooLarge."""
    return _tagged(value, 0, _Budget())


def _tagged(value: Any, depth: int, budget: _Budget) -> Any:
    budget.spend()
    if depth > MAX_DEPTH:
        return {"o": type_name(value), "repr": "nested too deeply"}
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -_SMALL_INT <= value <= _SMALL_INT else {"i": format(value, "x")}
    if kind is float:
        return value if math.isfinite(value) else {"f": repr(value)}
    if kind is list:
        return [_tagged(item, depth + 1, budget) for item in value]
    if kind is tuple:
        return {"t": [_tagged(item, depth + 1, budget) for item in value]}
    if kind is dict:
        return {
            "d": [
                [_tagged(k, depth + 1, budget), _tagged(v, depth + 1, budget)]
                for k, v in value.items()
            ]
        }
    # subclasses of the builtins are carried as their base type (their methods are not called)
    for base, convert in _BASES:
        if isinstance(value, base):
            try:
                return _tagged(convert(value), depth, budget)
            except BaseException:
                break
    return _special_tagged(value, depth, budget)


def _special_tagged(value: Any, depth: int, budget: _Budget) -> Any:
    if isinstance(value, (set, frozenset)):
        tag = "F" if isinstance(value, frozenset) else "S"
        items = [_tagged(item, depth + 1, budget) for item in set.__iter__(set(value))]
        return {tag: items}
    if isinstance(value, collections.deque):
        return {"q": [_tagged(item, depth + 1, budget) for item in list(value)]}
    if isinstance(value, bytearray):
        return {"B": bytes(value).hex()}
    if isinstance(value, bytes):
        return {"b": bytes.hex(value)}
    if isinstance(value, complex):
        return {
            "c": [_tagged(value.real, depth + 1, budget), _tagged(value.imag, depth + 1, budget)]
        }
    if isinstance(value, range):
        return {"r": [value.start, value.stop, value.step]}
    number = _numpy_scalar(value)
    if number is not None:
        return _tagged(number, depth, budget)
    return {"o": type_name(value), "repr": _short_repr(value)}


def _numpy_scalar(value: Any) -> Any:
    """A numpy scalar as the Python number `.item()` gives; None for anything else."""
    if type(value).__module__ != "numpy" or not hasattr(value, "item"):
        return None
    if getattr(value, "shape", None) != ():
        return None
    try:
        item = value.item()
    except BaseException:
        return None
    return item if type(item) in (bool, int, float, complex) else None


# Builtin bases whose subclasses travel as the base value; checked in this order (bool is an
# int subclass but is never subclassed itself).
_BASES: tuple[tuple[type, Any], ...] = (
    (str, str.__str__),
    (int, int.__int__),
    (float, float.__float__),
    (list, lambda v: list(list.__iter__(v))),
    (tuple, lambda v: tuple(tuple.__iter__(v))),
    (dict, lambda v: dict(dict.items(v))),
)


def from_tagged(data: Any, depth: int = 0) -> Any:
    """The Python value tagged JSON data stands for. Builds builtins only: safe on any input.

    Raises ValueError on malformed data."""
    if depth > MAX_DEPTH + 1:
        raise ValueError("value nested too deeply")
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [from_tagged(item, depth + 1) for item in data]
    if kind is not dict or not data:
        raise ValueError(f"unexpected {kind.__name__} in tagged data")
    tag = next(iter(data))
    body = data[tag]
    if tag == "t":
        return tuple(from_tagged(item, depth + 1) for item in _list(body))
    if tag == "d":
        pairs = [_list(pair) for pair in _list(body)]
        if any(len(pair) != 2 for pair in pairs):
            raise ValueError("dict entry is not a pair")
        return {_hashable(from_tagged(k, depth + 1)): from_tagged(v, depth + 1) for k, v in pairs}
    if tag in ("S", "F"):
        items = [_hashable(from_tagged(item, depth + 1)) for item in _list(body)]
        return frozenset(items) if tag == "F" else set(items)
    if tag == "q":
        return collections.deque(from_tagged(item, depth + 1) for item in _list(body))
    if tag == "f":
        if body not in ("nan", "inf", "-inf"):
            raise ValueError(f"bad special float {body!r}")
        return float(body)
    if tag == "i":
        return int(_text(body), 16)
    if tag == "b":
        return bytes.fromhex(_text(body))
    if tag == "B":
        return bytearray.fromhex(_text(body))
    if tag == "c":
        real, imag = (from_tagged(part, depth + 1) for part in _list(body))
        if not all(type(part) in (int, float) for part in (real, imag)):
            raise ValueError("complex parts must be numbers")
        return complex(real, imag)
    if tag == "r":
        bounds = _list(body)
        if len(bounds) != 3 or not all(type(b) is int for b in bounds):
            raise ValueError("range needs three ints")
        return range(*bounds)
    if tag == "o":
        return Opaque(_text(body), _text(data.get("repr", "")))
    raise ValueError(f"unknown tag {tag!r}")


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise ValueError("expected a list")
    return value


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("expected a string")
    return value


def _hashable(value: Any) -> Any:
    if isinstance(value, (list, dict, set, bytearray, collections.deque)):
        raise ValueError(f"unhashable {type(value).__name__} used as a key")
    return value


def dumps(value: Any) -> str:
    """`value` as tagged JSON text."""
    return json.dumps(to_tagged(value), ensure_ascii=True, separators=(",", ":"))


def loads(text: str) -> Any:
    """The value tagged JSON text stands for (ValueError when malformed)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("value nested too deeply") from None
    return from_tagged(data)


# --------------------------------------------------------------------------- equality digest
# The canonical form is bytes in which values that `==` holds equal coincide: every number that
# a float64 holds exactly (bools, ints up to 2**53, finite floats, infinities; a complex with no
# imaginary part) is written as that float64, so 1 == 1.0 == True; larger ints in hex; NaN
# marks the value as equal to nothing. Containers carry their kind and size; dict items and set
# elements are sorted. A sequence whose elements are all such numbers is written as one packed
# float64 array — the common large output (a list of a million numbers) then costs a few C
# calls, and the element-by-element path writes exactly the same bytes.

_EXACT = 1 << 53
_DOUBLE = struct.Struct("<d")
_LENGTH = struct.Struct("<Q")
_NEGATIVE_ZERO_BITS = 1 << 63


class _Canon:
    def __init__(self) -> None:
        self.unequal = False  # a NaN or an opaque part: equal to nothing
        self.budget = _Budget()

    def number(self, value: Any) -> float | None:
        """`value` as the float64 that equals it, None when it is no such number."""
        if isinstance(value, bool):
            return float(value)
        if isinstance(value, int):
            whole = int.__int__(value)
            if -_EXACT <= whole <= _EXACT:
                return float(whole)
            try:  # a large int equals a float only when the float holds it exactly
                as_float = float(whole)
            except OverflowError:
                return None
            return as_float if as_float == whole else None
        if isinstance(value, float):
            number = float.__float__(value)
            if number != number:
                return None
            return number + 0.0  # -0.0 == 0.0
        if isinstance(value, complex):
            return self.number(value.real) if value.imag == 0 else None
        item = _numpy_scalar(value)
        return self.number(item) if item is not None else None

    def encode(self, value: Any, depth: int = 0) -> bytes:
        self.budget.spend()
        if depth > MAX_DEPTH:
            return self._opaque()
        number = self.number(value)
        if number is not None:
            return b"d" + _DOUBLE.pack(number)
        if value is None:
            return b"N"
        if isinstance(value, str):
            data = str.__str__(value).encode("utf-8", "surrogatepass")
            return b"s%d:" % len(data) + data
        if isinstance(value, (list, tuple, collections.deque, range)):
            tag = b"L" if isinstance(value, list) else b"T" if isinstance(value, tuple) else b"Q"
            if isinstance(value, range):
                tag = b"R"
            items = list(list.__iter__(value)) if isinstance(value, list) else list(value)
            return tag + self._sequence(items, depth)
        if isinstance(value, dict):
            parts = sorted(
                self.encode(k, depth + 1) + self.encode(v, depth + 1) for k, v in dict.items(value)
            )
            return b"M%d{" % len(parts) + b"".join(parts) + b"}"
        if isinstance(value, (set, frozenset)):
            parts = sorted(self.encode(item, depth + 1) for item in value)
            return b"S%d{" % len(parts) + b"".join(parts) + b"}"
        return self._special(value, depth)

    def _sequence(self, items: list[Any], depth: int) -> bytes:
        """Numbers packed ("D"), strings packed ("Z"), else element by element ("G"); the fast
        helpers and the general path decide the same form for the same values."""
        self.budget.left -= len(items)
        if self.budget.left < 0:
            raise TooLarge(f"more than {MAX_NODES} parts")
        packed = _packed_numbers(items)
        if packed is None and items:
            numbers = [self.number(item) for item in items]
            if all(number is not None for number in numbers):
                packed = b"".join(_DOUBLE.pack(number) for number in numbers)
        if packed is not None:
            return b"D%d[" % len(items) + packed + b"]"
        strings = _packed_strings(items)
        if strings is None and all(isinstance(item, str) for item in items):
            data = [str.__str__(item).encode("utf-8", "surrogatepass") for item in items]
            strings = b"".join(_LENGTH.pack(len(d)) for d in data) + b"".join(data)
        if strings is not None:
            return b"Z%d[" % len(items) + strings + b"]"
        parts = [self.encode(item, depth + 1) for item in items]
        return b"G%d[" % len(items) + b"".join(parts) + b"]"

    def _special(self, value: Any, depth: int) -> bytes:
        if isinstance(value, float) or (isinstance(value, complex) and value.imag == 0):
            self.unequal = True  # NaN
            return b"n"
        if isinstance(value, int):
            return b"i" + format(int.__int__(value), "x").encode() + b";"
        if isinstance(value, (bytes, bytearray)):
            data = bytes(value)
            return b"b%d:" % len(data) + data
        if isinstance(value, complex):
            return b"c" + self.encode(value.real, depth) + self.encode(value.imag, depth)
        item = _numpy_scalar(value)
        if item is not None:
            return self.encode(item, depth)
        return self._opaque()

    def _opaque(self) -> bytes:
        self.unequal = True
        return b"O" + os.urandom(16)  # equal to nothing, not even another opaque value


def _packed_numbers(items: list[Any]) -> bytes | None:
    """The packed float64s of a list of plain bools, ints and floats, at C speed; None when the
    list holds anything else (or a NaN, or an int a float64 cannot hold)."""
    kinds = set(map(type, items))
    if not kinds <= {int, float, bool}:
        return None
    if float in kinds and any(map(math.isnan, items)):
        return None
    if int in kinds and (min(items) < -_EXACT or max(items) > _EXACT):
        return None
    packed = array.array("d", items)
    if float in kinds:
        bits = array.array("Q")
        bits.frombytes(packed.tobytes())
        if _NEGATIVE_ZERO_BITS in bits:  # -0.0 == 0.0: write it as 0.0 (rare, so done slowly)
            packed = array.array("d", map(operator.add, packed, itertools.repeat(0.0)))
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def _packed_strings(items: list[Any]) -> bytes | None:
    """Every element's length and UTF-8 bytes, for a list of plain strings; else None."""
    if set(map(type, items)) != {str}:
        return None
    data = list(
        map(str.encode, items, itertools.repeat("utf-8"), itertools.repeat("surrogatepass"))
    )
    lengths = array.array("Q", map(len, data))
    if sys.byteorder != "little":
        lengths.byteswap()
    return lengths.tobytes() + b"".join(data)


def equality_digest(value: Any) -> tuple[str, bool]:
    """(sha256 hex of the canonical form, whether the value contains a NaN or an opaque part).

    Two values without NaN or opaque parts that Python's `==` holds equal have the same digest;
    values with NaN never compare equal (a NaN is unequal to every other NaN object).
    Raises TooLarge."""
    canon = _Canon()
    digest = hashlib.sha256(canon.encode(value)).hexdigest()
    return digest, canon.unequal


def is_floats(value: Any) -> bool:
    """EvalPlus's `is_floats`: a float, or a non-empty list/tuple of floats (numpy float arrays
    too)."""
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(item, float) for item in value)
    if type(value).__module__ == "numpy" and type(value).__name__ == "ndarray":
        return str(getattr(value, "dtype", "")) in ("float64", "float32")
    return False
