"""The SWE-bench benchmarks' test environments as passbench uses them: `passbench env check` and
`env create swebench-*` (the `task_environments` hook) and, for `evaluate`, the environment an
instance runs in.

    dataset rows ──► LockCatalog (locks.py) ──► check_instances (envcheck.py) ──► the report
                                      └──► build_environment / open_environment (environments.py)

Environments live in one folder, `--path` of `env create`/`env check`, else
$PASSBENCH_SWEBENCH_ENV_DIR, else `<user data dir>/envs/swebench`; `evaluate` looks there. An
instance whose lock has a built environment runs in it, labelled "official" only when the lock
is the exact export of its own official image and nothing its tests need is missing
(`Support.official`), "approximate" otherwise; an instance without one runs under the
evaluation interpreter as before, and says so.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from passbench.core.errors import EnvironmentError_, InputError
from passbench.core.progress import NullProgress, Progress
from passbench.core.records import Task
from passbench.stages.benchmarks.swebench.envcheck import Support, check_instances
from passbench.stages.benchmarks.swebench.environments import (
    BuiltEnvironment,
    Interpreter,
    build_environment,
    choose_interpreter,
    open_environment,
    repository_install_command,
)
from passbench.stages.benchmarks.swebench.instances import Instance, read_instances
from passbench.stages.benchmarks.swebench.locks import (
    EnvironmentChoice,
    EnvironmentLock,
    LockCatalog,
    read_exports,
)
from passbench.stages.benchmarks.swebench.services import (
    HTTPBIN_TOOL,
    build_httpbin,
    can_stand_in,
    httpbin_lock,
    stand_ins_for,
)
from passbench.stages.benchmarks.swebench.specs import spec_for
from passbench.stages.evalenv.check import CheckItem, EnvReport
from passbench.stages.evalenv.location import envs_root

ENV_DIR_VARIABLE = "PASSBENCH_SWEBENCH_ENV_DIR"
EXPORTS_FILE = "swebench/swebench-verified-environments.jsonl.gz"
VERIFIED_FILE = "swebench/swebench-verified.jsonl.gz"
#: What a verdict says when the instance ran without an environment of its own.
NO_ENVIRONMENT = "evaluation interpreter (not the official environment)"
#: Problems that keep an environment from being built (the others concern the tests).
_BUILD_BLOCKERS = ("no-lock", "unpinned", "python")

#: official: the exact pins of the instance's own image and nothing its tests need missing;
#: approximate: other pins (a sibling's export, SWE-bench's spec, inferred pins), evaluable;
#: incomplete: something its tests need is not here (the internet, a conda-only package, a
#: system package): the verdict may differ from the official one whatever the pins
Fidelity = Literal["official", "approximate", "incomplete"]


def environments_folder(folder: Path | None = None) -> Path:
    """Where the environments are: `folder`, else $PASSBENCH_SWEBENCH_ENV_DIR, else the user
    data dir's envs/swebench."""
    if folder is not None:
        return Path(folder).expanduser().absolute()
    override = os.environ.get(ENV_DIR_VARIABLE, "").strip()
    if override:
        return Path(override).expanduser().absolute()
    return (envs_root() / "swebench").absolute()


@dataclass(frozen=True)
class InstanceEnvironment:
    """The built environment one instance runs in, and how faithful it is."""

    built: BuiltEnvironment
    choice: EnvironmentChoice
    support: Support
    install: str | None  # the spec's install, rewritten to run offline (None: installs nothing)

    @property
    def fidelity(self) -> Fidelity:
        return fidelity(self.support)

    def record(self) -> dict[str, Any]:
        """What every verdict records about it."""
        return {
            "fidelity": self.fidelity,
            **self.built.identity(self.choice),
            "problems": [problem.detail for problem in self.support.problems],
        }


def _instance(task: Task) -> Instance:
    instance = task.metadata["instance"]
    assert isinstance(instance, Instance)
    return instance


@functools.cache
def _interpreter(python: str) -> Interpreter | None:
    return choose_interpreter(python)


