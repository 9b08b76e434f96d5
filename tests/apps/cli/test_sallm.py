"""The commands on sallm: `tasks list/show` with each prompt's weakness and technique, and
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


def test_list_by_technique(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["tasks", "list", "-b", "sallm", "--format", "json"], capsys)
    assert code == 0
    listing = json.loads(out)
    assert listing["count"] == 100 and listing["language"] == "Python"
    first = listing["tasks"][0]
    assert first["task_id"] == "Matching_Author_A_cwe502_0.py"
    assert first["entry_point"] == "unmarshal_data"
    assert first["summary"].startswith("Get the marshalled data from the request")
    code, out, _ = run(["tasks", "list", "-b", "sallm", "--subset", "tainted"], capsys)
    assert code == 0 and "43 of 43 tasks" in out and "Tainted_CodeQL_codeql_cwe078_0.py" in out
    assert "Assertion_" not in out


def test_show_by_id(capsys: pytest.CaptureFixture[str]) -> None:
    # SALLM's id names the benchmark: no -b needed
    code, out, _ = run(["tasks", "show", "Tainted_CodeQL_codeql_cwe078_0.py"], capsys)
    assert code == 0
    assert "CWE-78" in out and "Tainted (CodeQL)" in out and "download" in out
    assert "prompt (complete)" in out  # no test or solution panel: SALLM's are not here
    assert "canonical solution" not in out and "─ test " not in out
    code, text, _ = run(
        ["tasks", "show", "Matching_Author_A_cwe338_0.py", "--field", "prompt"], capsys
    )
    assert code == 0 and text.startswith("import random\n\nfrom flask import Flask, session")


def _refusal(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_evaluate_and_run_refuse_and_name_passbench_security(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    samples = tmp_path / "s.jsonl"
    row = {"task_id": "Tainted_CodeQL_codeql_cwe078_0.py", "solution": "import os\n"}
    samples.write_text(json.dumps(row) + "\n")
    code, _, err = run(["evaluate", "-b", "sallm", "--samples", str(samples)], capsys)
    assert code == 2
    assert "no tests to execute" in _refusal(err) and "passbench security SAMPLES" in err
    argv = ["run", "-b", "sallm", "-m", "gpt-test", "-p", "openai"]
    code, _, err = run([*argv, "--tasks", "Tainted_CodeQL_codeql_cwe078_0.py"], capsys)
    assert code == 2  # refused before any request (no server is listening)
    assert "no tests to execute" in _refusal(err) and "passbench security SAMPLES" in err
