"""A real podman backend for tests: a small runner image built once, then reused.

    with container_backend() as (backend, config):
        with open_sandbox(config, backend) as sandbox: ...

The image is the repository's Dockerfile built with `passbench image build --environment none`
(python + passbench + bubblewrap, no BigCodeBench environment: that one takes 25+ minutes) on a
minimal Debian bookworm imported from `debootstrap` (no container registry is needed). It is
tagged by a hash of the Dockerfile and passbench's source, so a change to either rebuilds it and
an unchanged tree reuses it across runs. Set PASSBENCH_TEST_IMAGE to use an image of your own
(the full one, say) instead.

Everything is skipped, with the reason, where podman cannot run a container.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from passbench.stages.sandbox import ContainerConfig, SandboxConfig
from passbench.stages.sandbox.base import EnvironmentRef

from .helpers import TEST_LIMITS

REPO = Path(__file__).resolve().parents[3]
BASE_IMAGE = "localhost/passbench-test-base:bookworm"
TEST_IMAGE_REPOSITORY = "localhost/passbench-test"
BASE_PYTHON = "3.11"  # Debian bookworm's


def _run(*command: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    # this checkout's passbench, whichever one the interpreter has installed
    path = os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )


@functools.cache
def containers_conf() -> Path | None:
    """A containers.conf for hosts like the test machine: runc (crun refuses cgroup v1/v2
    hybrids) and an explicit open-files limit (the default exceeds a hard limit that root
    without CAP_SYS_RESOURCE cannot raise). None when the user set CONTAINERS_CONF."""
    if os.environ.get("CONTAINERS_CONF"):
        return None
    folder = Path(tempfile.mkdtemp(prefix="passbench-containers-conf-"))
    runtime = '[engine]\nruntime = "runc"\n' if shutil.which("runc") else ""
    path = folder / "containers.conf"
    path.write_text('[containers]\ndefault_ulimits = ["nofile=4096:4096"]\n\n' + runtime)
    return path


@contextlib.contextmanager
def _engine_environment() -> Iterator[None]:
    conf = containers_conf()
    if conf is None:
        yield
        return
    old = os.environ.get("CONTAINERS_CONF")
    os.environ["CONTAINERS_CONF"] = str(conf)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CONTAINERS_CONF", None)
        else:
            os.environ["CONTAINERS_CONF"] = old


def _source_hash() -> str:
    digest = hashlib.sha256()
    files = [REPO / "Dockerfile", REPO / "pyproject.toml"]
    files += sorted(p for p in (REPO / "src" / "passbench").rglob("*") if p.is_file())
    for path in files:
        if "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


@functools.cache
def podman_refusal() -> str | None:
    """Why podman cannot run the tests here, or None when it can."""
    if shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman)"
    with _engine_environment():
        probe = _run("podman", "info", timeout=120)
    if probe.returncode != 0:
        return f"podman info failed: {probe.stderr.strip()[-300:]}"
    return None


def _ensure_base() -> None:
    """A minimal Debian bookworm with python3, venv and bubblewrap, from debootstrap."""
    if _run("podman", "image", "exists", BASE_IMAGE).returncode == 0:
        return
    if shutil.which("debootstrap") is None or os.geteuid() != 0:
        pytest.skip(
            "the test base image needs debootstrap, run as root (apt-get install debootstrap)"
        )
    with tempfile.TemporaryDirectory(prefix="passbench-rootfs-") as root:
        mirror = os.environ.get("PASSBENCH_TEST_DEBIAN_MIRROR", "http://deb.debian.org/debian")
        made = _run(
            "debootstrap",
            "--variant=minbase",
            "--include=python3,python3-venv,bubblewrap,git,iproute2",
            "bookworm",
            root,
            mirror,
            timeout=1200,
        )
        if made.returncode != 0:
            pytest.fail(f"debootstrap failed: {made.stdout[-500:]}{made.stderr[-500:]}")
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            ["podman", "import", "-", BASE_IMAGE],
            stdin=tar.stdout,
            capture_output=True,
            check=False,
        )
        tar.wait()
        if imported.returncode != 0:
            pytest.fail(f"podman import failed: {imported.stderr.decode()[-500:]}")


@contextlib.contextmanager
def _wheelhouse() -> Iterator[str]:
    """passbench and its dependencies as wheels, served on 127.0.0.1 for the build's pip (the
    build then needs no index and no certificates of its own)."""
    with tempfile.TemporaryDirectory(prefix="passbench-wheels-") as folder:
        built = _run(
            sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", folder,
            str(REPO), "setuptools>=77", "wheel",
        )  # fmt: skip
        if built.returncode != 0:
            pytest.fail(f"pip wheel failed: {built.stderr[-800:]}")
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=folder)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/"
        finally:
            server.shutdown()
            server.server_close()


@functools.cache
def runner_test_image() -> str:
    """The test image's tag, built when this source tree has none yet."""
    configured = os.environ.get("PASSBENCH_TEST_IMAGE")
    if configured:
        return configured
    tag = f"{TEST_IMAGE_REPOSITORY}:{_source_hash()}"
    with _build_lock():
        if _run("podman", "image", "exists", tag).returncode != 0:
            _build_runner_image(tag)
    return tag


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    """One build at a time: pytest-xdist workers asking for the image together wait for the
    first to build it, then find it, instead of building it twice."""
    folder = REPO / "build"
    folder.mkdir(exist_ok=True)
    with (folder / "test-image.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _build_runner_image(tag: str) -> None:
    _ensure_base()
    with _wheelhouse() as url:
        command = [
            sys.executable, "-m", "passbench.apps.cli", "image", "build", "--engine", "podman",
            "--python", BASE_PYTHON, "--base-image", BASE_IMAGE, "--environment", "none",
            "--network", "host", "--pip-arg=--no-index", f"--pip-arg=--find-links={url}",
            "--tag", tag, "--context", str(REPO),
        ]  # fmt: skip
        built = _run(*command, timeout=1200)
    if built.returncode != 0:
        pytest.fail(f"building the test image failed: {built.stdout[-1500:]}{built.stderr[-500:]}")


@contextlib.contextmanager
def container_backend(workers: int = 2) -> Iterator[tuple[str, SandboxConfig]]:
    """("podman", a SandboxConfig running the test image): for any test that opens backends
    by name (the contract suite). Skips where podman cannot run containers. Programs needing
    no evaluation environment only, unless PASSBENCH_TEST_IMAGE names an image with one (then
    set `environment` on the config to EnvironmentRef("bigcodebench"))."""
    refusal = podman_refusal()
    if refusal is not None:
        pytest.skip(refusal)
    with _engine_environment():
        image = runner_test_image()
        yield (
            "podman",
            SandboxConfig(
                python=Path(sys.executable),  # unused: the image's interpreter runs programs
                workers=workers,
                limits=TEST_LIMITS,
                backend_config=ContainerConfig(image),
                environment=EnvironmentRef("host"),
            ),
        )
