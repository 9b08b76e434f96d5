"""The official evaluator's `/predict` inputs, read as the official Space reads them and
turned into passbench settings within what the server allows."""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.apps.serve.official import (
    OfficialRequest,
    ServerLimits,
    evaluate_settings,
    pass_ks,
    selected_task_ids,
)
from passbench.core.errors import InputError
from passbench.stages.evaluate import EvaluateSettings
from passbench.stages.sandbox.base import Limits

BASE = EvaluateSettings(limits=Limits(memory_mb=4096, tmp_mb=256), env_dir=Path("/envs/x"))


def request(**fields: object) -> OfficialRequest:
    values: dict[str, object] = {"split": "complete", "subset": "hard", "samples": Path("s.jsonl")}
    values.update(fields)
    return OfficialRequest(**values)  # type: ignore[arg-type]


def test_pass_k_is_read_as_the_space_reads_it() -> None:
    assert pass_ks("1,5,10") == (1, 5, 10)
    assert pass_ks(" 10, 1 ,x,5,5") == (1, 5, 10)  # non-numbers skipped, as officially
    assert pass_ks("") == ()


def test_selected_tasks_take_numbers_or_full_ids() -> None:
    assert selected_task_ids("") is None and selected_task_ids(None) is None
    assert selected_task_ids("2,0,2") == ("BigCodeBench/0", "BigCodeBench/2")
    assert selected_task_ids("BigCodeBench/7, 3") == ("BigCodeBench/3", "BigCodeBench/7")
    # what the official command line sends for `--selective_evaluate 0,1` (a tuple, as text)
    assert selected_task_ids("[0, 1]") == selected_task_ids("(0, 1)") == selected_task_ids("0,1")


def test_a_request_is_capped_by_the_server() -> None:
    limits = ServerLimits(max_workers=2, max_memory_mb=2048, max_stack_mb=16)
    settings = evaluate_settings(
        request(parallel=64, max_as_limit=30 * 1024, max_data_limit=8192, max_stack_limit=50),
        BASE,
        limits,
    )
    assert settings.workers == 2
    assert settings.limits.memory_mb == 2048 and settings.limits.stack_mb == 16
    assert settings.limits.tmp_mb == 256 and not settings.limits.allow_network
    assert settings.env_dir == Path("/envs/x")
    # a smaller request is honoured
    small = evaluate_settings(
        request(parallel=1, max_as_limit=512, max_data_limit=1024, max_stack_limit=8),
        BASE,
        limits,
    )
    assert small.workers == 1 and small.limits.memory_mb == 512 and small.limits.stack_mb == 8
    assert evaluate_settings(request(parallel=-1), BASE, limits).workers == 2


def test_a_request_becomes_the_official_evaluation() -> None:
    settings = evaluate_settings(
        request(
            split="instruct",
            subset="full",
            pass_k="1,10",
            min_time_limit=2.5,
            calibrated=False,
            no_gt=True,
            selective_evaluate="4,1",
        ),
        BASE,
        ServerLimits(),
    )
    assert (settings.benchmark, settings.split, settings.subset) == (
        "bigcodebench",
        "instruct",
        "full",
    )
    assert settings.pass_k == (1, 10) and settings.min_time_limit_s == 2.5
    assert not settings.calibrated and not settings.check_ground_truth
    assert settings.task_ids == ("BigCodeBench/1", "BigCodeBench/4")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"split": "train"}, "split"),
        ({"subset": "easy"}, "subset"),
        ({"samples": None}, "samples"),
        ({"pass_k": "a,b"}, "pass_k"),
        ({"max_stack_limit": 0}, "max_stack_limit"),
    ],
)
def test_bad_requests_name_the_field(fields: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as caught:
        request(**fields).check()
    assert caught.value.field == field


def test_ground_truth_only_needs_no_samples() -> None:
    request(samples=None, check_gt_only=True).check()
