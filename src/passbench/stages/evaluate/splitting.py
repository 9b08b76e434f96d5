"""A long unittest program run as several programs, one test method each, on free workers.

A BigCodeBench task whose tests wait (BigCodeBench/461 polls a sleeping script for 156 s) holds
one worker for its whole run while the others may sit idle at the end of an evaluation. When
its test class is one whose methods are independent (`splittable_methods`: the rule is in
docs/performance.md), each test method becomes a program of its own: the same source, with a
line after it that removes the class's other test methods before unittest loads them, so each
part runs its method with the same setUp/tearDown (and setUpClass) in its own sandboxed process
under the same limits. `combine` then gives the verdict one run would have given: a pass only
when every part passes (the official rule), the failing tests' details in the order unittest
reports them, a timeout when any part timed out.

Only the ground truth is split (canonical solutions, whose code is known): a candidate's code
can carry state from one test to the next (a mutable default argument, a module-level cache),
and no static rule can rule that out for code nobody has read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from passbench.core.journal import program_sha
from passbench.core.records import ErrorCategory, ExecResult, Isolation, Program
from passbench.stages.sandbox.base import cpu_share, expected_to_wait

#: a program is split when its expected duration is at least this long (seconds): below it a
#: run's ordinary spread of programs over the workers already hides it
SPLIT_FROM_S = 8.0
# ...and when it is known to wait (`expected_to_wait`: under half a core on average, by the
# CPU time of an earlier run). A program that computes gains nothing from running its tests
# side by side on cores that are already busy, and every part pays the module's imports again
# (tensorflow: seconds of CPU each); one that waits (BigCodeBench/461 polls a sleeping script,
# under a tenth of a core) overlaps its parts' waits with other work.

#: methods that change the container they are called on
_MUTATORS = frozenset(
    {
        "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
        "popitem", "add", "discard", "sort", "reverse", "__setitem__", "__delitem__",
    }
)  # fmt: skip
#: calls that change state every later test in the process sees (random seeds, the working
#: directory, the environment, library-wide options, warning filters, logging, locale)
_PROCESS_STATE_CALLS = frozenset(
    {
        "seed", "set_seed", "manual_seed", "setstate", "chdir", "putenv", "unsetenv",
        "setdefaulttimeout", "basicConfig", "setlocale", "filterwarnings", "simplefilter",
        "resetwarnings", "set_option", "reset_option", "set_printoptions", "seterr",
        "setrecursionlimit", "tzset", "rc", "rcdefaults", "setattr", "delattr",
        "set_random_seed", "set_global_policy", "clear_session", "install_opener",
        "setdefaultencoding", "set_start_method", "umask",
    }
)  # fmt: skip
#: pyplot calls that make their own figure (the rest draw on the process's current figure,
#: which one test can leave behind for the next)
_FRESH_FIGURE_CALLS = frozenset({"subplots", "figure", "close", "Figure", "Axes"})
_PLOTTING_MODULES = ("matplotlib.pyplot", "seaborn", "pylab")
_MUTABLE_DEFAULTS = (
    ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.Call
)  # fmt: skip
_CACHES = frozenset({"lru_cache", "cache", "cached_property", "memoize"})
#: what a test class may hold besides methods: a docstring and constants
_CONSTANT_NODES = (ast.Constant, ast.Tuple, ast.UnaryOp, ast.BinOp)


def splittable_methods(source: str, test_class: str) -> tuple[str, ...] | None:
    """The test methods of `test_class` in the order unittest runs them (by name), when running
    each in a process of its own gives the verdict one run gives; None when not (or when it
    cannot be told from the source).

    The class must be defined once at the top of the module, straight from
    `unittest.TestCase`, hold only methods (two tests at least, no subtests) and constants,
    and no function in the module (the solution's or the tests') may keep state between
    tests: no `global`/`nonlocal`, no write to the class or to a module-level name (or a
    container behind one), no change to process-wide state (seeds, working directory,
    environment, library options, pyplot's current figure)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == test_class]
    if len(found) != 1 or _rebinds(tree, test_class):
        return None
    case = found[0]
    if case.decorator_list or case.keywords or not _plain_test_case(case.bases):
        return None
    names: list[str] = []
    for statement in case.body:
        if isinstance(statement, ast.FunctionDef):
            if statement.name.startswith("test"):
                names.append(statement.name)
        elif not _constant_statement(statement):
            return None
    methods = tuple(sorted(set(names)))
    if len(methods) < 2 or _keeps_state(tree, test_class):
        return None
    return methods


def _plain_test_case(bases: list[ast.expr]) -> bool:
    if len(bases) != 1:
        return False
    base = bases[0]
    if isinstance(base, ast.Attribute):
        return base.attr == "TestCase" and _dotted(base.value) == "unittest"
    return isinstance(base, ast.Name) and base.id == "TestCase"


def _constant_statement(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant)  # a docstring
    if isinstance(statement, ast.Assign | ast.AnnAssign):
        return statement.value is not None and isinstance(statement.value, _CONSTANT_NODES)
    return isinstance(statement, ast.Pass)


def _rebinds(tree: ast.Module, name: str) -> bool:
    """Whether the module binds `name` anywhere but its class statement."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name) == name:
            return True
    return False


def _module_names(tree: ast.Module) -> tuple[set[str], set[str], set[str]]:
    """Names bound at the top of the module: by assignment, by import, and pyplot's aliases."""
    assigned: set[str] = set()
    imported: set[str] = set()
    plotting: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                bound = alias.asname or alias.name.split(".")[0]
                imported.add(bound)
                full = alias.name
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    full = f"{statement.module}.{alias.name}"
                if full in _PLOTTING_MODULES:
                    plotting.add(bound)
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                assigned.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return assigned, imported, plotting


def _keeps_state(tree: ast.Module, test_class: str) -> bool:
    assigned, imported, plotting = _module_names(tree)
    shared = assigned | imported | {test_class, "cls"}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if _remembers(function):
            return True
        # setUpClass sets up the class once per process: once per part, as once per run
        reach = shared - {"cls"} if getattr(function, "name", "") == "setUpClass" else shared
        for node in ast.walk(function):
            if isinstance(node, ast.Global | ast.Nonlocal):
                return True
            if _writes_shared(node, reach) or _changes_process(node, reach, plotting):
                return True
    return False


def _remembers(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool:
    """A function that keeps values between calls: a mutable default argument, a cache, or a
    class teardown (it would run once per part, after other tests than in one run)."""
    defaults = [*function.args.defaults, *(d for d in function.args.kw_defaults if d)]
    if any(isinstance(d, _MUTABLE_DEFAULTS) for d in defaults):
        return True
    if isinstance(function, ast.Lambda):
        return False
    if function.name in ("tearDownClass", "setUpModule", "tearDownModule"):
        return True
    return any(_dotted(_called(d)).split(".")[-1] in _CACHES for d in function.decorator_list)


def _called(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


def _writes_shared(node: ast.AST, shared: set[str]) -> bool:
    """A store into an attribute or item of something every test shares."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = list(node.targets)
    for target in targets:
        for element in ast.walk(target):
            if isinstance(element, ast.Attribute | ast.Subscript) and _shared_root(
                element.value, shared
            ):
                return True
    return False


def _changes_process(node: ast.AST, shared: set[str], plotting: set[str]) -> bool:
    """A call that changes what later tests see: a mutator on something shared, a seed or
    other process-wide setting, a patcher started by hand, pyplot drawing on the current
    figure, `subTest` (its failures' kinds are not kept apart per part)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in _PROCESS_STATE_CALLS or name == "subTest":
        return True
    if not isinstance(func, ast.Attribute):
        return False
    if name in _MUTATORS and _shared_root(func.value, shared):
        return True
    if name == "start" and isinstance(func.value, ast.Call):
        inner = func.value.func
        patcher = inner.attr if isinstance(inner, ast.Attribute) else getattr(inner, "id", "")
        if patcher.startswith("patch") or patcher in ("object", "dict", "multiple"):
            return True
    root = _root(func.value)
    return root in plotting and name not in _FRESH_FIGURE_CALLS


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _shared_root(node: ast.expr, shared: set[str]) -> bool:
    """Whether `node` reaches state beyond one test: a module-level name, an imported module,
    the class (by name, `cls`, `type(self)` or `self.__class__`)."""
    if isinstance(node, ast.Attribute) and node.attr == "__class__":
        return True
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "type":
        return True
    root = _root(node)
    return root is not None and root in shared


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


# ---- parts and their verdicts -------------------------------------------------------------


_KEEP_ONLY = """

# passbench: this program runs one part of {cls}'s tests (docs/performance.md)
for _passbench_other in {others!r}:
    delattr({cls}, _passbench_other)
del _passbench_other
"""


def part_program(program: Program, methods: Sequence[str], method: str) -> Program:
    """`program` running only `method` of its test class (appended below the source, so every
    line keeps its number in tracebacks)."""
    others = tuple(m for m in methods if m != method)
    source = program.source + _KEEP_ONLY.format(cls=program.test_class, others=others)
    return replace(program, key=f"{program.key}::{method}", source=source)


@dataclass(frozen=True)
class _Split:
    program: Program
    parts: tuple[Program, ...]  # one per test method, in the order unittest runs them


class SplitRun:
    """Which programs of one run are split, and their verdicts put back together.

    `known` answers the stored verdicts among program hashes: a part's expected duration and
    share of a core are its own from an earlier run, else its whole program's (the duration
    shared equally among the parts)."""

    def __init__(
        self,
        known: Callable[[Iterable[str]], Mapping[str, ExecResult]],
        *,
        split_from_s: float | None = None,
    ) -> None:
        self._known = known
        self._split_from_s = SPLIT_FROM_S if split_from_s is None else split_from_s
        self._splits: dict[str, _Split] = {}  # whole program key -> its split
        self._whole_of: dict[str, str] = {}  # part key -> whole program key
        self._arrived: dict[str, dict[str, ExecResult]] = {}  # whole key -> part key -> result
        self.parts_done: dict[str, ExecResult] = {}  # part program hash -> its verdict

    def expand(self, programs: Sequence[Program]) -> list[Program]:
        """`programs` with each long, waiting, splittable one replaced by its parts."""
        planned: dict[str, tuple[Program, tuple[str, ...]]] = {}
        for program in programs:
            if not self._worth_splitting(program):
                continue
            methods = splittable_methods(program.source, program.test_class)
            if methods is not None:
                planned[program.key] = (program, methods)
        drafts = {
            key: tuple(part_program(program, methods, m) for m in methods)
            for key, (program, methods) in planned.items()
        }
        known = self._known(program_sha(p.source) for parts in drafts.values() for p in parts)
        expanded: list[Program] = []
        for program in programs:
            parts = drafts.get(program.key)
            if parts is None:
                expanded.append(program)
                continue
            timed = tuple(
                _timed(part, known.get(program_sha(part.source)), program, len(parts))
                for part in parts
            )
            self._splits[program.key] = _Split(program, timed)
            self._arrived[program.key] = {}
            for part in timed:
                self._whole_of[part.key] = program.key
            expanded.extend(timed)
        return expanded

    def _worth_splitting(self, program: Program) -> bool:
        expected = program.expected_duration_s
        long = expected is not None and expected >= self._split_from_s
        return program.style == "unittest" and long and expected_to_wait(program)

    @property
    def split_keys(self) -> list[str]:
        return list(self._splits)

    def collect(self, result: ExecResult) -> ExecResult | None:
        """A result as it arrives: itself when it is no part; when it is the last part of its
        program, that program's combined verdict; else None (more parts to come)."""
        whole = self._whole_of.get(result.key)
        if whole is None:
            return result
        split = self._splits[whole]
        part = next(p for p in split.parts if p.key == result.key)
        self.parts_done[program_sha(part.source)] = result
        arrived = self._arrived[whole]
        arrived[result.key] = result
        if len(arrived) < len(split.parts):
            return None
        return combine(split.program, [arrived[p.key] for p in split.parts])


def _timed(part: Program, hit: ExecResult | None, whole: Program, count: int) -> Program:
    """A part with its expected duration and share of a core: its own from an earlier passing
    run, else an equal share of its whole program's duration and the whole's share of a core."""
    passed = hit if hit is not None and hit.status == "pass" else None
    duration = passed.duration_s if passed else (whole.expected_duration_s or 0.0) / count
    share = cpu_share(passed) if passed else None
    if share is None:  # not run before, or before CPU times were recorded
        share = whole.expected_cpu_share
    return replace(part, expected_duration_s=duration, expected_cpu_share=share)


#: a test's category as unittest's result lists it: failures (the test's assertion) come
#: before errors (anything else it raised) in the details one run reports
_FAILURE = (ErrorCategory.ASSERTION_FAILED,)
#: the order in which one run's category is decided from its tests' problems
#: (sandbox/verdict.py `_test_category`)
_CATEGORY_ORDER = (
    ErrorCategory.TIMEOUT,
    ErrorCategory.OUT_OF_MEMORY,
    ErrorCategory.IMPORT_ERROR,
    ErrorCategory.ASSERTION_FAILED,
    ErrorCategory.EXCEPTION,
)


def combine(program: Program, parts: Sequence[ExecResult]) -> ExecResult:
    """The verdict one run of `program` would give, from its parts' (one test method each, in
    the order unittest runs them).

    - a part that timed out or died: the run would have too (the first such part's verdict);
    - a part that failed outside its test (loading, tampering, killed): the first such part's;
    - the tests' own failures: every part's details, failures before errors as unittest lists
      them, and the reason and category one run derives from them;
    - all passed: a pass. Durations add up; the run had one time limit for all its tests, so
      parts that together outlast it make a timeout, as one run would have been."""
    base = _whole(program, parts)
    for part in parts:
        if part.status == "timeout":
            return _as_whole(part, base)
    # parts that ran into their own alarm did so in one run too; the others' time adds up
    # towards the one limit a single run has
    unalarmed = sum(p.duration_s for p in parts if p.category is not ErrorCategory.TIMEOUT)
    if unalarmed > program.timeout_s:
        return replace(
            base,
            status="timeout",
            category=ErrorCategory.TIMEOUT,
            details={},
            reason=f"timed out after {program.timeout_s:g}s; killed with every process it started",
        )
    for part in parts:
        if part.status != "pass" and part.category not in _CATEGORY_ORDER:
            return _as_whole(part, base)
        if part.status != "pass" and "ALL" in part.details:
            return _as_whole(part, base)
    failed = [part for part in parts if part.status != "pass"]
    if not failed:
        return base
    failures: dict[str, str] = {}
    errors: dict[str, str] = {}
    for part in failed:
        into = failures if part.category in _FAILURE else errors
        for name, trace in part.details.items():
            if name not in failures and name not in errors:
                into[name] = trace
    details = {**failures, **errors}
    category = next(c for c in _CATEGORY_ORDER if any(p.category is c for p in failed))
    return replace(
        base,
        status="fail",
        category=category,
        details=details,
        reason=_reason(details, failed),
    )


def _as_whole(part: ExecResult, base: ExecResult) -> ExecResult:
    """A part's verdict as its whole program's, with what the parts add up to."""
    return replace(
        part,
        key=base.key,
        duration_s=base.duration_s,
        wall_s=base.wall_s,
        cpu_s=base.cpu_s,
        cpu_wait_s=base.cpu_wait_s,
    )


def _whole(program: Program, parts: Sequence[ExecResult]) -> ExecResult:
    """A passing verdict for `program` with what its parts add up to."""
    isolation = (
        Isolation.RLIMIT
        if any(p.isolation is Isolation.RLIMIT for p in parts)
        else Isolation.BUBBLEWRAP
    )
    tail = "".join(part.stdout_tail for part in parts)
    cpu = [part.cpu_s for part in parts]
    waits = [part.cpu_wait_s for part in parts if part.cpu_wait_s is not None]
    return ExecResult(
        key=program.key,
        task_id=program.task_id,
        status="pass",
        category=None,
        details={},
        duration_s=sum(part.duration_s for part in parts),
        wall_s=max(part.wall_s for part in parts),
        isolation=isolation,
        reason="",
        tests_run=sum(part.tests_run for part in parts),
        stdout_tail=tail[-4096:],
        network=any(part.network for part in parts),
        # every part's process, its imports included: what the split program cost
        cpu_s=None if None in cpu else sum(c for c in cpu if c is not None),
        cpu_wait_s=sum(waits) if waits else None,
    )


def _reason(details: Mapping[str, str], failed: Sequence[ExecResult]) -> str:
    """One run's reason: the first reported test and its message, and how many more failed
    (sandbox/verdict.py `_test_reason`); the message is the part's own, which read the same
    traceback."""
    name = next(iter(details))
    owner = next(part for part in failed if name in part.details)
    message = owner.reason.removeprefix(f"{name}: ")
    if len(owner.details) > 1:
        message = message.rsplit(" (+", 1)[0]
    more = f" (+{len(details) - 1} more)" if len(details) > 1 else ""
    return f"{name}: {message}{more}"
