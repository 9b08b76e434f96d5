"""Contamination checks: does a corpus (a model's training data) contain a benchmark's tasks?

check_overlap(texts, corpus_paths)  BigCodeBench's n-gram check, per-task longest common
                                    substring and closest source
                                    (passbench.analysis.contamination.overlap)
overlap_document(report, meta)      the result file `passbench contamination overlap` writes
read_contaminated(path)             its contaminated task ids (`inspect --exclude-contaminated`)
"""

from passbench.analysis.contamination.check import (
    OverlapReport,
    check_overlap,
    overlap_document,
    read_contaminated,
    task_text,
)
from passbench.analysis.contamination.overlap import OverlapSettings, Source, TaskOverlap

__all__ = [
    "OverlapReport",
    "OverlapSettings",
    "Source",
    "TaskOverlap",
    "check_overlap",
    "overlap_document",
    "read_contaminated",
    "task_text",
]
