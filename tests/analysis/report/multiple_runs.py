"""MultiPL-E result files for the per-language tests, written by passbench's own writer:
JavaScript with MultiPL-E's status stored, Lua without it (an older file: derived)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from passbench.stages.results.write import eval_results_document


def _entry(
    task_id: str, index: int, status: str, category: str | None, **extra: Any
) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "solution": "",
        "status": status,
        "details": {} if status == "pass" else {"ALL": "boom"},
        "sample_index": index,
        "category": category,
        **extra,
    }


def write_js(folder: Path) -> Path:
    """2 tasks x 2 samples: pass@1 (1 + 0.5) / 2 = 0.75; OK 3, SyntaxError 1."""
    entries = [
        _entry("HumanEval_0_a", 0, "pass", None, multipl_e_status="OK"),
        _entry("HumanEval_0_a", 1, "pass", None, multipl_e_status="OK"),
        _entry("HumanEval_53_add", 0, "pass", None, multipl_e_status="OK"),
        _entry("HumanEval_53_add", 1, "fail", "syntax_error", multipl_e_status="SyntaxError"),
    ]
    return _write(folder / "js_eval_results.json", entries, "multipl-e-js")


def write_lua(folder: Path) -> Path:
    """3 tasks x 1 sample: pass@1 1/3; OK 1, Exception 1, Timeout 1 (derived)."""
    entries = [
        _entry("HumanEval_0_a", 0, "pass", None),
        _entry("HumanEval_1_b", 0, "fail", "assertion_failed"),
        _entry("HumanEval_53_add", 0, "timeout", "timeout"),
    ]
    return _write(folder / "lua_eval_results.json", entries, "multipl-e-lua")


def _write(path: Path, entries: list[dict[str, Any]], benchmark: str) -> Path:
    document = eval_results_document(entries, {"benchmark": benchmark, "split": "complete"})
    path.write_text(json.dumps(document), encoding="utf-8")
    return path
