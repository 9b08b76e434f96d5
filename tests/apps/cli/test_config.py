"""Settings work the same in every command: --config FILE or ./passbench.toml with one table per
command, PASSBENCH_* variables, PASSBENCH_OFFLINE, and one-line errors for bad values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.apps.cli.test_inspect import OFFICIAL

from passbench.apps.cli import _COMMANDS, main


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path) -> None:
    """The shared data, a private cache, no downloads, and no config file around."""
    for variable in ("PASSBENCH_WORKERS", "PASSBENCH_ENV_DIR", "PASSBENCH_DOWNLOAD_MIRROR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PASSBENCH_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_command_table_applies_to_its_command_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mine.toml"
    config.write_text('[tasks]\nbenchmark = "humaneval"\n[inspect]\nbootstrap = 3\n')
    code, out, err = run(["tasks", "list", "--format", "json", "--config", str(config)], capsys)
    assert code == 0, err
    assert json.loads(out)["benchmark"] == "humaneval"
    # a flag beats the file
    code, out, _ = run(
        ["tasks", "list", "--format", "json", "--config", str(config), "-b", "bigcodebench"],
        capsys,
    )
    assert json.loads(out)["benchmark"] == "bigcodebench"


def test_passbench_toml_in_the_working_folder_is_read_by_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "passbench.toml").write_text(
        'benchmark = "humaneval"\n[syncheck]\nsubset = "full"\n[inspect]\npass_k = "1"\n'
    )
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "solution": "x = ("}) + "\n")
    code, out, err = run(["syncheck", "--samples", str(samples)], capsys)
    assert code == 0, err
    assert "HumanEval" in out and "163 tasks have no samples" in out
    code, out, err = run(["inspect", str(OFFICIAL), "--format", "json"], capsys)
    assert code == 0, err
    assert set(json.loads(out)["summary"]["pass_at_k"]) == {"pass@1"}


@pytest.mark.parametrize(
    "argv",
    [
        ["tasks", "list"],
        ["tasks", "show", "0"],
        ["inspect", str(OFFICIAL)],
        ["compare", str(OFFICIAL), str(OFFICIAL)],
        ["sanitize", "--samples", "s.jsonl"],
        ["syncheck", "--samples", "s.jsonl"],
        ["evaluate", "--ground-truth"],
        ["generate", "-m", "m", "-p", "openai"],
        ["run", "-m", "m", "-p", "openai"],
        ["env", "info"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_an_unknown_key_stops_every_command_with_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "passbench.toml").write_text("offline = true\n\n[evaluate]\nwrokers = 4\n")
    code, _out, err = run(argv, capsys)
    assert code == 2, err
    (line,) = err.splitlines()
    assert line.startswith(
        f"error: {tmp_path / 'passbench.toml'}:4: field 'evaluate.wrokers': unknown setting "
        "for `passbench evaluate` (known: "
    )
    assert "allow_network" in line and not list(tmp_path.glob("results*"))


@pytest.mark.parametrize(
    ("variable", "value", "argv"),
    [
        ("PASSBENCH_WORKERS", "abc", ["evaluate", "--ground-truth", "-b", "humaneval"]),
        ("PASSBENCH_OFFLINE", "maybe", ["tasks", "list"]),
        ("PASSBENCH_OFFLINE", "maybe", ["inspect", str(OFFICIAL)]),
        ("PASSBENCH_CACHE_DIR", "", ["tasks", "list", "--format", "json"]),  # empty: unset
    ],
)
def test_malformed_environment_values_are_one_line_errors(
    variable: str,
    value: str,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(variable, value)
    code, _, err = run(argv, capsys)
    if not value:
        assert code == 0, err
        return
    assert code == 2
    assert len(err.splitlines()) == 1 and f"error: environment variable {variable}: " in err


def test_offline_evaluate_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(empty))
    code, _, err = run(["evaluate", "-b", "humaneval", "--ground-truth"], capsys)
    assert code == 1
    (line,) = err.splitlines()
    assert "humaneval/HumanEvalPlus.jsonl.gz not found" in line
    assert f"looked in {empty}/humaneval/HumanEvalPlus.jsonl.gz, {tmp_path}/cache/datasets/" in line
    assert "PASSBENCH_OFFLINE" in line


@pytest.mark.parametrize(
    "argv",
    [
        ["tasks", "list", "-b", "humanevalplus"],
        ["syncheck", "--samples", "s.jsonl", "-b", "humanevalplus"],
    ],
)
def test_offline_is_honoured_by_every_command_that_loads_data(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("PASSBENCH_DOWNLOAD_MIRROR", "http://127.0.0.1:9")  # never reached
    (tmp_path / "s.jsonl").write_text('{"task_id": "HumanEval/0", "solution": ""}\n')
    code, _, err = run(argv, capsys)
    assert code == 1 and "downloads are off (PASSBENCH_OFFLINE)" in err


@pytest.mark.bwrap
def test_evaluate_takes_its_table_with_paths_relative_to_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "eval.toml").write_text(
        '[evaluate]\nbenchmark = "humaneval"\noutput_dir = "gt"\nworkers = 1\n'
    )
    code, _out, err = run(
        ["evaluate", "--ground-truth", "--id-range", "0-2", "--config", str(folder / "eval.toml")],
        capsys,
    )
    assert code == 0, err
    truth = json.loads((folder / "gt" / "ground_truth.json").read_text())
    assert list(truth["tasks"]) == ["HumanEval/0", "HumanEval/1"]


@pytest.mark.bwrap
def test_runs_come_from_the_config_file_and_a_flag_beats_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`runs` in [evaluate]: the ground truth is executed that many times (a stability run)."""
    (tmp_path / "passbench.toml").write_text(
        '[evaluate]\nbenchmark = "humaneval"\nworkers = 2\nruns = 3\n'
    )
    base = ["evaluate", "--ground-truth", "--id-range", "0-2"]
    code, out, err = run([*base, "--output-dir", "three"], capsys)
    assert code == 0, err
    stability = json.loads((tmp_path / "three" / "ground_truth.json").read_text())["stability"]
    assert stability["runs"] == 3 and stability["unstable_tasks"] == {}
    assert "0 unstable references over 3 runs" in out
    code, _, err = run([*base, "--output-dir", "one", "--runs", "1"], capsys)
    assert code == 0, err
    assert "stability" not in json.loads((tmp_path / "one" / "ground_truth.json").read_text())
    # a bad value in the file, and on the command line, each named where it was given
    (tmp_path / "passbench.toml").write_text("[run]\nepochs = 0\n")
    code, _, err = run(["run", "--model", "m", "--dry-run"], capsys)
    assert code == 2
    assert f"{tmp_path / 'passbench.toml'}:2: field 'run.epochs': must be at least 1" in err
    (tmp_path / "passbench.toml").unlink()
    code, _, err = run([*base, "--runs", "0"], capsys)
    assert code == 2 and "field '--runs': must be at least 1" in err


def test_nothing_reads_the_environment_at_import(tmp_path: Path) -> None:
    modules = sorted({target.split(":")[0] for target in _COMMANDS.values()})
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    code += "import passbench, passbench.core.settings, passbench.stages.evaluate\n"
    code += "import passbench.apps.pipeline\n"
    environ = dict(os.environ, PASSBENCH_WORKERS="abc", PASSBENCH_OFFLINE="maybe")
    done = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_offline_local_models_load_from_the_hub_cache_only() -> None:
    from passbench.apps.cli.generate import offline_model_hub
    from passbench.core.settings import resolve

    environ: dict[str, str] = {}
    offline_model_hub(resolve("generate", environ={"PASSBENCH_OFFLINE": "1"}), environ)
    assert environ == {"HF_HUB_OFFLINE": "1"}
    environ = {}
    offline_model_hub(resolve("generate", environ={"PASSBENCH_OFFLINE": "0"}), environ)
    assert environ == {}
