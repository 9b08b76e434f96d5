"""What a sample can see and touch inside bubblewrap. Each program asserts an isolation property
from the inside, so "pass" means the property holds."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from passbench.core.records import Isolation
from passbench.stages.sandbox import Sandbox, SandboxConfig, open_sandbox

from .conftest import BWRAP
from .helpers import PYTHON, TEST_LIMITS, checks_program, run_one

pytestmark = [pytest.mark.bwrap, pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run")]


def _passes(sandbox: Sandbox, body: str) -> None:
    result = run_one(sandbox, checks_program("iso", body))
    assert result.status == "pass", result.details or result.reason
    assert result.isolation == Isolation.BUBBLEWRAP
    assert result.network == sandbox.config.limits.allow_network  # type: ignore[attr-defined]


def test_not_root_and_no_capabilities(bwrap_sandbox: Sandbox) -> None:
    body = """
import os
self.assertEqual(os.getuid(), 1000)
self.assertEqual(os.getgid(), 1000)
caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0]
self.assertEqual(int(caps.split()[1], 16), 0)
import pwd, getpass
self.assertEqual(pwd.getpwuid(os.getuid()).pw_name, 'sandbox')
self.assertEqual(getpass.getuser(), 'sandbox')
"""
    _passes(bwrap_sandbox, body)


def test_chmod_000_file_is_unreadable(bwrap_sandbox: Sandbox) -> None:
    # BigCodeBench task 812 expects this, as in the official (non-root) container
    body = """
import os
open('secret', 'w').write('x')
os.chmod('secret', 0)
with self.assertRaises(PermissionError):
    open('secret').read()
"""
    _passes(bwrap_sandbox, body)


def test_file_system_is_read_only_outside_tmp(bwrap_sandbox: Sandbox) -> None:
    # BigCodeBench task 832 expects creating a folder at / to fail
    body = """
import os
for path in ['/newdir', '/usr/x', '/etc/x', '/sys/x', '/proc/x', '/run/x', '/dev/x']:
    with self.assertRaises(OSError, msg=path):
        os.mkdir(path)
open('/tmp/ok', 'w').write('fine')
open('/var/tmp/ok2', 'w').write('fine')
open('/dev/shm/ok3', 'w').write('fine')
"""
    _passes(bwrap_sandbox, body)


def test_host_secrets_and_repo_are_invisible(bwrap_sandbox: Sandbox) -> None:
    repo = Path(__file__).resolve().parents[3]
    body = f"""
import os
self.assertFalse(os.path.exists({str(repo)!r}))
self.assertFalse(os.path.exists('/work'))
self.assertFalse(os.path.exists('/home') and os.listdir('/home'))
for entry in os.listdir('/root') if os.path.isdir('/root') else []:
    # only what the interpreter needs (its prefix) may appear under the host home
    self.assertIn(entry, {{'.pyenv', '.local'}})
with self.assertRaises(OSError):
    open('/etc/shadow').read()
self.assertEqual(os.listdir('/proc/self/fd'), os.listdir('/proc/self/fd'))
pids = [p for p in os.listdir('/proc') if p.isdigit()]
self.assertLess(len(pids), 10)  # only this sandbox's processes
"""
    _passes(bwrap_sandbox, body)


def test_environment_is_scrubbed(bwrap_sandbox: Sandbox) -> None:
    # the fixture's sandbox was started before this variable existed; so check a fresh one
    os.environ["PASSBENCH_TEST_SECRET"] = "hunter2"
    try:
        config = SandboxConfig(python=PYTHON, workers=1, limits=TEST_LIMITS, env=(("EXTRA", "1"),))
        with open_sandbox(config) as sandbox:
            body = """
import os
self.assertNotIn('PASSBENCH_TEST_SECRET', os.environ)
self.assertEqual(os.environ['EXTRA'], '1')
self.assertFalse([k for k in os.environ if 'TOKEN' in k or 'KEY' in k or 'SECRET' in k])
"""
            _passes(sandbox, body)
    finally:
        del os.environ["PASSBENCH_TEST_SECRET"]


def test_network_is_off_by_default(bwrap_sandbox: Sandbox) -> None:
    body = """
import socket
self.assertEqual([name for _, name in socket.if_nameindex()], ['lo'])
with self.assertRaises(OSError):
    socket.create_connection(('1.1.1.1', 53), timeout=2)
"""
    _passes(bwrap_sandbox, body)


@pytest.fixture(scope="module")
def network_sandbox() -> Iterator[Sandbox]:
    limits = TEST_LIMITS.__class__(**{**TEST_LIMITS.__dict__, "allow_network": True})
    with open_sandbox(SandboxConfig(python=PYTHON, workers=1, limits=limits)) as sandbox:
        yield sandbox


def test_allow_network_shares_the_host_network(network_sandbox: Sandbox) -> None:
    host_interfaces = sorted(name for _, name in __import__("socket").if_nameindex())
    body = f"""
