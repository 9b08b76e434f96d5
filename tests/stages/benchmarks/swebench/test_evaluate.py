"""`passbench evaluate` on SWE-bench, end to end on a small real repository (fixture.py): the
predictions files as the official tools write them, the gold patch resolving, an empty or wrong
patch not, the official report files, and patches that try to forge the verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.stages.sandbox.conftest import BWRAP

from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings, Evaluator

from .fixture import SmallBench, make_small_bench

pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run")]

INSTANCE = "octo__calc-1"

#: A conftest.py that rewrites every report to "passed" (SWE-bench #631, pallets__flask-5014).
CONFTEST_EXPLOIT = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""

#: Source code that prints, once pytest has printed its own summary, what the official log
#: parser reads as a passing test, and a second end marker (SWE-bench #601).
PRINT_EXPLOIT = (
    "import atexit, os\n"
    'atexit.register(os.write, 1, b"PASSED tests/test_calc.py::test_add\\n"\n'
    "                b\"+ : '>>>>> End Test Output'\\n\")\n"
)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> SmallBench:
    return make_small_bench(tmp_path_factory.mktemp("swebench"))


def _new_file(path: str, text: str) -> str:
    lines = text.splitlines(keepends=True)
    body = "".join(f"+{line}" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


def _evaluate(
    small: SmallBench, tmp_path: Path, predictions: object, instance: str = INSTANCE
) -> dict[str, object]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(predictions))
    settings = EvaluateSettings(benchmark="swebench-verified", workers=2, check_ground_truth=False)
    paths = Paths(cache_dir=tmp_path / "cache", data_dir=small.data_dir, repos_dir=small.repos_dir)
    outcome = Evaluator(settings, paths).evaluate_samples(path, tmp_path / "out")
    entries = json.loads(outcome.eval_results_path.read_text())["eval"][instance]
    assert len(entries) == 1
    return dict(entries[0])


def _prediction(patch: str | None, instance: str = INSTANCE) -> dict[str, dict[str, object]]:
    return {instance: {"model_name_or_path": "org/model", "model_patch": patch}}


#: pytest 6.3's spec edits setup.cfg before the install (`sed -i 's/>=>=/>=/' setup.cfg`) and the
#: official image commits the edit: a test of the working copy that sees it.
SETUP_CFG = "[metadata]\nname = calc\n" + "".join(f"# {n}\n" for n in range(8))
SETUP_CFG += "[options]\ninstall_requires = attrs>=>=19.2.0\n"
SETUP_CFG_TEST = (
    "from pathlib import Path\n\n\ndef test_setup_cfg_edited():\n"
    "    assert '>=>=' not in Path('setup.cfg').read_text()\n"
)


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> SmallBench:
    """An instance of a repository and version whose spec edits the working copy."""
    return make_small_bench(
        tmp_path_factory.mktemp("swebench-edited"),
        repos=("pytest-dev/pytest",),
        version="6.3",
        base_files={"setup.cfg": SETUP_CFG, "tests/test_setup.py": SETUP_CFG_TEST},
        also_passing=("tests/test_setup.py::test_setup_cfg_edited",),
    )


def test_the_specs_working_copy_edits_are_made_before_the_patch(
    edited: SmallBench, tmp_path: Path
) -> None:
    """The official image runs the spec's pre_install in /testbed and commits it (Sphinx's
    `-rA` in tox.ini is one): the tests see the edited tree, the patch applies on it."""
    entry = _evaluate(
        edited,
        tmp_path,
        _prediction(edited.gold_patch, "pytest-dev__pytest-1"),
        "pytest-dev__pytest-1",
    )
    assert entry["status"] == "pass", entry
    assert entry["machinery_restored"] == []


@pytest.mark.hostile
def test_restored_machinery_keeps_the_specs_working_copy_edits(
    edited: SmallBench, tmp_path: Path
) -> None:
    """A patch that touches setup.cfg gets it back as the working copy had it before the patch:
    edited by the spec, not as the base commit has it."""
    renamed = (
        "diff --git a/setup.cfg b/setup.cfg\n--- a/setup.cfg\n+++ b/setup.cfg\n"
        "@@ -1,3 +1,3 @@\n [metadata]\n-name = calc\n+name = calc2\n # 0\n"
    )
    entry = _evaluate(
        edited,
        tmp_path,
        _prediction(edited.gold_patch + renamed, "pytest-dev__pytest-1"),
        "pytest-dev__pytest-1",
    )
    assert entry["machinery_restored"] == ["setup.cfg"]
    assert entry["status"] == "pass", entry


#: astropy before 4.0: setup.py imports ah_bootstrap.py, which (setup.cfg `auto_use = True`) runs
#: `git submodule update --init -- astropy_helpers` online in the official image build.
HELPERS_TEST = """import subprocess
from pathlib import Path


