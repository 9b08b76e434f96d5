"""The benchmark registry and the name checks every benchmark shares."""

from __future__ import annotations

import subprocess
import sys

import pytest

import passbench.stages.benchmarks as registry
from passbench.core.errors import InputError, UnknownNameError
from passbench.stages.benchmarks import (
    BenchmarkBase,
    benchmark_names,
    check_split,
    check_subset,
    check_version,
    get_benchmark,
)


def test_names() -> None:
    assert benchmark_names()[:4] == (
        "bigcodebench",
        "humaneval",
        "humanevalplus",
        "humaneval-openai",
    )
    multiple = tuple(f"multipl-e-{key}" for key in ("js", "cpp", "java", "rs", "lua"))
    assert set(multiple) <= set(benchmark_names())
    assert {"mbpp", "mbppplus"} <= set(benchmark_names())
    for name in benchmark_names():
        bench = get_benchmark(name)
        assert bench.info.name == name
        assert bench.info.default_version in bench.info.versions
        # every split is `complete` or `instruct` but Aider polyglot's, its edit formats
        assert "full" in bench.info.subsets
        assert "complete" in bench.info.splits or set(bench.info.splits) == {"whole", "diff"}
        assert bench.info.default_timeout_s > 0


def test_unknown_benchmark_lists_valid_names() -> None:
    with pytest.raises(UnknownNameError) as caught:
        get_benchmark("apps")
    message = str(caught.value)
    assert "unknown benchmark 'apps'" in message
    assert "bigcodebench, humaneval, humanevalplus, humaneval-openai" in message
    assert "mbpp, mbppplus" in message
    assert isinstance(caught.value, InputError) and caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("name", "check", "value", "expected"),
    [
        ("bigcodebench", check_split, "instruct", "instruct"),
        ("bigcodebench", check_subset, "hard", "hard"),
        ("bigcodebench", check_version, None, "v0.1.4"),
        ("bigcodebench", check_version, "v0.1.5", "v0.1.5"),
        ("humaneval", check_version, None, "v0.1.10"),
        ("humaneval-openai", check_version, None, "v1"),
        ("humanevalplus", check_version, None, "v0.1.10"),
        ("mbppplus", check_version, None, "v0.2.0"),
    ],
)
def test_known_names(name: str, check: object, value: str | None, expected: str) -> None:
    assert check(get_benchmark(name), value) == expected  # type: ignore[operator]


@pytest.mark.parametrize(
    ("name", "check", "value", "message"),
    [
        ("bigcodebench", check_split, "chat", "unknown split 'chat' for bigcodebench"),
        ("humaneval", check_split, "instruct", "choose one of: complete"),
        ("humaneval", check_subset, "hard", "unknown subset 'hard' for humaneval"),
        ("bigcodebench", check_version, "v0.2.0", "choose one of: v0.1.4, v0.1.5"),
    ],
)
def test_unknown_names(name: str, check: object, value: str, message: str) -> None:
    with pytest.raises(UnknownNameError, match=message):
        check(get_benchmark(name), value)  # type: ignore[operator]


def test_load_rejects_bad_names_before_touching_data() -> None:
    # no data settings at all: a bad name must fail before any lookup or download
    with pytest.raises(UnknownNameError, match="subset"):
        get_benchmark("humanevalplus").load(None, "hard")
    with pytest.raises(UnknownNameError, match="version"):
        get_benchmark("bigcodebench").load("v0.1.3")


def test_registry_imports_benchmarks_lazily() -> None:
    code = (
        "import sys, passbench.stages.benchmarks as b; "
        "print(any(m.startswith('passbench.stages.benchmarks.') and m.split('.')[-1] in "
        "('bigcodebench', 'humaneval') for m in sys.modules)); "
        "b.get_benchmark('humaneval'); "
        "print('passbench.stages.benchmarks.humaneval' in sys.modules); "
        "print('httpx' in sys.modules)"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert output == ["False", "True", "False"]


class LooseBench(BenchmarkBase):
    """A plug-in in the old form: its data as loose attributes, no `info` record."""

    name = "loosebench"
    versions = ("v1",)
    default_version = "v1"


def test_a_plugin_without_an_info_record_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = f"{__name__}:LooseBench"
    monkeypatch.setattr(registry, "_entry_points", lambda: [("loosebench", target)])
    with pytest.raises(InputError) as refused:
        get_benchmark("loosebench")
    assert str(refused.value) == (
        f"field 'benchmark': benchmark 'loosebench' ({target}) declares no "
        "`info = BenchmarkInfo(...)` (docs/writing-a-benchmark.md)"
    )