class SWEBenchEnvironments:
    """The `task_environments` hook of the SWE-bench benchmarks."""

    def __init__(self, name: str, data_dir_of: Callable[[Task], Path | None]) -> None:
        self.name = name
        self._data_dir_of = data_dir_of  # the data folder a task was loaded from
        self._catalogs: dict[Path | None, LockCatalog] = {}
        self._supports: dict[tuple[Path | None, str], Support] = {}

    # -- locks and what can run

    def catalog(self, data_dir: Path | None) -> LockCatalog:
        """The Verified exports and rows of the data folder; without them, specs only."""
        if data_dir not in self._catalogs:
            exports: dict[str, str] = {}
            rows: list[Instance] = []
            if data_dir is not None and (data_dir / EXPORTS_FILE).is_file():
                exports = read_exports(data_dir / EXPORTS_FILE)
                if (data_dir / VERIFIED_FILE).is_file():
                    rows = read_instances(data_dir / VERIFIED_FILE)
            self._catalogs[data_dir] = LockCatalog(exports, rows)
        return self._catalogs[data_dir]

    def supports(self, tasks: Sequence[Task]) -> list[Support]:
        keys = [(self._data_dir_of(task), _instance(task).instance_id) for task in tasks]
        for task, key in zip(tasks, keys, strict=True):
            if key not in self._supports:
                catalog = self.catalog(key[0])
                (found,) = check_instances(
                    [_instance(task)],
                    catalog,
                    find_python=_interpreter,
                    stand_ins_blocked=can_stand_in(),
                )
                self._supports[key] = found
        return [self._supports[key] for key in keys]

    def choose(self, task: Task) -> EnvironmentChoice | None:
        return self.catalog(self._data_dir_of(task)).choose(_instance(task))

    def for_task(self, task: Task, folder: Path | None = None) -> InstanceEnvironment | None:
        """The built environment of the task's lock, integrity-checked, or None (not built,
        no lock, or an install that cannot run offline)."""
        instance = _instance(task)
        choice = self.choose(task)
        if choice is None:
            return None
        built = open_environment(choice.lock, environments_folder(folder))
        if built is None:
            return None
        spec = spec_for(instance.repo, instance.version)
        try:
            install = repository_install_command(spec) if spec is not None else None
        except InputError:
            return None
        (support,) = self.supports([task])
        return InstanceEnvironment(built, choice, support, install)

    # -- the hook

    def check(self, tasks: Sequence[Task], folder: Path | None) -> EnvReport:
        root = environments_folder(folder)
        items: list[CheckItem] = []
        per_repo: dict[str, list[tuple[Support, bool]]] = {}
        for task, support in zip(tasks, self.supports(tasks), strict=True):
            built, where = self._built(task, support, root)
            per_repo.setdefault(support.repo, []).append((support, built))
            items.append(CheckItem("task", task.task_id, support.evaluable, where))
        summary = [
            CheckItem("repository", repo, all(s.evaluable for s, _ in rows), _repo_line(rows))
            for repo, rows in sorted(per_repo.items())
        ]
        if _wants_httpbin(tasks):
            summary.append(self._httpbin_line(root, full=False))
        return EnvReport(self.name, root, (*summary, *items))

    def _httpbin_line(self, root: Path, *, full: bool) -> CheckItem:
        """Whether the loopback httpbin's tool environment is built (and intact)."""
        name = f"{HTTPBIN_TOOL} {httpbin_lock().sha256[:12]}"
        try:
            found = open_environment(httpbin_lock(), root, full=full)
        except EnvironmentError_ as error:
            return CheckItem("environment", name, False, str(error))
        if found is None:
            build = f"passbench env create {self.name} --subset requests"
            return CheckItem("environment", name, False, f"not built: {build}")
        blocked = can_stand_in()
        where = f"built (Python {found.python_version}), at {found.root}"
        return CheckItem(
            "environment", name, True, where if blocked is None else f"{where}; {blocked}"
        )

    def _built(self, task: Task, support: Support, root: Path) -> tuple[bool, str]:
        """Whether its environment is built, and the line `env check` prints for it."""
        choice = self.choose(task)
        head = _fidelity_line(support, choice)
        built = False
        if choice is not None and _buildable(support):
            try:
                found = open_environment(choice.lock, root)
            except EnvironmentError_ as error:
                state = f"changed after it was built ({error})"
            else:
                built = found is not None
                state = (
                    f"built (Python {found.python_version})"
                    if found is not None
                    else f"not built: passbench env create {self.name} --tasks {task.task_id}"
                )
            head += f"; {state}"
        problems = [
            ("cannot: " if problem.blocking else "") + problem.detail
            for problem in support.problems
            if problem.kind != "approximate"
        ]
        return built, "; ".join([head, *problems])

    def create(
        self,
        tasks: Sequence[Task],
        folder: Path | None,
        *,
        force: bool = False,
        pip_args: Sequence[str] = (),
        progress: Progress | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> EnvReport:
        root = environments_folder(folder)
        progress = progress or NullProgress()
        groups, items = self._by_lock(tasks)
        if groups:
            progress.start(len(groups), f"{self.name} environments")
            for lock, members in groups:
                items.append(self._build_one(lock, members, root, force, pip_args, on_output))
                progress.advance(info=f"{lock.repo} {lock.sha256[:12]}")
            progress.finish()
        if _wants_httpbin(tasks):
            items.append(self._build_httpbin(root, force, pip_args, on_output))
        return EnvReport(self.name, root, tuple(items))

    def _build_httpbin(
        self,
        root: Path,
        force: bool,
        pip_args: Sequence[str],
        on_output: Callable[[str], None] | None,
    ) -> CheckItem:
        name = f"{HTTPBIN_TOOL} {httpbin_lock().sha256[:12]}"
        try:
            built = build_httpbin(root, force=force, pip_args=pip_args, on_output=on_output)
        except (EnvironmentError_, InputError) as error:
            text = error.bare_message if isinstance(error, InputError) else str(error)
            return CheckItem("environment", name, False, f"failed: {text.strip()[:300]}")
        state = "cached" if built.status == "cached" else f"built in {built.seconds:.0f} s"
        return CheckItem(
            "environment", name, True, f"{state}: Python {built.python_version} (tool)"
        )

    def verify(self, tasks: Sequence[Task], folder: Path | None) -> EnvReport:
        root = environments_folder(folder)
        groups, items = self._by_lock(tasks)
        for lock, members in groups:
            name = f"{lock.repo} {lock.sha256[:12]}"
            try:
                found = open_environment(lock, root, full=True)
            except EnvironmentError_ as error:
                items.append(CheckItem("environment", name, False, str(error)))
                continue
            if found is None:
                build = f"passbench env create {self.name} --tasks {','.join(members)}"
                items.append(CheckItem("environment", name, False, f"not built: {build}"))
                continue
            items.append(
                CheckItem(
                    "environment",
                    name,
                    True,
                    f"intact (every file's sha256): Python {found.python_version}, at "
                    f"{found.root}, for {_members(members)}",
                )
            )
        if _wants_httpbin(tasks):
            items.append(self._httpbin_line(root, full=True))
        return EnvReport(self.name, root, tuple(items))

    def describe(self, tasks: Sequence[Task], folder: Path | None) -> list[dict[str, Any]]:
        root = environments_folder(folder)
        described = []
        for lock, members in self._by_lock(tasks)[0]:
            found = open_environment(lock, root)
            record: dict[str, Any] = {"repo": lock.repo, "lock_sha256": lock.sha256}
            record["lock_kind"] = lock.kind
            record["tasks"] = list(members)
            if found is None:
                described.append({**record, "built": False})
                continue
            described.append(
                {
                    **record,
                    "built": True,
                    "root": str(found.root),
                    "python": str(found.python),
                    "python_pin": found.python_pin,
                    "python_version": found.python_version,
                    "interpreter": found.interpreter,
                    "pip_check_warnings": list(found.warnings),
                    "resolved_unpinned": list(found.resolved),
                }
            )
        return described

    def _by_lock(
        self, tasks: Sequence[Task]
    ) -> tuple[list[tuple[EnvironmentLock, list[str]]], list[CheckItem]]:
        """The locks `tasks` need, each with its tasks; and a line for each task that has
        no environment to build, with why."""
        groups: dict[str, tuple[EnvironmentLock, list[str]]] = {}
        unbuildable: list[CheckItem] = []
        for task, support in zip(tasks, self.supports(tasks), strict=True):
            choice = self.choose(task)
            if choice is None or not _buildable(support):
                why = next(p.detail for p in support.problems if p.kind in _BUILD_BLOCKERS)
                unbuildable.append(CheckItem("task", task.task_id, False, f"not built: {why}"))
                continue
            groups.setdefault(choice.lock.sha256, (choice.lock, []))[1].append(task.task_id)
        return list(groups.values()), unbuildable

    def _build_one(
        self,
        lock: EnvironmentLock,
        members: Sequence[str],
        root: Path,
        force: bool,
        pip_args: Sequence[str],
        on_output: Callable[[str], None] | None,
    ) -> CheckItem:
        name = f"{lock.repo} {lock.sha256[:12]}"
        who = _members(members)
        try:
            built = build_environment(
                lock, root, force=force, pip_args=pip_args, on_output=on_output
            )
        except (EnvironmentError_, InputError) as error:
            text = error.bare_message if isinstance(error, InputError) else str(error)
            lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
            # a failed pip's last line says what failed: keep it beside the first
            said = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"
            return CheckItem("environment", name, False, f"failed for {who}: {said}")
        state = "cached" if built.status == "cached" else f"built in {built.seconds:.0f} s"
        return CheckItem(
            "environment",
            name,
            True,
            f"{state}: Python {built.python_version} ({lock.kind} lock), for {who}",
        )


def _wants_httpbin(tasks: Sequence[Task]) -> bool:
    for task in tasks:
        wanted = stand_ins_for(_instance(task).repo)
        if wanted is not None and wanted.httpbin_variable:
            return True
    return False


def fidelity(support: Support) -> Fidelity:
    if support.official:
        return "official"
    return "approximate" if support.evaluable else "incomplete"


def _buildable(support: Support) -> bool:
    return not any(p.blocking and p.kind in _BUILD_BLOCKERS for p in support.problems)


def _fidelity_line(support: Support, choice: EnvironmentChoice | None) -> str:
    if choice is None:
        return "no lock"
    kind = fidelity(support)
    python = support.python_found or "missing"
    return (
        f"{kind}: {choice.note}; Python {support.python_pin} (here: {python}); "
        f"lock {support.lock_sha256[:12]}"
    )


def _repo_line(rows: Iterable[tuple[Support, bool]]) -> str:
    listed = list(rows)
    official = sum(support.official for support, _ in listed)
    evaluable = sum(support.evaluable for support, _ in listed)
    built = sum(done for _, done in listed)
    return (
        f"{evaluable}/{len(listed)} can be evaluated here ({official} official, "
        f"{evaluable - official} approximate); {built} with their environment built"
    )


def _members(members: Sequence[str]) -> str:
    if len(members) <= 3:
        return ", ".join(members)
    return f"{members[0]}, {members[1]} and {len(members) - 2} more"
