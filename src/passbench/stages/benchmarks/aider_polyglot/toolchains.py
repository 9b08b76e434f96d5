"""How each language's exercise is tested, offline, inside the sandbox.

Aider's harness (benchmark/benchmark.py `run_unit_tests`, npm-test.sh, cpp-test.sh) runs, in
the exercise's folder, with stderr joined to stdout and a 180 s limit:
python `pytest` (here Debian's, `/usr/bin/python3 -m pytest`); go `go test ./...`; rust
`cargo test -- --include-ignored`; javascript
`sed 's/\\bxtest(/test(/g' *.spec.js` then `npm run test` (`jest ./*`); cpp `cmake
-DEXERCISM_RUN_ALL_TESTS=1 -G "Unix Makefiles" ..` + `make` in build/ (the CMakeLists runs the
tests as part of the build); java `@Disabled(...)` lines removed from the tests, then
`./gradlew test`. The tests pass when the command exits 0.

passbench runs the same tests without a network: Go in module mode with the proxy off (no
exercise needs a module) and a copy of the Go build cache scripts/setup.sh seeds; Rust with
Debian's cargo offline, crates from Debian's registry folder; JavaScript with Jest and
Exercism's Babel preset installed from npm by scripts/setup.sh (node_modules linked in as
Aider's npm-test.sh links its /npm-install); Java without Gradle: javac, then the JUnit
Platform console launcher, with JUnit 5 and AssertJ from Debian (what build.gradle asks for,
at Debian's versions). C++ takes Catch2's main, which every exercise compiles alike, from a
read-only cache when it is there (catch_main.py: what is cached, and why it is safe).
"""

from __future__ import annotations

import glob
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from passbench.stages.benchmarks.aider_polyglot.catch_main import CATCH_MAIN_CACHE, LAUNCHER

#: Aider's limit on the whole test command (run_unit_tests: `timeout = 60 * 3`)
TEST_TIMEOUT_S = 180.0
#: the Go build cache scripts/setup.sh fills for HumanEval-X's Go (standard packages compiled)
GO_CACHE_SEED = "/usr/local/lib/passbench/humaneval-x-go/gocache"
#: Jest, Babel and Exercism's preset, installed by scripts/setup.sh (versions: JS_PACKAGES)
JS_MODULES = "/usr/local/lib/passbench/aider-polyglot-js/node_modules"
#: what the exercises' package.json asks (jest ^29.7.0, babel-jest ^29.6.4, @babel/core
#: ^7.25.2, @exercism/babel-preset-javascript ^0.2.1, core-js ~3.37.1), pinned
JS_PACKAGES = (
    "jest@29.7.0",
    "babel-jest@29.7.0",
    "@babel/core@7.25.2",
    "@exercism/babel-preset-javascript@0.2.1",
    "core-js@3.37.1",
)
JAVA = "/usr/share/java"
JUNIT_CONSOLE = f"{JAVA}/junit-platform-console-standalone.jar"
ASSERTJ = f"{JAVA}/assertj-core.jar"
#: Debian's crate sources, a cargo "directory" source
CARGO_REGISTRY = "/usr/share/cargo/registry"
#: Java artifacts build.gradle may ask for beyond JUnit and AssertJ -> the jar that holds them
#: here (none of the two the exercises name is packaged by Debian 12)
JAVA_ARTIFACTS: dict[str, str] = {}

_PYTHON = """exec 2>&1
cd {exercise}
/usr/bin/python3 -m pytest
"""
_GO = """exec 2>&1
cd {exercise}
if [ -d {seed} ]; then cp -r {seed} "$PWD/.gocache"; fi
export HOME="$PWD/.home" GOCACHE="$PWD/.gocache" GOPATH="$PWD/.gopath" GOPROXY=off \
  GOTOOLCHAIN=local GOFLAGS=-mod=mod GOENV=off GO111MODULE=on
go test ./...
"""
_RUST = """exec 2>&1
cd {exercise}
mkdir -p .cargo-home
cat > .cargo-home/config.toml <<'TOML'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "{registry}"
[net]
offline = true
TOML
export CARGO_HOME="$PWD/.cargo-home" HOME="$PWD/.cargo-home"
cargo test --offline -- --include-ignored
"""
_JAVASCRIPT = """exec 2>&1
set -e
cd {exercise}
[ ! -e node_modules ] && ln -s {modules} node_modules
node node_modules/jest/bin/jest.js ./*
"""
_CPP = """exec 2>&1
set -e
launcher="$(cd "$(dirname "$0")" && pwd)/{launcher}"
cd {exercise}
if [ -d {catch_cache} ]; then
  export CMAKE_CXX_COMPILER_LAUNCHER="sh;$launcher" PASSBENCH_CATCH_MAIN_CACHE={catch_cache}
fi
[ ! -d build ] && mkdir build
cd build
cmake -DEXERCISM_RUN_ALL_TESTS=1 -G "Unix Makefiles" ..
make
"""
_JAVA = """exec 2>&1
set -e
cd {exercise}
mkdir -p build/classes
javac -J-Xmx1g -encoding UTF-8 -d build/classes -cp {classpath} $(find src -name '*.java')
java -Xmx1g -XX:+UseSerialGC -XX:-UsePerfData -jar {console} -cp build/classes:{classpath} \
  --scan-class-path --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests
"""


