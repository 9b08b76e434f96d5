"""Catch2's main from its cache (aider_polyglot/catch_main.py): recorded once through a real
cmake build, linked in place of the compile when everything it depends on is unchanged, never
when an argument or a file could make the compile differ; verdicts and test output those of a
full build; and the cache read-only to samples in the sandbox.

A small harness of the same shape keeps these fast (a CMakeLists like the exercises', a
tests-main.cpp that includes "catch.hpp", a catch.hpp that defines main); the real exercises
with the real cache run in test_aider_polyglot.py and perf/polyglot_speed.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from passbench.core.records import Task
from passbench.stages.benchmarks.aider_polyglot.benchmark import exercise_files
from passbench.stages.benchmarks.aider_polyglot.catch_main import (
    CATCH_MAIN_CACHE,
    launcher_text,
    quoted_includes_problem,
    record,
    variants,
)

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("c++") is None, reason="needs cmake and c++"
)

_CMAKE = """cmake_minimum_required(VERSION 3.5.1)
get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)
project(${exercise} CXX)
string(REPLACE "-" "_" file ${exercise})
add_executable(${exercise} ${file}_test.cpp ${file}.cpp test/tests-main.cpp)
set_target_properties(${exercise} PROPERTIES CXX_STANDARD 17 CXX_EXTENSIONS OFF)
set(CMAKE_BUILD_TYPE Debug)
set_target_properties(${exercise} PROPERTIES COMPILE_FLAGS "-Wall -Wextra -Wpedantic -Werror")
if(${EXERCISM_RUN_ALL_TESTS})
    target_compile_definitions(${exercise} PRIVATE EXERCISM_RUN_ALL_TESTS)
endif()
add_custom_target(test_${exercise} ALL DEPENDS ${exercise} COMMAND ${exercise})
"""
_MAIN = '#define CATCH_CONFIG_MAIN\n#include "catch.hpp"\n'
_HEADER = """#pragma once
#include <cstdio>
int run_tests();
#ifdef CATCH_CONFIG_MAIN
int main() {
    int failed = run_tests();
    std::printf("%d failed\\n", failed);
    return failed ? 1 : 0;
}
#endif
"""
_TEST = (
    '#include "test/catch.hpp"\n#include "adder.h"\nint run_tests() { return add(2, 2) != 4; }\n'
)
_RIGHT = '#include "adder.h"\nint add(int a, int b) { return a + b; }\n'
_WRONG = '#include "adder.h"\nint add(int a, int b) { return a * b + 1; }\n'
_OBJECT = "build/CMakeFiles/adder.dir/test/tests-main.cpp.o"


def _task(header: str = _HEADER) -> Task:
    support = {
        "CMakeLists.txt": _CMAKE,
        "adder_test.cpp": _TEST,
        "test/tests-main.cpp": _MAIN,
        "test/catch.hpp": header,
    }
    stubs = {"adder.h": "int add(int a, int b);\n", "adder.cpp": _RIGHT}
    return Task(
        benchmark="aider-polyglot",
        task_id="AiderPolyglot/0/cpp/adder",
        entry_point="adder",
        prompts={},
        code_prompt="",
        test="{}",
        canonical_solution=json.dumps({"files": stubs}),
        metadata={
            "language": "cpp",
            "exercise": "adder",
            "stubs": stubs,
            "support": support,
            "tests": ["adder_test.cpp"],
        },
    )


def _files(task: Task) -> dict[str, str]:
    return exercise_files(task, task.canonical_solution)


def _write(folder: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)


def _build(
    root: Path, solution: str, cache: Path | None, header: str = _HEADER, flags: str = ""
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The exercise's folder and the test script's commands (cmake, then make, which runs the
    tests), with the launcher when `cache` is given."""
    task = _task(header)
    folder = root / "adder"
    files = {**task.metadata["support"], **task.metadata["stubs"], "adder.cpp": solution}
    if flags:
        files["CMakeLists.txt"] += f'set(CMAKE_CXX_FLAGS "{flags}")\n'
    _write(folder, files)
    launcher = root / "launcher.sh"
    launcher.write_text(launcher_text())
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(root), "LANG": "C.UTF-8"}
    if cache is not None:
        env["CMAKE_CXX_COMPILER_LAUNCHER"] = f"sh;{launcher}"
        env["PASSBENCH_CATCH_MAIN_CACHE"] = str(cache)
    (folder / "build").mkdir()
    configure = ["cmake", "-DEXERCISM_RUN_ALL_TESTS=1", "-G", "Unix Makefiles", ".."]
    subprocess.run(configure, cwd=folder / "build", env=env, check=True, capture_output=True)
    made = subprocess.run(
        ["make"], cwd=folder / "build", env=env, capture_output=True, text=True, check=False
    )
    return folder, made


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("catch-main") / "cache"
    task = _task()
    done = record([task], folder, _files)
    assert [(d.exercise, d.status) for d in done] == [("adder", "added")]
    return folder


