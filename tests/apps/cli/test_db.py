"""`passbench db upgrade|import|runs` and `passbench leaderboard import-official` end to end on
a SQLite store (tests/apps/leaderboard/store runs the same code on PostgreSQL)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.analysis.report.result_files import OFFICIAL, OURS

from passbench.apps.cli import cli, main


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PASSBENCH_DB", str(tmp_path / "env.db"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)  # no passbench.toml from elsewhere


def invoke(*arguments: str) -> Result:
    result = CliRunner().invoke(cli, list(arguments))
    assert result.exit_code == 0, result.output
    return result


def runs(*arguments: str) -> list[dict[str, object]]:
    output = invoke("db", "runs", "--json", *arguments).stdout
    return [json.loads(line) for line in output.splitlines()]


def test_import_then_list_runs(tmp_path: Path) -> None:
    invoke("db", "upgrade")
    assert (tmp_path / "env.db").is_file()  # PASSBENCH_DB
    result = invoke("db", "import", str(OFFICIAL), str(OURS))
    assert "imported: run 1 demo-model: 14 tasks, 14 samples, pass@1 42.9%" in result.stderr
    assert "imported: run 2 demo-model-v2: 14 tasks, 70 samples" in result.stderr
    again = invoke("db", "import", str(OURS))
    assert "already stored: run 2" in again.stderr
    listed = runs()
    assert [(r["model"], r["n_samples"], r["origin"]) for r in listed] == [
        ("demo-model", 14, "official"),
        ("demo-model-v2", 70, "passbench"),
    ]
    table = invoke("db", "runs").stdout
    assert "demo-model-v2" in table and "2 runs; 0 reported scores" in table


def test_db_flag_wins_over_the_environment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'flag.db'}"
    invoke("db", "import", "--db", url, str(OFFICIAL))
    assert len(runs("--db", url)) == 1
    assert runs() == []  # PASSBENCH_DB's store is another one


def test_a_bad_file_is_reported_and_the_good_ones_are_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad_eval_results.json"
    bad.write_text('{"eval": {"BigCodeBench/1": [{"status": "ok"}]}}')
    with pytest.raises(SystemExit) as caught:
        main(["db", "import", str(bad), str(OFFICIAL)])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert (
        f"error: {bad}: field 'eval['BigCodeBench/1'][0].status': must be one of "
        "pass, fail, timeout, got 'ok'\n" in err
    )
    assert [r["model"] for r in runs()] == ["demo-model"]


def test_import_official_leaderboard(data_dir: Path) -> None:
    path = data_dir / "leaderboard" / "bigcodebench-results-hard.json"
    result = invoke("leaderboard", "import-official", str(path))
    assert "imported: 202 models" in result.stderr and "(BigCodeBench hard)" in result.stderr
    again = invoke("leaderboard", "import-official", str(path), "--subset", "hard")
    assert "already stored: 202 models" in again.stderr
    assert runs() == []
    published = json.loads(path.read_text())
    scores = sum(
        score is not None for entry in published.values() for score in entry["pass@1"].values()
    )
    assert f"0 runs; {scores} reported scores" in invoke("db", "runs").stdout


def test_the_store_can_be_named_in_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PASSBENCH_DB")
    (tmp_path / "passbench.toml").write_text(f'[db]\ndb = "{tmp_path / "configured.db"}"\n')
    invoke("db", "import", str(OFFICIAL))
    assert (tmp_path / "configured.db").is_file()
    assert len(runs()) == 1


@pytest.mark.parametrize(
    ("store", "said"),
    [
        ("not-a-database.db", "file is not a database"),
        ("/proc/no/such/folder/store.db", "cannot create its folder /proc/no/such/folder"),
    ],
)
def test_a_worker_that_cannot_open_its_store_says_why_in_one_line_and_fails(
    tmp_path: Path, store: str, said: str
) -> None:
    path = tmp_path / store
    if store == "not-a-database.db":
        path.write_text("these are not the tables you are looking for\n" * 100)
    src = str(Path(__file__).resolve().parents[3] / "src")
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    command = ("leaderboard", "worker", "--once", "--db", f"sqlite:///{path}")
    finished = subprocess.run(
        [sys.executable, "-m", "passbench.apps.cli", *command],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path,
        timeout=120,
    )
    assert finished.returncode != 0
    assert finished.stderr.count("\n") == 1, finished.stderr  # one line, no traceback
    assert finished.stderr.startswith(f"error: cannot open the store sqlite:///{path}: ")
    assert said in finished.stderr
