"""docs/python-api.md stays true: its first example runs as written (real HumanEval data, the
real sandbox, a result file from tests/analysis/report/data) and prints what the page says it
prints; every other example compiles and names only public functions."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import passbench

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "python-api.md"


def _blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block, in order."""
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)


def test_the_page_has_an_example_and_what_it_prints() -> None:
    blocks = _blocks()
    assert blocks[0][0] == "python" and blocks[1][0] == "text"


@pytest.mark.bwrap
def test_the_first_example_prints_what_the_page_says(data_dir: Path, tmp_path: Path) -> None:
    (_, example), (_, printed) = _blocks()[:2]
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # "run from a clone of the repository"
    environ = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PASSBENCH_DATA_DIR": str(data_dir),
        "PASSBENCH_CACHE_DIR": str(tmp_path / "cache"),
    }
    finished = subprocess.run(
        [sys.executable, "-c", example],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environ,
        timeout=300,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout == printed


def test_every_other_example_compiles_and_uses_the_public_api() -> None:
    examples = [text for language, text in _blocks()[2:] if language == "python"]
    assert examples
    for text in examples:
        compile(text, str(PAGE), "exec")
        for name in re.findall(r"passbench\.(\w+)", text):
            assert name in passbench.__all__, name


def test_the_readme_s_python_example_compiles_and_uses_the_public_api() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    compile(example, "README.md", "exec")
    names = set(re.findall(r"passbench\.(\w+)", example))
    assert names == {"evaluate", "generate", "load_results"}
    assert names <= set(passbench.__all__)
