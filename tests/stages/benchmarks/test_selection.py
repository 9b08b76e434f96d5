"""--tasks and --id-range: one parser, one meaning (positions in the subset, half-open)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli, main
from passbench.core.errors import InputError, UnknownNameError
from passbench.core.records import Task
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.selection import (
    DateWindow,
    TaskSelection,
    parse_id_range,
    select_tasks,
)


@pytest.fixture(scope="module")
def hard(data_dir: Path) -> list[Task]:
    data = DataSettings(data_dir=data_dir, download=False)
    return list(get_benchmark("bigcodebench").load(None, "hard", data=data))


def ids(tasks: list[Task]) -> list[str]:
    return [task.task_id for task in tasks]


def test_the_range_counts_positions_in_the_subset_half_open(hard: list[Task]) -> None:
    chosen = select_tasks(hard, id_range=(0, 3))
    assert ids(chosen) == ids(hard[:3])
    assert ids(chosen) != ["BigCodeBench/0", "BigCodeBench/1", "BigCodeBench/2"]  # not numbers
    assert ids(select_tasks(hard, id_range=(146, 500))) == ids(hard[146:])


def test_tasks_keep_their_order_bare_numbers_get_the_prefix(hard: list[Task]) -> None:
    first, second = hard[5].task_id, hard[1].task_id
    number = second.rpartition("/")[2]
    assert ids(select_tasks(hard, [first, number])) == [first, second]


def test_both_given_a_task_must_satisfy_both(hard: list[Task]) -> None:
    inside, outside = hard[1].task_id, hard[10].task_id
    assert ids(select_tasks(hard, [outside, inside], (0, 5))) == [inside]
    with pytest.raises(InputError, match="no tasks selected: --tasks and --id-range"):
        select_tasks(hard, [outside], (0, 5))


def test_unknown_ids_and_empty_ranges_are_errors(hard: list[Task]) -> None:
    with pytest.raises(UnknownNameError, match="BigCodeBench/99999") as caught:
        select_tasks(hard, ["BigCodeBench/99999"])
    assert caught.value.field == "tasks"
    with pytest.raises(InputError, match="no tasks selected") as caught:
        select_tasks(hard, id_range=(500, 600))
    assert caught.value.field == "id-range"


@pytest.mark.parametrize("text", ["5-2", "3-3", "a-b", "1:4", "-1-3", "4"])
def test_a_malformed_range_is_one_error(text: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_id_range(text)
    assert str(caught.value) == (
        f"field 'id-range': expected LOW-HIGH with 0 <= LOW < HIGH (positions LOW <= i < HIGH), "
        f"got {text!r}"
    )


def test_parse_reads_both_options() -> None:
    assert TaskSelection.parse("BigCodeBench/1, 2", " 0 - 10 ") == TaskSelection(
        ("BigCodeBench/1", "2"), (0, 10)
    )
    assert TaskSelection.parse(None, None) == TaskSelection()


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--ground-truth"],
        ["generate", "-m", "m", "-p", "openai"],
        ["run", "-m", "m", "-p", "openai"],
        ["tasks", "list"],
    ],
    ids=lambda argv: argv[0],
)
def test_every_command_gives_the_same_error_for_a_bad_range(
    argv: list[str], data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path)}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.chdir(tmp_path)
        with pytest.raises(SystemExit) as caught:
            main([*argv, "--id-range", "9-3"])
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        "error: field 'id-range': expected LOW-HIGH with 0 <= LOW < HIGH "
        "(positions LOW <= i < HIGH), got '9-3'\n"
    )


def test_tasks_list_shows_the_range_every_command_selects(
    hard: list[Task], data_dir: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        cli,
        ["tasks", "list", "--subset", "hard", "--id-range", "2-4", "--format", "json"],
        env={"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path)},
    )
    listed = [task["task_id"] for task in json.loads(result.output)["tasks"]]
    assert listed == ids(hard[2:4])


def test_date_windows_need_dated_tasks_and_valid_dates() -> None:
    undated = [Task("humaneval", "HumanEval/0", "f", {}, "", "", "")]
    with pytest.raises(InputError, match="humaneval tasks have none"):
        select_tasks(undated, window=DateWindow.parse("2024-01-01", None))
    with pytest.raises(InputError, match="expected a date YYYY-MM-DD, got '2024-13-01'"):
        DateWindow.parse(None, "2024-13-01")
    assert DateWindow.parse("2024-08-01", None).contains("2024-08-01T00:00:00")
    assert not DateWindow.parse(None, "2024-07-31").contains("2024-08-01T00:00:00")
    assert DateWindow.parse(None, "2024-08-01").contains("2024-08-01T23:00:00")  # inclusive


def test_a_model_cutoff_window_starts_the_day_after_the_cutoff() -> None:
    window = DateWindow.parse(None, None, "2024-07-31")
    assert window.since is not None and str(window.since) == "2024-08-01"
    assert not window.contains("2024-07-31T23:59:00") and window.contains("2024-08-01T00:00:00")
    assert window.describe() == "after cutoff 2024-07-31"
    bounded = DateWindow.parse(None, "2024-09-30", "2024-07-31")
    assert bounded.describe() == "after cutoff 2024-07-31 to 2024-09-30"
    assert not bounded.contains("2024-10-01")
    with pytest.raises(InputError, match="not after --model-cutoff"):
        DateWindow.parse(None, "2024-07-31", "2024-07-31")
    with pytest.raises(InputError, match="give it or --since, not both"):
        DateWindow.parse("2024-01-01", None, "2024-07-31")
