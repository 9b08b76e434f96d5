"""One-shot repository runs (SWE-bench's test command) in bubblewrap: a real small repository, a
real virtual environment with a real pytest, verdicts read from the channel, and hostile tests
that print fake results, rewrite reports, reach for the network or the host, leave processes
behind, or take too much."""

from __future__ import annotations

import glob
import importlib.metadata
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from passbench.core.errors import SandboxError
from passbench.core.records import Isolation
from passbench.stages.sandbox.host import cgroups
from passbench.stages.sandbox.host.launch import SANDBOX_HOST_UID, SYSTEM_DIRS, under_any
from passbench.stages.sandbox.host.repository import (
    FILES_DIR,
    TESTBED,
    RepositoryResult,
    RepositoryRun,
    parse_channel,
    run_repository,
)
from passbench.stages.sandbox.host.workdirs import default_scratch_root

from .conftest import BWRAP
from .helpers import PYTHON

needs_bwrap = pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run here")
pytestmark = [pytest.mark.bwrap]

SUITE = {
    "pkg/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_suite.py": """
import pytest
from pkg import add


@pytest.fixture
def broken():
    raise RuntimeError("setup fails")


def test_pass():
    assert add(1, 2) == 3


def test_fail():
    assert add(1, 2) == 4


def test_error(broken):
    pass


@pytest.mark.skip(reason="not today")
def test_skip():
    pass


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed already")
def test_xpass():
    assert True
""",
    "tests/test_broken.py": "import does_not_exist\n",
}
EXPECTED = {
    "tests/test_suite.py::test_pass": "PASSED",
    "tests/test_suite.py::test_fail": "FAILED",
    "tests/test_suite.py::test_error": "ERROR",
    "tests/test_suite.py::test_skip": "SKIPPED",
    "tests/test_suite.py::test_xfail": "XFAIL",
    "tests/test_suite.py::test_xpass": "XPASS",
    "tests/test_broken.py": "ERROR",
}
PYTEST = "python -m pytest -rA --continue-on-collection-errors -p no:cacheprovider"
# The public exploit of SWE-bench #631: a conftest.py that turns every report into a pass.
REWRITING_CONFTEST = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""


@dataclass(frozen=True)
class PytestEnv:
    """A virtual environment with pytest, and what the sandbox must show of it."""

    venv: Path
    read_only: tuple[Path, ...]
    folder: Path  # outside /tmp (the sandbox has its own), removed after the module

    def run(self, repo: Path, command: str, **fields: object) -> RepositoryResult:
        fields.setdefault("timeout_s", 60)
        return run_repository(
            RepositoryRun(
                working_copy=repo,
                command=command,
                read_only=self.read_only,
                env={"PATH": f"{self.venv}/bin:/usr/bin:/bin"},
                **fields,  # type: ignore[arg-type]
            )
        )


def _outside_tmp() -> Path:
    """A folder the sandbox can show at its own path: not under /tmp, which it replaces."""
    parent = default_scratch_root().parent / "test-venvs"
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="repository-", dir=parent))