import socket
self.assertEqual(sorted(name for _, name in socket.if_nameindex()), {host_interfaces!r})
"""
    _passes(network_sandbox, body)
    assert run_one(network_sandbox, checks_program("net", "pass")).network


def _fs_type(path: Path) -> str:
    """The file system type of the mount holding `path`, from the host's mount table."""
    best, kind = "", ""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        mount_point, fs_type = fields[4], fields[fields.index("-") + 1]
        inside = str(path) == mount_point or str(path).startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) >= len(best):
            best, kind = mount_point, fs_type
    return kind


def test_tmp_and_the_working_directory_are_on_disk(bwrap_sandbox: Sandbox) -> None:
    # BigCodeBench's official evaluator runs samples in a temporary directory on disk, and a
    # test may see the difference (os.listdir order); /dev/shm stays a small tmpfs
    scratch = bwrap_sandbox._scratch.path  # type: ignore[attr-defined]
    host_type = _fs_type(scratch)
    assert host_type and host_type != "tmpfs"
    body = f"""
import os
mounts = {{}}
for line in open('/proc/self/mountinfo'):
    fields = line.split()
    mounts[fields[4]] = fields[fields.index('-') + 1]
self.assertEqual(mounts['/tmp'], {host_type!r})
self.assertEqual(mounts['/dev/shm'], 'tmpfs')
self.assertTrue(os.getcwd().startswith('/tmp/'))
self.assertEqual(os.stat('/tmp').st_mode & 0o7777, 0o1777)
# a tmpfs lists the newest entry first; a disk file system has its own order
names = [f'file{{i}}.txt' for i in range(30)]
for name in names:
    open(name, 'w').close()
self.assertNotEqual(os.listdir('.'), names[::-1])
"""
    _passes(bwrap_sandbox, body)


def test_scratch_folders_hold_only_what_samples_wrote_and_go_with_the_sandbox() -> None:
    config = SandboxConfig(python=PYTHON, workers=2, limits=TEST_LIMITS)
    with open_sandbox(config) as sandbox:
        scratch = sandbox._scratch.path  # type: ignore[attr-defined]
        programs = [checks_program(f"s{i}", "open('mine', 'w').write('x')") for i in range(4)]
        assert {r.status for r in sandbox.run(programs)} == {"pass"}
        folders = sorted(p.name for p in scratch.iterdir())
        assert folders and all(name.startswith("w") for name in folders)
        assert [p for folder in scratch.iterdir() for p in folder.iterdir()] == []  # emptied
    assert not scratch.exists()


def test_process_limit(bwrap_sandbox: Sandbox) -> None:
    body = """
import os, resource
self.assertEqual(resource.getrlimit(resource.RLIMIT_NPROC)[0], 64)
pids = []
with self.assertRaises(OSError):
    for _ in range(200):
        pid = os.fork()
        if pid == 0:
            import time
            time.sleep(30)
            os._exit(0)
        pids.append(pid)
"""
    _passes(bwrap_sandbox, body)


@pytest.mark.hostile
def test_caches_journals_and_results_are_out_of_reach(tmp_path: Path) -> None:
    """A sample that knows where passbench keeps its cache, journals and result files (and the
    scratch folders of other workers) can neither read nor change them."""
    cache = tmp_path / "cache"
    timings = cache / "ground-truth" / "timings.sqlite"
    journal = tmp_path / "out" / ".model.journal.sqlite"
    results = tmp_path / "out" / "model_eval_results.json"
    for path in (timings, journal, results):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"trusted")
    before = {path: path.stat().st_mtime_ns for path in (timings, journal, results)}
    config = SandboxConfig(
        python=PYTHON, workers=2, limits=TEST_LIMITS, scratch_dir=cache / "scratch"
    )
    with open_sandbox(config) as sandbox:
        scratch = sandbox._scratch.path  # type: ignore[attr-defined]
        targets = [timings, journal, results, cache, scratch, scratch / "w1", scratch / "w0"]
        body = f"""
import os
reached = []
for path in {[str(p) for p in targets]!r}:
    for attempt in (
        lambda: open(path, 'rb').read(),
        lambda: open(path, 'ab').write(b'forged'),
        lambda: os.listdir(path),
        lambda: os.utime(path),
        lambda: os.unlink(path),
        lambda: open('/proc/1/root' + path, 'rb').read(),
    ):
        try:
            attempt()
            reached.append(path)
        except OSError:
            pass
self.assertEqual(reached, [])
"""
        _passes(sandbox, body)
    for path, mtime in before.items():
        assert path.read_bytes() == b"trusted" and path.stat().st_mtime_ns == mtime


def test_scratch_folders_of_dead_processes_are_swept(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead = int(done.stdout)  # a pid that no longer runs
    root = tmp_path / "scratch"
    stale = root / f"sandbox-{socket.gethostname()}-{dead}-abc123"
    elsewhere = root / f"sandbox-another-host-{dead}-abc123"  # a shared cache: not ours to judge
    for folder in (stale / "w0", elsewhere / "w0"):
        folder.mkdir(parents=True)
        (folder / "left").write_text("x")
    (stale / "w0").chmod(0)
    config = SandboxConfig(python=PYTHON, workers=1, limits=TEST_LIMITS, scratch_dir=root)
    with open_sandbox(config):
        assert not stale.exists() and elsewhere.exists()
