"""Locks for SWE-bench environments: what an instance's environment is built from.

An instance's lock comes, in order of fidelity, from its own conda export (the exact pins of its
official image, `swebench-verified-environments.jsonl.gz`), from the export of a Verified
instance with the same repository, version and environment_setup_commit (the same recipe, built
on another day: approximate), or from SWE-bench's install spec (`specs.py`: approximate, with
what the spec leaves unpinned listed; such a lock is built only when the caller allows it).

Which conda pins become PyPI pins is decided by the rules in `specs.py` (`classify_conda`); every
pin left out is listed in the lock with its kind and reason, so nothing is dropped silently. The
lock text names its repository (the build backends depend on it), its Python pin and the sha256
of the export it came from, never an instance, and a version only through what the version
changes (inferred pins, isolated backends, a spec's origin): instances that share an export share
an environment, across versions too (sympy's 75 Verified instances of 12 versions need 2). The
official harness's key, (repository, version), labels an instance's `EnvironmentChoice` and the
results. The runtime lines are an evalenv lock (`name==version`, checked by
`evalenv.lock.parse_lock`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shlex
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from passbench.core.errors import InputError
from passbench.stages.benchmarks.swebench.specs import (
    BUILD_TOOLS,
    EXPORT_GAPS,
    ISOLATED_BACKENDS,
    STDLIB_BACKPORTS,
    LeftOutKind,
    RepoSpec,
    classify_conda,
    spec_for,
)
from passbench.stages.evalenv.lock import normalize_name, parse_lock

LOCK_SCHEMA = 1
#: The origin of a pin the export lacks and passbench inferred (specs.EXPORT_GAPS).
INFERRED = "inferred: missing from the export, see specs.EXPORT_GAPS"

# ------------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class EnvironmentKey:
    """What the official harness keys environments by: (repository, version)."""

    repo: str
    version: str

    def __str__(self) -> str:
        return f"{self.repo} {self.version}"


@dataclass(frozen=True)
class Requirement:
    """One exact pin, and where it came from ("pip", "conda NAME=VER=BUILD", "spec")."""

    name: str
    version: str
    origin: str

    @property
    def key(self) -> str:
        return normalize_name(self.name)


@dataclass(frozen=True)
class LeftOut:
    """A conda pin the lock does not install, and why."""

    name: str
    version: str
    build: str
    kind: LeftOutKind
    reason: str


@dataclass(frozen=True)
class Unpinned:
    """A part of a spec lock without an exact version."""

    label: str  # "pytest", "requirements.txt", "the repository's own dependencies"
    why: str
    requirement: str = ""  # what pip can resolve for it ("pytest", "pandas<2.0.0"), if anything

    def __str__(self) -> str:
        return f"{self.label}: {self.why}"


@dataclass(frozen=True)
class EnvironmentLock:
    """Everything an environment is built from. `text` is what `sha256` identifies."""

    repo: str
    kind: Literal["export", "spec"]
    python: str  # the conda pin ("3.9.20") or, from a spec, the minor version ("3.9")
    pins: tuple[Requirement, ...]
    build_pins: tuple[Requirement, ...]
    unpinned: tuple[Unpinned, ...]  # spec parts without an exact version
    left_out: tuple[LeftOut, ...]
    text: str
    sha256: str

    @property
    def python_minor(self) -> str:
        return ".".join(self.python.split(".")[:2])

    @property
    def inferred(self) -> tuple[Requirement, ...]:
        """Pins the export lacks that passbench added (specs.EXPORT_GAPS)."""
        return tuple(pin for pin in self.pins if pin.origin == INFERRED)

    @property
    def conda_only(self) -> tuple[str, ...]:
        """Python packages of the official image that have no PyPI release (left out)."""
        return tuple(item.name for item in self.left_out if item.kind == "conda-only")


class InstanceLike(Protocol):
    """What this module reads from a dataset row (instances.Instance has all of it)."""

    @property
    def instance_id(self) -> str: ...
    @property
    def repo(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def environment_setup_commit(self) -> str: ...
    @property
    def fail_to_pass(self) -> Sequence[str]: ...
    @property
    def pass_to_pass(self) -> Sequence[str]: ...
    @property
    def eval_script(self) -> str: ...


LockSource = Literal["export", "sibling-export", "spec"]


@dataclass(frozen=True)
class EnvironmentChoice:
    """The lock an instance is evaluated with, and how faithful that is."""

    instance_id: str
    key: EnvironmentKey
    lock: EnvironmentLock
    source: LockSource
    borrowed_from: str = ""  # the instance whose export a sibling-export lock is

    @property
    def note(self) -> str:
        if self.source == "export":
            return "the exact pins of this instance's official image"
        if self.source == "sibling-export":
            return (
                f"the pins of {self.borrowed_from}'s official image (same repository, version "
                "and environment_setup_commit; images of one recipe built on other days differ "
                "in a few versions): approximate"
            )
        return "SWE-bench's install spec, not an export: approximate"


# ------------------------------------------------------------------------- locks from exports


def read_exports(path: Path) -> dict[str, str]:
    """instance_id -> environment.yml text, from the JSONL(.gz) in ../shared."""
    opener = gzip.open if path.name.endswith(".gz") else open
    exports: dict[str, str] = {}
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row: Any = json.loads(line)
                except ValueError as error:
                    raise InputError(f"not JSON ({error})", path=path, line=number) from None
                for field in ("instance_id", "environment_yml"):
                    if not isinstance(row, dict) or not isinstance(row.get(field), str):
                        raise InputError(
                            "missing or not a string", path=path, line=number, field=field
                        )
                if row["instance_id"] in exports:
                    raise InputError("listed twice", path=path, line=number, field="instance_id")
                exports[row["instance_id"]] = row["environment_yml"]
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", path=path) from error
    return exports


@dataclass(frozen=True)
class CondaExport:
    """The pins of a `conda env export`, as written."""

    conda: tuple[tuple[str, str, str], ...]  # (name, version, build)
    pip: tuple[tuple[str, str], ...]


def parse_export(text: str, *, where: str = "<export>") -> CondaExport:
    """The pins of a `conda env export`; InputError names the export line that is not one."""
    conda: list[tuple[str, str, str]] = []
    pip: list[tuple[str, str]] = []
    section = ""
    in_pip = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if not line.startswith(" "):
            section = line.split(":", 1)[0]
            continue
        item = line.strip()
        if section not in ("channels", "dependencies") or not item.startswith("- "):
            raise _bad_export(number, f"unexpected {item!r}", where)
        entry = item[2:]
        if section == "channels":
            continue
        if line.startswith("      - ") and in_pip:
            name, sep, version = entry.partition("==")
            if not sep or not name or not version:
                raise _bad_export(number, f"pip entry {entry!r} is not name==version", where)
            pip.append((name, version))
        elif entry == "pip:":
            in_pip = True
        else:
            parts = entry.split("=")
            if len(parts) != 3 or not all(parts) or not line.startswith("  - "):
                raise _bad_export(number, f"conda entry {entry!r} is not name=version=build", where)
            conda.append((parts[0], parts[1], parts[2]))
    if not conda:
        raise InputError("no dependencies: not a conda export", path=where, field="environment_yml")
    return CondaExport(tuple(conda), tuple(pip))


def _bad_export(number: int, what: str, where: str) -> InputError:
    return InputError(f"export line {number}: {what}", path=where, field="environment_yml")


def lock_from_export(
    text: str, repo: str, repo_version: str = "", *, where: str = "<export>"
) -> EnvironmentLock:
    """The lock of one conda export: its Python pin, its pip section and the conda pins that
    are PyPI packages (specs.classify_conda); every other conda pin is listed as left out."""
    export = parse_export(text, where=where)
    pins: dict[str, Requirement] = {}
    for name, version in export.pip:
        pins[normalize_name(name)] = Requirement(name, version, "pip")
    python = ""
    left_out: list[LeftOut] = []
    for name, version, build in export.conda:
        decision = classify_conda(name, version, build)
        if decision.action == "interpreter":
            python = version
        elif decision.action == "leave-out":
            assert decision.kind is not None
            left_out.append(LeftOut(name, version, build, decision.kind, decision.reason))
        else:
            requirement = Requirement(
                decision.pypi_name, version, f"conda {name}={version}={build}"
            )
            known = pins.get(requirement.key)
            if known is not None and known.origin == "pip":
                # pip installed over conda's copy: the pip section is what the image holds
                left_out.append(
                    LeftOut(
                        name,
                        version,
                        build,
                        "overridden",
                        f"the pip section pins {known.name}=={known.version}",
                    )
                )
            elif known is not None and known.version != version:
                raise InputError(
                    f"{name} and another conda package both give {requirement.key} "
                    f"({known.version} and {version})",
                    path=where,
                    field="environment_yml",
                )
            elif known is None:
                pins[requirement.key] = requirement
            else:  # conda ships some packages under two names (importlib-resources and _)
                why = f"the same PyPI package as {known.origin.removeprefix('conda ')}"
                left_out.append(LeftOut(name, version, build, "duplicate", why))
    if not python:
        raise InputError("no python=VERSION pin", path=where, field="environment_yml")
    left_out += _stdlib_backports(pins, python)
    for text_pin in EXPORT_GAPS.get((repo, repo_version), ()):
        name, _, pinned = text_pin.partition("==")
        pins.setdefault(normalize_name(name), Requirement(name, pinned, INFERRED))
    origin = f"# export sha256: {hashlib.sha256(text.encode('utf-8')).hexdigest()}"
    backends = _build_tools(repo, repo_version, python, pins)
    return _make_lock(repo, "export", python, pins.values(), backends, (), left_out, origin)


def _stdlib_backports(pins: dict[str, Requirement], python: str) -> list[LeftOut]:
    """Take out the conda pins of backports whose module `python`'s standard library has."""
    have = tuple(int(part) for part in python.split(".")[:2])
    dropped = []
    for name, since in STDLIB_BACKPORTS.items():
        pin = pins.get(normalize_name(name))
        if pin is not None and pin.origin.startswith("conda ") and have >= since:
            del pins[pin.key]
            _, version, build = pin.origin.removeprefix("conda ").split("=")
            why = f"in the standard library since Python {since[0]}.{since[1]} (conda-forge: empty)"
            dropped.append(LeftOut(name, version, build, "stdlib", why))
    return dropped


