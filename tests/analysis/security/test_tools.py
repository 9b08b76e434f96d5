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


def test_vulnerable_python_is_found_by_every_tool_with_cwe_and_line(toolset: Toolset) -> None:
    (scan,) = _scan(toolset, ScanItem("T/0", 0, VULNERABLE, "Python"))
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


def test_clean_python_has_no_findings(toolset: Toolset) -> None:
    (scan,) = _scan(toolset, ScanItem("T/1", 0, CLEAN, "Python"))
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


def test_batches_attribute_findings_to_their_own_sample(toolset: Toolset) -> None:
    items = [ScanItem(f"T/{n}", 0, VULNERABLE if n % 2 else CLEAN, "Python") for n in range(6)]
    scans = _scan(toolset, *items, batch_size=4)  # two batches, several files each
    assert [scan.insecure for scan in scans] == [False, True] * 3
    assert [scan.task_id for scan in scans] == [item.task_id for item in items]


@pytest.mark.parametrize("severity", ["medium", "high"])
def test_bandit_severity_threshold(toolset: Toolset, severity: str) -> None:
    (scan,) = scan_items(
        [ScanItem("T/0", 0, VULNERABLE, "Python")],
        toolset,
        ScanSettings(bandit_severity=severity),
    ).scans
    bandit = {finding.severity for finding in scan.findings if finding.tool == "bandit"}
    assert bandit
    assert bandit <= ({"medium", "high"} if severity == "medium" else {"high"})


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
