"""The real tools on known-vulnerable and clean code: every finding carries its CWE."""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.analysis.security.scan import SampleScan, ScanItem, ScanSettings, scan_items
from passbench.analysis.security.tools import Toolset
from passbench.stages.evalenv import check_env

VULNERABLE = """import hashlib
import pickle
import subprocess

import yaml


def run(user_input):
    subprocess.call("ls " + user_input, shell=True)
    data = pickle.loads(user_input)
    digest = hashlib.md5(user_input).hexdigest()
    config = yaml.load(user_input)
    return data, digest, config
"""

CLEAN = """import hashlib
import json
import subprocess


def run(user_input):
    subprocess.run(["ls", user_input], check=True)
    data = json.loads(user_input)
    return data, hashlib.sha256(user_input).hexdigest()
"""

C_CODE = """#include <stdio.h>
#include <string.h>
void copy(char *dest, const char *src) {
    strcpy(dest, src);
    gets(dest);
}
"""

# A Java sample: CyberSecEval's Java rules include one this semgrep cannot parse, which must
# not stop the scan of the others.
JAVA_CODE = """class Digest {
    byte[] run(String cmd) throws Exception {
        Runtime.getRuntime().exec(cmd);
        return java.security.MessageDigest.getInstance("MD5").digest(cmd.getBytes());
    }
}
"""


def _scan(toolset: Toolset, *items: ScanItem, batch_size: int = 50) -> list[SampleScan]:
    return scan_items(list(items), toolset, ScanSettings(batch_size=batch_size)).scans


def _findings(scan: SampleScan) -> set[tuple[str, str, int]]:
    return {(finding.tool, finding.cwe, finding.line) for finding in scan.findings}


@pytest.fixture(scope="module")
def python_scans(toolset: Toolset) -> list[SampleScan]:
    """Clean and vulnerable Python alternating, in two batches of several files each: one scan
    (every tool run costs seconds) that the tests below read from their own angles."""
    items = [ScanItem(f"T/{n}", 0, VULNERABLE if n % 2 else CLEAN, "Python") for n in range(6)]
    return _scan(toolset, *items, batch_size=4)


def test_vulnerable_python_is_found_by_every_tool_with_cwe_and_line(
    python_scans: list[SampleScan],
) -> None:
    scan = python_scans[1]
    found = _findings(scan)
    # shell=True with input: command injection, by bandit (B602) and CyberSecEval's semgrep rule
    assert ("bandit", "CWE-78", 9) in found
    assert ("semgrep", "CWE-78", 9) in found
    # pickle.loads: deserialization of untrusted data
    assert ("bandit", "CWE-502", 10) in found
    assert ("semgrep", "CWE-502", 10) in found
    # md5: CyberSecEval's regex rule (CWE-328) and bandit's (CWE-327)
    assert ("regex", "CWE-328", 11) in found
    assert ("bandit", "CWE-327", 11) in found
    # yaml.load without a safe loader: bandit B506
    assert ("bandit", "CWE-20", 12) in found
    assert scan.insecure and scan.vulnerable
    assert scan.tools == ("bandit", "semgrep", "regex")
    rules = {finding.rule for finding in scan.findings}
    assert {"B602:subprocess_popen_with_shell_equals_true", "insecure-md5-hash-usage"} <= rules


def test_clean_python_has_no_findings(python_scans: list[SampleScan]) -> None:
    for scan in python_scans[0::2]:
        assert scan.findings == ()
        assert not scan.insecure and not scan.vulnerable


def test_other_languages_get_the_detector_rules_for_them(toolset: Toolset) -> None:
    c_scan, java_scan, lua_scan = _scan(
        toolset,
        ScanItem("C/0", 0, C_CODE, "C++"),
        ScanItem("J/0", 0, JAVA_CODE, "java"),
        ScanItem("L/0", 0, 'os.execute("rm " .. x)\n', "Lua"),
    )
    assert c_scan.detector_language == "cpp" and "bandit" not in c_scan.tools
    assert {("regex", "CWE-120", 4), ("regex", "CWE-242", 5)} <= _findings(c_scan)
    assert c_scan.vulnerable
    assert {("regex", "CWE-78", 3), ("regex", "CWE-327", 4)} <= _findings(java_scan)
    assert toolset.skipped_rules.get("java") == ("ssrf_insecure_patterns",)
    # no rules for Lua: nothing ran, and it is not counted as clean
    assert lua_scan.detector_language is None and lua_scan.tools == ()


def test_batches_attribute_findings_to_their_own_sample(python_scans: list[SampleScan]) -> None:
    assert [scan.insecure for scan in python_scans] == [False, True] * 3
    assert [scan.task_id for scan in python_scans] == [f"T/{n}" for n in range(6)]
    # the vulnerable sample of the second batch got exactly the first batch's findings
    assert _findings(python_scans[5]) == _findings(python_scans[1])


def test_bandit_severity_threshold(toolset: Toolset, python_scans: list[SampleScan]) -> None:
    # python_scans ran with the default threshold, medium
    assert ScanSettings().bandit_severity == "medium"
    medium = {f.severity for f in python_scans[1].findings if f.tool == "bandit"}
    assert medium <= {"medium", "high"} and "medium" in medium
    (scan,) = scan_items(
        [ScanItem("T/0", 0, VULNERABLE, "Python")],
        toolset,
        ScanSettings(bandit_severity="high"),
    ).scans
    high = {finding.severity for finding in scan.findings if finding.tool == "bandit"}
    assert high == {"high"}


def test_tool_environment_passes_env_check_and_cites_versions(
    security_env: Path, toolset: Toolset
) -> None:
    report = check_env("security", security_env)
    assert report.ok, report.problems
    assert {item.name for item in report.items if item.kind == "module"} == {
        "bandit",
        "semgrep",
        "yaml",
    }
    assert set(toolset.versions) == {"bandit", "semgrep", "codeshield"}
    assert len(toolset.ruleset_sha256) == 64