def lock_from_spec(spec: RepoSpec) -> EnvironmentLock:
    """An approximate lock from SWE-bench's spec: what it pins exactly, and what it does not."""
    pins: dict[str, Requirement] = {}
    unpinned: list[Unpinned] = []
    packages = spec.packages.strip()
    if packages in ("requirements.txt", "environment.yml"):
        why = (
            "the repository's file at environment_setup_commit, resolved by conda/pip when the "
            "official image was built"
        )
        unpinned.append(Unpinned(packages, why))
    elif packages:
        _split_specs(shlex.split(packages), "conda package", pins, unpinned)
    _split_specs(list(spec.pip_packages), "pip package", pins, unpinned)
    for seed in ("pip", "setuptools", "wheel"):
        if seed not in pins:
            why = "`conda create` installed its default of the day (here: ensurepip's, if any)"
            unpinned.append(Unpinned(seed, why, seed))
    if spec.install:
        why = "its install step fetched them from PyPI"
        unpinned.append(Unpinned("the repository's own dependencies", why))
    origin = f"# spec: SWE-bench's install spec of {spec.repo} {spec.version}"
    backends = _build_tools(spec.repo, spec.version, spec.python, pins)
    return _make_lock(spec.repo, "spec", spec.python, pins.values(), backends, unpinned, (), origin)


