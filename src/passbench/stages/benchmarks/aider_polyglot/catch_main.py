"""Catch2's main, compiled once: a cache of the test harness Aider's C++ exercises share.

Every C++ exercise's CMakeLists compiles `test/tests-main.cpp` (`#define CATCH_CONFIG_MAIN`,
`#include "catch.hpp"`: Catch2's whole implementation, 17,000 lines) with the exercise's own
sources, which costs most of an exercise's build (about 20 s of CPU against 2 s for the rest).
All 26 exercises ship the same two files. So `record` (run by scripts/setup.sh as root,
outside any sandbox, on the dataset's files) compiles that main once per variant, through the
exercise's real cmake build, into `CATCH_MAIN_CACHE/<key>/main.o`; at test time the compiler
launcher catch_main.sh (set as cmake's CMAKE_CXX_COMPILER_LAUNCHER by the test script) copies
that object in place of the compile, and every other file compiles as before. The link and
the tests are the exercise's own, so verdicts and test output are those of a full build; only
the object's debug information names the folder it was recorded in.

Why a sample cannot change what another sample gets (never trust a sample):
- The cache is written only by `record`, never during a test: it lies under /usr, which the
  bubblewrap sandbox shows read-only, and is root's (a container's runner user cannot write
  it). Only the rlimit-only fallback (`--allow-unsandboxed`, no isolation at all) run as root
  could write it.
- The key is the sha256 of everything the compile depends on that is not a system file: the
  compiler's `-v` (version and configuration), the arguments (output and dependency-file names
  and the source path left out), tests-main.cpp and catch.hpp. A sample cannot replace either
  file (they are support files, restored from the dataset), and its own files are never read
  by this compile: the launcher refuses any argument or environment variable that adds a
  folder or a file to the compile (-I, -include, CPATH...), and `record` refuses a variant
  whose tests-main.cpp or catch.hpp include any file by a quoted name (the only kind of
  include a file added beside them could answer) other than tests-main.cpp's "catch.hpp".
- Every other file the recorded compile read (the system headers, from its dependency file)
  is listed with its sha256 in the entry's headers.sha256; the launcher checks them all before
  each use, so an upgraded compiler or header makes it compile as before until the entry is
  recorded again.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from passbench.core.records import Task

#: where scripts/setup.sh records Catch2's main (read-only in the sandbox: under /usr)
CATCH_MAIN_CACHE = "/usr/local/lib/passbench/aider-polyglot-cpp"
#: the launcher's name in a C++ program's folder (beside the exercise, never shown to a model)
LAUNCHER = ".passbench-catch-main.sh"
_MAIN = "test/tests-main.cpp"
_HEADER = "test/catch.hpp"
_QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]*)"|__has_include\s*\(\s*"', re.MULTILINE)
_PATH = "/usr/local/bin:/usr/bin:/bin"


def launcher_text() -> str:
    """catch_main.sh, the compiler launcher every C++ program carries."""
    return resources.files(__package__).joinpath("catch_main.sh").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Recorded:
    """What `record` did for one variant of the harness (an exercise that has it)."""

    exercise: str
    status: str  # "added", "present" (already cached and intact), "refused"
    detail: str  # the key, or why it was refused


def variants(tasks: Sequence[Task]) -> list[Task]:
    """One C++ exercise per variant of the harness: its tests-main.cpp, catch.hpp and
    CMakeLists.txt (with the exercise's name taken out, which cmake puts in no compile flag)."""
    chosen: dict[str, Task] = {}
    for task in tasks:
        if task.metadata["language"] != "cpp":
            continue
        support = task.metadata["support"]
        if _MAIN not in support or _HEADER not in support:
            continue
        cmake = str(support.get("CMakeLists.txt", "")).replace(str(task.metadata["exercise"]), "")
        identity = "\0".join((support[_MAIN], support[_HEADER], cmake))
        chosen.setdefault(hashlib.sha256(identity.encode()).hexdigest(), task)
    return list(chosen.values())


def quoted_includes_problem(main: str, header: str) -> str | None:
    """Why a compile of this tests-main.cpp could read a file a sample put beside it, or None:
    its only quoted include is "catch.hpp", and catch.hpp has none."""
    found = [m.group(1) for m in _QUOTED.finditer(main)]
    if found != ["catch.hpp"]:
        return f'tests-main.cpp includes {found} by quoted name (only "catch.hpp" is cached)'
    if _QUOTED.search(header):
        return "catch.hpp includes a file by quoted name"
    return None


def record(
    tasks: Sequence[Task], cache: Path, files_of: Callable[[Task], Mapping[str, str]]
) -> list[Recorded]:
    """Compile Catch2's main of every harness variant among `tasks` into `cache`, through each
    exercise's real cmake build with the launcher recording; `files_of` gives an exercise's
    folder (trusted data only: the dataset's files with the reference solution). Idempotent:
    an intact entry is kept."""
    done = []
    for task in variants(tasks):
        exercise = str(task.metadata["exercise"])
        support = task.metadata["support"]
        problem = quoted_includes_problem(support[_MAIN], support[_HEADER])
        if problem is not None:
            done.append(Recorded(exercise, "refused", problem))
            continue
        with tempfile.TemporaryDirectory(prefix="passbench-catch-main-") as scratch:
            folder = Path(scratch) / exercise
            for path, text in files_of(task).items():
                (folder / path).parent.mkdir(parents=True, exist_ok=True)
                (folder / path).write_text(text, encoding="utf-8")
            staged = Path(scratch) / "staged"
            _build_main(folder, Path(scratch), cache, staged)
            entries = sorted(staged.iterdir()) if staged.is_dir() else []
            if not entries:
                done.append(Recorded(exercise, "present", "an intact entry is cached"))
            for entry in entries:
                problem = _publish(entry, folder, cache)
                status = "refused" if problem else "added"
                done.append(Recorded(exercise, status, problem or entry.name))
    return done


def _build_main(folder: Path, scratch: Path, cache: Path, staged: Path) -> None:
    """cmake's configure and the build of tests-main.cpp's object alone, as the test script
    runs them, with the launcher recording what it cannot take from `cache`."""
    launcher = scratch / LAUNCHER
    launcher.write_text(launcher_text(), encoding="utf-8")
    env = {
        "PATH": _PATH,
        "HOME": str(scratch),
        "LANG": "C.UTF-8",
        "CMAKE_CXX_COMPILER_LAUNCHER": f"sh;{launcher}",
        "PASSBENCH_CATCH_MAIN_CACHE": str(cache),
        "PASSBENCH_CATCH_MAIN_RECORD": str(staged),
    }
    build = folder / "build"
    build.mkdir()
    for command in (
        ["cmake", "-DEXERCISM_RUN_ALL_TESTS=1", "-G", "Unix Makefiles", ".."],
        ["make", "test/tests-main.cpp.o"],
    ):
        subprocess.run(command, cwd=build, env=env, check=True, capture_output=True)


def _publish(entry: Path, folder: Path, cache: Path) -> str | None:
    """Check a recorded compile read nothing of the exercise's but its two files, list every
    other file it read with its sha256, and move it into the cache whole; why not, or None."""
    main, header = folder / _MAIN, folder / _HEADER
    depends = _dependencies((entry / "main.d").read_text(encoding="utf-8"), folder / "build")
    others = [path for path in depends if path not in (main, header)]
    for path in others:
        if path.is_relative_to(folder) or not path.is_relative_to("/usr"):
            return f"the compile read {path}, not a system file under /usr"
    listing = "".join(f"{_sha256(path)}  {path}\n" for path in sorted(set(others)))
    (entry / "headers.sha256").write_text(listing, encoding="utf-8")
    for name in ("main.d", "input"):
        (entry / name).unlink()
    cache.mkdir(parents=True, exist_ok=True)
    os.chmod(cache, 0o755)
    incoming = cache / f".incoming-{entry.name}"
    shutil.rmtree(incoming, ignore_errors=True)
    shutil.copytree(entry, incoming)
    for path in (incoming, *incoming.iterdir()):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    final = cache / entry.name
    shutil.rmtree(final, ignore_errors=True)  # an entry whose headers changed
    incoming.rename(final)
    return None


def _dependencies(depfile: str, cwd: Path) -> list[Path]:
    """The files a make-style dependency file lists (the target left out)."""
    joined = depfile.replace("\\\n", " ")
    _, _, rest = joined.partition(": ")
    return [Path(os.path.normpath(cwd / word)) for word in rest.split()]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
