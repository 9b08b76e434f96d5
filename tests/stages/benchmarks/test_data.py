"""Data resolution: explicit file > data folder > cache > download (against a local server)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from passbench.core.errors import DatasetError
from passbench.stages.benchmarks import DataSettings, get_benchmark, load_benchmark
from passbench.stages.benchmarks.data import read_jsonl, sha256_of

from .conftest import FileServer

BCB_URL = "bigcode-project/bigcodebench-annotation/releases/download/v0.1.4/BigCodeBench.jsonl.gz"
HARD_URL = (
    "bigcode-project/bigcodebench-annotation/releases/download/v0.1.4/BigCodeBench-Hard.jsonl.gz"
)
HUMANEVAL_URL = "openai/human-eval/raw/master/data/HumanEval.jsonl.gz"
PLUS_URL = "evalplus/humanevalplus_release/releases/download/v0.1.10/HumanEvalPlus-v0.1.10.jsonl.gz"

# sha256 of the published files, from shared/datasets/README.md
SHA256 = {
    "bigcodebench/BigCodeBench-v0.1.4.jsonl.gz": (
        "5d5d0bd4f513e4a17bbd1f7ec7c7110b6d60776b12566e09acd10ae8cfcc79f2"
    ),
    "humaneval/HumanEval.jsonl.gz": (
        "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef"
    ),
}


class Recorder:
    """A Progress that remembers what it was told."""

    def __init__(self) -> None:
        self.total = -1
        self.done = 0
        self.finished = False

    def start(self, total: int, description: str) -> None:
        self.total = total

    def advance(self, n: int = 1, *, info: str = "") -> None:
        self.done += n

    def warn(self, message: str) -> None:
        pass

    def finish(self) -> None:
        self.finished = True


def test_data_dir_is_used_and_hashed(offline: DataSettings, data_dir: Path) -> None:
    loaded = get_benchmark("bigcodebench").load(data=offline)
    assert loaded.source.source == "data_dir"
    assert loaded.source.path == data_dir / "bigcodebench" / "BigCodeBench-v0.1.4.jsonl.gz"
    assert loaded.sha256 == SHA256["bigcodebench/BigCodeBench-v0.1.4.jsonl.gz"]
    assert "(data dir)" in str(loaded.source)


def test_explicit_file_wins_and_may_be_plain_jsonl(
    offline: DataSettings, data_dir: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "humaneval-copy.jsonl"  # not compressed, whatever the folder holds
    plain.write_bytes(gzip.decompress((data_dir / "humaneval/HumanEval.jsonl.gz").read_bytes()))
    settings = DataSettings(
        dataset_path=plain, data_dir=data_dir, cache_dir=offline.cache_dir, download=False
    )
    loaded = get_benchmark("humaneval-openai").load(data=settings)
    assert loaded.source.source == "file" and loaded.source.path == plain
    assert loaded.sha256 == sha256_of(plain) != SHA256["humaneval/HumanEval.jsonl.gz"]
    assert len(loaded) == 164


def test_missing_explicit_file(offline: DataSettings, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such dataset file"):
        load_benchmark("humaneval-openai", dataset_path=tmp_path / "nope.jsonl", download=False)


def test_offline_without_data_names_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"datasets/humaneval/HumanEval.jsonl.gz.*downloads"):
        load_benchmark("humaneval-openai", cache_dir=tmp_path, download=False)


def _serve_release(server: FileServer, data_dir: Path) -> None:
    server.put(BCB_URL, (data_dir / "bigcodebench/BigCodeBench-v0.1.4.jsonl.gz").read_bytes())
    hard = set(json.loads((data_dir / "bigcodebench/hard-task-ids.json").read_text())["task_ids"])
    rows = [
        json.dumps(record)
        for _, record in read_jsonl(data_dir / "bigcodebench/BigCodeBench-v0.1.4.jsonl.gz")
        if record["task_id"] in hard
    ]
    server.put(HARD_URL, gzip.compress(("\n".join(rows) + "\n").encode()))
    server.put(HUMANEVAL_URL, (data_dir / "humaneval/HumanEval.jsonl.gz").read_bytes())


def test_download_into_cache_then_reuse(
    file_server: FileServer, data_dir: Path, tmp_path: Path
) -> None:
    _serve_release(file_server, data_dir)
    settings = DataSettings(cache_dir=tmp_path / "cache", mirror=file_server.url)
    progress = Recorder()
    first = get_benchmark("bigcodebench").load("v0.1.4", "hard", data=settings, progress=progress)
    assert [f.source for f in first.files] == ["download", "download"]
    assert first.source.url == f"{file_server.url}/{BCB_URL}"
    assert (
        first.source.path == tmp_path / "cache/datasets/bigcodebench/BigCodeBench-v0.1.4.jsonl.gz"
    )
    assert first.sha256 == SHA256["bigcodebench/BigCodeBench-v0.1.4.jsonl.gz"]
    assert progress.finished and progress.done > 0
    assert len(first) == 148
    # the hard subset's home is a whole jsonl.gz; the cache keeps only its ids
    ids = json.loads((tmp_path / "cache/datasets/bigcodebench/hard-task-ids.json").read_text())
    assert ids["count"] == 148 and ids["task_ids"] == [t.task_id for t in first.tasks]
    # the cache folder holds only finished files, no temp leftovers
    leftovers = list((tmp_path / "cache/datasets/bigcodebench").glob(".*"))
    assert leftovers == []

    asked = len(file_server.requests)
    again = get_benchmark("bigcodebench").load("v0.1.4", "hard", data=settings)
    assert [f.source for f in again.files] == ["cache", "cache"]
    assert len(file_server.requests) == asked  # nothing fetched the second time
    assert again.tasks == first.tasks


def test_data_dir_before_cache(file_server: FileServer, data_dir: Path, tmp_path: Path) -> None:
    _serve_release(file_server, data_dir)
    cache = tmp_path / "cache"
    load_benchmark("humaneval-openai", cache_dir=cache, mirror=file_server.url)  # fills the cache
    loaded = load_benchmark("humaneval-openai", data_dir=data_dir, cache_dir=cache, download=False)
    assert loaded.source.source == "data_dir"
    elsewhere = load_benchmark("humaneval-openai", data_dir=tmp_path / "empty", cache_dir=cache)
    assert elsewhere.source.source == "cache"


def test_download_http_error(file_server: FileServer, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"HTTP 404.*--dataset-path"):
        load_benchmark("humanevalplus", cache_dir=tmp_path, mirror=file_server.url)
    assert file_server.requests == [f"/{PLUS_URL}"]
    assert not any((tmp_path / "datasets").rglob("*.*"))


def test_corrupt_download_never_reaches_the_cache(
    file_server: FileServer, data_dir: Path, tmp_path: Path
) -> None:
    good = gzip.decompress((data_dir / "humaneval/HumanEval.jsonl.gz").read_bytes())
    lines = good.splitlines(keepends=True)
    lines[6] = b'{"task_id": "HumanEval/6", "prompt": \n'  # truncated record on line 7
    file_server.put(HUMANEVAL_URL, gzip.compress(b"".join(lines)))
    with pytest.raises(DatasetError, match=r"downloaded .*HumanEval.jsonl.gz is not usable.*:7:"):
        load_benchmark("humaneval-openai", cache_dir=tmp_path, mirror=file_server.url)
    assert list((tmp_path / "datasets" / "humaneval").iterdir()) == []


def test_unreachable_mirror(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"downloading http://127\.0\.0\.1:9/"):
        load_benchmark("humaneval-openai", cache_dir=tmp_path, mirror="http://127.0.0.1:9")


def test_settings_from_environment(tmp_path: Path) -> None:
    environ = {
        "PASSBENCH_DATA_DIR": str(tmp_path / "data"),
        "PASSBENCH_CACHE_DIR": str(tmp_path / "cache"),
        "PASSBENCH_DOWNLOAD_MIRROR": "http://mirror.example/",
        "PASSBENCH_OFFLINE": "1",
    }
    settings = DataSettings.from_env(environ)
    assert settings.data_dir == tmp_path / "data"
    assert settings.cache_root() == tmp_path / "cache" / "datasets"
    assert settings.url_for("/a/b.gz") == "http://mirror.example/a/b.gz"
    assert settings.download is False
    flags = DataSettings.from_env(environ, data_dir=tmp_path / "flag", dataset_path="x.jsonl")
    assert flags.data_dir == tmp_path / "flag" and flags.dataset_path == Path("x.jsonl")
    plain = DataSettings.from_env({})
    assert plain.data_dir is None and plain.download is True
    assert plain.url_for("a") == "https://github.com/a"


def test_cache_copy_is_read_like_the_data_dir(
    offline: DataSettings, data_dir: Path, tmp_path: Path
) -> None:
    cache_file = tmp_path / "cache/datasets/humaneval/HumanEvalPlus.jsonl.gz"
    cache_file.parent.mkdir(parents=True)
    shutil.copy(data_dir / "humaneval/HumanEvalPlus.jsonl.gz", cache_file)
    loaded = load_benchmark("humanevalplus", cache_dir=tmp_path / "cache", download=False)
    assert loaded.source.source == "cache" and len(loaded) == 164