def _split_specs(
    items: Iterable[str], what: str, pins: dict[str, Requirement], unpinned: list[Unpinned]
) -> None:
    for item in items:
        name, sep, version = item.partition("==")
        if sep and version and not any(c in version for c in "<>=!*,"):
            requirement = Requirement(name, version, "spec")
            pins[requirement.key] = requirement
        else:
            why = f"{what} without an exact version in SWE-bench's spec"
            unpinned.append(Unpinned(item, why, item))


def _make_lock(
    repo: str,
    kind: Literal["export", "spec"],
    python: str,
    pins: Iterable[Requirement],
    build: tuple[Requirement, ...],
    unpinned: Iterable[Unpinned],
    left_out: Iterable[LeftOut],
    origin: str,
) -> EnvironmentLock:
    runtime = tuple(sorted(pins, key=lambda pin: pin.key))
    dropped = tuple(sorted(left_out, key=lambda item: (item.kind, item.name)))
    lines = [
        f"# passbench SWE-bench environment lock, schema {LOCK_SCHEMA}",
        f"# repository: {repo}",
        f"# kind: {kind}"
        + (
            " (SWE-bench's install spec: approximate, never the official environment)"
            if kind == "spec"
            else " (the pins of an official image's conda export)"
        ),
        f"# python: {python}",
    ]
    lines.append(origin)
    lines += ["#", "# runtime: pip install --no-deps of exactly these"]
    lines += [f"{pin.name}=={pin.version}  # {pin.origin}" for pin in runtime]
    if build:
        lines += [
            "#",
            "# build: backends for installing the repository offline; on PYTHONPATH "
            "only then, not part of the official environment",
        ]
        lines += [f"#   {pin.name}=={pin.version}  # {pin.origin}" for pin in build]
    if unpinned:
        lines += ["#", "# UNPINNED (not reproducible; resolved by pip on the day if allowed):"]
        lines += [f"#   {item}" for item in unpinned]
    if dropped:
        lines += ["#", "# left out of the conda export:"]
        lines += [f"#   {i.name}={i.version}={i.build}  [{i.kind}] {i.reason}" for i in dropped]
    text = "\n".join(lines) + "\n"
    if runtime:  # every runtime line must be a valid exact pin
        parse_lock(text, path=f"lock of {repo}")
    return EnvironmentLock(
        repo,
        kind,
        python,
        runtime,
        build,
        tuple(unpinned),
        dropped,
        text,
        hashlib.sha256(text.encode()).hexdigest(),
    )


