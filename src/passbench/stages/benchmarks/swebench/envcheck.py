"""`passbench env check swebench-*`: per instance, whether it can be evaluated on this machine,
how faithfully, and why not.

Problems are data, one line each, blocking or not: no lock at all; a spec lock with unpinned
parts; no interpreter of the lock's Python version; conda-only packages left out (blocking when a
listed test names one); an install command that cannot be rewritten to run offline; Debian
packages a spec's pre_install asks for that are missing; tests known to need the internet.
`Support.official` means the exact pins of the instance's own official image.
"""

from __future__ import annotations

import ctypes.util
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from passbench.core.errors import InputError
from passbench.stages.benchmarks.swebench.environments import (
    Interpreter,
    choose_interpreter,
    repository_install_command,
)
from passbench.stages.benchmarks.swebench.locks import (
    EnvironmentLock,
    InstanceLike,
    LockCatalog,
    LockSource,
)
from passbench.stages.benchmarks.swebench.specs import (
    CONDA_ONLY_PYTHON,
    NETWORK_NOTES,
    NETWORK_STAND_INS,
    NETWORK_TESTS,
    SYSTEM_NEEDS,
    RepoSpec,
    SystemNeed,
    internet_tests,
    spec_for,
)

# ------------------------------------------------------------------------------------ env check

ProblemKind = Literal[
    "no-lock", "unpinned", "python", "conda-only", "install", "system", "network", "approximate"
]


@dataclass(frozen=True)
class Problem:
    kind: ProblemKind
    detail: str
    blocking: bool  # True: the instance cannot be evaluated here


@dataclass(frozen=True)
class Support:
    """Whether one instance can be evaluated on this machine, and how faithfully."""

    instance_id: str
    repo: str
    version: str
    lock_source: LockSource | None
    lock_sha256: str
    python_pin: str
    python_found: str  # the interpreter's version, "" when none
    problems: tuple[Problem, ...]

    @property
    def evaluable(self) -> bool:
        return not any(problem.blocking for problem in self.problems)

    @property
    def official(self) -> bool:
        """Evaluable in the exact pins of its official image, nothing a test needs missing."""
        return (
            self.evaluable
            and self.lock_source == "export"
            and not any(
                problem.kind in ("conda-only", "approximate", "unpinned")
                for problem in self.problems
            )
        )


def check_instances(
    instances: Iterable[InstanceLike],
    catalog: LockCatalog,
    *,
    allow_unpinned: bool = False,
    find_python: Callable[[str], Interpreter | None] = choose_interpreter,
    on_host: Callable[[SystemNeed], bool] | None = None,
    stand_ins_blocked: str | None = None,
) -> list[Support]:
    """`passbench env check swebench-*`: per instance, can it be evaluated here, and why not.

    `find_python` finds an interpreter for a lock's Python pin and `on_host` tells whether a
    Debian package a spec needs is on this machine (defaults: look on this machine);
    `stand_ins_blocked` says why the network stand-ins (specs.NETWORK_STAND_INS) cannot run
    here, None when they can."""
    present = on_host or system_need_met
    interpreters: dict[str, Interpreter | None] = {}
    supports: list[Support] = []
    for instance in instances:
        choice = catalog.choose(instance)
        problems: list[Problem] = []
        found = ""
        if choice is None:
            problems.append(
                Problem(
                    "no-lock",
                    "no export, no sibling export and no SWE-bench "
                    f"spec for {instance.repo} {instance.version}",
                    True,
                )
            )
        else:
            lock = choice.lock
            if choice.source != "export":
                problems.append(Problem("approximate", choice.note, False))
            if lock.inferred:
                names = ", ".join(pin.name for pin in lock.inferred)
                problems.append(
                    Problem("approximate", f"inferred pins the export lacks: {names}", False)
                )
            if lock.unpinned:
                detail = "; ".join(map(str, lock.unpinned))
                problems.append(Problem("unpinned", detail, not allow_unpinned))
            if lock.python not in interpreters:
                interpreters[lock.python] = find_python(lock.python)
            interpreter = interpreters[lock.python]
            if interpreter is None:
                problems.append(
                    Problem(
                        "python",
                        f"no Python {lock.python_minor} here: pyenv install {lock.python}",
                        True,
                    )
                )
            else:
                found = interpreter.version
            problems += _conda_only_problems(lock, instance)
        spec = spec_for(instance.repo, instance.version)
        if spec is not None:
            problems += _install_problems(spec, present)
        problems += _network_problems(instance, stand_ins_blocked)
        problems += _test_time_installs(instance)
        supports.append(
            Support(
                instance_id=instance.instance_id,
                repo=instance.repo,
                version=instance.version,
                lock_source=None if choice is None else choice.source,
                lock_sha256="" if choice is None else choice.lock.sha256,
                python_pin="" if choice is None else choice.lock.python,
                python_found=found,
                problems=tuple(problems),
            )
        )
    return supports


def _tests(instance: InstanceLike) -> list[str]:
    return [*instance.fail_to_pass, *instance.pass_to_pass]


