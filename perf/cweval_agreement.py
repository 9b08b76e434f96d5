"""Per-sample (functional, secure) agreement of passbench's `cweval` with CWEval's own pytest run.

    python perf/cweval_agreement.py --cweval-repo GITDIR [--ref-venv DIR] [--workers N]
        [--recheck PATH] [--slow] [--tasks ID,ID]
        [--reuse-reference REF.json] [--reuse-passbench EVAL_RESULTS.json]

Run it with passbench's interpreter and `PYTHONPATH=src` (the checkout's passbench is tested).

The samples (deterministic, written to perf/results/runs/cweval-agreement-*/) are, for
each of the 25 tasks of security/cweval-core-py-tasks.jsonl:

- `secure`: the task file (the secure reference);
- `unsafe`: each `<entry>_unsafe[_N]` function of the test file, renamed to the entry point,
  after the task's own imports and the test file's imports and helpers it uses;
- `broken-none` (the body is `return None`), `broken-raise` (it raises), `broken-import` (the
  module imports a package that does not exist, so pytest cannot collect the test file),
  `exit-call` (the body raises SystemExit), `exit-import` (the module raises SystemExit),
  `skip-call` (the body raises unittest.SkipTest, which pytest reports as skipped);
- with `--slow`, `slow`: the secure reference sleeping 3.5 s a call (past CWEval's 3 s limit
  per case, within passbench's 10 s), which shows that deviation (`--tasks` to pick a few).

passbench: `passbench evaluate --benchmark cweval --no-gt` (local bubblewrap backend; `--no-gt`
so that no task is quarantined and every sample gets a verdict). Reference: CWEval@e9a2a12's
`cweval/run_tests.py` `run_tests` (pytest `-k "not _unsafe"`, pytest-timeout 3 s per case,
functional = every functionality case passed, secure = every security case passed), imported
from the CWEval checkout and run, as `evaluate.py run_tests` does, once per `generated_<j>`
folder in its own process, on the layout of `evaluate.py` (`generated_<j>/core/py/
<stem>_task.py` beside `<stem>_test.py`, `pytest.ini` from `benchmark/` at the top). A test
file that pytest cannot collect has no entry in CWEval's `res.json`; it counts as neither.

`--cweval-repo` is a clone of Co1lin/CWEval (bare or not; its commit e9a2a12 is read with
`git show`). `--ref-venv` (default /tmp/cweval-ref) is created when missing, with Python 3.11,
pytest, pytest-timeout, wrapt_timeout_decorator and
src/passbench/stages/evalenv/locks/cweval-py311.txt.
cwe_1333_0's security cases call `./third_party/recheck-linux-x64` from the working folder;
`--recheck` puts that binary there (without it both sides fail those cases).

Prints the agreement and every disagreement with both sides' reasons; writes
perf/results/cweval-agreement[-slow][-tasks].json.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _common import REPO_ROOT, data_dir, run_dir, write_jsonl, write_result

COMMIT = "e9a2a124c8c53679b6d8d27adfd2f6c40e7576d7"
DATA = "security/cweval-core-py-tasks.jsonl"
LOCK = REPO_ROOT / "src" / "passbench" / "stages" / "evalenv" / "locks" / "cweval-py311.txt"
SLOW = "    __import__('time').sleep(3.5)"
REF_PACKAGES = ("pytest", "pytest-timeout", "wrapt_timeout_decorator")

#: run in the reference venv: CWEval's own run_tests on one generated folder, its
#: TestFileResults as JSON
DRIVER = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from cweval.run_tests import run_tests
results = run_tests(sys.argv[2])
with open(sys.argv[3], "w") as handle:
    json.dump({r.file: {"functional": r.functional, "secure": r.secure,
                        "failed": [c.name for c in r.test_cases
                                   if not c.passed and "_unsafe" not in c.name]}
               for r in results}, handle)
"""


def load_tasks() -> list[dict[str, Any]]:
    path = data_dir() / DATA
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _prompt_and_entry(task_code: str) -> tuple[str, str]:
    """The code before `# BEGIN SOLUTION` (imports, signature, docstring) and the entry point."""
    head = task_code.split("# BEGIN SOLUTION")[0].rstrip() + "\n"
    entry = [n.name for n in ast.parse(head + "    pass\n").body if isinstance(n, ast.FunctionDef)]
    return head, entry[-1]


def _module_imports(source: str) -> str:
    """The top-level import statements of a module, as source."""
    tree = ast.parse(source)
    lines = [ast.get_source_segment(source, n) for n in tree.body]
    kept = [
        text
        for node, text in zip(tree.body, lines, strict=True)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and text
    ]
    return "\n".join(kept)