def _build_tools(
    repo: str, version: str, python: str, runtime: Mapping[str, Requirement]
) -> tuple[Requirement, ...]:
    """The build backends of the install step: those the environment lacks (BUILD_TOOLS), and
    those pip's isolation would have used instead of the environment's (ISOLATED_BACKENDS)."""
    minor = ".".join(python.split(".")[:2])
    isolated = [text.partition("==") for text in ISOLATED_BACKENDS.get((repo, version), ())]
    shadowed = {normalize_name(name) for name, _, _ in isolated}
    missing = [
        (name, pinned)
        for name, _, pinned in (
            text.partition("==") for text in BUILD_TOOLS.get(repo, {}).get(minor, ())
        )
        if normalize_name(name) not in runtime and normalize_name(name) not in shadowed
    ]
    return (
        *(Requirement(name, pinned, "build: not in the environment") for name, pinned in missing),
        *(
            Requirement(name, pinned, "build: as pip's isolation would")
            for name, _, pinned in isolated
        ),
    )


# --------------------------------------------------------------------- which lock an instance gets


class LockCatalog:
    """Chooses each instance's lock: its export, a sibling's export, else SWE-bench's spec.

    `exported` are the dataset rows the exports belong to (Verified), so that instances of
    other datasets (Lite) can find a sibling with the same environment recipe."""

    def __init__(self, exports: Mapping[str, str], exported: Iterable[InstanceLike]) -> None:
        self._exports = dict(exports)
        self._rows = {row.instance_id: row for row in exported if row.instance_id in exports}
        self._locks: dict[str, EnvironmentLock] = {}

    def lock_for_export(self, instance_id: str, repo: str, version: str) -> EnvironmentLock:
        if instance_id not in self._locks:
            where = f"environment.yml of {instance_id}"
            self._locks[instance_id] = lock_from_export(
                self._exports[instance_id], repo, version, where=where
            )
        return self._locks[instance_id]

    def choose(self, instance: InstanceLike) -> EnvironmentChoice | None:
        key = EnvironmentKey(instance.repo, instance.version)
        if instance.instance_id in self._exports:
            lock = self.lock_for_export(instance.instance_id, instance.repo, instance.version)
            return EnvironmentChoice(instance.instance_id, key, lock, "export")
        recipe = (instance.repo, instance.version, instance.environment_setup_commit)
        siblings = sorted(
            row.instance_id
            for row in self._rows.values()
            if (row.repo, row.version, row.environment_setup_commit) == recipe
        )
        if siblings:
            locks = {
                sibling: self.lock_for_export(sibling, instance.repo, instance.version)
                for sibling in siblings
            }
            # the lock most siblings have; on a tie, the first sibling's in id order
            counts = Counter(lock.sha256 for lock in locks.values())
            best = max(counts.values())
            chosen = next(s for s in siblings if counts[locks[s].sha256] == best)
            return EnvironmentChoice(
                instance.instance_id, key, locks[chosen], "sibling-export", chosen
            )
        spec = spec_for(instance.repo, instance.version)
        if spec is None:
            return None
        return EnvironmentChoice(instance.instance_id, key, lock_from_spec(spec), "spec")