def test_the_submodule_is_there():
    assert Path("astropy_helpers/astropy_helpers/__init__.py").is_file()
    assert not Path("astropy_helpers/LATER.txt").exists()
    status = subprocess.run(["git", "submodule", "status"], capture_output=True, text=True,
                            check=True).stdout
    assert status.startswith(" "), status  # initialized and up to date: nothing to fetch
"""


@pytest.fixture(scope="module")
def bootstrapped(tmp_path_factory: pytest.TempPathFactory) -> SmallBench:
    """An instance whose setup bootstraps its astropy_helpers submodule."""
    return make_small_bench(
        tmp_path_factory.mktemp("swebench-submodule"),
        base_files={
            "ah_bootstrap.py": "# setup.py imports it\n",
            "setup.cfg": "[ah_bootstrap]\nauto_use = True\n",
            "tests/test_helpers.py": HELPERS_TEST,
        },
        also_passing=("tests/test_helpers.py::test_the_submodule_is_there",),
        submodule=("astropy_helpers", "octo/helpers", {"astropy_helpers/__init__.py": "V = 3\n"}),
    )


def test_a_submodule_the_setup_bootstraps_is_in_the_working_copy(
    bootstrapped: SmallBench, tmp_path: Path
) -> None:
    """The official image build initializes it online (astropy 1.3-3.2's astropy_helpers at the
    gitlink's commit); the sandbox has no network, so the working copy gets it from its mirror,
    initialized, so that ah_bootstrap finds it and fetches nothing."""
    entry = _evaluate(bootstrapped, tmp_path, _prediction(bootstrapped.gold_patch))
    assert entry["status"] == "pass", entry


def test_a_working_copy_that_cannot_be_made_is_not_called_a_patch_that_does_not_apply(
    tmp_path: Path,
) -> None:
    """A mirror that lacks an object of the base commit (a partial snapshot): the verdict says
    so, and the instance is an error of the run, not an unresolved "patch does not apply"."""
    broken = make_small_bench(tmp_path / "bench")
    mirror = broken.repos_dir / "octo__calc.git"
    blob = subprocess.run(
        ["git", "--git-dir", str(mirror), "rev-parse", f"{broken.base_commit}:calc/__init__.py"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    loose = mirror / "objects" / blob[:2] / blob[2:]
    assert loose.is_file()
    loose.unlink()
    entry = _evaluate(broken, tmp_path / "run", _prediction(broken.gold_patch))
    assert entry["status"] == "fail"
    assert entry["reason"].startswith("cannot make the working copy"), entry
    assert blob in entry["reason"]
    run_report = json.loads((tmp_path / "run" / "out" / "org__model.preds.json").read_text())
    assert run_report["error_ids"] == [INSTANCE]
    assert run_report["unresolved_ids"] == []


def test_the_gold_patch_resolves_and_the_official_files_are_written(
    small: SmallBench, tmp_path: Path
) -> None:
    entry = _evaluate(small, tmp_path, _prediction(small.gold_patch))
    assert entry["status"] == "pass", entry
    assert entry["resolution"] == "RESOLVED_FULL"
    assert entry["channel"] == "pytest" and entry["parser_disagrees"] == []
    logs = tmp_path / "out" / "logs" / "run_evaluation"
    (run_id,) = [folder.name for folder in logs.iterdir()]
    instance_dir = logs / run_id / "org__model" / INSTANCE
    report = json.loads((instance_dir / "report.json").read_text())
    assert report[INSTANCE]["resolved"] is True
    assert report[INSTANCE]["tests_status"]["FAIL_TO_PASS"]["success"] == [
        "tests/test_calc.py::test_add"
    ]
    assert (instance_dir / "patch.diff").read_text() == small.gold_patch
    assert ">>>>> Start Test Output" in (instance_dir / "test_output.txt").read_text()
    run_report = json.loads((tmp_path / "out" / f"org__model.{run_id}.json").read_text())
    assert run_report["schema_version"] == 2 and run_report["resolved_ids"] == [INSTANCE]
    # the working copy was listed from the mirror's history cache, kept in the cache folder
    cached = tmp_path / "cache" / "git-histories"
    assert len(list(cached.glob("*/history.git/objects/pack/*.bitmap"))) == 1


def test_an_empty_or_wrong_patch_does_not_resolve(small: SmallBench, tmp_path: Path) -> None:
    assert _evaluate(small, tmp_path / "empty", _prediction(""))["status"] == "fail"
    wrong = small.gold_patch.replace("a + b", "a + b + 1")
    entry = _evaluate(small, tmp_path / "wrong", _prediction(wrong))
    assert entry["status"] == "fail" and entry["resolution"] == "RESOLVED_NO"
    garbage = _evaluate(small, tmp_path / "garbage", _prediction("not a patch\n"))
    assert garbage["status"] == "fail" and "does not apply" in str(garbage["reason"])


@pytest.mark.hostile
def test_a_conftest_that_rewrites_reports_does_not_resolve(
    small: SmallBench, tmp_path: Path
) -> None:
    """Only the conftest: without the fix, test_add fails; the conftest makes pytest log it
    passed. passbench puts the test machinery back before the tests run."""
    entry = _evaluate(small, tmp_path, _prediction(_new_file("conftest.py", CONFTEST_EXPLOIT)))
    assert entry["status"] == "fail", entry
    assert entry["machinery_restored"] == ["conftest.py"]


@pytest.mark.hostile
def test_printed_results_do_not_resolve(small: SmallBench, tmp_path: Path) -> None:
    """The package prints a PASSED line for the FAIL_TO_PASS test and an end marker when the
    tests import it; the official parser would read them, the channel does not."""
    printed = _new_file("calc/_banner.py", PRINT_EXPLOIT)
    hook = (
        "diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n"
        "+++ b/calc/__init__.py\n@@ -1,3 +1,4 @@\n+from calc import _banner  # noqa\n"
        " def add(a, b):\n     return a - b\n \n"
    )
    entry = _evaluate(small, tmp_path, _prediction(printed + hook))
    assert entry["status"] == "fail", entry
    assert entry["channel"] == "pytest"
    assert "tests/test_calc.py::test_add" in entry["parser_disagrees"]


def test_the_cli_grades_the_gold_patches_and_a_jsonl_predictions_file(
    small: SmallBench, tmp_path: Path
) -> None:
    """`passbench evaluate --ground-truth` (the gold patches) and `--samples preds.jsonl`, with
    the mirrors from --repos, as docs/swebench.md gives them."""
    environ = {
        **os.environ,
        "PASSBENCH_DATA_DIR": str(small.data_dir),
        "PASSBENCH_CACHE_DIR": str(tmp_path / "cache"),
    }
    cli = [sys.executable, "-m", "passbench.apps.cli", "evaluate", "-b", "swebench-lite"]
    repos = ["--repos", str(small.repos_dir)]
    truth = subprocess.run(
        [*cli, "--ground-truth", *repos, "--output-dir", str(tmp_path / "gt")],
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert truth.returncode == 0, truth.stdout + truth.stderr
    tasks = json.loads((tmp_path / "gt" / "ground_truth.json").read_text())["tasks"]
    assert tasks[INSTANCE]["status"] == "pass"
    predictions = tmp_path / "preds.jsonl"
    row = {"instance_id": INSTANCE, "model_name_or_path": "m", "model_patch": small.gold_patch}
    predictions.write_text(json.dumps(row) + "\n")
    scored = subprocess.run(
        [*cli, "--samples", str(predictions), *repos, "--no-gt"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert scored.returncode == 0, scored.stdout + scored.stderr
    (pass_at_k,) = tmp_path.glob("*_pass_at_k.json")
    assert json.loads(pass_at_k.read_text())["pass@1"] == 1.0
    missing = subprocess.run(
        [*cli, "--samples", str(predictions), "--repos", str(tmp_path / "nowhere"), "--no-gt"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert missing.returncode != 0
    assert "octo__calc.git" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