def _conda_only_problems(lock: EnvironmentLock, instance: InstanceLike) -> list[Problem]:
    if not lock.conda_only:
        return []
    fragments = {fragment for name in lock.conda_only for fragment in CONDA_ONLY_PYTHON[name]}
    needing = [t for t in _tests(instance) if any(f in t.lower() for f in fragments)]
    left = ", ".join(lock.conda_only)
    if needing:
        return [
            Problem(
                "conda-only",
                f"{len(needing)} listed tests need conda-only packages ({left}), e.g. {needing[0]}",
                True,
            )
        ]
    return [
        Problem(
            "conda-only",
            f"conda-only packages left out ({left}); no listed test "
            "names them, tests that import them are skipped here",
            False,
        )
    ]


def _install_problems(spec: RepoSpec, present: Callable[[SystemNeed], bool]) -> list[Problem]:
    problems: list[Problem] = []
    try:
        repository_install_command(spec)
    except InputError as error:
        problems.append(Problem("install", error.bare_message, True))
    for command in spec.pre_install:
        words = command.replace("&&", " ").split()
        if "wget" in words or "curl" in words:
            problems.append(Problem("network", f"setup downloads at install time: {command}", True))
        if "apt-get" in words and "install" in words:
            packages = [w for w in words[words.index("install") + 1 :] if not w.startswith("-")]
            for name in packages:
                problem = _system_problem(name, present)
                if problem is not None:
                    problems.append(problem)
    return problems


def system_need_met(need: SystemNeed) -> bool:
    """Whether this machine has what a Debian package a spec installs provides."""
    if need.probe_kind == "program":
        return shutil.which(need.probe) is not None
    if need.probe_kind == "library":
        return ctypes.util.find_library(need.probe) is not None
    return Path(need.probe).exists()


def _system_problem(apt_package: str, present: Callable[[SystemNeed], bool]) -> Problem | None:
    need = SYSTEM_NEEDS.get(apt_package)
    if need is None:
        return Problem("system", f"needs Debian package {apt_package} (no check known)", True)
    if present(need):
        return None
    return Problem(
        "system",
        f"needs {apt_package} ({need.probe} not found): apt-get install {apt_package}",
        True,
    )


def _network_problems(instance: InstanceLike, stand_ins_blocked: str | None) -> list[Problem]:
    checked = internet_tests(instance.instance_id, instance.repo)
    if checked is None:
        note = NETWORK_NOTES.get(instance.repo)
        return [] if note is None else [Problem("network", f"{note} (not checked)", False)]
    known = NETWORK_TESTS.get(instance.instance_id, ())
    listed = set(_tests(instance))
    internet = set(checked)
    problems: list[Problem] = []
    needing = sorted(internet & listed)
    if needing:
        problems.append(
            Problem(
                "network",
                f"{len(needing)} listed tests need the internet (e.g. {needing[0]})",
                True,
            )
        )
    served = sorted((set(known) - internet) & listed)
    if served:
        what = _stand_in_names(instance.repo)
        if stand_ins_blocked is None:
            detail = f"{len(served)} listed tests run against {what} (e.g. {served[0]})"
            problems.append(Problem("network", detail, False))
        else:
            detail = (
                f"{len(served)} listed tests need {what}, which cannot run here: "
                f"{stand_ins_blocked} (e.g. {served[0]})"
            )
            problems.append(Problem("network", detail, True))
    return problems


def _stand_in_names(repo: str) -> str:
    stand_ins = NETWORK_STAND_INS.get(repo)
    names = []
    if stand_ins is not None and stand_ins.httpbin_variable:
        names.append(f"the loopback httpbin ({stand_ins.httpbin_variable})")
    if stand_ins is not None and stand_ins.tarpit:
        names.append("the tarpit")
    return " or ".join(names) or "the internet"


_HEREDOC = re.compile(r"<<\s*'?([A-Za-z0-9_]+)'?")


def _test_time_installs(instance: InstanceLike) -> list[Problem]:
    """pip installs the official eval script runs between the test patch and the tests: online
    there, impossible offline, so the tests run with the environment's versions instead
    (astropy__astropy-8707's `pip install -q 'pytest<7.2'`)."""
    before_tests = instance.eval_script.split(": '>>>>> Start Test Output'")[0].split("\n")
    delimiters = {match.group(1) for match in map(_HEREDOC.search, before_tests) if match}
    ends = [index for index, line in enumerate(before_tests) if line.strip() in delimiters]
    pre_test = before_tests[ends[-1] + 1 :] if ends else []
    return [
        Problem(
            "network", f"the eval script installs from the internet before the tests: {line}", True
        )
        for line in (line.strip() for line in pre_test)
        if re.search(r"\bpip3? install\b", line)
    ]


def support_table(supports: Iterable[Support]) -> list[tuple[str, int, int, int]]:
    """(repository, official, evaluable, total) per repository, by name."""
    counts: dict[str, tuple[int, int, int]] = {}
    for support in supports:
        official, evaluable, total = counts.get(support.repo, (0, 0, 0))
        counts[support.repo] = (
            official + support.official,
            evaluable + support.evaluable,
            total + 1,
        )
    return [(repo, *row) for repo, row in sorted(counts.items())]