@dataclass(frozen=True)
class Track:
    """One language's tests: the script run in the sandbox and what it needs here."""

    key: str  # the dataset's language: "cpp", "go", ...
    title: str
    script: str
    tools: tuple[str, ...]  # executables and files `passbench env check` looks for
    debian_packages: tuple[str, ...]
    local_tools: tuple[str, ...] = ()  # what scripts/setup.sh makes (npm installs, caches)

    def test_script(self, exercise: str) -> str:
        return self.script.format(
            exercise=exercise,
            seed=GO_CACHE_SEED,
            registry=CARGO_REGISTRY,
            modules=JS_MODULES,
            console=JUNIT_CONSOLE,
            classpath=f"{JUNIT_CONSOLE}:{ASSERTJ}",
            launcher=LAUNCHER,
            catch_cache=CATCH_MAIN_CACHE,
        )


TRACKS: dict[str, Track] = {
    track.key: track
    for track in (
        Track(
            "cpp",
            "C++",
            _CPP,
            ("cmake", "make", "g++", "/usr/include/boost/date_time.hpp"),
            ("cmake", "make", "g++", "libboost-date-time-dev"),
        ),
        Track("go", "Go", _GO, ("go",), ("golang-go",), (GO_CACHE_SEED,)),
        Track(
            "java",
            "Java",
            _JAVA,
            ("javac", "java", JUNIT_CONSOLE, ASSERTJ),
            ("default-jdk", "junit5", "libassertj-core-java"),
        ),
        Track(
            "javascript",
            "JavaScript",
            _JAVASCRIPT,
            ("node",),
            ("nodejs",),
            (f"{JS_MODULES}/jest", f"{JS_MODULES}/@exercism/babel-preset-javascript"),
        ),
        Track(
            "python",
            "Python",
            _PYTHON,
            ("/usr/bin/python3", "/usr/lib/python3/dist-packages/pytest"),
            ("python3", "python3-pytest"),
        ),
        Track(
            "rust",
            "Rust",
            _RUST,
            ("cargo", "rustc"),
            # with the crates three exercises use (crate_problem names each one missing)
            ("cargo", "rustc", "librust-time-dev", "librust-anyhow-dev", "librust-rand-dev"),
        ),
    )
}


#: the system part of the sandbox's PATH (sandbox/host/launch.py)
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"


def tool_present(tool: str) -> str | None:
    """Where a tool is (an absolute path that exists, or an executable on the sandbox's PATH),
    else None."""
    if tool.startswith("/"):
        return tool if Path(tool).exists() else None
    return shutil.which(tool, path=SANDBOX_PATH)


# ---- what an exercise needs beyond its language's toolchain -----------------------------------

_GRADLE_DEPENDENCY = re.compile(r'^\s*implementation\s+"([^"]+)"', re.MULTILINE)
_CARGO_DEPENDENCIES = re.compile(r"^\[dependencies\]\s*$(.*?)(?=^\[|\Z)", re.MULTILINE | re.DOTALL)
_CARGO_CRATE = re.compile(r'^\s*([A-Za-z0-9_-]+)\s*=\s*"([^"]+)"', re.MULTILINE)


def requirements(language: str, build_files: Mapping[str, str]) -> tuple[str, ...]:
    """Libraries an exercise's build file asks for beyond what every exercise of its language
    uses: Java's `implementation` artifacts, Rust's crates ("name version")."""
    if language == "java":
        return tuple(_GRADLE_DEPENDENCY.findall(build_files.get("build.gradle", "")))
    if language == "rust":
        found = _CARGO_DEPENDENCIES.search(build_files.get("Cargo.toml", ""))
        if not found:
            return ()
        return tuple(f"{name} {version}" for name, version in _CARGO_CRATE.findall(found.group(1)))
    return ()


def missing_requirement(language: str, requirement: str) -> str | None:
    """Why a requirement cannot be met on this machine, or None when it can."""
    if language == "java":
        jar = JAVA_ARTIFACTS.get(requirement)
        if jar and Path(jar).exists():
            return None
        return f"needs {requirement} from Maven Central (not packaged by Debian; no network)"
    if language == "rust":
        name, _, version = requirement.partition(" ")
        major = version.lstrip("^~=").split(".")
        prefix = major[0] if major[0] != "0" else ".".join(major[:2])
        if glob.glob(f"{CARGO_REGISTRY}/{name}-{prefix}*"):
            return None
        return f"needs the crate {name} {version} (apt-get install librust-{name}-dev)"
    return None


