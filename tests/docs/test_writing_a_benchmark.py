"""The worked example of docs/writing-a-benchmark.md is a working benchmark: its module and its
data are taken out of the page, installed as a distribution registered through the
`passbench.benchmarks` entry point, and run through the registry, the hooks and real programs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from passbench.stages.benchmarks import (
    DataSettings,
    benchmark_info,
    benchmark_names,
    get_benchmark,
)
from passbench.stages.prompts import build_prompt

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-a-benchmark.md"


def example(name: str) -> str:
    """The fenced block that follows `<!-- example: NAME -->` in the page."""
    text = DOC.read_text(encoding="utf-8")
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```\w*\n(.*?)\n```\n", text, re.S)
    assert found is not None, f"{DOC.name}: no example block {name}"
    return found.group(1) + "\n"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DataSettings:
    site = tmp_path / "site"
    site.mkdir()
    (site / "wordbench.py").write_text(example("wordbench.py"), encoding="utf-8")
    info = site / "wordbench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wordbench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[passbench.benchmarks]\nwordbench = wordbench:WordBench\n"
    )
    data = tmp_path / "data"
    (data / "wordbench").mkdir(parents=True)
    (data / "wordbench" / "tasks.jsonl").write_text(example("wordbench/tasks.jsonl"))
    monkeypatch.syspath_prepend(str(site))
    return DataSettings(data_dir=data, cache_dir=tmp_path / "cache", download=False)


def _passes(source: str, tmp_path: Path) -> bool:
    """Whether the program exits cleanly (run as the sandbox's script style runs it)."""
    path = tmp_path / "program.py"
    path.write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, timeout=60)
    return done.returncode == 0


def test_the_documented_benchmark_works(installed: DataSettings, tmp_path: Path) -> None:
    assert "wordbench" in benchmark_names()
    bench = get_benchmark("wordbench")
    info = benchmark_info("wordbench")
    assert (info.title, info.splits, info.programming_language) == (
        "WordBench",
        ("instruct",),
        "Python",
    )
    loaded = bench.load(data=installed)
    assert [task.task_id for task in loaded] == ["Word/0", "Word/1"]
    for task in loaded:
        prompt = build_prompt(task, "instruct", chat=True)
        assert task.prompts["instruct"] in prompt.text
        good = bench.program(task, bench.canonical_code(task), key="good", timeout_s=5)
        assert _passes(good.source, tmp_path), task.task_id
        wrong = bench.program(task, "print('nothing')\n", key="wrong", timeout_s=5)
        assert not _passes(wrong.source, tmp_path), task.task_id
        # its one hook, and the defaults of the others
        assert bench.sample_fields(task) == {"cases": 2}
        answer = f"```python\n{task.canonical_solution}```\n"
        assert bench.sanitize_answer(answer, task, "instruct").code.strip()
        assert bench.extra_scores([], (1,)) == {}
        assert bench.read_official_results(DOC) is None
