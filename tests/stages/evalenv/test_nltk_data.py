"""NLTK data: copying from a local folder (the offline path) and the downloader's failure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.stages.evalenv.conftest import make_nltk_tree, make_venv

from passbench.stages.evalenv.nltk_data import (
    copy_package,
    download_packages,
    find_package,
    missing_packages,
    provision,
)


def test_copy_keeps_the_category_and_description(tmp_path: Path) -> None:
    source = make_nltk_tree(tmp_path / "src", {"stopwords": "corpora", "punkt": "tokenizers"})
    dest = tmp_path / "dest"
    assert copy_package(source, dest, "stopwords")
    assert copy_package(source, dest, "punkt")
    assert (dest / "corpora" / "stopwords.zip").is_file()
    assert (dest / "corpora" / "stopwords.xml").is_file()
    assert (dest / "tokenizers" / "punkt" / "README").read_text() == "test data\n"
    assert not copy_package(source, dest, "wordnet")


def test_provision_offline_copies_what_it_can_and_reports_the_rest(tmp_path: Path) -> None:
    source = make_nltk_tree(tmp_path / "src", {"stopwords": "corpora", "words": "corpora"})
    dest = tmp_path / "env" / "nltk_data"
    outcome = provision(
        Path(sys.executable),
        dest,
        ["stopwords", "words", "punkt"],
        local_source=source,
        download=False,
    )
    assert outcome.sources == {
        "stopwords": f"copied from {source}",
        "words": f"copied from {source}",
        "punkt": "missing",
    }
    assert outcome.missing == ["punkt"]
    assert outcome.download_error == "downloads disabled"
    assert missing_packages(dest, ["stopwords", "words", "punkt"]) == ["punkt"]


def test_provision_keeps_packages_already_there(tmp_path: Path) -> None:
    dest = make_nltk_tree(tmp_path / "nltk_data", {"stopwords": "corpora"})
    outcome = provision(
        Path(sys.executable), dest, ["stopwords"], local_source=None, download=False
    )
    assert outcome.sources == {"stopwords": "present"}
    assert outcome.missing == []


def test_provision_from_the_shared_nltk_data(tmp_path: Path, data_dir: Path) -> None:
    source = data_dir / "nltk_data"
    if not source.is_dir():
        pytest.fail(f"no shared NLTK data at {source}; set PASSBENCH_DATA_DIR")
    dest = tmp_path / "nltk_data"
    outcome = provision(
        Path(sys.executable), dest, ["stopwords", "words"], local_source=source, download=False
    )
    assert outcome.missing == []
    assert find_package(dest, "stopwords") == dest / "corpora" / "stopwords.zip"


def test_downloader_failure_is_reported_not_raised(tmp_path: Path) -> None:
    """In an environment without NLTK the downloader cannot even start: the error says so."""
    python = make_venv(tmp_path / "venv")
    result, error = download_packages(python, tmp_path / "nltk_data", ["stopwords"])
    assert result == {}
    assert "No module named 'nltk'" in error
