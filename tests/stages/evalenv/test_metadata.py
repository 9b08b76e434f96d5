"""The record inside an environment: round trip, and clear errors when it is damaged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passbench.core.errors import EnvironmentError_
from passbench.stages.evalenv.metadata import (
    METADATA_SCHEMA_VERSION,
    EnvMetadata,
    metadata_path,
    read_metadata,
    write_metadata,
)


def _record() -> EnvMetadata:
    return EnvMetadata(
        name="bigcodebench",
        lock_file="bigcodebench-py311.txt",
        lock_sha256="ab" * 32,
        python_version="3.11.7",
        created_at="2026-11-22T16:00:00+00:00",
        nltk_packages={"stopwords": "downloader", "punkt": "missing"},
    )


def test_round_trip(tmp_path: Path) -> None:
    write_metadata(tmp_path, _record())
    assert read_metadata(tmp_path) == _record()
    data = json.loads(metadata_path(tmp_path).read_text())
    assert data["schema_version"] == METADATA_SCHEMA_VERSION
    assert not list(tmp_path.glob("*.partial"))


def test_absent_record_means_not_built(tmp_path: Path) -> None:
    assert read_metadata(tmp_path) is None


def test_invalid_json_names_the_file_and_line(tmp_path: Path) -> None:
    metadata_path(tmp_path).write_text('{\n  "name": \n')
    with pytest.raises(EnvironmentError_, match=r"passbench-env\.json:\d+: not valid JSON"):
        read_metadata(tmp_path)


def test_missing_field_is_named(tmp_path: Path) -> None:
    data = json.loads(_record().to_json())
    del data["lock_sha256"]
    metadata_path(tmp_path).write_text(json.dumps(data))
    with pytest.raises(EnvironmentError_, match="field 'lock_sha256'"):
        read_metadata(tmp_path)


def test_unknown_fields_from_a_newer_passbench_are_ignored(tmp_path: Path) -> None:
    data = json.loads(_record().to_json())
    data["added_later"] = 1
    metadata_path(tmp_path).write_text(json.dumps(data))
    assert read_metadata(tmp_path) == _record()
