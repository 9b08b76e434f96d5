"""Tasks whose verdict depends on what the evaluation environment lacked.

A task's canonical solution failing in the run's own ground truth for want of data or access
the environment did not have (NLTK packages not installed, no network) means no sample of that
task can pass here, however right, while it may pass officially. The ground truth's failure
reasons (`gt_failures` in the pass@k file) say which; this module reads them and names the gap.
It classifies by the error text the libraries raise, and says nothing about a task whose
ground truth passed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_NLTK_RESOURCE = re.compile(r"Resource\s+\W*(\w+)\W*\s+not found")
_TEXTBLOB = re.compile(r"MissingCorpusError|missing some required data")
_NETWORK = re.compile(
    r"Temporary failure in name resolution|Name or service not known|Network is unreachable"
    r"|urlopen error|gaierror|Failed to establish a new connection|Max retries exceeded"
    r"|No address associated with hostname|getaddrinfo failed|Connection refused"
)


def gap_of(reason: str) -> str | None:
    """The missing piece a ground-truth failure's reason names, or None."""
    match = _NLTK_RESOURCE.search(reason)
    if match:
        return f"NLTK data '{match.group(1)}'"
    if _TEXTBLOB.search(reason):
        return "TextBlob's NLTK corpora"
    if _NETWORK.search(reason):
        return "the network"
    return None


def environment_gaps(gt_failures: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """task id -> what its ground truth lacked here, for the failures that name one."""
    gaps = {}
    for task_id, failure in gt_failures.items():
        gap = gap_of(str(failure.get("reason", "")))
        if gap is not None:
            gaps[task_id] = gap
    return gaps


def describe(gaps: Mapping[str, str], order: list[str]) -> str:
    """One line for the report: what was missing and which tasks it cost."""
    by_gap: dict[str, list[str]] = {}
    for task_id in order:
        if task_id in gaps:
            by_gap.setdefault(gaps[task_id], []).append(task_id)
    parts = [f"{gap}: {', '.join(tasks)}" for gap, tasks in sorted(by_gap.items())]
    return (
        f"environment gaps: the ground truth of {len(gaps)} task(s) fails here for want of what "
        f"this environment lacked, so none of their samples can pass here ({'; '.join(parts)})"
    )
