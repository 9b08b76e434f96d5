"""`BenchmarkInfo`: a benchmark's data as one record, with the defaults a simple benchmark
leaves out, that refuses to contradict itself (naming the benchmark and the field)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from passbench.core.errors import InputError
from passbench.stages.benchmarks import BenchmarkInfo, PromptStyle
from passbench.stages.benchmarks.prompting import EOS, identity, stop_at_fence_always

STYLE = PromptStyle(
    direct=identity,
    user_message=lambda prefix, prompt, split, chat_template: prompt,
    direct_stops=EOS,
    chat_stops=stop_at_fence_always,
)


def _info(**changes: Any) -> BenchmarkInfo:
    fields: dict[str, Any] = {
        "name": "toybench",
        "title": "Toy",
        "id_prefix": "Toy/",
        "versions": ("v1", "v2"),
        "default_version": "v1",
        "default_timeout_s": 3.0,
        "prompt_style": STYLE,
    }
    return BenchmarkInfo(**(fields | changes))


def test_a_simple_benchmark_states_only_what_differs() -> None:
    info = _info()
    assert (info.splits, info.subsets, info.programming_language) == (
        ("complete",),
        ("full",),
        "Python",
    )
    assert (info.env_name, info.has_reference, info.executable, info.scored_by) == (
        None,
        True,
        True,
        "passbench evaluate",
    )
    assert dict(info.subset_sizes) == {} and info.max_reflections == 0


def test_the_record_cannot_change_once_made() -> None:
    sizes = {"full": 2}
    info = _info(subsets=iter(["full", "easy"]), subset_sizes=sizes)
    sizes["full"] = 99  # the caller's dict is not the record's
    assert info.subsets == ("full", "easy") and info.subset_sizes["full"] == 2
    with pytest.raises(TypeError):
        info.subset_sizes["full"] = 3  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.title = "Other"  # type: ignore[misc]
    # a variant is the record with some fields replaced, checked again
    assert dataclasses.replace(info, name="toy-plus").subsets == ("full", "easy")


@pytest.mark.parametrize(
    ("changes", "field", "problem"),
    [
        ({"default_version": "v3"}, "default_version", "'v3' is not one of the versions (v1, v2)"),
        (
            {"subset_sizes": {"full": 2, "hard": 1}},
            "subset_sizes",
            "subsets it does not have: hard",
        ),
        ({"subset_sizes": {"full": 0}}, "subset_sizes", "must be positive"),
        ({"name": ""}, "name", "must be a non-empty name"),
        ({"title": ""}, "title", "must not be empty"),
        ({"id_prefix": ""}, "id_prefix", "set guess_from_ids=False"),
        ({"subsets": ("easy",)}, "subsets", "must contain 'full'"),
        ({"splits": ()}, "splits", "must be non-empty and without repeats"),
        ({"versions": ("v1", "v1")}, "versions", "must be non-empty and without repeats"),
        ({"default_timeout_s": 0.0}, "default_timeout_s", "must be positive"),
        ({"scored_by": ""}, "scored_by", "must name the command"),
        ({"max_reflections": -1}, "max_reflections", "must be 0 or more"),
    ],
)
def test_a_record_that_contradicts_itself_is_refused(
    changes: dict[str, Any], field: str, problem: str
) -> None:
    with pytest.raises(InputError) as refused:
        _info(**changes)
    assert refused.value.field == field
    name = changes.get("name", "toybench")
    assert str(refused.value).startswith(f"field '{field}': benchmark '{name}': ")
    assert problem in str(refused.value)


def test_an_empty_prefix_is_allowed_when_ids_do_not_name_the_benchmark() -> None:
    assert _info(id_prefix="", guess_from_ids=False).id_prefix == ""


def test_a_variant_is_checked_too() -> None:
    with pytest.raises(InputError, match=r"benchmark 'toy-plus': .*'v9' is not one of"):
        dataclasses.replace(_info(), name="toy-plus", default_version="v9")
