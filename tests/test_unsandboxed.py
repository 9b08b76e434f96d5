"""No silent loss of isolation: `evaluate` refuses to run samples where bubblewrap cannot
isolate them, unless the user allows it; then every file it writes says so, `inspect` warns,
and a later sandboxed run never reuses those verdicts.

"Where bubblewrap cannot isolate" is a PATH without `bwrap`, as on a machine without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli
from passbench.core.records import Isolation
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator
from passbench.stages.sandbox.host.cgroups import detect

pytestmark = pytest.mark.bwrap

CORRECT_0 = (
    "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
    " for b in numbers[i + 1:])\n"
)
CORRECT_2 = "def truncate_number(number):\n    return number % 1.0\n"
REFUSAL = "refusing to run samples without sandbox isolation"


def _samples(path: Path) -> Path:
    rows = [
        {"task_id": "HumanEval/0", "solution": CORRECT_0},
        {"task_id": "HumanEval/2", "solution": CORRECT_2},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _no_bwrap_path(tmp_path: Path) -> str:
    folder = tmp_path / "bin-without-bwrap"
    folder.mkdir(exist_ok=True)
    return str(folder)


def _cli(args: list[str], tmp_path: Path, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        PATH=_no_bwrap_path(tmp_path),
        PASSBENCH_DATA_DIR=str(data_dir),
        PASSBENCH_CACHE_DIR=str(tmp_path / "cache"),
    )
    return subprocess.run(
        [sys.executable, "-m", "passbench.apps.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )


def test_evaluate_refuses_in_one_line_and_writes_nothing(tmp_path: Path, data_dir: Path) -> None:
    samples = _samples(tmp_path / "model--humaneval.jsonl")
    args = ["evaluate", "-b", "humaneval", "--samples", str(samples), "--tasks", "0,2"]
    done = _cli([*args, "--output-dir", str(tmp_path / "out")], tmp_path, data_dir)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert REFUSAL in lines[0] and "bubblewrap is not installed" in lines[0]
    assert "apt-get install bubblewrap" in lines[0] and "--allow-unsandboxed" in lines[0]
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.json"))
    # the old opt-in flag is still accepted, and refusing stays the default
    old = _cli([*args, "--require-isolation"], tmp_path, data_dir)
    assert old.returncode == 1 and REFUSAL in old.stderr


def test_an_allowed_unsandboxed_run_says_so_in_every_file(tmp_path: Path, data_dir: Path) -> None:
    samples = _samples(tmp_path / "model--humaneval.jsonl")
    out = tmp_path / "out"
    args = ["evaluate", "-b", "humaneval", "--samples", str(samples), "--tasks", "0,2"]
    done = _cli([*args, "--output-dir", str(out), "--allow-unsandboxed"], tmp_path, data_dir)
    assert done.returncode == 0, done.stderr
    assert "WITHOUT sandbox isolation" in done.stderr + done.stdout
    results = json.loads((out / "model--humaneval_eval_results.json").read_text())
    assert results["passbench"]["unsandboxed"] is True
    assert results["passbench"]["isolation"] == "rlimit"
    assert results["passbench"]["cgroup"] == detect().kind  # what held the workers, recorded
    entries = [entry for task in results["eval"].values() for entry in task]
    assert [entry["isolation"] for entry in entries] == ["rlimit", "rlimit"]
    pass_at_k = json.loads((out / "model--humaneval_pass_at_k.json").read_text())
    assert pass_at_k["passbench"]["unsandboxed"] is True

    args = ["evaluate", "-b", "humaneval-openai", "--ground-truth", "--tasks", "0,2"]
    truth = _cli(
        [*args, "--output-dir", str(tmp_path / "gt"), "--allow-unsandboxed"], tmp_path, data_dir
    )
    assert truth.returncode == 0, truth.stderr
    ground_truth = json.loads((tmp_path / "gt" / "ground_truth.json").read_text())
    assert ground_truth["passbench"]["unsandboxed"] is True
    assert {entry["isolation"] for entry in ground_truth["tasks"].values()} == {"rlimit"}

    runner = CliRunner()
    env = {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}
    text = runner.invoke(cli, ["inspect", str(out / "model--humaneval_eval_results.json")], env=env)
    assert text.exit_code == 0, text.output
    assert "UNSANDBOXED RUN" in text.output.split("Summary")[0]  # first, before the summary
    report = tmp_path / "report.html"
    results_file = str(out / "model--humaneval_eval_results.json")
    html = runner.invoke(
        cli, ["inspect", results_file, "--format", "html", "--output", str(report)], env=env
    )
    assert html.exit_code == 0, html.output
    page = report.read_text()
    assert 'id="unsandboxed"' in page and "UNSANDBOXED RUN" in page
    assert page.index('id="unsandboxed"') < page.index('id="summary"')


def test_a_sandboxed_run_never_reuses_unsandboxed_verdicts(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = _samples(tmp_path / "s.jsonl")
    paths = Paths(cache_dir=tmp_path / "cache", data_dir=data_dir)
    settings = EvaluateSettings(
        benchmark="humaneval-openai",
        task_ids=("HumanEval/0", "HumanEval/2"),
        workers=1,
        allow_unsandboxed=True,
    )
    with monkeypatch.context() as patched:
        patched.setenv("PATH", _no_bwrap_path(tmp_path))
        unsandboxed = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    assert unsandboxed.isolation == Isolation.RLIMIT

    strict = EvaluateSettings(**{**settings.__dict__, "allow_unsandboxed": False})
    sandboxed = Evaluator(strict, paths).evaluate_samples(samples, tmp_path / "out")
    assert sandboxed.reused == 0  # the ground truth and both samples ran again, isolated
    assert sandboxed.isolation == Isolation.BUBBLEWRAP
    meta = json.loads(sandboxed.eval_results_path.read_text())["passbench"]
    assert (meta["isolation"], meta["unsandboxed"]) == ("bubblewrap", False)
    # isolated verdicts are reused by any later run
    again = Evaluator(settings, paths).evaluate_samples(samples, tmp_path / "out")
    assert again.reused == 2 and again.isolation == Isolation.BUBBLEWRAP
