"""The fixture result files (data/) many suites read: two runs of one demo model pair on
BigCodeBench-Hard, one written by the official evaluator and one by passbench."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
#: The official evaluator's file: one greedy sample per task.
OFFICIAL = (
    DATA
    / "demo-model--bigcodebench-hard-complete--official-0-1-sanitized-calibrated_eval_results.json"
)
#: passbench's file: five samples per task at temperature 0.8, another model version.
OURS = (
    DATA / "demo-model-v2--bigcodebench-hard-complete--0.8-5-sanitized-calibrated_eval_results.json"
)
