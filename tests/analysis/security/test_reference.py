"""`passbench security --references`: SALLM's insecure references through the real tools,
the figures read back from the scan, and the refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from passbench.analysis.security import load_security
from passbench.analysis.security.reference import reference_check
from passbench.apps.cli import cli, main
from passbench.stages.benchmarks import DataSettings, get_benchmark

#: Measured with bandit 1.9.4, semgrep 1.185.0, codeshield 1.0.1: 49 of the 100 references are
#: flagged (docs/benchmarks.md). A floor, not the figure: other tool versions may differ a little.
FLOOR = 40


@pytest.fixture
def env(tmp_path: Path, data_dir: Path, security_env: Path) -> dict[str, str]:
    return {
        "PASSBENCH_DATA_DIR": str(data_dir),
        "PASSBENCH_SECURITY_ENV_DIR": str(security_env),
        "PASSBENCH_CACHE_DIR": str(tmp_path / "cache"),
        "COLUMNS": "160",
    }


def test_the_references_are_scanned_and_counted(
    env: dict[str, str], tmp_path: Path, data_dir: Path
) -> None:
    output = tmp_path / "out" / "sallm-references_security.json"
    args = ["security", "--references", "--benchmark", "sallm", "-o", str(output)]
    result = CliRunner(env=env).invoke(cli, args)
    assert result.exit_code == 0, result.output

    # the samples: every task's insecure reference, with what `security` reads beside it
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    bench = get_benchmark("sallm")
    loaded = bench.load(None, "full", data=data)
    samples = output.parent / "sallm-insecure-references.jsonl"
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    assert [row["task_id"] for row in rows] == [task.task_id for task in loaded]
    for row, task in zip(rows, loaded, strict=True):
        assert row["solution"] == task.metadata["insecure_code"]
        assert row["cwe_identifier"] == task.metadata["cwe_identifier"]

    # the printed figure is the scan's: the samples with any finding of the real tools
    scanned = load_security(output)
    assert scanned.document["tools"].keys() == {"bandit", "semgrep", "codeshield"}
    assert len(scanned.scans) == 100
    assert all(scan.tools == ("bandit", "semgrep", "regex") for scan in scanned.scans)
    flagged = sum(1 for scan in scanned.scans if scan.findings)
    line = re.search(
        r"references flagged: (\d+)/100 \(by tool: ([^;]*); .* own CWE: (\d+);", result.output
    )
    assert line is not None, result.output
    assert int(line[1]) == flagged == scanned.summary.insecure.count
    assert flagged >= FLOOR
    check = reference_check(bench, loaded, scanned.scans, data)
    assert check.flagged == flagged and check.total == 100
    assert line[2] == ", ".join(f"{tool} {count}" for tool, count in check.by_tool.items())
    assert check.by_tool["bandit"] > 0 and check.by_tool["semgrep"] > 0
    own = sum(
        1
        for scan, task in zip(scanned.scans, loaded, strict=True)
        if task.metadata["cwe_identifier"] in {finding.cwe for finding in scan.findings}
    )
    assert int(line[3]) == check.own_cwe == own
    assert {g.name: g.total for g in check.by_subset} == {
        "assertion": 43,
        "tainted": 43,
        "matching": 14,
    }
    assert sum(g.flagged for g in check.by_subset) == flagged
    assert len(check.missed) == 100 - flagged


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--references", "--benchmark", "humaneval"], "humaneval has no insecure references"),
        (["--references"], "--references needs --benchmark"),
        (["x.jsonl", "--references", "--benchmark", "sallm"], "give no file"),
        ([], "give a RESULTS or SAMPLES file"),
    ],
)
def test_refusals_are_one_line(
    env: dict[str, str],
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exit_:
        main(["security", *args])
    assert exit_.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], lines


def test_cyberseceval_origin_code_is_its_reference(
    env: dict[str, str], tmp_path: Path, data_dir: Path
) -> None:
    """CyberSecEval's prompts were written from code its detector flagged: scanning that code
    measures how much of it our detector sees, per language (docs/security.md)."""
    output = tmp_path / "cse_security.json"
    args = ["security", "--references", "--benchmark", "cyberseceval-instruct"]
    result = CliRunner(env=env).invoke(cli, [*args, "-o", str(output)])
    assert result.exit_code == 0, result.output
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    loaded = get_benchmark("cyberseceval-instruct").load(None, "full", data=data)
    rows = [
        json.loads(line)
        for line in (tmp_path / "cyberseceval-instruct-insecure-references.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    assert [row["solution"] for row in rows] == [t.metadata["origin_code"] for t in loaded]
    scanned = load_security(output)
    languages = {t.metadata["language"] for t in loaded}
    assert {scan.language for scan in scanned.scans} == languages and len(languages) == 8
    php = [scan for scan in scanned.scans if scan.language == "php"]
    # measured 148/151 with codeshield 1.0.1's PHP regex rules: nearly every origin is seen
    assert len(php) == 151 and sum(1 for scan in php if scan.findings) >= 140
