"""`env check` on a real, empty virtual environment: everything is reported missing."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from tests.stages.evalenv.conftest import make_nltk_tree, make_venv

from passbench.apps.cli import cli
from passbench.stages.evalenv.check import check_env, check_imports
from passbench.stages.evalenv.specs import get_spec


def test_empty_venv_lacks_every_library_and_corpus(tmp_path: Path) -> None:
    root = tmp_path / "env"
    make_venv(root)
    report = check_env("bigcodebench", root)
    assert not report.ok
    by_key = {(item.kind, item.name): item for item in report.items}
    assert by_key[("environment", "interpreter")].ok
    assert not by_key[("environment", "metadata")].ok
    assert "passbench env create bigcodebench" in by_key[("environment", "metadata")].detail
    numpy = by_key[("module", "numpy")]
    assert not numpy.ok
    assert "ModuleNotFoundError" in numpy.detail
    assert by_key[("module", "sqlite3")].ok  # standard library: present in any venv
    spec = get_spec("bigcodebench")
    assert all(not by_key[("nltk", package)].ok for package in spec.nltk_packages)


def test_nltk_packages_found_in_the_env_are_ok(tmp_path: Path) -> None:
    root = tmp_path / "env"
    make_venv(root)
    make_nltk_tree(root / "nltk_data", {"stopwords": "corpora", "punkt": "tokenizers"})
    report = check_env("bigcodebench", root, modules=False)
    nltk = {item.name: item.ok for item in report.items if item.kind == "nltk"}
    assert nltk["stopwords"] and nltk["punkt"]
    assert not nltk["wordnet"]
    assert not any(item.kind == "module" for item in report.items)


def test_missing_interpreter_is_one_actionable_item(tmp_path: Path) -> None:
    report = check_env("bigcodebench", tmp_path / "nowhere")
    assert [(item.name, item.ok) for item in report.items] == [("interpreter", False)]
    assert "passbench env create bigcodebench" in report.items[0].detail


def test_import_errors_carry_the_exception(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "env")
    site = next((tmp_path / "env" / "lib").glob("python3.*/site-packages"))
    (site / "broken_demo.py").write_text("raise RuntimeError('needs libfoo.so.1')\n")
    items = {item.name: item for item in check_imports(python, ["json", "broken_demo"])}
    assert items["json"].ok
    assert not items["broken_demo"].ok
    assert items["broken_demo"].detail == "RuntimeError: needs libfoo.so.1"


def test_a_crashing_import_is_blamed_and_later_ones_not_checked(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "env")
    site = next((tmp_path / "env" / "lib").glob("python3.*/site-packages"))
    (site / "crash_demo.py").write_text("import os\nos._exit(3)\n")
    items = check_imports(python, ["json", "crash_demo", "csv"])
    assert [(item.name, item.ok) for item in items] == [
        ("json", True),
        ("crash_demo", False),
        ("csv", False),
    ]
    assert "crashed" in items[1].detail
    assert "not checked" in items[2].detail


def test_cli_exit_code_and_json(tmp_path: Path) -> None:
    root = tmp_path / "env"
    make_venv(root)
    runner = CliRunner()
    result = runner.invoke(
        cli, ["env", "check", "bigcodebench", "--path", str(root), "--json", "--skip-imports"]
    )
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["ok"] is False
    stopwords = next(item for item in report["items"] if item["name"] == "stopwords")
    assert (stopwords["kind"], stopwords["ok"]) == ("nltk", False)
    table = runner.invoke(cli, ["env", "check", "--path", str(root), "--skip-imports"])
    assert table.exit_code == 1
    assert "incomplete" in table.output
    assert "stopwords" in table.output
