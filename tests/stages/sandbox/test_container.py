"""The docker/podman backends: the exact engine commands and image labels (pure), and real podman
containers of a runner image built from the repository's Dockerfile (container_support.py):
verdicts equal the local sandbox's, the container's own walls hold, a killed container costs
only its pending programs, and no container is left behind."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from passbench.apps.cli import cli
from passbench.core.errors import SandboxError
from passbench.core.records import ExecResult, Isolation, Program, RepositorySpec
from passbench.core.settings.registry import BACKEND_NAMES
from passbench.stages.sandbox import BACKENDS, TARGETS, Sandbox, describe_backend, open_sandbox
from passbench.stages.sandbox.base import ContainerConfig, EnvironmentRef, Limits, SandboxConfig
from passbench.stages.sandbox.remote.container import (
    ContainerSandbox,
    engine_command,
    image_environment,
    parse_inspect,
    run_command,
)
from passbench.stages.sandbox.remote.container_repos import (
    RepositoryBatch,
    _cannot_show,
    repository_batch,
)
from passbench.stages.sandbox.remote.images import (
    ImageSpec,
    build_command,
    environment_lock,
    lock_label,
)

from .conftest import needs_bwrap
from .container_support import REPO, container_backend
from .helpers import PYTHON, TEST_LIMITS, checks_program, unittest_program

VERSION = "0.1.0"
LOCK310 = environment_lock("bigcodebench", "3.10")


# --- pure: commands, labels, registry ----------------------------------------------------------


def test_both_engines_are_registered_and_choosable() -> None:
    for name in ("docker", "podman"):
        assert name in BACKENDS and name in TARGETS and name in BACKEND_NAMES


def test_run_command_is_exactly_the_isolating_one() -> None:
    limits = Limits(memory_mb=1024, tmp_mb=64, processes=64)
    command = run_command("podman", "sha256:abc", "passbench-1", limits, workers=2)
    assert command == [
        "podman", "run", "--rm", "--interactive", "--name=passbench-1",
        "--label=org.passbench.agent=1", "--network=none", "--read-only",
        "--tmpfs=/tmp:rw,exec,nosuid,nodev,mode=1777,size=192m",
        "--memory=2688m", "--memory-swap=2688m", "--pids-limit=192",
        "--ulimit=nofile=4096:4096", "--ulimit=nproc=192:192",
        "--cap-drop=ALL", "--security-opt=no-new-privileges", "--user=10001:10001",
        "--security-opt=unmask=/proc/*", "sha256:abc", "--skip-integrity-check",
    ]  # fmt: skip


def test_a_container_of_repository_programs_is_shown_their_folders_read_only() -> None:
    """Root with the few capabilities the repository sandbox uses as root (not all of them),
    room for working copies, and the host folders the programs name, read-only at their own
    paths, named to the agent; everything else as for other programs."""
    batch = RepositoryBatch(
        repos_dirs=(Path("/srv/mirrors"),),
        env_dirs=(("swebench", Path("/srv/envs")),),
        base_prefixes=(Path("/opt/pyenv/versions/3.9.20"),),
        memory_mb=8192,
        python=Path("/srv/venv/bin/python"),
        python_folders=(Path("/srv/venv"), Path("/opt/pyenv/versions/3.9.20")),
    )
    limits = Limits(memory_mb=1024, tmp_mb=64, processes=64)
    command = run_command("podman", "sha256:abc", "n", limits, workers=2, repositories=batch)
    plain = run_command("podman", "sha256:abc", "n", limits, workers=2)
    assert "--user=10001:10001" in plain and "--user=10001:10001" not in command
    assert [a for a in command if a.startswith(("--user", "--cap-"))] == [
        "--cap-drop=ALL", "--user=0:0", "--cap-add=CHOWN", "--cap-add=DAC_OVERRIDE",
        "--cap-add=FOWNER", "--cap-add=SETUID", "--cap-add=SETGID", "--cap-add=SETFCAP",
    ]  # fmt: skip
    for kept in ("--network=none", "--read-only", "--security-opt=no-new-privileges"):
        assert kept in command
    # 2 x (64 + 4096) + 64, and exec: the working copy's programs run from it
    assert "--tmpfs=/tmp:rw,exec,nosuid,nodev,mode=1777,size=8384m" in command
    assert "--memory=27264m" in command  # 2 x (1024 + 64) + 512 + 2 x (8192 + 4096)
    assert "--pids-limit=1216" in command and "--ulimit=nproc=1216:1216" in command
    volumes = [a for a in command if a.startswith("--volume")]
    assert volumes == [
        "--volume=/srv/mirrors:/srv/mirrors:ro", "--volume=/srv/envs:/srv/envs:ro",
        "--volume=/opt/pyenv/versions/3.9.20:/opt/pyenv/versions/3.9.20:ro",
        "--volume=/srv/venv:/srv/venv:ro",
    ]  # fmt: skip
    assert command.index(volumes[-1]) < command.index("sha256:abc")
    assert command[command.index("sha256:abc") :] == [
        "sha256:abc", "--skip-integrity-check", "--repos", "/srv/mirrors",
        "--env-dir", "swebench=/srv/envs", "--repository-python", "/srv/venv/bin/python",
    ]  # fmt: skip


def test_folders_that_would_hide_the_image_are_not_shown(tmp_path: Path) -> None:
    assert _cannot_show(tmp_path) == ""  # pytest's folders lie in /tmp: shown above its tmpfs
    for folder, why in [
        (Path("/usr"), "it would hide the image's /usr"),
        (Path("/"), "it would hide the image's /usr"),
        (Path("/usr/local"), "it lies in the image's /usr"),
        (Path("/tmp"), "it would hide the image's /tmp"),
        (tmp_path / "absent", "is not a folder of this machine"),
    ]:
        assert why in _cannot_show(folder), folder
    (tmp_path / "a:b").mkdir()
    assert "':', ',' or a space" in _cannot_show(tmp_path / "a:b")


def test_a_mirror_that_is_a_link_is_shown_with_where_it_leads(tmp_path: Path) -> None:
    """A mirror folder of symbolic links to git directories kept elsewhere: the container sees
    the folder and each link's target, or the links would lead nowhere inside."""
    kept = tmp_path / "kept" / "repo"
    subprocess.run(["git", "init", "-q", "--bare", str(kept)], check=True)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    tree = subprocess.run(
        ["git", "--git-dir", str(kept), "mktree"], input="", capture_output=True, text=True,
        check=True,
    ).stdout.strip()  # fmt: skip
    commit = subprocess.run(
        ["git", "--git-dir", str(kept), "commit-tree", tree, "-m", "base"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout.strip()  # fmt: skip
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    (mirrors / "owner__name.git").symlink_to(kept)
    git_dir = str(mirrors / "owner__name.git")
    spec = RepositorySpec(git_dir=git_dir, commit=commit, script="true", repo="owner/name")
    program = Program(key="k", task_id="t", source="", style="repository", repository=spec)
    batch = repository_batch([program], "podman backend", Path(PYTHON))
    assert batch is not None
    assert batch.repos_dirs == (mirrors,) and batch.linked_mirrors == (kept,)
    assert f"--volume={kept}:{kept}:ro" in batch.engine_options()
    assert batch.agent_options()[:2] == ["--repos", str(mirrors)]  # searched there, by name


def test_docker_needs_more_to_nest_bubblewrap_and_networking_is_opt_in() -> None:
    limits = Limits(allow_network=True)
    command = run_command("docker", "sha256:abc", "n", limits, workers=1, allow_unsandboxed=True)
    assert "--security-opt=seccomp=unconfined" in command
    assert "--security-opt=systempaths=unconfined" in command
    assert "--network=bridge" in command and "--network=none" not in command
    assert command[-3:] == ["sha256:abc", "--skip-integrity-check", "--allow-unsandboxed"]


def _labels(**extra: str) -> dict[str, str]:
    return {
        "org.passbench.version": VERSION,
        "org.passbench.python_version": "3.10",
        lock_label("bigcodebench"): LOCK310,
        **extra,
    }


def test_inspect_output_of_docker_and_podman_parses_alike() -> None:
    docker = json.dumps([{"Id": "sha256:" + "a" * 64, "Config": {"Labels": _labels()}}])
    podman = json.dumps([{"Id": "b" * 64, "Config": {}, "Labels": _labels()}])
    assert parse_inspect(docker, "img").id == "sha256:" + "a" * 64
    parsed = parse_inspect(podman, "img")
    assert parsed.id == "sha256:" + "b" * 64
    assert parsed.labels[lock_label("bigcodebench")] == LOCK310
    with pytest.raises(SandboxError, match="no image id"):
        parse_inspect("[]", "img")


def test_image_environment_from_labels() -> None:
    wanted = EnvironmentRef("bigcodebench", LOCK310)
    assert image_environment(_labels(), wanted, "img") == EnvironmentRef(
        "bigcodebench", LOCK310, "3.10"
    )
    # no lock asked for: the image's is taken
    assert image_environment(_labels(), EnvironmentRef("bigcodebench"), "img").lock_sha256 == (
        LOCK310
    )
    with pytest.raises(SandboxError, match=r"lock abb485e92207, this run's is 000000000000"):
        image_environment(_labels(), EnvironmentRef("bigcodebench", "0" * 64), "img")
    empty = _labels(**{lock_label("bigcodebench"): ""})
    with pytest.raises(SandboxError, match=r"no 'bigcodebench' environment \(it has: none\)"):
        image_environment(empty, wanted, "img")
    with pytest.raises(SandboxError, match=r"holds passbench 0\.0\.1.*passbench image build"):
        image_environment(_labels(**{"org.passbench.version": "0.0.1"}), wanted, "img")


def test_build_command_pins_version_and_lock() -> None:
    spec = ImageSpec()
    assert spec.tag() == f"passbench:{VERSION}-{LOCK310[:12]}"
    command = build_command("docker", spec, Path("/ctx"))
    assert command[:2] == ["docker", "build"]
    assert f"BIGCODEBENCH_LOCK_SHA256={LOCK310}" in command
    assert "BASE_IMAGE=python:3.10-slim-bookworm" in command
    assert f"PASSBENCH_VERSION={VERSION}" in command
    assert command[-5:] == ["--tag", spec.tag(), "--file", "/ctx/Dockerfile", "/ctx"]
    both = ("linux/amd64", "linux/arm64")
    assert build_command("docker", spec, Path("/c"), platforms=both)[:4] == [
        "docker", "buildx", "build", "--platform=linux/amd64,linux/arm64",
    ]  # fmt: skip
    podman = build_command("podman", spec, Path("/c"), platforms=both)
    assert podman[-5:] == ["--manifest", spec.tag(), "--file", "/c/Dockerfile", "/c"]
    assert "--tag" not in podman


def test_image_build_dry_run_prints_the_command() -> None:
    result = CliRunner().invoke(
        cli, ["image", "build", "--engine", "podman", "--dry-run", "--context", str(REPO)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("podman build ")
    assert f"--tag passbench:{VERSION}-{LOCK310[:12]}" in result.output


def test_missing_engine_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxError, match="apt-get install podman"):
        engine_command("podman")
    with pytest.raises(SandboxError, match="needs the `docker` command"):
        describe_backend(
            SandboxConfig(python=PYTHON, backend_config=ContainerConfig("x")), "docker"
        )


def test_the_agent_skips_the_integrity_check_only_when_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the container backend passes (--skip-integrity-check) reaches the runner setup;
    without it the agent checks the environment, as on a host."""
    from passbench.stages.sandbox.remote import agent

    setups: list[agent.RunnerSetup] = []

    def answer(request: object, setup: agent.RunnerSetup) -> Iterator[bytes]:
        setups.append(setup)
        yield b'{"done": true}\n'

    monkeypatch.setattr(agent, "answer", answer)
    body = b'{"protocol": 1, "environment": {"name": "host"}, "programs": []}'
    monkeypatch.setattr(agent.sys, "stdin", _Stdin(body))
    assert agent.main(["--skip-integrity-check"]) == 0
    monkeypatch.setattr(agent.sys, "stdin", _Stdin(body))
    assert agent.main([]) == 0
    skipping, checking = setups
    assert skipping.verify is not None and checking.verify is None


class _Stdin:
    """sys.stdin as the agent reads it (its .buffer)."""

    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


# --- real podman containers --------------------------------------------------------------------


@pytest.fixture(scope="module")
def podman_config() -> Iterator[SandboxConfig]:
    with container_backend() as (backend, config):
        assert backend == "podman"
        yield config


@pytest.fixture(scope="module")
def podman_sandbox(podman_config: SandboxConfig) -> Iterator[Sandbox]:
    with open_sandbox(podman_config, "podman") as sandbox:
        yield sandbox


def _programs() -> list[Program]:
    return [
        unittest_program("pass", "def f(x):\n    return x + 1"),
        unittest_program("fail", "def f(x):\n    return x"),
        unittest_program("raise", "def f(x):\n    raise ValueError('no')"),
        unittest_program("slow", "import time\ndef f(x):\n    time.sleep(30)", timeout_s=2.0),
        checks_program("net", "import socket\nsocket.create_connection(('1.1.1.1', 53), 2)"),
        checks_program("write", "open('/usr/lib/x', 'w')"),
        checks_program("uid", "import os\nself.assertNotEqual(os.getuid(), 0)"),
    ]


def _summary(results: list[ExecResult]) -> dict[str, tuple[str, str | None]]:
    return {r.key: (r.status, r.category.value if r.category else None) for r in results}


@pytest.mark.slow
@needs_bwrap
def test_verdicts_equal_the_local_sandbox(podman_sandbox: Sandbox) -> None:
    programs = _programs()
    contained = list(podman_sandbox.run(programs))
    local_config = SandboxConfig(python=PYTHON, workers=2, limits=TEST_LIMITS)
    with open_sandbox(local_config) as local:
        here = list(local.run(programs))
    assert _summary(contained) == _summary(here)
    assert _summary(contained)["pass"] == ("pass", None)
    assert _summary(contained)["slow"][0] == "timeout"
    assert {r.isolation for r in contained} == {Isolation.BUBBLEWRAP}
    assert podman_sandbox.isolation is Isolation.BUBBLEWRAP


@pytest.mark.slow
def test_describe_names_the_image_by_id(podman_config: SandboxConfig) -> None:
    target = describe_backend(podman_config, "podman")
    assert target is not None
    assert target.location.startswith(f"{podman_config.own(ContainerConfig).image}@sha256:")
    assert target.environment.name == "host" and target.environment.python_version == "3.11"
    with pytest.raises(SandboxError, match=r"no 'bigcodebench' environment"):
        describe_backend(
            replace(podman_config, environment=EnvironmentRef("bigcodebench")), "podman"
        )
    with pytest.raises(SandboxError, match="passbench image build --engine podman"):
        describe_backend(
            replace(podman_config, backend_config=ContainerConfig("localhost/passbench-none:0")),
            "podman",
        )


@pytest.mark.slow
def test_the_container_itself_has_no_network_and_a_read_only_root(
    podman_config: SandboxConfig,
) -> None:
    """The wall beneath bubblewrap: the agent's own process (not a sample) sees only a
    loopback device, cannot write outside /tmp, and is not root."""
    image_id = describe_backend(podman_config, "podman").location.split("@")[1]  # type: ignore[union-attr]
    command = run_command("podman", image_id, "passbench-walls", TEST_LIMITS, workers=1)
    probe = (
        "import os, json\n"
        "def writable(p):\n"
        "    try:\n"
        "        open(p, 'w').close(); return True\n"
        "    except OSError:\n"
        "        return False\n"
        "print(json.dumps({'nets': sorted(os.listdir('/sys/class/net')), 'uid': os.getuid(),"
        " 'opt': writable('/opt/passbench/x'), 'etc': writable('/etc/x'),"
        " 'tmp': writable('/tmp/x')}))\n"
    )
    at = command.index(image_id)
    command = [*command[:at], "--entrypoint=python", image_id, "-c", probe]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "nets": ["lo"], "uid": 10001, "opt": False, "etc": False, "tmp": True,
    }  # fmt: skip


def _existing(names: list[str]) -> list[str]:
    """Which of these containers the engine still has (running or not)."""
    listed = subprocess.run(
        ["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True
    )
    return sorted(set(names) & set(listed.stdout.split()))


@pytest.mark.slow
def test_a_killed_container_costs_only_its_pending_programs(podman_config: SandboxConfig) -> None:
    programs = [unittest_program("quick", "def f(x):\n    return x + 1")] + [
        unittest_program(f"nap{i}", "import time\ndef f(x):\n    time.sleep(2)\n    return x + 1")
        for i in range(3)
    ]
    config = replace(podman_config, workers=1)
    warnings: list[str] = []
    seen: list[str] = []
    started: list[str] = []
    with open_sandbox(config, "podman", warn=warnings.append) as sandbox:
        assert isinstance(sandbox, ContainerSandbox)

        def kill_on_first(result: ExecResult) -> None:
            seen.append(result.key)
            if not started:
                started.extend(sandbox.running)
                for name in started:
                    subprocess.run(["podman", "kill", name], capture_output=True, check=False)

        begun = time.monotonic()
        results = []
        for result in sandbox.run(programs):
            kill_on_first(result)
            results.append(result)
    assert started, "no container was running at the first verdict"
    assert sorted(r.key for r in results) == sorted(p.key for p in programs)
    assert sorted(seen) == sorted(p.key for p in programs)  # each verdict once
    assert all(r.status == "pass" for r in results)
    assert warnings and "exit 137" in warnings[0]
    assert time.monotonic() - begun < 60
    assert _existing(started) == []


def _drain(stream: Iterator[ExecResult]) -> None:
    with contextlib.suppress(SandboxError):  # "the backend was closed": what close() does
        next(stream, None)


@pytest.mark.slow
def test_an_abandoned_run_leaves_no_container(podman_config: SandboxConfig) -> None:
    programs = [
        unittest_program(f"nap{i}", "import time\ndef f(x):\n    time.sleep(20)") for i in range(2)
    ]
    with open_sandbox(replace(podman_config, workers=1), "podman") as sandbox:
        assert isinstance(sandbox, ContainerSandbox)
        stream = sandbox.run(programs)
        thread = threading.Thread(target=_drain, args=(stream,), daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            names = sandbox.running
            if names and _existing(names) == names:
                break
            time.sleep(0.1)
        assert names and _existing(names) == names, "the container never started"
    # close() removed it although its run was still going
    assert _existing(names) == []


@pytest.mark.slow
def test_closing_while_a_container_starts_leaves_none(podman_config: SandboxConfig) -> None:
    """close() right after the backend named a container, before the engine created it."""
    programs = [unittest_program("nap", "import time\ndef f(x):\n    time.sleep(20)")]
    sandbox = open_sandbox(replace(podman_config, workers=1), "podman")
    assert isinstance(sandbox, ContainerSandbox)
    thread = threading.Thread(target=_drain, args=(sandbox.run(programs),), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not sandbox.running and time.monotonic() < deadline:
        time.sleep(0.01)
    names = sandbox.running
    assert names
    sandbox.close()
    thread.join(timeout=30)
    assert not thread.is_alive()
    time.sleep(2)  # a container created after a first removal would show up by now
    assert _existing(names) == []


def test_image_with_multiple_toolchains_dry_run() -> None:
    """--with-multipl-e: MULTIPLE=1 with the language table's packages and tools, a tag that
    says so; the Dockerfile's defaults (for hand builds) and its label agree with the table."""
    import itertools
    import re
    import shlex

    from passbench.stages.benchmarks import benchmark_toolchains
    from passbench.stages.benchmarks.multiple import LANGUAGES
    from passbench.stages.sandbox.remote.images import toolchain_build_args

    arguments = ["image", "build", "--engine", "docker", "--dry-run", "--with-multipl-e"]
    result = CliRunner().invoke(cli, [*arguments, "--context", str(REPO)])
    assert result.exit_code == 0, result.output
    words = shlex.split(result.output.splitlines()[0])
    args = dict(
        word.split("=", 1)
        for previous, word in itertools.pairwise(words)
        if previous == "--build-arg"
    )
    assert args["MULTIPLE"] == "1"
    packages = set(args["MULTIPLE_PACKAGES"].split())
    assert packages == set(benchmark_toolchains().packages)  # HumanEval-X's too
    assert {p for lang in LANGUAGES.values() for p in lang.debian_packages} <= packages
    assert {"nodejs", "default-jdk", "rustc", "lua5.3"} <= packages
    assert words[words.index("--tag") + 1] == f"passbench:{VERSION}-{LOCK310[:12]}-multipl-e"
    plain = CliRunner().invoke(cli, ["image", "build", "--dry-run", "--context", str(REPO)])
    assert "MULTIPLE" not in plain.output

    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    for name, value in toolchain_build_args(benchmark_toolchains()).items():
        if name != "MULTIPLE":
            assert f'ARG {name}="{value}"' in dockerfile
    label = re.search(r'org\.passbench\.toolchains="\$\{MULTIPLE:\+([^}]*)\}"', dockerfile)
    assert label is not None and label.group(1).split() == list(LANGUAGES)


def test_the_image_gets_the_npm_packages_setup_installs() -> None:
    """MULTIPLE=1 installs from npm what scripts/setup.sh installs, at the same pins: tsc and
    js-md5 (the language tables' npm packages) and Aider's polyglot JavaScript test stack, in
    the folder its exercises link (toolchains.py)."""
    import re

    from passbench.stages.benchmarks.aider_polyglot.toolchains import JS_MODULES, JS_PACKAGES
    from passbench.stages.benchmarks.humanevalx import LANGUAGES as HUMANEVAL_X
    from passbench.stages.benchmarks.multiple import LANGUAGES as MULTIPLE

    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    setup = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    tables = [*MULTIPLE.values(), *HUMANEVAL_X.values()]
    npm = {package for language in tables for package in language.npm_packages}
    found = re.search(r'^ARG NPM_PACKAGES="([^"]*)"$', dockerfile, re.MULTILINE)
    assert found is not None and set(found.group(1).split()) == npm
    assert f"npm_wanted=({found.group(1)})" in setup
    aider = re.search(r'^ARG AIDER_JS_PACKAGES="([^"]*)"$', dockerfile, re.MULTILINE)
    assert aider is not None and tuple(aider.group(1).split()) == JS_PACKAGES
    assert f'js_wanted="{aider.group(1)}"' in setup
    folder = JS_MODULES.removesuffix("/node_modules")
    install = dockerfile.split("ARG AIDER_JS_PACKAGES", 1)[1]
    assert (
        f"js={folder};" in install and "install --no-audit --no-fund $AIDER_JS_PACKAGES" in install
    )


def test_the_image_builds_the_toolchain_caches_setup_builds() -> None:
    """MULTIPLE=1 runs the script scripts/setup.sh runs for the compiled caches (HumanEval-X's
    Rust crates, the Go build cache), with its sources in the build context, and checks the
    files the language tables link against."""
    from passbench.stages.benchmarks.humanevalx import GO_CACHE_SEED, RUST_CRATES

    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    setup = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    script = (REPO / "scripts" / "toolchain-caches.sh").read_text(encoding="utf-8")
    ignored = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert "bash scripts/toolchain-caches.sh" in setup
    for source in ("toolchain-caches.sh", "humaneval-x-rust", "humaneval-x-go"):
        assert f"COPY scripts/{source} /tmp/toolchains/{source}" in dockerfile
        assert any(line.startswith(f"!scripts/{source}") for line in ignored), source
    assert "bash /tmp/toolchains/toolchain-caches.sh" in dockerfile
    assert (
        f"crates={RUST_CRATES}" in script
        and f"seed={GO_CACHE_SEED.removesuffix('/gocache')}" in script
    )
    assert (
        f"{RUST_CRATES}/lib$crate.rlib" in dockerfile and f"test -d {GO_CACHE_SEED}" in dockerfile
    )
