"""No module outside a benchmark's own module or subpackage names a registered benchmark: the
rest of passbench reaches every benchmark through the registry and its hooks, so a new one
needs no special case anywhere else (issue 21).

A "name" is a string constant equal to a registered name, to the last part of its module (the
`multiple` of `passbench.stages.benchmarks.multiple`), or to a registered name's family prefix
(`multipl-e-`); and any import of another benchmark's module. Docstrings and comments are prose
and are not read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from passbench.stages.benchmarks import _FACTORIES, benchmark_names

SRC = Path(__file__).resolve().parents[2] / "src" / "passbench"
BENCHMARKS = SRC / "stages" / "benchmarks"
PACKAGE = "passbench.stages.benchmarks."

_ENV = "an evaluation environment's name (stages/evalenv), which a benchmark's env_name gives"
_OFFICIAL = (
    "BigCodeBench's own public leaderboard / evaluation server protocol, which passbench mimics"
)
_SHARED = "benchmark modules sharing code or data among themselves (EvalPlus; MultiPL-E's sources)"
#: (path relative to src/passbench, the string) that may stay, with why. Shrink it.
ALLOWED: dict[tuple[str, str], str] = {
    ("stages/evalenv/specs.py", "bigcodebench"): _ENV,
    ("stages/evalenv/specs.py", "cweval"): _ENV,
    # the environment's lock files, named after it (the "bigcodebench-" of bigcodebench-plus)
    ("stages/evalenv/specs.py", "bigcodebench-py311.txt"): _ENV,
    ("stages/evalenv/specs.py", "bigcodebench-py310.txt"): _ENV,
    ("stages/sandbox/remote/images.py", "bigcodebench"): _ENV,
    # the official evaluator's reliability guard, named after the tool it reproduces
    ("stages/sandbox/inside/_guards.py", "bigcodebench"): "the official guard's name",
    ("stages/sandbox/inside/_runner.py", "bigcodebench"): "the official guard's name",
    # unittest.mock's patch.multiple, not MultiPL-E's module
    ("stages/evaluate/splitting.py", "multiple"): "mock.patch.multiple",
    ("apps/cli/env.py", "bigcodebench"): _ENV,
    ("apps/cli/image.py", "bigcodebench"): _ENV,
    ("apps/serve/programs.py", "bigcodebench"): _ENV,
    ("apps/serve/official.py", "bigcodebench"): _OFFICIAL,
    ("apps/leaderboard/store/official_leaderboard.py", "bigcodebench"): _OFFICIAL,
    # the key of PurpleLlama's detector configuration, not the benchmark
    ("analysis/security/_icd_regex.py", "cyberseceval"): "a key of the ICD's config.yaml",
    # `env check multipl-e` reports MultiPL-E's tool locations: not yet a hook (issue 21)
    ("apps/cli/env.py", "passbench.stages.benchmarks.multiple"): "not yet a hook",
    ("apps/cli/env.py", "passbench.stages.benchmarks.humanevalx"): "not yet a hook",
    # the click parameter of --with-multipl-e, not a benchmark
    ("apps/cli/image.py", "multiple"): "a parameter name",
    ("stages/benchmarks/mbpp.py", "passbench.stages.benchmarks.humaneval"): _SHARED,
    ("stages/benchmarks/multiple.py", "humaneval"): _SHARED,
    ("stages/benchmarks/multiple.py", "mbpp"): _SHARED,
    # HumanEval-X's own names and data folder, which begin with HumanEval's family prefix
    ("stages/benchmarks/humanevalx.py", "humaneval-x-"): "its own names",
    ("stages/benchmarks/humanevalx.py", "humaneval-x/"): "its own data folder",
}


def _owners() -> dict[str, Path]:
    """Each built-in benchmark's module name -> the file or folder that owns it."""
    owners = {}
    for target in _FACTORIES.values():
        module = target.partition(":")[0].removeprefix(PACKAGE).split(".")[0]
        folder = BENCHMARKS / module
        owners[module] = folder if folder.is_dir() else BENCHMARKS / f"{module}.py"
    return owners


def _forbidden() -> dict[str, str]:
    """Each forbidden string -> the module that owns it."""
    words: dict[str, str] = {}
    for name, target in _FACTORIES.items():
        module = target.partition(":")[0].removeprefix(PACKAGE).split(".")[0]
        words[name] = module
        words[module] = module
        if "-" in name:  # a family of names: multipl-e-js, multipl-e-cpp, ...
            words[name.rsplit("-", 1)[0] + "-"] = module
    return words


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _names_in(path: Path, words: dict[str, str]) -> Iterator[tuple[str, int, str]]:
    """(module that owns it, line, the string) for every benchmark named in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in prose:
                continue
            for word, owner in words.items():
                if node.value == word or (word.endswith("-") and node.value.startswith(word)):
                    yield owner, node.lineno, node.value
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE):
            module = node.module.removeprefix(PACKAGE).split(".")[0]
            if module in words.values():
                yield module, node.lineno, node.module
        elif isinstance(node, ast.ImportFrom) and node.module == PACKAGE.rstrip("."):
            for alias in node.names:
                if alias.name in words.values():
                    yield alias.name, node.lineno, f"{node.module}.{alias.name}"


def _owned_by(path: Path, owner: Path) -> bool:
    return path == owner or owner in path.parents


def leaks() -> list[str]:
    owners = _owners()
    words = _forbidden()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        relative = str(path.relative_to(SRC))
        for owner, line, text in _names_in(path, words):
            if _owned_by(path, owners[owner]) or path == BENCHMARKS / "__init__.py":
                continue  # its own module, or the registry that lists it
            if (relative, text) not in ALLOWED:
                found.append(f"{relative}:{line}: {text!r} names {owner}")
    return found


def test_no_module_outside_a_benchmark_names_it() -> None:
    assert leaks() == []


def test_the_scan_finds_a_name(tmp_path: Path) -> None:
    """The scan is not blind: a planted constant and import are found, prose is not."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""livecodebench in prose."""\n'
        "from passbench.stages.benchmarks.cweval import CWEval\n"
        'if run.benchmark == "livecodebench" or name.startswith("multipl-e-"):\n'
        "    pass\n",
        encoding="utf-8",
    )
    found = {(line, text) for _, line, text in _names_in(planted, _forbidden())}
    assert found == {
        (2, "passbench.stages.benchmarks.cweval"),
        (3, "livecodebench"),
        (3, "multipl-e-"),
    }


def test_every_registered_built_in_is_scanned() -> None:
    assert set(_FACTORIES) <= set(benchmark_names())
    assert set(_FACTORIES) <= set(_forbidden())
