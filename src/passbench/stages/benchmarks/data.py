"""Finding benchmark data files: explicit file, data folder, user cache, then a download.

A benchmark names the files it needs as `DataFile`s (a path inside the data layout and a path
under the public download base). `resolve()` looks for each in this order and reports which
source it used, with the sha256 of the bytes, so results can record exactly what was run:

1. an explicit file the user named (`--dataset-path FILE`), for the main task file only;
2. the data folder (`--data-dir` / `PASSBENCH_DATA_DIR`), laid out like the shared datasets
   folder: `bigcodebench/BigCodeBench-v0.1.4.jsonl.gz`, `humaneval/HumanEval.jsonl.gz`, ...;
3. the user cache (`<cache dir>/datasets`, same layout; the cache dir defaults to
   `platformdirs.user_cache_dir("passbench")`, env PASSBENCH_CACHE_DIR);
4. a download from the public home into the cache (atomic: temp file, check, rename).

Nothing here reads the environment on import; `DataSettings.from_env` reads a mapping the
caller passes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from passbench.core.errors import DatasetError
from passbench.core.progress import NullProgress, Progress

#: Where the public files live; every DataFile.url_path is relative to it.
DEFAULT_DOWNLOAD_BASE = "https://github.com"

#: The variable that turns downloads off (read, with the others, by passbench.core.settings).
ENV_OFFLINE = "PASSBENCH_OFFLINE"

Source = Literal["file", "data_dir", "cache", "download"]

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16


@dataclass(frozen=True)
class DataSettings:
    """Where benchmark data may come from. Fields left as None use the defaults above."""

    dataset_path: Path | None = None  # explicit task file; wins over everything else
    data_dir: Path | None = None  # a folder laid out like the shared datasets folder
    cache_dir: Path | None = None  # passbench's cache; data goes in its datasets/ folder
    mirror: str | None = None  # replaces DEFAULT_DOWNLOAD_BASE (tests, air-gapped mirrors)
    download: bool = True  # False: never touch the network
    repos_dir: Path | None = None  # git mirrors <owner>__<name>.git (repository benchmarks)
    timeout_s: float = 60.0  # per network operation (connect, read)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: Any) -> DataSettings:
        """Settings from environment variables (PASSBENCH_DATA_DIR, PASSBENCH_CACHE_DIR,
        PASSBENCH_DOWNLOAD_MIRROR, PASSBENCH_OFFLINE, checked by passbench.core.settings), then
        `overrides` where not None."""
        from passbench.core.settings import paths_from

        paths = paths_from(environ)
        values: dict[str, Any] = {
            "data_dir": paths.data_dir,
            "cache_dir": paths.cache_dir,
            "mirror": paths.mirror,
            "download": not paths.offline,
            "repos_dir": paths.repos_dir,
        }
        values.update({key: value for key, value in overrides.items() if value is not None})
        for key in ("dataset_path", "data_dir", "cache_dir", "repos_dir"):
            if values.get(key) is not None and not isinstance(values[key], Path):
                values[key] = Path(values[key])
        return replace(cls(), **values)

    def cache_root(self) -> Path:
        """Where downloaded data lives: `<cache dir>/datasets`, laid out like a data folder."""
        if self.cache_dir is not None:
            return self.cache_dir / "datasets"
        from passbench.core.settings import default_cache_dir

        return default_cache_dir() / "datasets"

    def url_for(self, url_path: str, home: str = DEFAULT_DOWNLOAD_BASE) -> str:
        """`url_path` under the mirror when one is set, else under `home` (the file's public
        home: GitHub for most, the Hugging Face hub for LiveCodeBench)."""
        base = (self.mirror or home).rstrip("/")
        return f"{base}/{url_path.lstrip('/')}"


@dataclass(frozen=True)
class DataFile:
    """One file a benchmark needs.

    `check` parses a candidate file and raises DatasetError when it is not usable; downloads
    are checked before they replace anything in the cache. `convert`, when set, turns the
    downloaded bytes into the bytes stored in the layout (the hard-subset id list is stored as
    a small JSON file although its public home is a full jsonl.gz).
    """

    relpath: str  # inside a data folder or the cache: "humaneval/HumanEval.jsonl.gz"
    url_path: str  # under the download base: "openai/human-eval/raw/master/data/HumanEval.jsonl.gz"
    check: Callable[[Path], object]
    convert: Callable[[bytes], bytes] | None = None
    home: str = DEFAULT_DOWNLOAD_BASE  # the public download base `url_path` is relative to


@dataclass(frozen=True)
class ResolvedFile:
    """A data file found (or fetched), with the evidence results need."""

    path: Path
    sha256: str
    source: Source
    url: str | None = None  # set when this call downloaded it

    def describe(self) -> str:
        if self.source == "download":
            return f"{self.path} (downloaded from {self.url})"
        return f"{self.path} ({self.source.replace('_', ' ')})"

    def __str__(self) -> str:
        return self.describe()

    def md5_of_text(self) -> str:
        """md5 of the file's uncompressed bytes: the dataset `hash` EvalPlus writes in its
        result files (it hashes the uncompressed jsonl it caches)."""
        raw = self.path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return hashlib.md5(raw, usedforsecurity=False).hexdigest()


def resolve(
    file: DataFile,
    settings: DataSettings,
    *,
    explicit: Path | None = None,
    progress: Progress | None = None,
) -> ResolvedFile:
    """Find `file` (or use `explicit`), downloading it into the cache as a last resort."""
    if explicit is not None:
        if not explicit.is_file():
            raise DatasetError(f"{explicit}: no such dataset file")
        return ResolvedFile(explicit, sha256_of(explicit), "file")
    looked: list[str] = []
    if settings.data_dir is not None:
        candidate = settings.data_dir / file.relpath
        if candidate.is_file():
            return ResolvedFile(candidate, sha256_of(candidate), "data_dir")
        looked.append(str(candidate))
    cached = settings.cache_root() / file.relpath
    if cached.is_file():
        return ResolvedFile(cached, sha256_of(cached), "cache")
    looked.append(str(cached))
    if not settings.download:
        raise DatasetError(
            f"{file.relpath} not found (looked in {', '.join(looked)}) and downloads are off "
            f"({ENV_OFFLINE}); pass --dataset-path or --data-dir"
        )
    url = settings.url_for(file.url_path, file.home)
    digest = download(
        url,
        cached,
        settings,
        check=file.check,
        convert=file.convert,
        progress=progress or NullProgress(),
    )
    return ResolvedFile(cached, digest, "download", url)


def download(
    url: str,
    destination: Path,
    settings: DataSettings,
    *,
    check: Callable[[Path], object],
    convert: Callable[[bytes], bytes] | None = None,
    progress: Progress,
) -> str:
    """Fetch `url` into `destination` atomically; return the sha256 of the stored bytes.

    The bytes land in a temp file beside the destination, are checked with `check`, and only
    then renamed into place, so an interrupted or corrupt download never poisons the cache.
    """
    import httpx  # only the download path needs it

    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(
        prefix=f".{destination.name}.", suffix=".part", dir=destination.parent
    )
    temp = Path(temp_name)
    try:
        with os.fdopen(handle, "wb") as out:
            try:
                with httpx.stream(
                    "GET", url, follow_redirects=True, timeout=settings.timeout_s
                ) as response:
                    if response.status_code != 200:
                        raise DatasetError(
                            f"downloading {url} failed: HTTP {response.status_code}; "
                            "pass --dataset-path or --data-dir to use a local copy"
                        )
                    total = int(response.headers.get("content-length") or 0)
                    progress.start(total, f"downloading {destination.name}")
                    for chunk in response.iter_bytes(_CHUNK):
                        out.write(chunk)
                        progress.advance(len(chunk))
                    progress.finish()
            except httpx.HTTPError as error:
                raise DatasetError(
                    f"downloading {url} failed: {error}; "
                    "pass --dataset-path or --data-dir to use a local copy"
                ) from error
        try:
            if convert is not None:
                temp.write_bytes(convert(temp.read_bytes()))
            check(temp)
        except DatasetError as error:
            raise DatasetError(f"downloaded {url} is not usable: {error}") from error
        digest = sha256_of(temp)
        os.replace(temp, destination)
    finally:
        temp.unlink(missing_ok=True)
    return digest


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a .jsonl or gzip-compressed .jsonl.

    Compression is detected from the bytes, not the name, so either works under any name.
    """
    try:
        with path.open("rb") as probe:
            compressed = probe.read(2) == _GZIP_MAGIC
        opener = gzip.open if compressed else open
        with opener(path, "rt", encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise DatasetError(f"{path}:{number}: not valid JSON: {error}") from error
                if not isinstance(record, dict):
                    raise DatasetError(f"{path}:{number}: expected a JSON object per line")
                yield number, record
    except (OSError, EOFError, UnicodeDecodeError) as error:
        # gzip raises BadGzipFile (an OSError) or EOFError on truncated files
        raise DatasetError(f"{path}: cannot read: {error}") from error