_GO_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)\)", re.MULTILINE | re.DOTALL)
_GO_IMPORT_LINE = re.compile(r'^import\s+"([^"]+)"', re.MULTILINE)


def go_imports(source: str) -> set[str]:
    """The packages a Go file imports."""
    found = set(_GO_IMPORT_LINE.findall(source))
    for block in _GO_IMPORT_BLOCK.findall(source):
        found.update(re.findall(r'"([^"]+)"', block))
    return found


def go_root() -> Path | None:
    """GOROOT of the `go` on PATH, None without one."""
    import subprocess

    go = shutil.which("go", path=SANDBOX_PATH)
    if go is None:
        return None
    done = subprocess.run([go, "env", "GOROOT"], capture_output=True, text=True, check=False)
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def missing_go_packages(sources: list[str], root: Path | None) -> list[str]:
    """Standard packages the sources import that this Go lacks (newer Go's `slices`, ...)."""
    if root is None:
        return []
    wanted = set().union(*(go_imports(source) for source in sources)) if sources else set()
    standard = {name for name in wanted if "." not in name.split("/")[0]}
    return sorted(name for name in standard if not (root / "src" / name).is_dir())


# ---- what an exercise's tests need of the machine and the sandbox's limits ---------------------

#: AssertJ assertions some exercises' tests call -> (a class of the AssertJ jar that has them,
#: the first AssertJ release with it): mazy-mice's `hasDimensions` on a 2D array
ASSERTJ_FEATURES = {"hasDimensions": ("org/assertj/core/api/Abstract2DArrayAssert.class", "3.17")}
_CPP_THREAD_LOOP = re.compile(
    r"for\s*\(\s*(?:int|std::size_t|size_t|auto)\s+\w+\s*=\s*0\s*;\s*\w+\s*<\s*(\d+)\s*;"
    r"[^{]*\{[^{}]*std::thread\s*\("
)
_JS_WORKERS = re.compile(r"\bArray\((\d+)\)\.fill\(")


def missing_assertj(tests: Mapping[str, str], jar: str = ASSERTJ) -> str | None:
    """Why the installed AssertJ lacks an assertion the tests call, or None."""
    called = [name for name in ASSERTJ_FEATURES if any(f".{name}(" in t for t in tests.values())]
    if not called or not Path(jar).exists():
        return None
    import zipfile

    with zipfile.ZipFile(jar) as archive:
        names = set(archive.namelist())
        manifest = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    version = re.search(r"^Bundle-Version:\s*(\S+)", manifest, re.MULTILINE)
    for name in called:
        holder, since = ASSERTJ_FEATURES[name]
        if holder not in names:
            installed = version.group(1) if version else "installed"
            return (
                f"its tests call AssertJ's {name} (AssertJ {since}+); this AssertJ is {installed}"
            )
    return None


def cpp_threads_at_once(tests: Mapping[str, str]) -> int:
    """The most threads a C++ test starts in one loop before joining them (0: none)."""
    counts = [int(n) for t in tests.values() for n in _CPP_THREAD_LOOP.findall(t)]
    return max(counts, default=0)


def js_workers_at_once(reference: Mapping[str, str], tests: Mapping[str, str]) -> int:
    """How many node worker threads the reference starts at once (one per text of the largest
    `Array(N).fill(...)` input) when it uses worker_threads, else 0."""
    if not any("worker_threads" in text for text in reference.values()):
        return 0
    return max((int(n) for t in tests.values() for n in _JS_WORKERS.findall(t)), default=0)


_NODE_WORKERS = """const { Worker, isMainThread } = require('node:worker_threads');
if (isMainThread) {
  let left = Number(process.argv[2]);
  for (let i = 0; i < Number(process.argv[2]); i++) {
    const worker = new Worker(__filename, { argv: ['0'] });
    worker.on('error', () => process.exit(3));
    worker.on('exit', () => { if (--left === 0) process.exit(0); });
  }
}
"""


def node_workers_fit(count: int, memory_mb: int) -> bool | None:
    """Whether node here starts `count` worker threads at once within an address space of
    `memory_mb` (the sandbox's RLIMIT_AS); None without node."""
    import resource
    import subprocess
    import tempfile

    node = shutil.which("node", path=SANDBOX_PATH)
    if node is None:
        return None
    limit = memory_mb * 1024 * 1024

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryDirectory(prefix="passbench-node-probe-") as folder:
        script = Path(folder) / "workers.js"
        script.write_text(_NODE_WORKERS, encoding="utf-8")
        try:
            done = subprocess.run(
                [node, str(script), str(count)],
                capture_output=True,
                timeout=60,
                preexec_fn=limited,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == 0
