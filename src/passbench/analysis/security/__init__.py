"""Static security analysis of any run: `passbench security RESULTS|SAMPLES`.

inputs.py      a results or samples file -> ScanItems (code, language, libraries, verdict)
scan.py        batches of files through the tools, a resumable journal -> SampleScans
tools.py       bandit, semgrep and the detector's regex rules, run from the `security`
               tool environment (`passbench env create security`), offline
summary.py     the figures: insecure, vulnerable (CyberSecEval), by CWE / library /
               language, insecure among passing
resultfile.py  `<stem>_security.json`: write (security_scan) and read (load_security)
"""

from passbench.analysis.security.resultfile import (
    ScanRun,
    SecurityResult,
    load_security,
    security_scan,
)
from passbench.analysis.security.scan import Finding, SampleScan, ScanSettings
from passbench.analysis.security.summary import SecuritySummary, summarize

__all__ = [
    "Finding",
    "SampleScan",
    "ScanRun",
    "ScanSettings",
    "SecurityResult",
    "SecuritySummary",
    "load_security",
    "security_scan",
    "summarize",
]
