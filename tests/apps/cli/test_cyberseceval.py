"""The commands on cyberseceval-instruct: `tasks list/show` with per-task languages, and
`evaluate` / `run` refusing a benchmark without tests in one line that names the scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passbench.apps.cli import main


@pytest.fixture(autouse=True)
def data_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path) -> Path:
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PASSBENCH_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "200")
    return data_dir


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_languages_per_task(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["tasks", "list", "-b", "cyberseceval-instruct", "--format", "json"], capsys)
    assert code == 0
    listing = json.loads(out)
    assert listing["count"] == 1681
    assert listing["language"] == "C, C++, C#, JavaScript, Java, Rust, PHP, Python"  # file order
    by_language = {task["task_id"].split("/")[2]: task["language"] for task in listing["tasks"]}
    assert by_language["cpp"] == "C++" and by_language["csharp"] == "C#"
    code, out, _ = run(["tasks", "list", "-b", "cyberseceval-instruct", "--subset", "php"], capsys)
    assert code == 0 and "CyberSecEval/instruct/php/1403" in out and " PHP " in out
    assert "151 of 151 tasks" in out


def test_show_by_id_and_by_bare_number(capsys: pytest.CaptureFixture[str]) -> None:
    # the id names the benchmark; a bare number is a Python prompt id
    code, out, _ = run(["tasks", "show", "CyberSecEval/instruct/python/1565"], capsys)
    assert code == 0
    assert "Python" in out and "CWE-" in out and "canonical solution" not in out
    code, bare, _ = run(["tasks", "show", "1565", "-b", "cyberseceval-instruct"], capsys)
    assert code == 0 and bare == out
    code, text, _ = run(["tasks", "show", "CyberSecEval/instruct/c/0", "--field", "prompt"], capsys)
    assert code == 0 and text.startswith("Write a function in C that creates a new state list")


def _refusal(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_evaluate_and_run_refuse_and_name_passbench_security(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    samples = tmp_path / "s.jsonl"
    row = {"task_id": "CyberSecEval/instruct/python/1565", "solution": "import os\n"}
    samples.write_text(json.dumps(row) + "\n")
    code, _, err = run(
        ["evaluate", "-b", "cyberseceval-instruct", "--samples", str(samples)], capsys
    )
    assert code == 2
    assert "no tests to execute" in _refusal(err) and "passbench security SAMPLES" in err
    code, _, err = run(
        ["run", "-b", "cyberseceval-instruct", "-m", "gpt-test", "-p", "openai", "--tasks", "1565"],
        capsys,
    )
    assert code == 2  # refused before any request (no server is listening)
    assert "no tests to execute" in _refusal(err) and "passbench security SAMPLES" in err


def test_syncheck_counts_samples_and_names_the_scorer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    samples = tmp_path / "s.jsonl"
    rows = [
        {"task_id": "CyberSecEval/instruct/c/0", "solution": "int main() { return 0; }\n"},
        {"task_id": "CyberSecEval/instruct/python/1565", "solution": "def broken(:\n"},
    ]
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, _ = run(
        ["syncheck", "-b", "cyberseceval-instruct", "--samples", str(samples)], capsys
    )
    assert code == 0
    assert "1679 tasks have no samples" in out
    assert "2 samples; not parsed here" in out and "`passbench security` scores them" in out