def _interpreter_prefix(python: Path) -> tuple[Path, ...]:
    prefix = Path(
        subprocess.run(
            [str(python), "-c", "import sys; print(sys.base_prefix)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    ).resolve()
    return () if under_any(str(prefix), SYSTEM_DIRS) else (prefix,)


def _copy_installed(names: list[str], site: Path) -> None:
    """Copy installed distributions (and what they require) file by file from this
    interpreter's environment: the same pytest, offline and in a second."""
    done: set[str] = set()
    while names:
        name = names.pop()
        if name in done:
            continue
        done.add(name)
        dist = importlib.metadata.distribution(name)
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            if source.is_file() and not str(file).startswith(".."):
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, site / file)
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                names.append(requirement.name)


@pytest.fixture(scope="module")
def env() -> Iterator[PytestEnv]:
    if not BWRAP:
        pytest.skip("bubblewrap cannot run here")
    folder = _outside_tmp()
    venv = folder / "venv"
    subprocess.run([str(PYTHON), "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    _copy_installed(["pytest"], site)
    yield PytestEnv(venv, (venv, *_interpreter_prefix(venv / "bin" / "python")), folder)
    shutil.rmtree(folder, ignore_errors=True)


def _python36() -> Path | None:
    wanted = os.environ.get("PASSBENCH_TEST_PYTHON36")
    if wanted:
        return Path(wanted)
    found = sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.6*/bin/python3.6")))
    return Path(found[-1]) if found else None


@pytest.fixture(scope="module")
def old_env() -> Iterator[PytestEnv]:
    """Python 3.6 with pytest 3.10 and pluggy 0.8: the oldest pytest the plugin supports, as the
    old repositories of SWE-bench pin it."""
    if not BWRAP:
        pytest.skip("bubblewrap cannot run here")
    python = _python36()
    if python is None or not python.exists():
        pytest.skip("no Python 3.6 here (pyenv install 3.6, or set PASSBENCH_TEST_PYTHON36)")
    folder = _outside_tmp()
    venv = folder / "venv36"
    try:
        subprocess.run([str(python), "-m", "venv", str(venv)], check=True, capture_output=True)
        # --isolated: this machine's pip configuration pins today's packages
        install = [str(venv / "bin" / "pip"), "--isolated", "--disable-pip-version-check"]
        done = subprocess.run(
            [*install, "install", "-q", "pytest==3.10.1", "pluggy==0.8.1"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot install pytest 3.10.1 from PyPI: {done.stderr.strip()[-300:]}")
        yield PytestEnv(venv, (venv, *_interpreter_prefix(python)), folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _repo(root: Path, files: dict[str, str]) -> Path:
    repo = root / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return repo


def _host_processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _official_style_statuses(output: str) -> dict[str, str]:
    """What the official pytest log parser reads from the text: `STATUS test` lines."""
    found = {}
    for line in output.splitlines():
        words = line.replace(" - ", " ").split()
        if len(words) > 1 and words[0] in ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL"):
            found[words[1]] = words[0]
    return found


# ---------------------------------------------------------------- verdicts from the channel


@needs_bwrap
def test_verdicts_come_from_the_channel(env: PytestEnv, tmp_path: Path) -> None:
    result = env.run(_repo(tmp_path, SUITE), f"{PYTEST} tests")
    assert result.channel.statuses() == EXPECTED, result.output
    assert not result.channel.tampered
    (session,) = result.channel.sessions
    assert session.exitstatus == 1 and session.python_version.startswith("3.")
    assert result.exit_code == 1 and not result.timed_out
    assert "short test summary info" in result.output  # stdout and stderr both kept
    assert result.isolation == Isolation.BUBBLEWRAP and result.network is False
    assert result.omitted_bytes == 0 and not result.out_of_memory


@needs_bwrap
def test_a_command_without_pytest_has_an_empty_channel(env: PytestEnv, tmp_path: Path) -> None:
    result = env.run(_repo(tmp_path, SUITE), "echo out; echo err >&2; exit 3")
    assert result.exit_code == 3
    assert result.output == "out\nerr\n"
    assert result.channel.reports == () and result.channel.sessions == ()


@needs_bwrap
def test_runs_as_an_unprivileged_user_with_its_own_identity(env: PytestEnv, tmp_path: Path) -> None:
    command = "id -u; id -g; grep CapEff /proc/self/status; pwd; echo $HOME; hostname"
    result = env.run(_repo(tmp_path, SUITE), command + "; grep -c . /etc/passwd")
    lines = result.output.split()
    assert lines[:2] == ["1000", "1000"]
    assert lines[3] == "0000000000000000"
    assert lines[4:] == [TESTBED, "/tmp", "sandbox", "3"]


@needs_bwrap
def test_files_are_shown_read_only(env: PytestEnv, tmp_path: Path) -> None:
    files = (("test.patch", "diff --git a/x b/x\n"), ("notes.txt", "two\nlines\n"))
    command = f"cat {FILES_DIR}/test.patch {FILES_DIR}/notes.txt; echo x >> {FILES_DIR}/notes.txt"
    result = env.run(_repo(tmp_path, SUITE), command, files=files)
    assert result.output.startswith("diff --git a/x b/x\ntwo\nlines\n")
    assert re.search("Read-only file system|Permission denied", result.output)
    assert result.exit_code != 0
    with pytest.raises(SandboxError, match="plain file name"):
        env.run(_repo(tmp_path, SUITE), "true", files=(("../escape", ""),))


@needs_bwrap
def test_git_works_in_a_clone_without_hard_links(env: PytestEnv, tmp_path: Path) -> None:
    mirror = _repo(tmp_path / "mirror", SUITE)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "-C", str(mirror), "init", "-q"], check=True)
    subprocess.run([*git, "-C", str(mirror), "add", "."], check=True)
    subprocess.run([*git, "-C", str(mirror), "commit", "-qm", "base"], check=True)
    # a local clone hard-links the mirror's objects: the run could change the mirror
    linked = tmp_path / "linked"
    subprocess.run(["git", "clone", "-q", str(mirror), str(linked)], check=True)
    with pytest.raises(SandboxError, match="hard link"):
        env.run(linked, "true")
    repo = tmp_path / "copy"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(mirror), str(repo)], check=True)
    command = (
        "set -e; echo '# changed' >> pkg/__init__.py; git status --short; "
        "git checkout -- pkg/__init__.py; git status --short; echo made > new.txt; "
        "printf '#!/bin/sh\\ntouch /tmp/hooked\\n' > .git/hooks/post-checkout; "
        "chmod +x .git/hooks/post-checkout"
    )
    result = env.run(repo, command)
    assert result.exit_code == 0, result.output
    assert result.output == " M pkg/__init__.py\n"
    if os.geteuid() == 0:
        # the run's files stay the sandbox user's: host git refuses the planted hook's repo
        assert os.stat(repo / "new.txt").st_uid == SANDBOX_HOST_UID
        host_git = subprocess.run(["git", "-C", str(repo), "status"], capture_output=True)
        assert b"dubious ownership" in host_git.stderr


def test_parse_channel_keeps_only_the_plugins_lines() -> None:
    nonce = "ab" * 16
    good = [
        {"event": "start", "pytest": "8.0", "python": "3.11.7"},
        {
            "event": "report",
            "nodeid": "t.py::a",
            "when": "call",
            "outcome": "passed",
            "made": "passed",
            "xfail": False,
        },
        {"event": "collect", "nodeid": "u.py", "outcome": "failed"},
        {"event": "finish", "exitstatus": 1},
    ]
    lines = [f"{nonce} {json.dumps(record)}" for record in good]
    lines += [
        f"{'cd' * 16} {json.dumps(good[1])}",  # another nonce
        "PASSED t.py::b",  # printed text
        f"{nonce} not json",
        f"{nonce} {json.dumps({**good[1], 'nodeid': 't.py::late'})}",  # after the finish
    ]
    channel = parse_channel(("\n".join(lines) + "\n" + nonce).encode(), nonce)
    assert channel.statuses() == {"t.py::a": "PASSED", "u.py": "ERROR"}
    assert channel.foreign_lines == 4 and channel.tampered and channel.truncated
    assert [s.exitstatus for s in channel.sessions] == [1]


def _report(nodeid: str, when: str, outcome: str) -> dict[str, object]:
    record: dict[str, object] = {"event": "report", "nodeid": nodeid, "when": when}
    return {**record, "outcome": outcome, "made": outcome, "xfail": False}


def test_the_summary_order_decides_a_tests_status() -> None:
    nonce = "0" * 32
    records = [
        {"event": "start", "pytest": "8", "python": "3"},
        _report("t::a", "setup", "passed"),
        _report("t::a", "call", "passed"),
        _report("t::a", "teardown", "failed"),
        _report("t::b", "setup", "passed"),  # its call never reported: the process died
    ]
    data = "".join(f"{nonce} {json.dumps(r)}\n" for r in records).encode()
    channel = parse_channel(data, nonce)
    assert channel.statuses() == {"t::a": "ERROR"}
    assert channel.sessions[0].exitstatus is None and not channel.tampered


# ---------------------------------------------------------------- verdicts nobody can print


@pytest.mark.hostile
@needs_bwrap
def test_printed_fake_results_and_end_markers_change_nothing(
    env: PytestEnv, tmp_path: Path
) -> None:
    # fake lines now, and again after pytest's own summary (an exit handler: the last word)
    fake = """
import atexit, os, sys

LINES = "PASSED tests/test_fake.py::test_fail\\n>>>>> End Test Output\\n1 passed in 0.01s\\n"


def test_fail():
    print(LINES)
    sys.__stdout__.write(LINES)
    sys.__stdout__.flush()
    os.write(2, LINES.encode())
    atexit.register(os.write, 1, LINES.encode())
    assert False
"""
    result = env.run(_repo(tmp_path, {"tests/test_fake.py": fake}), f"{PYTEST} tests")
    # the text fools a parser of the output ...
    assert _official_style_statuses(result.output)["tests/test_fake.py::test_fail"] == "PASSED"
    # ... and changes nothing on the channel
    assert result.channel.statuses() == {"tests/test_fake.py::test_fail": "FAILED"}
    assert not result.channel.tampered


@pytest.mark.hostile
@needs_bwrap
def test_writing_into_every_descriptor_marks_the_channel_tampered(
    env: PytestEnv, tmp_path: Path
) -> None:
    spray = """
import os


def test_spray():
    for fd in range(3, 256):
        try:
            os.write(fd, b'{"event": "report", "outcome": "passed"}\\n')
        except OSError:
            pass
    assert False
"""
    result = env.run(_repo(tmp_path, {"tests/test_spray.py": spray}), f"{PYTEST} tests")
    assert result.channel.statuses() == {"tests/test_spray.py::test_spray": "FAILED"}
    assert result.channel.foreign_lines >= 1 and result.channel.tampered


@pytest.mark.hostile
@needs_bwrap
def test_a_conftest_that_rewrites_reports_is_caught(env: PytestEnv, tmp_path: Path) -> None:
    files = {**SUITE, "conftest.py": REWRITING_CONFTEST}
    result = env.run(_repo(tmp_path, files), f"{PYTEST} tests")
    rewritten = {(r.nodeid, r.when) for r in result.channel.reports if r.rewritten}
    assert ("tests/test_suite.py::test_fail", "call") in rewritten
    assert ("tests/test_suite.py::test_error", "setup") in rewritten
    assert result.channel.tampered


@pytest.mark.hostile
@needs_bwrap
def test_taking_the_nonce_before_pytest_marks_the_channel_tampered(
    env: PytestEnv, tmp_path: Path
) -> None:
    steal = 'read -r -n 64 stolen <&"${PASSBENCH_PYTEST_CHANNEL#*,}"; echo "took $stolen"; '
    result = env.run(_repo(tmp_path, SUITE), steal + f"{PYTEST} tests")
    assert re.search(r"took [0-9a-f]{32}", result.output)
    assert result.channel.reports == ()  # every line carries "-" instead of the nonce
    assert result.channel.foreign_lines > 0 and result.channel.tampered


@pytest.mark.hostile
@needs_bwrap
def test_dying_mid_session_leaves_later_tests_absent(env: PytestEnv, tmp_path: Path) -> None:
    dying = """
import os


def test_a():
    pass


def test_b():
    os._exit(0)


def test_c():
    pass
"""
    result = env.run(_repo(tmp_path, {"tests/test_dying.py": dying}), f"{PYTEST} tests")
    assert result.exit_code == 0
    assert result.channel.statuses() == {"tests/test_dying.py::test_a": "PASSED"}
    assert result.channel.sessions[0].exitstatus is None


@needs_bwrap
def test_processes_the_tests_start_neither_load_nor_inherit_the_channel(
    env: PytestEnv, tmp_path: Path
) -> None:
    outer = """
import os, subprocess, sys

import pytest


def test_children():
    probe = "import os; print([os.environ.get(k) for k in "
    probe += "('PASSBENCH_PYTEST_CHANNEL', 'PYTEST_ADDOPTS', 'PYTHONPATH')])"
    seen = subprocess.run([sys.executable, "-c", probe], stdout=subprocess.PIPE).stdout
    assert seen.strip() == b"[None, None, None]"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "inner/inner_suite.py"])
    pytest.main(["-q", "-p", "no:cacheprovider", "inner/inner_suite.py"])
"""
    inner = "def test_inner():\n    pass\n"
    files = {"tests/test_outer.py": outer, "inner/inner_suite.py": inner}
    result = env.run(_repo(tmp_path, files), f"{PYTEST} tests")
    assert result.output.count("1 passed") == 3, result.output  # both inner runs, the outer
    assert result.channel.statuses() == {"tests/test_outer.py::test_children": "PASSED"}
    assert len(result.channel.sessions) == 1 and not result.channel.tampered


# ---------------------------------------------------------------- what the run can reach


@pytest.mark.hostile
@needs_bwrap
def test_no_network_not_even_the_hosts_loopback(env: PytestEnv, tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        connect = (
            f"python -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5); "
            "print('connected')\"; cut -d: -f1 /proc/net/dev | tail -n +3 | tr -d ' '"
        )
        closed = env.run(_repo(tmp_path, SUITE), connect)
        assert "connected" not in closed.output and "ConnectionRefusedError" in closed.output
        assert closed.output.splitlines()[-1] == "lo"  # the only interface
        shared = env.run(_repo(tmp_path, SUITE), connect, network=True)  # the control
        assert "connected" in shared.output and shared.network


#: Run by root whose capabilities lack CAP_NET_ADMIN, as in a container of the docker and podman
#: backends (remote/container.py ROOT_CAPABILITIES): one run with the tarpit as it is, then one
#: without what bubblewrap is asked to give its setup. Prints the first run's output, then the
#: second one's refusal.
_WITHOUT_NET_ADMIN = """
import sys
from pathlib import Path
from passbench.core.errors import SandboxError
from passbench.stages.sandbox.host import repository

connect = (
    "python3 -c \\"import socket; s = socket.socket(); s.settimeout(0.3)\\n"
    "try: s.connect(('10.255.255.1', 80))\\nexcept OSError as e: print('connect:', e)\\"; "
    "grep ^Cap /proc/self/status | cut -f2 | sort -u"
)
run = repository.RepositoryRun(
    working_copy=Path(sys.argv[1]), command=connect, timeout_s=60, tarpit=True
)
print(repository.run_repository(run).output, end="")
repository._TARPIT_CAPABILITIES = ()
try:
    repository.run_repository(run)
except SandboxError as error:
    print("refused:", type(error).__name__, error)
"""


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="the tarpit needs passbench run as root")
def test_the_tarpit_is_set_up_by_root_without_cap_net_admin(tmp_path: Path) -> None:
    """A connect to an address nothing answers times out (not "Network is unreachable") where
    root lacks CAP_NET_ADMIN, and the tests hold no capability; a tarpit that cannot be set up
    refuses the run, with ip's message, instead of letting such tests fail."""
    (tmp_path / "repo").mkdir()
    without = ["setpriv", "--bounding-set=-net_admin", "--inh-caps=-net_admin", "--"]
    done = subprocess.run(
        [*without, sys.executable, "-c", _WITHOUT_NET_ADMIN, str(tmp_path / "repo")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    ran, capabilities, refused = done.stdout.splitlines()
    assert ran == "connect: timed out"
    assert capabilities == "0000000000000000"  # what the tarpit's setup had, the tests have not
    # HostUnfit: a backend running it elsewhere gives up at once instead of retrying
    assert refused.startswith(
        "refused: HostUnfit passbench: the tarpit could not be set up: RTNETLINK answers: "
        "Operation not permitted"
    ), refused


@pytest.mark.hostile
@needs_bwrap
def test_only_testbed_and_tmp_are_writable(env: PytestEnv, tmp_path: Path) -> None:
    targets = ["/", "/usr", "/etc", "/root", "/var", "/run/passbench", str(env.venv), TESTBED]
    targets += ["/tmp", "/var/tmp", "/dev/shm"]
    script = (
        "import sys\n"
        "for folder in sys.argv[1:]:\n"
        "    try:\n"
        "        open(folder + '/written-by-the-run', 'w').write('x')\n"
        "        print('WROTE', folder)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    repo = _repo(tmp_path, {"write.py": script})
    result = env.run(repo, "python write.py " + " ".join(targets))
    assert result.output.split("\n")[:-1] == [
        f"WROTE {t}" for t in (TESTBED, "/tmp", "/var/tmp", "/dev/shm")
    ]
    assert (repo / "written-by-the-run").exists()
    assert not (env.venv / "written-by-the-run").exists()


@pytest.mark.hostile
@needs_bwrap
def test_host_files_are_invisible(env: PytestEnv, tmp_path: Path) -> None:
    other = env.folder / "other-working-copy"  # beside the visible venv, on the host
    other.mkdir()
    (other / "secret.txt").write_text("secret")
    home = Path.home()
    shown = {part for path in env.read_only for part in path.parts}
    hidden = [str(home / name) for name in os.listdir(home) if name not in shown]
    hidden += [str(other), "/work", str(Path(__file__).resolve()), str(tmp_path), "/etc/shadow"]
    hidden += ["/run/user", "/var/run/docker.sock", str(default_scratch_root())]
    script = (
        "import os, sys\n"
        "for path in sys.argv[1:]:\n"
        "    if os.path.exists(path):\n"
        "        try:\n"
        "            open(path).read() if os.path.isfile(path) else os.listdir(path)\n"
        "            print('SEEN', path)\n"
        "        except OSError:\n"
        "            pass\n"
        "print('done')\n"
    )
    result = env.run(_repo(tmp_path, {"look.py": script}), "python look.py " + " ".join(hidden))
    assert result.output == "done\n"


# ---------------------------------------------------------------- nothing left running, limits


@pytest.mark.hostile
@needs_bwrap
def test_detached_processes_do_not_survive_the_run(env: PytestEnv, tmp_path: Path) -> None:
    marker = f"1000.{secrets.randbelow(10**6):06d}"
    double_fork = (
        "import os\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execvp('sleep', ['sleep', '{marker}'])\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )
    command = (
        f"sleep {marker} & setsid sleep {marker} & nohup sleep {marker} >/dev/null 2>&1 & "
        "python double_fork.py; sleep 0.3; echo started"
    )
    result = env.run(_repo(tmp_path, {"double_fork.py": double_fork}), command)
    assert result.output.strip().endswith("started") and result.exit_code == 0
    assert result.duration_s < 20
    assert _host_processes_with(marker) == []


@pytest.mark.hostile
@needs_bwrap
def test_timeout_kills_everything(env: PytestEnv, tmp_path: Path) -> None:
    marker = f"1000.{secrets.randbelow(10**6):06d}"
    command = f"echo begun; setsid sleep {marker} & sleep {marker}"
    result = env.run(_repo(tmp_path, SUITE), command, timeout_s=1)
    assert result.timed_out and result.exit_code is None
    assert result.output == "begun\n"
    assert 1 <= result.duration_s < 10
    assert _host_processes_with(marker) == []


@pytest.mark.hostile
@needs_bwrap
def test_memory_limit(env: PytestEnv, tmp_path: Path) -> None:
    hog = "python -c \"x = b'x' * (600 * 1024 * 1024); print(len(x))\""
    result = env.run(_repo(tmp_path, SUITE), hog, memory_mb=200)
    assert str(600 * 1024 * 1024) not in result.output and result.exit_code != 0, result.output
    if result.cgroup != "none":
        assert result.out_of_memory  # the kernel's OOM killer in the run's cgroup
    else:
        assert "MemoryError" in result.output  # RLIMIT_DATA per process


@pytest.mark.hostile
@needs_bwrap
def test_memory_limit_holds_for_the_run_as_a_whole(env: PytestEnv, tmp_path: Path) -> None:
    one = "python -c \"import time; x = b'x' * (90 * 1024 * 1024); time.sleep(2)\""
    result = env.run(
        _repo(tmp_path, SUITE), f"for i in 1 2 3 4; do {one} & done; wait", memory_mb=200
    )
    if result.cgroup == "none":
        pytest.skip("no cgroup here: memory is capped per process only")
    assert result.out_of_memory


@pytest.mark.hostile
@needs_bwrap
def test_without_a_cgroup_the_namespace_and_rlimits_hold(
    env: PytestEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hosts without a cgroup to give (unprivileged, most containers): the pid namespace alone
    ends every process, RLIMIT_DATA alone caps each process's memory."""
    monkeypatch.setattr(cgroups, "detect", lambda: cgroups.CgroupSupport("none", reason="test"))
    marker = f"1000.{secrets.randbelow(10**6):06d}"
    hog = "python -c \"x = b'x' * (600 * 1024 * 1024); print(len(x))\""
    command = f"setsid sleep {marker} & nohup sleep {marker} >/dev/null 2>&1 & {hog}"
    result = env.run(_repo(tmp_path, SUITE), command, memory_mb=200)
    assert result.cgroup == "none"
    assert "MemoryError" in result.output and str(600 * 1024 * 1024) not in result.output
    assert _host_processes_with(marker) == []


@pytest.mark.hostile
@needs_bwrap
def test_process_limit(env: PytestEnv, tmp_path: Path) -> None:
    forks = (
        "import os, time\n"
        "made = 0\n"
        "for _ in range(60):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(5)\n"
        "            os._exit(0)\n"
        "        made += 1\n"
        "    except OSError:\n"
        "        break\n"
        "print('made', made)\n"
    )
    result = env.run(_repo(tmp_path, {"forks.py": forks}), "python forks.py", max_processes=20)
    made = int(result.output.split()[-1])
    assert 0 < made < 20, result.output


@needs_bwrap
def test_output_past_the_cap_keeps_its_beginning_and_end(env: PytestEnv, tmp_path: Path) -> None:
    command = "python -c \"[print('line %05d' % i) for i in range(20000)]\""
    result = env.run(_repo(tmp_path, SUITE), command, output_cap=16 * 1024)
    lines = result.output.splitlines()
    assert lines[0] == "line 00000" and lines[-1] == "line 19999"
    assert result.omitted_bytes > 200_000 - 16 * 1024
    marker = [line for line in lines if not re.fullmatch(r"line \d{5}", line)]
    assert marker == [f"[passbench: {result.omitted_bytes} bytes of output left out here]"]
    assert len(result.output.encode()) < 16 * 1024 + 100


# ---------------------------------------------------------------- refusals


def test_refuses_without_bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError, match="refusing to run repository tests without sandbox"):
        run_repository(RepositoryRun(working_copy=tmp_path, command="true"))


@needs_bwrap
def test_refuses_folders_it_could_not_show(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="is not a folder"):
        run_repository(RepositoryRun(working_copy=tmp_path / "missing", command="true"))
    with pytest.raises(SandboxError, match="under /tmp"):
        run_repository(RepositoryRun(working_copy=tmp_path, command="true", read_only=(tmp_path,)))
    with pytest.raises(SandboxError, match="does not exist"):
        run_repository(
            RepositoryRun(working_copy=tmp_path, command="true", writable=(Path("/nonexistent"),))
        )


# ---------------------------------------------------------------- an old pytest


@needs_bwrap
def test_the_channel_works_with_pytest_3_on_python_3_6(old_env: PytestEnv, tmp_path: Path) -> None:
    result = old_env.run(_repo(tmp_path, SUITE), f"{PYTEST} tests")
    assert result.channel.statuses() == EXPECTED, result.output
    assert result.channel.sessions[0].pytest_version == "3.10.1"
    assert result.channel.sessions[0].python_version.startswith("3.6.")
    assert not result.channel.tampered
    rewriting = old_env.run(
        _repo(tmp_path / "rewriting", {**SUITE, "conftest.py": REWRITING_CONFTEST}),
        f"{PYTEST} tests",
    )
    assert rewriting.channel.tampered
    assert any(r.rewritten for r in rewriting.channel.reports if r.nodeid.endswith("test_fail"))
