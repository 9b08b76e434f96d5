"""Third-party benchmarks register through the `passbench.benchmarks` entry-point group.

A real distribution is written into a temporary folder put on sys.path: a package with one
BenchmarkBase subclass and its `*.dist-info` (METADATA, entry_points.txt), as pip installs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from passbench.stages.benchmarks import (
    DataSettings,
    benchmark_names,
    get_benchmark,
    ignored_entry_points,
)
from passbench.stages.prompts import build_prompt, stop_sequences
from passbench.stages.results import guess_benchmark

REPO = Path(__file__).resolve().parents[3]

TOY_MODULE = '''
"""A two-task benchmark in one module, as a third party would write it."""
import json

from passbench.stages.benchmarks import BenchmarkBase, BenchmarkInfo, PromptStyle
from passbench.stages.benchmarks.data import DataFile
from passbench.stages.benchmarks.prompting import EOS, identity, stop_at_fence_always
from passbench.core.records import Task


def _user(prefix, task_prompt, split, chat_template):
    return f"{prefix}\\n{task_prompt}"


def parse(path):
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return tuple(
        Task(benchmark="toybench", task_id=row["task_id"], entry_point=row["entry_point"],
             prompts={"complete": row["prompt"]}, code_prompt=row["prompt"], test=row["test"],
             canonical_solution=row["solution"])
        for row in rows
    )


class ToyBench(BenchmarkBase):
    info = BenchmarkInfo(
        name="toybench", title="Toy", id_prefix="Toy/", versions=("v1",), default_version="v1",
        default_timeout_s=3.0,
        prompt_style=PromptStyle(direct=identity, user_message=_user,
                                 direct_stops=EOS + ("\\n#",), chat_stops=stop_at_fence_always),
    )

    def data_file(self, version):
        return DataFile(relpath="toybench/tasks.jsonl", url_path="toy/tasks.jsonl", check=parse)

    def parse_tasks(self, path):
        return parse(path)

    def program_fields(self, task, code, timeout_s):
        return {"source": code + "\\n" + task.test, "style": "script", "timeout_s": timeout_s}

    def canonical_code(self, task):
        return task.prompts["complete"] + task.canonical_solution
'''

TASKS = [
    {
        "task_id": f"Toy/{n}",
        "entry_point": "f",
        "prompt": f"def f(x):\n    'x plus {n}'\n",
        "test": f"assert f(1) == {1 + n}\n",
        "solution": f"    return x + {n}\n",
    }
    for n in (0, 1)
]


@pytest.fixture
def toy(tmp_path: Path) -> tuple[Path, Path]:
    """(site folder with the installed distribution, data folder with its tasks)."""
    site = tmp_path / "site"
    (site / "toybench").mkdir(parents=True)
    (site / "toybench" / "__init__.py").write_text(textwrap.dedent(TOY_MODULE))
    info = site / "toybench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toybench\nVersion: 0.1\n")
    # the second entry tries to take a built-in name: ignored, with a warning
    (info / "entry_points.txt").write_text(
        "[passbench.benchmarks]\ntoybench = toybench:ToyBench\nhumaneval = toybench:ToyBench\n"
    )
    data = tmp_path / "data"
    (data / "toybench").mkdir(parents=True)
    (data / "toybench" / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    return site, data


@pytest.mark.filterwarnings("ignore:entry point 'humaneval:UserWarning")
def test_an_installed_benchmark_is_registered_after_the_built_ins(
    toy: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site, data = toy
    assert "toybench" not in benchmark_names()
    monkeypatch.syspath_prepend(str(site))
    with pytest.warns(UserWarning, match="'humaneval = toybench:ToyBench'.*built-in"):
        names = benchmark_names()
    assert names[-1] == "toybench" and names.count("humaneval") == 1
    assert ignored_entry_points() == ("humaneval = toybench:ToyBench",)
    assert type(get_benchmark("humaneval")).__module__ == "passbench.stages.benchmarks.humaneval"
    bench = get_benchmark("toybench")
    assert type(bench).__module__ == "toybench"
    loaded = bench.load(data=DataSettings(data_dir=data, cache_dir=tmp_path, download=False))
    assert [task.task_id for task in loaded] == ["Toy/0", "Toy/1"]
    # the generic stages reach it through the registry
    task = loaded.get("Toy/1")
    assert build_prompt(task, "complete", chat=False).text == task.prompts["complete"]
    assert build_prompt(task, "complete", chat=True).text.endswith(task.prompts["complete"])
    assert stop_sequences(False, benchmark="toybench")[-1] == "\n#"
    assert guess_benchmark({"Toy/0": [], "Toy/1": []}) == "toybench"
    assert (
        "return x + 1"
        in bench.program(task, bench.canonical_code(task), key="k", timeout_s=3).source
    )


def _passbench(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(REPO / "src")]))
    return subprocess.run(
        [sys.executable, "-m", "passbench.apps.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_cli_lists_and_shows_an_installed_benchmarks_tasks(toy: tuple[Path, Path]) -> None:
    site, data = toy
    data_dir = ("--data-dir", str(data))
    listed = _passbench(site, "tasks", "list", "-b", "toybench", *data_dir, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    listing = json.loads(listed.stdout)
    assert listing["benchmark"] == "toybench"
    assert [row["task_id"] for row in listing["tasks"]] == ["Toy/0", "Toy/1"]
    # no --benchmark: the id's prefix names it; a bare number with --benchmark works too
    shown = _passbench(
        site, "tasks", "show", "Toy/1", "--data-dir", str(data), "--field", "solution"
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == "def f(x):\n    'x plus 1'\n    return x + 1\n"
    number = _passbench(site, "tasks", "show", "0", "-b", "toybench", *data_dir, "--field", "test")
    assert number.returncode == 0, number.stderr
    assert number.stdout == "assert f(1) == 1\n"
