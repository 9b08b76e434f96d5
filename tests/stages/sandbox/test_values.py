"""The codec values cross the sandbox boundary with: faithful, safe to read, digests that agree
with `==`."""

from __future__ import annotations

import collections
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from passbench.stages.sandbox.inside import _values

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.integers(), st.text(max_size=4)), inner, max_size=4),
        st.frozensets(st.one_of(st.integers(), st.text(max_size=4)), max_size=4),
    ),
    max_leaves=12,
)


def digest(value: Any) -> str:
    return _values.equality_digest(value)[0]


@given(values)
def test_round_trip_is_faithful(value: Any) -> None:
    decoded = _values.loads(_values.dumps(value))
    assert decoded == value
    assert type(decoded) is type(value)


@given(values, values)
def test_digests_agree_with_equality(a: Any, b: Any) -> None:
    assert (digest(a) == digest(b)) == (a == b)


@given(values)
def test_numbers_that_are_equal_digest_alike(value: Any) -> None:
    def as_floats(v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, (int, float, list, tuple)):
            return v
        if isinstance(v, list):
            return [as_floats(x) for x in v]
        if isinstance(v, tuple):
            return tuple(as_floats(x) for x in v)
        return float(v) if isinstance(v, int) and abs(v) <= 2**53 else v

    converted = as_floats(value)
    assert converted == value
    assert digest(converted) == digest(value)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1, 2.0, True], [1.0, 2, 1]),
        ({1: "a", 2: "b"}, {2: "b", 1.0: "a"}),
        ({1, 2}, frozenset({2, 1})),
        (b"ab", bytearray(b"ab")),
        (1 + 0j, 1),
        (1e300, int(1e300)),
        ([-0.0], [0]),
        ([1, np.int64(2)], [1, 2]),
        ([np.float64(1.5)], [1.5]),
        (collections.OrderedDict(a=1), {"a": 1}),
    ],
)
def test_equal_values_share_a_digest(a: Any, b: Any) -> None:
    assert a == b
    assert digest(a) == digest(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1], (1,)),
        (["1"], [1]),
        (["ab", "c"], ["a", "bc"]),
        ([2**53 + 1], [float(2**53 + 1)]),
        ([[1, 2]], [[1], [2]]),
        (collections.deque([1]), [1]),
    ],
)
def test_unequal_values_differ(a: Any, b: Any) -> None:
    assert a != b
    assert digest(a) != digest(b)


def test_nan_and_opaque_values_equal_nothing() -> None:
    assert _values.equality_digest([1.0, math.nan])[1] is True

    class Anything:
        def __eq__(self, other: object) -> bool:  # the classic forgery
            return True

    tagged = _values.dumps(Anything())
    decoded = _values.loads(tagged)
    assert decoded != decoded and decoded != 1
    first, unequal = _values.equality_digest(Anything())
    assert unequal and first != _values.equality_digest(Anything())[0]


def test_large_and_special_numbers_travel_exactly() -> None:
    huge = 7**20000  # more digits than int() parses from decimal text by default
    assert _values.loads(_values.dumps(huge)) == huge
    for special in (math.inf, -math.inf):
        assert _values.loads(_values.dumps(special)) == special
    assert math.isnan(_values.loads(_values.dumps(math.nan)))
    assert _values.loads(_values.dumps(np.float64(2.5))) == 2.5
    assert _values.loads(_values.dumps(range(3))) == range(3)


def test_subclasses_travel_as_their_base_with_the_type_name() -> None:
    Point = collections.namedtuple("Point", "x y")
    assert _values.loads(_values.dumps(Point(1, 2))) == (1, 2)
    assert _values.type_name(Point(1, 2)).endswith("Point")
    assert _values.type_name([]) == "list"


@pytest.mark.parametrize(
    "text",
    [
        '{"x": 1}',
        '{"t": 5}',
        '{"d": [[1]]}',
        '{"d": [[[1], 2]]}',
        '{"f": "bogus"}',
        '{"i": 12}',
        '{"c": ["a", 1]}',
        '{"r": [1, 2]}',
        "[" * 5000 + "]" * 5000,
    ],
)
def test_malformed_data_is_a_value_error_never_code(text: str) -> None:
    with pytest.raises(ValueError):
        _values.loads(text)


def test_shared_structure_cannot_explode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_values, "MAX_NODES", 100_000)  # the real bound takes ~40 s to reach
    bomb: list[Any] = [1]
    for _ in range(60):
        bomb = [bomb, bomb]
    with pytest.raises(_values.TooLarge):
        _values.to_tagged(bomb)
    with pytest.raises(_values.TooLarge):
        _values.equality_digest(bomb)
    cycle: list[Any] = []
    cycle.append(cycle)
    assert "nested too deeply" in json.dumps(_values.to_tagged(cycle))


def test_is_floats_is_evalplus() -> None:
    assert _values.is_floats(1.0) and _values.is_floats([1.0, 2.0]) and _values.is_floats((1.0,))
    assert not _values.is_floats([]) and not _values.is_floats([1.0, 2])
    assert _values.is_floats(np.array([1.0])) and not _values.is_floats(np.array([1]))