def unsafe_candidates(task: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, module source) for each `<entry>_unsafe[_N]` function of the test file, renamed to
    the entry point, after the task's imports and the test file's imports and module-level
    definitions it uses (transitively), minus pytest and the task module."""
    _, entry = _prompt_and_entry(task["task_code"])
    test = task["test_code"]
    tree = ast.parse(test)
    stem = task["task_id"].rsplit("/", 1)[1]
    defined: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                defined[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, ast.ImportFrom):
            if node.module in ("pytest", f"{stem}_task"):
                continue
            for alias in node.names:
                defined[alias.asname or alias.name] = node
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = node
    defined.pop("pytest", None)

    def needed(node: ast.stmt, seen: list[ast.stmt]) -> None:
        for name in (n.id for n in ast.walk(node) if isinstance(n, ast.Name)):
            other = defined.get(name)
            if other is not None and other is not node and other not in seen:
                seen.append(other)
                if not isinstance(other, (ast.Import, ast.ImportFrom)):
                    needed(other, seen)

    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if not re.fullmatch(rf"{re.escape(entry)}_unsafe(_\d+)?", node.name):
            continue
        deps: list[ast.stmt] = []
        needed(node, deps)
        deps.sort(key=lambda n: n.lineno)
        parts = [_module_imports(task["task_code"])]
        parts += [ast.get_source_segment(test, n) or "" for n in deps]
        renamed = ast.get_source_segment(test, node) or ""
        parts.append(renamed.replace(f"def {node.name}(", f"def {entry}(", 1))
        out.append((node.name, "\n\n".join(p for p in parts if p) + "\n"))
    return out


def samples_for(task: dict[str, Any], slow: bool = False) -> list[tuple[str, str]]:
    """(family, solution) for one task, in a fixed order."""
    head, _ = _prompt_and_entry(task["task_code"])
    rows = [("secure", task["task_code"])]
    rows += [(f"unsafe:{name}", code) for name, code in unsafe_candidates(task)]
    rows.append(("broken-none", head + "    return None\n"))
    rows.append(("broken-raise", head + "    raise RuntimeError('not implemented')\n"))
    rows.append(("broken-import", "import passbench_no_such_module\n\n" + task["task_code"]))
    rows.append(("exit-call", head + "    raise SystemExit(0)\n"))
    rows.append(("exit-import", "raise SystemExit(0)\n\n" + task["task_code"]))
    rows.append(("skip-call", head + "    raise __import__('unittest').SkipTest('skipped')\n"))
    if slow:  # the secure reference, 3.5 s slower a call: past CWEval's 3 s, within our 10 s
        marker = "# BEGIN SOLUTION"
        rows.append(("slow", task["task_code"].replace(marker, f"{marker}\n{SLOW}", 1)))
    return rows


def ensure_ref_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run(["python3.11", "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", *REF_PACKAGES, "-r", str(LOCK)]
        subprocess.run(pip, check=True)
    return python


def cweval_source(repo: Path, into: Path) -> Path:
    """cweval/run_tests.py and benchmark/pytest.ini of the pinned commit, from a clone."""
    for relpath in ("cweval/__init__.py", "cweval/run_tests.py", "benchmark/pytest.ini"):
        show = ["git", "--git-dir", str(_git_dir(repo)), "show", f"{COMMIT}:{relpath}"]
        done = subprocess.run(show, capture_output=True, text=True)
        text = done.stdout if done.returncode == 0 else ""
        if done.returncode != 0 and not relpath.endswith("__init__.py"):
            raise SystemExit(f"{repo}: no {relpath} at {COMMIT[:7]}: {done.stderr.strip()}")
        (into / relpath).parent.mkdir(parents=True, exist_ok=True)
        (into / relpath).write_text(text, encoding="utf-8")
    return into


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def run_reference(
    python: Path,
    source: Path,
    tasks: list[dict[str, Any]],
    rows: list[tuple[str, str, str]],
    workdir: Path,
    workers: int,
    recheck: Path | None,
) -> list[dict[str, Any]]:
    """Per sample: {"functional", "secure", "failed"} from CWEval's run_tests."""
    stems = {t["task_id"]: t["task_id"].rsplit("/", 1)[1] for t in tasks}
    tests = {t["task_id"]: t["test_code"] for t in tasks}
    evals = workdir / "evals"
    if recheck is not None:
        (workdir / "third_party").mkdir(exist_ok=True)
        shutil.copy(recheck, workdir / "third_party" / "recheck-linux-x64")
    seen: Counter[tuple[str, str]] = Counter()
    folders: dict[tuple[str, int], int] = {}
    where: list[tuple[int, str]] = []
    for task_id, family, solution in rows:
        # one folder per kind of sample and occurrence, as a generation of a model is one
        # folder: a sample whose import ends pytest's session takes only its own kind along
        kind = family.split(":")[0]
        j = folders.setdefault((kind, seen[task_id, kind]), len(folders))
        seen[task_id, kind] += 1
        folder = evals / f"generated_{j}" / "core" / "py"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stems[task_id]}_task.py").write_text(solution, encoding="utf-8")
        (folder / f"{stems[task_id]}_test.py").write_text(tests[task_id], encoding="utf-8")
        where.append((j, f"evals/generated_{j}/core/py/{stems[task_id]}_test.py"))
    shutil.copy(source / "benchmark" / "pytest.ini", evals / "pytest.ini")
    driver = workdir / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")

    def one(j: int) -> dict[str, Any]:
        out = workdir / f"res_{j}.json"
        argv = [str(python), str(driver), str(source), f"evals/generated_{j}", str(out)]
        with open(workdir / f"run_tests_{j}.log", "w") as log:
            subprocess.run(argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, check=True)
        return dict(json.loads(out.read_text()))

    with ThreadPoolExecutor(max(1, workers)) as pool:
        results = list(pool.map(one, range(len(folders))))
    missing = {"functional": False, "secure": False, "failed": ["(not collected)"]}
    return [results[j].get(path, missing) for j, path in where]


