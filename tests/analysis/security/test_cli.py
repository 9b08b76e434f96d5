"""`passbench security` end to end on a small real results file, then `inspect` beside it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.analysis.report.result_files import OURS

from passbench.analysis.security import load_security
from passbench.apps.cli import cli
from passbench.stages.results import load_results

INJECTION = "import subprocess\ndef task_func(x):\n    return subprocess.call(x, shell=True)\n"


@pytest.fixture(autouse=True)
def environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path, security_env: Path
) -> None:
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PASSBENCH_SECURITY_ENV_DIR", str(security_env))
    monkeypatch.setenv("COLUMNS", "160")


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory, data_dir: Path, security_env: Path) -> Path:
    """The fixture run (14 BigCodeBench-Hard tasks, 5 samples each), its first passing sample
    made a shell injection, scanned once by the real command."""
    folder = tmp_path_factory.mktemp("run")
    document = json.loads(OURS.read_text(encoding="utf-8"))
    first = next(
        s for samples in document["eval"].values() for s in samples if s["status"] == "pass"
    )
    first["solution"] = INJECTION
    results = folder / OURS.name
    results.write_text(json.dumps(document), encoding="utf-8")
    shutil.copy(OURS.with_name(OURS.name.replace("eval_results", "pass_at_k")), folder)
    environ = {
        "PASSBENCH_DATA_DIR": str(data_dir),
        "PASSBENCH_SECURITY_ENV_DIR": str(security_env),
        "PASSBENCH_CACHE_DIR": str(folder / "cache"),
        "COLUMNS": "160",
    }
    result = CliRunner(env=environ).invoke(cli, ["security", str(results)])
    assert result.exit_code == 0, result.output
    assert "insecure among passing" in result.output
    return results


def test_result_file_has_every_sample_with_findings_tools_and_figures(scanned: Path) -> None:
    output = scanned.with_name(scanned.name.replace("eval_results", "security"))
    assert output.is_file() and not Path(f"{output}.partial.jsonl").exists()
    document = json.loads(output.read_text(encoding="utf-8"))
    assert document["kind"] == "passbench-security" and document["schema_version"] == 1
    assert set(document["tools"]) == {"bandit", "semgrep", "codeshield"}
    assert len(document["ruleset_sha256"]) == 64
    assert document["input"]["benchmark"] == "bigcodebench"
    run = load_results(scanned)
    assert len(document["samples"]) == sum(len(samples) for samples in run.tasks.values()) == 70
    injected = [s for s in document["samples"] if s["code_sha256"] == _sha256(INJECTION)]
    assert len(injected) == 1 and injected[0]["status"] == "pass"
    assert ("bandit", "CWE-78", 3) in {
        (f["tool"], f["cwe"], f["line"]) for f in injected[0]["findings"]
    }
    summary = document["summary"]
    passing = sum(s.passed for samples in run.tasks.values() for s in samples)
    assert summary["insecure_among_passing"]["total"] == passing
    assert summary["insecure_among_passing"]["count"] >= 1
    assert "CWE-78" in summary["by_cwe"]
    assert summary["by_library"]["subprocess"]["count"] >= 1  # the tasks' libraries
    assert summary["by_language"]["python"]["samples"] == 70
    # the figures in the file are the ones its samples give
    assert load_security(output).summary.to_json() == summary


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_inspect_shows_the_security_file_beside_the_results(scanned: Path) -> None:
    runner = CliRunner()
    table = runner.invoke(cli, ["inspect", str(scanned), "--bootstrap", "300"])
    assert table.exit_code == 0, table.output
    assert "vulnerable (CyberSecEval detector)" in table.output
    assert "insecure among passing" in table.output
    data = json.loads(
        runner.invoke(
            cli, ["inspect", str(scanned), "--format", "json", "--bootstrap", "300"]
        ).output
    )
    assert data["security"]["insecure_among_passing"]["count"] >= 1
    html = scanned.with_name("report.html")
    result = runner.invoke(
        cli, ["inspect", str(scanned), "--format", "html", "-o", str(html), "--bootstrap", "300"]
    )
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    assert '<section id="security">' in page and "CWE-78" in page


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "file not found"),
        ('{"pass@1": 0.5}', "no 'eval' field"),
        ("not json", ""),
    ],
)
def test_bad_input_is_one_line_naming_the_file(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "x_eval_results.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(cli, ["security", str(path)], standalone_mode=False)
    assert result.exception is not None
    text = str(result.exception)
    assert "\n" not in text and str(path) in text and message in text
