"""An interrupted scan resumes from its journal: finished samples are not scanned again, a
sample whose code changed is, and a line cut short by the interruption is ignored."""

from __future__ import annotations

from pathlib import Path

from passbench.analysis.security.scan import ScanItem, ScanSettings, scan_items
from passbench.analysis.security.tools import Toolset

SHELL = "import os\ndef f(x):\n    os.system(x)\n"
CLEAN = "def f(x):\n    return x + 1\n"


def test_resume_takes_finished_samples_from_the_journal(toolset: Toolset, tmp_path: Path) -> None:
    journal = tmp_path / "x_security.json.partial.jsonl"
    items = [ScanItem(f"T/{n}", 0, SHELL if n % 2 else CLEAN, "Python") for n in range(4)]
    settings = ScanSettings(batch_size=4)  # one tool run per scan: each costs seconds
    first = scan_items(items, toolset, settings, journal=journal)
    assert first.resumed == 0
    lines = journal.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 4  # header, one line per sample
    # interrupted after three samples, the third line half written
    journal.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20], encoding="utf-8")
    changed = [*items[:1], ScanItem("T/1", 0, CLEAN, "Python"), *items[2:]]
    second = scan_items(changed, toolset, settings, journal=journal)
    assert second.resumed == 1  # T/0; T/1's code changed; T/2's line was cut short
    assert [scan.insecure for scan in second.scans] == [False, False, False, True]
    assert second.scans[0] == first.scans[0]


def test_journal_from_other_settings_is_started_afresh(toolset: Toolset, tmp_path: Path) -> None:
    journal = tmp_path / "j.partial.jsonl"
    items = [ScanItem("T/0", 0, SHELL, "Python")]
    scan_items(items, toolset, ScanSettings(bandit_severity="high"), journal=journal)
    again = scan_items(items, toolset, ScanSettings(bandit_severity="medium"), journal=journal)
    assert again.resumed == 0
