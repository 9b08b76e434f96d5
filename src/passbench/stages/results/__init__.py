"""Result files, read and written in one place.

`read`: passbench's and the official evaluator's `_eval_results.json` / `_pass_at_k.json` and
passbench's `ground_truth.json` into `RunResults` (core/runs.py), with the schema version
checked; a file in a benchmark's own result format is read by that benchmark
(`read_official_results`), found through the registry.
`write`: the same documents built from records and entries, written atomically.
See docs/results-format.md.
"""

from __future__ import annotations

from passbench.core.runs import (
    EVAL_RESULTS_SUFFIX,
    PASS_AT_K_SUFFIX,
    RunResults,
    SampleResult,
    results_stem,
)
from passbench.stages.results.read import (
    check_schema,
    guess_benchmark,
    load_results,
    sibling_eval_results,
    sibling_pass_at_k,
)
from passbench.stages.results.write import (
    GROUND_TRUTH_FILE,
    eval_results_document,
    ground_truth_document,
    ground_truth_entry,
    model_name,
    pass_at_k_document,
    result_paths,
    sample_entry,
    task_order,
    write_eval_results,
    write_ground_truth,
    write_pass_at_k,
)

__all__ = [
    "EVAL_RESULTS_SUFFIX",
    "GROUND_TRUTH_FILE",
    "PASS_AT_K_SUFFIX",
    "RunResults",
    "SampleResult",
    "check_schema",
    "eval_results_document",
    "ground_truth_document",
    "ground_truth_entry",
    "guess_benchmark",
    "load_results",
    "model_name",
    "pass_at_k_document",
    "result_paths",
    "results_stem",
    "sample_entry",
    "sibling_eval_results",
    "sibling_pass_at_k",
    "task_order",
    "write_eval_results",
    "write_ground_truth",
    "write_pass_at_k",
]