def test_recorded_once_per_variant_with_every_other_file_it_read(cache: Path) -> None:
    [entry] = list(cache.iterdir())
    assert len(entry.name) == 64 and (entry / "main.o").stat().st_size > 0
    listed = [
        line.split("  ", 1)[1]
        for line in (entry / "headers.sha256").read_text().split("\n")
        if line
    ]
    assert listed and all(path.startswith("/usr/") for path in listed)
    assert any(path.endswith("/cstdio") for path in listed)
    # a second record keeps the intact entry
    task = _task()
    again = record([task], cache, _files)
    assert [d.status for d in again] == ["present"]
    assert list(cache.iterdir()) == [entry]


@pytest.mark.slow
def test_the_build_links_the_cached_object_with_the_verdicts_of_a_full_build(
    cache: Path, tmp_path: Path
) -> None:
    [entry] = list(cache.iterdir())
    for solution, passes in ((_RIGHT, True), (_WRONG, False)):
        name = "right" if passes else "wrong"
        cached_folder, cached = _build(tmp_path / f"cached-{name}", solution, cache)
        full_folder, full = _build(tmp_path / f"full-{name}", solution, None)
        assert (cached_folder / _OBJECT).read_bytes() == (entry / "main.o").read_bytes()
        assert (full_folder / _OBJECT).read_bytes() != (entry / "main.o").read_bytes()
        assert (cached.returncode == 0) is passes and (full.returncode == 0) is passes
        said = "0 failed" if passes else "1 failed"
        assert said in cached.stdout and said in full.stdout


@pytest.mark.slow
def test_anything_that_could_change_the_compile_compiles_it(cache: Path, tmp_path: Path) -> None:
    [entry] = list(cache.iterdir())
    cached = (entry / "main.o").read_bytes()
    # another catch.hpp (the key), an include folder (a flag the launcher refuses)
    other_header = _HEADER.replace("%d failed", "%d tests failed")
    folder, made = _build(tmp_path / "header", _RIGHT, cache, header=other_header)
    assert made.returncode == 0 and (folder / _OBJECT).read_bytes() != cached
    folder, made = _build(tmp_path / "include", _RIGHT, cache, flags=f"-I{tmp_path}")
    assert made.returncode == 0 and (folder / _OBJECT).read_bytes() != cached
    # a file the recorded compile read that changed since (headers.sha256 no longer matches)
    stale = tmp_path / "stale-cache"
    shutil.copytree(cache, stale)
    listing = stale / entry.name / "headers.sha256"
    listing.write_text("0" * 64 + listing.read_text()[64:])
    folder, made = _build(tmp_path / "stale", _RIGHT, stale)
    assert made.returncode == 0 and (folder / _OBJECT).read_bytes() != cached


def test_a_harness_that_could_read_a_samples_file_is_never_cached() -> None:
    assert quoted_includes_problem(_MAIN, _HEADER) is None
    assert "quoted" in str(quoted_includes_problem(_MAIN + '#include "extra.h"\n', _HEADER))
    assert "catch.hpp" in str(quoted_includes_problem(_MAIN, _HEADER + '#include "local.h"\n'))
    assert "catch.hpp" in str(
        quoted_includes_problem(_MAIN, '#if __has_include("x.h")\n#endif\n' + _HEADER)
    )
    # the exercise's name is in no compile flag: exercises that differ by it alone share one
    other = _task()
    renamed = replace(other, metadata={**other.metadata, "exercise": "adder2"})
    assert len(variants([other, renamed])) == 1
    assert len(variants([other, _task(_HEADER + "// another version\n")])) == 2


@pytest.mark.bwrap
def test_samples_cannot_write_the_cache_in_the_sandbox() -> None:
    """A sample that writes into the cache (or, when it is not recorded here, where it would
    be) fails to: its exercise's tests pass only when the write was refused."""
    from tests.datasets import DATA_DIR
    from tests.stages.sandbox.helpers import bwrap_usable

    from passbench.stages.benchmarks import DataSettings, get_benchmark
    from passbench.stages.sandbox import Limits, SandboxConfig, open_sandbox

    if not bwrap_usable():
        pytest.skip("bubblewrap cannot run here")
    bench = get_benchmark("aider-polyglot")
    loaded = bench.load(subset="python", data=DataSettings(data_dir=DATA_DIR, download=False))
    task = next(t for t in loaded.tasks if t.metadata["exercise"] == "proverb")
    files = json.loads(bench.canonical_code(task))["files"]
    [path] = list(files)
    target = Path(CATCH_MAIN_CACHE) / "written-by-a-sample"
    files[path] = (
        f"import os\ntry:\n    os.makedirs({str(target)!r})\nexcept OSError:\n    pass\n"
        f"else:\n    raise SystemExit('wrote into the cache')\n" + files[path]
    )
    config = SandboxConfig(python=Path(sys.executable), workers=1, limits=Limits())
    with open_sandbox(config) as sandbox:
        [result] = sandbox.run(
            [bench.program(task, json.dumps({"files": files}), key="k", timeout_s=60)]
        )
    assert result.status == "pass", result.details
    assert not target.exists()