def run_passbench(samples: Path, workdir: Path, workers: int) -> Path:
    argv = [sys.executable, "-m", "passbench.apps.cli", "evaluate", "--benchmark", "cweval"]
    argv += ["--samples", str(samples), "--output-dir", str(workdir), "--no-resume", "--no-gt"]
    argv += ["--workers", str(workers)]
    env = dict(os.environ, PASSBENCH_DATA_DIR=str(data_dir()))
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO_ROOT / "src"), env.get("PYTHONPATH")])
    )
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, cwd=REPO_ROOT)
    return workdir / (samples.stem + "_eval_results.json")


def passbench_verdicts(
    eval_results: Path, rows: list[tuple[str, str, str]]
) -> list[dict[str, Any]]:
    document = json.loads(eval_results.read_text())
    per_task = {
        task_id: sorted(entries, key=lambda e: e.get("sample_index", 0))
        for task_id, entries in document["eval"].items()
    }
    seen: Counter[str] = Counter()
    out = []
    for task_id, _, _ in rows:
        out.append(per_task[task_id][seen[task_id]])
        seen[task_id] += 1
    return out


def compare(
    rows: list[tuple[str, str, str]], ours: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> dict[str, Any]:
    per_family: dict[str, Counter[str]] = defaultdict(Counter)
    disagreements = []
    pairs: Counter[str] = Counter()
    for (task_id, family, _), mine, ref in zip(rows, ours, theirs, strict=True):
        a = (bool(mine.get("functional")), bool(mine.get("secure")))
        b = (bool(ref["functional"]), bool(ref["secure"]))
        kind = family.split(":")[0]
        per_family[kind]["n"] += 1
        per_family[kind]["agree"] += a == b
        pairs[f"functional={b[0]} secure={b[1]}"] += 1
        if a != b:
            disagreements.append(
                {
                    "task_id": task_id,
                    "family": family,
                    "passbench": {"functional": a[0], "secure": a[1], "reason": mine.get("reason")},
                    "cweval": {"functional": b[0], "secure": b[1], "failed": ref["failed"]},
                }
            )
    n = len(rows)
    return {
        "n": n,
        "agree": n - len(disagreements),
        "per_family": {k: dict(v) for k, v in sorted(per_family.items())},
        "reference_outcomes": dict(sorted(pairs.items())),
        "disagreements": disagreements,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cweval-repo", type=Path, required=True)
    parser.add_argument("--ref-venv", type=Path, default=Path("/tmp/cweval-ref"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--recheck", type=Path)
    parser.add_argument("--slow", action="store_true", help="add the `slow` samples")
    parser.add_argument("--tasks", help="only these task ids (comma-separated)")
    parser.add_argument("--reuse-reference", type=Path)
    parser.add_argument("--reuse-passbench", type=Path)
    args = parser.parse_args()

    tasks = load_tasks()
    if args.tasks:
        tasks = [t for t in tasks if t["task_id"] in args.tasks.split(",")]
    rows = [
        (t["task_id"], family, code) for t in tasks for family, code in samples_for(t, args.slow)
    ]
    folder = run_dir("cweval-agreement")
    samples = folder / "agreement--cweval-complete.jsonl"
    write_jsonl(samples, [{"task_id": t, "solution": code} for t, _, code in rows])
    print(f"{len(rows)} samples for {len(tasks)} tasks -> {samples}", flush=True)

    if args.reuse_reference:
        theirs = json.loads(args.reuse_reference.read_text())
    else:
        python = ensure_ref_venv(args.ref_venv)
        source = cweval_source(args.cweval_repo, folder / "cweval-src")
        theirs = run_reference(
            python, source, tasks, rows, folder / "ref", args.workers, args.recheck
        )
        (folder / "reference.json").write_text(json.dumps(theirs, indent=1))
    eval_results = args.reuse_passbench or run_passbench(samples, folder / "pb", args.workers)
    ours = passbench_verdicts(eval_results, rows)

    report = compare(rows, ours, theirs)
    report["cweval_commit"] = COMMIT
    report["run_dir"] = str(folder)
    print(f"agreement: {report['agree']} of {report['n']} samples (functional, secure)")
    for family, counts in report["per_family"].items():
        print(f"  {family}: {counts['agree']} of {counts['n']}")
    for d in report["disagreements"]:
        print(f"  {d['task_id']} {d['family']}: passbench {d['passbench']} / cweval {d['cweval']}")
    name = "cweval-agreement" + ("-slow" if args.slow else "") + ("-tasks" if args.tasks else "")
    print(f"-> {write_result(name, report)}")


if __name__ == "__main__":
    main()
