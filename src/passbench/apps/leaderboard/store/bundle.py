"""Leaderboard bundles: what a submitter sends, read and checked before anything is queued.

A bundle is a folder, a .zip or a .tar(.gz) holding two files (at its top, or inside one
top-level folder):

    manifest.json   who and what: model, benchmark, dataset version and hash, split, subset,
                    generation settings, passbench version (docs/leaderboard.md lists the fields)
    samples.jsonl   the samples, in passbench's / the official format (samplefile.py): task_id
                    and solution (sanitized), raw_solution beside it; .jsonl.gz also works

Its id is the sha256 of the canonical manifest (sorted keys) and the samples' bytes, so the
same bundle sent as a folder or a zip, twice, is one job. Every error is one line naming the
bundle's file and field; reading never executes anything.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import tarfile
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from passbench.core.errors import InputError, SubmissionRejected
from passbench.core.records import Sample
from passbench.core.samplefile import read_samples
from passbench.stages.benchmarks import Benchmark, LoadedBenchmark

BUNDLE_FORMAT = 1
MANIFEST_NAME = "manifest.json"
DEFAULT_SAMPLES_NAME = "samples.jsonl"
#: Largest bundle accepted by default (uncompressed bytes of its two files).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Manifest:
    """manifest.json, checked. `data` is the whole file as parsed (stored with the submission)."""

    model: str
    revision: str
    benchmark: str
    dataset_version: str
    dataset_sha256: str
    split: str
    subset: str
    passbench_version: str
    generation: Mapping[str, Any]
    samples_name: str
    link: str | None = None
    size_b: float | None = None
    prompted: bool | None = None
    data: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Bundle:
    """A bundle's two files, read; `name` is what the submitter called it (for messages)."""

    name: str
    manifest: Manifest
    samples_bytes: bytes  # uncompressed

    @property
    def sha256(self) -> str:
        """The job id: canonical manifest, then the samples' bytes."""
        canonical = json.dumps(dict(self.manifest.data), sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(b"passbench-bundle/1\0")
        digest.update(canonical.encode("utf-8") + b"\0")
        digest.update(self.samples_bytes)
        return digest.hexdigest()

    @property
    def size(self) -> int:
        return len(self.samples_bytes)


def _reject(message: str, where: str, *, code: str = "format", **extra: Any) -> SubmissionRejected:
    return SubmissionRejected(message, code=code, path=where, **extra)


# ---- reading ---------------------------------------------------------------------------------


def read_bundle(
    source: str | Path | bytes, *, name: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Bundle:
    """Read a bundle from a folder, an archive file, or an archive's bytes (an upload)."""
    if isinstance(source, bytes):
        label = name or "bundle"
        files = _archive_members(source, label, max_bytes)
    else:
        path = Path(source)
        label = name or path.name
        if path.is_dir():
            files = _folder_members(path, max_bytes)
        elif path.is_file():
            if path.stat().st_size > max_bytes:
                raise _reject(f"larger than the limit of {max_bytes} bytes", label, code="size")
            files = _archive_members(path.read_bytes(), label, max_bytes)
        else:
            raise _reject("no such file or folder", label)
    files = _strip_top_folder(files)
    if MANIFEST_NAME not in files:
        raise _reject(f"no {MANIFEST_NAME} (found: {', '.join(sorted(files)) or 'nothing'})", label)
    manifest = parse_manifest(files[MANIFEST_NAME], f"{label}/{MANIFEST_NAME}")
    if manifest.samples_name not in files:
        raise _reject(f"no {manifest.samples_name} (named by manifest.json's 'samples')", label)
    samples = files[manifest.samples_name]
    if manifest.samples_name.endswith(".gz"):
        samples = _gunzip(samples, f"{label}/{manifest.samples_name}", max_bytes)
    return Bundle(name=label, manifest=manifest, samples_bytes=samples)


def _gunzip(data: bytes, where: str, max_bytes: int) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
            out = handle.read(max_bytes + 1)
    except (OSError, EOFError) as error:
        raise _reject(f"not a valid gzip file ({error})", where) from None
    if len(out) > max_bytes:
        raise _reject(
            f"larger than the limit of {max_bytes} bytes uncompressed", where, code="size"
        )
    return out


def _folder_members(folder: Path, max_bytes: int) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        total += path.stat().st_size
        if total > max_bytes:
            raise _reject(f"larger than the limit of {max_bytes} bytes", folder.name, code="size")
        files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def _archive_members(data: bytes, label: str, max_bytes: int) -> dict[str, bytes]:
    """The regular files of a zip or tar(.gz), their declared sizes checked before reading."""
    too_big = _reject(f"larger than the limit of {max_bytes} bytes unpacked", label, code="size")
    files: dict[str, bytes] = {}
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                infos = [info for info in archive.infolist() if not info.is_dir()]
                if sum(info.file_size for info in infos) > max_bytes:
                    raise too_big
                for info in infos:
                    files[info.filename] = archive.read(info)
        except (zipfile.BadZipFile, OSError, EOFError) as error:
            raise _reject(f"not a valid zip file ({error})", label) from None
        return files
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            members = [member for member in archive.getmembers() if member.isfile()]
            if sum(member.size for member in members) > max_bytes:
                raise too_big
            for member in members:
                extracted = archive.extractfile(member)
                if extracted is not None:
                    files[member.name] = extracted.read()
    except (tarfile.TarError, OSError, EOFError) as error:
        raise _reject(
            f"not a bundle: expected a folder, .zip or .tar(.gz) ({error})", label
        ) from None
    return files


def _strip_top_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    """Names relative to the bundle: `./x` is `x`, and one folder holding everything is dropped."""
    clean = {
        PurePosixPath(name).as_posix().removeprefix("./"): data for name, data in files.items()
    }
    tops = {name.split("/", 1)[0] for name in clean}
    if len(tops) == 1 and all("/" in name for name in clean):
        return {name.split("/", 1)[1]: data for name, data in clean.items()}
    return clean


# ---- making one -----------------------------------------------------------------------------


def make_bundle(
    samples_bytes: bytes,
    *,
    model: str,
    benchmark: str,
    dataset_version: str,
    dataset_sha256: str,
    split: str,
    subset: str,
    passbench_version: str,
    revision: str = "",
    link: str | None = None,
    size_b: float | None = None,
    prompted: bool | None = None,
    generation: Mapping[str, Any] | None = None,
    name: str = "bundle",
) -> Bundle:
    """A bundle from a samples file's (uncompressed) bytes and the submitter's metadata: what
    `passbench leaderboard submit` sends and what the app's form builds. `generation.n_samples`
    defaults to the most samples any task has (uneven files are then refused as coverage)."""
    settings = dict(generation or {})
    settings.setdefault("n_samples", max(_samples_per_task(samples_bytes).values(), default=1))
    described: dict[str, Any] = {"name": model, "revision": revision}
    for key, value in (("link", link), ("size_b", size_b), ("prompted", prompted)):
        if value is not None:
            described[key] = value
    manifest = {
        "format": BUNDLE_FORMAT,
        "model": described,
        "benchmark": benchmark,
        "dataset_version": dataset_version,
        "dataset_sha256": dataset_sha256,
        "split": split,
        "subset": subset,
        "generation": settings,
        "passbench_version": passbench_version,
        "samples": DEFAULT_SAMPLES_NAME,
    }
    data = json.dumps(manifest, indent=1).encode("utf-8")
    return Bundle(
        name=name,
        manifest=parse_manifest(data, f"{name}/{MANIFEST_NAME}"),
        samples_bytes=samples_bytes,
    )


def _samples_per_task(samples_bytes: bytes) -> dict[str, int]:
    """Samples per task_id, lines that do not parse skipped (check_bundle names them)."""
    counts: dict[str, int] = {}
    for line in samples_bytes.splitlines():
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(row, dict) and isinstance(row.get("task_id"), str):
            counts[row["task_id"]] = counts.get(row["task_id"], 0) + 1
    return counts


def bundle_zip(bundle: Bundle) -> bytes:
    """The bundle as a .zip (manifest.json and its samples file), the same bytes every time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        manifest = json.dumps(dict(bundle.manifest.data), indent=1, sort_keys=True)
        samples_name = bundle.manifest.samples_name
        samples = bundle.samples_bytes
        if samples_name.endswith(".gz"):
            samples = gzip.compress(samples, mtime=0)
        for member, content in ((MANIFEST_NAME, manifest.encode("utf-8")), (samples_name, samples)):
            archive.writestr(zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


# ---- the manifest ----------------------------------------------------------------------------


def parse_manifest(data: bytes, where: str) -> Manifest:
    """manifest.json's fields, each checked; errors name the file and the field."""
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _reject(f"not valid JSON ({error})", where) from None
    if not isinstance(parsed, dict):
        raise _reject("expected a JSON object", where)

    def text(key: str, value: Any, *, empty: bool = False) -> str:
        if not isinstance(value, str) or (not value.strip() and not empty):
            raise _reject("must be a non-empty string", where, field=key)
        return value

    version = parsed.get("format")
    if version != BUNDLE_FORMAT:
        raise _reject(
            f"must be {BUNDLE_FORMAT} (the bundle format this passbench reads), got {version!r}",
            where,
            field="format",
        )
    model = parsed.get("model")
    if not isinstance(model, dict):
        raise _reject("must be an object with at least 'name'", where, field="model")
    generation = parsed.get("generation")
    if not isinstance(generation, dict):
        raise _reject("must be an object (temperature, n_samples, ...)", where, field="generation")
    n_samples = generation.get("n_samples")
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
        raise _reject("must be a positive integer", where, field="generation.n_samples")
    sha = text("dataset_sha256", parsed.get("dataset_sha256"))
    if not _SHA256.fullmatch(sha):
        raise _reject("must be a sha256 in lower-case hex", where, field="dataset_sha256")
    size_b = model.get("size_b")
    if size_b is not None and (isinstance(size_b, bool) or not isinstance(size_b, int | float)):
        raise _reject("must be a number (billions of parameters)", where, field="model.size_b")
    prompted = model.get("prompted")
    if prompted is not None and not isinstance(prompted, bool):
        raise _reject("must be true or false", where, field="model.prompted")
    link = model.get("link")
    samples_name = parsed.get("samples", DEFAULT_SAMPLES_NAME)
    samples_name = text("samples", samples_name)
    if not samples_name.endswith((".jsonl", ".jsonl.gz")) or "/" in samples_name:
        raise _reject("must be a .jsonl or .jsonl.gz file name", where, field="samples")
    return Manifest(
        model=text("model.name", model.get("name")),
        revision=text("model.revision", model.get("revision", ""), empty=True),
        benchmark=text("benchmark", parsed.get("benchmark")),
        dataset_version=text("dataset_version", parsed.get("dataset_version")),
        dataset_sha256=sha,
        split=text("split", parsed.get("split")),
        subset=text("subset", parsed.get("subset")),
        passbench_version=text("passbench_version", parsed.get("passbench_version")),
        generation=generation,
        samples_name=samples_name,
        link=text("model.link", link) if link is not None else None,
        size_b=float(size_b) if size_b is not None else None,
        prompted=prompted,
        data=parsed,
    )


# ---- checks against the benchmark ------------------------------------------------------------


@dataclass(frozen=True)
class CheckedBundle:
    """A bundle that passed every check against its benchmark: its samples, parsed."""

    bundle: Bundle
    samples: tuple[Sample, ...]
    task_ids: tuple[str, ...]  # the tasks the leaderboard scores, each covered


def check_bundle(
    bundle: Bundle,
    benchmark: Benchmark,
    loaded: LoadedBenchmark,
    *,
    task_ids: Sequence[str] | None = None,
    max_samples: int | None = None,
) -> CheckedBundle:
    """Check `bundle` against the benchmark data the leaderboard uses: split and subset, the
    dataset version and its hash, every sample's format, and that each scored task (all of the
    subset's, or `task_ids`) has exactly `generation.n_samples` samples."""
    manifest = bundle.manifest
    where = f"{bundle.name}/{MANIFEST_NAME}"
    if manifest.split not in benchmark.info.splits:
        raise _reject(
            f"{manifest.split!r} is not a split of {manifest.benchmark} "
            f"({', '.join(benchmark.info.splits)})",
            where,
            field="split",
        )
    if manifest.subset != loaded.subset:
        raise _reject(f"expected {loaded.subset!r}", where, field="subset")
    if manifest.dataset_version != loaded.version:
        raise _reject(
            f"{manifest.dataset_version!r}: this leaderboard scores {manifest.benchmark} "
            f"{loaded.version}",
            where,
            code="dataset",
            field="dataset_version",
        )
    if manifest.dataset_sha256 != loaded.sha256:
        raise _reject(
            f"{manifest.dataset_sha256[:12]}... is not the hash of the {loaded.version} data this "
            f"leaderboard scores ({loaded.sha256[:12]}...): the samples were made from other data",
            where,
            code="dataset",
            field="dataset_sha256",
        )
    samples = _read_samples(bundle, loaded)
    if max_samples is not None and len(samples) > max_samples:
        raise _reject(
            f"{len(samples)} samples; the limit is {max_samples}",
            f"{bundle.name}/{manifest.samples_name}",
            code="size",
        )
    scored = (
        tuple(task_ids) if task_ids is not None else tuple(task.task_id for task in loaded.tasks)
    )
    counts: dict[str, int] = {}
    for sample in samples:
        counts[sample.task_id] = counts.get(sample.task_id, 0) + 1
    wanted = int(manifest.generation["n_samples"])
    missing = [task for task in scored if counts.get(task, 0) == 0]
    if missing:
        raise _reject(
            f"{len(missing)} of {len(scored)} tasks have no sample (first: {missing[0]})",
            f"{bundle.name}/{manifest.samples_name}",
            code="coverage",
        )
    uneven = [task for task in scored if counts[task] != wanted]
    if uneven:
        raise _reject(
            f"{uneven[0]} has {counts[uneven[0]]} samples; manifest.json's generation.n_samples "
            f"says every task has {wanted}",
            f"{bundle.name}/{manifest.samples_name}",
            code="coverage",
        )
    return CheckedBundle(bundle=bundle, samples=tuple(samples), task_ids=scored)


def _read_samples(bundle: Bundle, loaded: LoadedBenchmark) -> list[Sample]:
    """samplefile.read_samples on the bundle's bytes; errors name the file inside the bundle."""
    known = {task.task_id for task in loaded.all_tasks}
    with tempfile.TemporaryDirectory(prefix="passbench-bundle-") as folder:
        path = Path(folder) / "samples.jsonl"
        path.write_bytes(bundle.samples_bytes)
        try:
            return read_samples(path, known_task_ids=known)
        except InputError as error:
            raise _reject(
                error.bare_message,
                f"{bundle.name}/{bundle.manifest.samples_name}",
                line=error.line,
                field=error.field,
            ) from None
