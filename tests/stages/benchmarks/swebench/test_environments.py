"""environments.py: one real build from PyPI (and its cached second call), concurrent builders,
the offline install of a real small repository inside bubblewrap, and the install commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from passbench.core.errors import EnvironmentError_, InputError
from passbench.stages.benchmarks.swebench import specs
from passbench.stages.benchmarks.swebench.environments import (
    BuiltEnvironment,
    build_environment,
    instance_environment,
    open_environment,
    repository_install_command,
)
from passbench.stages.benchmarks.swebench.locks import (
    EnvironmentChoice,
    EnvironmentKey,
    EnvironmentLock,
    lock_from_export,
    lock_from_spec,
)
from passbench.stages.benchmarks.swebench.specs import RepoSpec, spec_for
from passbench.stages.evalenv.manifest import verify_manifest

from .envdata import bwrap_works, make_wheel

PYTHON = ".".join(map(str, sys.version_info[:3]))
MINOR = ".".join(map(str, sys.version_info[:2]))
REPO = "example/tiny"
SRC = Path(__file__).resolve().parents[4] / "src"


def export(*pins: str) -> str:
    """A conda export of this Python and `pins` in its pip section."""
    lines = ["name: testbed", "channels:", "  - defaults", "dependencies:"]
    lines += ["  - _libgcc_mutex=0.1=main", f"  - python={PYTHON}=h1234567_0", "  - pip:"]
    lines += [f"      - {pin}" for pin in pins]
    return "\n".join([*lines, "prefix: /opt/miniconda3/envs/testbed", ""])


@pytest.fixture(scope="module")
def tiny_lock() -> Iterator[EnvironmentLock]:
    """six and wheel from PyPI; flit_core as the build backend the repository asks for."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(specs.BUILD_TOOLS, REPO, {MINOR: ("flit-core==3.9.0",)})
        yield lock_from_export(export("six==1.16.0", "wheel==0.44.0"), REPO)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("swebench-envs")


@pytest.fixture(scope="module")
def tiny_env(tiny_lock: EnvironmentLock, cache: Path) -> BuiltEnvironment:
    """The one real build from PyPI of this file."""
    return build_environment(tiny_lock, cache)


def test_real_build_then_cached(
    tiny_env: BuiltEnvironment, tiny_lock: EnvironmentLock, cache: Path
) -> None:
    assert tiny_env.status == "built"
    assert tiny_env.lock_sha256 == tiny_lock.sha256
    assert tiny_env.python_pin == PYTHON
    assert tiny_env.python_version.startswith(MINOR + ".")
    assert (cache / tiny_lock.sha256).resolve() == tiny_env.root
    assert tiny_env.root.parent == cache / "builds"
    # a Python prefix of its own, not a venv (see _make_prefix)
    assert not (tiny_env.root / "pyvenv.cfg").exists()
    assert (tiny_env.root / "bin" / f"python{MINOR}").is_file()
    assert (tiny_env.root / "passbench-lock.txt").read_text() == tiny_lock.text
    record = json.loads((tiny_env.root / "passbench-swebench-env.json").read_text())
    assert record["lock_sha256"] == tiny_lock.sha256
    assert record["python_version"] == tiny_env.python_version
    installed = subprocess.run(
        [str(tiny_env.python), "-m", "pip", "list", "--format=json"],
        capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    versions = {row["name"].lower(): row["version"] for row in json.loads(installed.stdout)}
    assert versions["six"] == "1.16.0" and versions["wheel"] == "0.44.0"
    assert "flit-core" not in versions and "flit_core" not in versions  # build tools aside
    assert (tiny_env.build_tools / "flit_core").is_dir()
    assert verify_manifest(tiny_env.root, full=True).intact

    started = time.monotonic()
    again = build_environment(tiny_lock, cache)
    assert time.monotonic() - started < 5
    assert again.status == "cached"
    assert again.root == tiny_env.root
    assert len(list((cache / "builds").iterdir())) == 1


def test_identity_names_the_key_and_the_source(
    tiny_env: BuiltEnvironment, tiny_lock: EnvironmentLock
) -> None:
    choice = EnvironmentChoice("example__tiny-1", EnvironmentKey(REPO, "1.0"), tiny_lock, "export")
    assert tiny_env.identity(choice) == {
        "key": "example/tiny 1.0",
        "lock_source": "export",
        "borrowed_from": "",
        "lock_sha256": tiny_lock.sha256,
        "lock_kind": "export",
        "python_pin": PYTHON,
        "python": tiny_env.python_version,
    }
    other = lock_from_export(export("six==1.15.0"), REPO)
    with pytest.raises(ValueError, match="not this environment's"):
        tiny_env.identity(EnvironmentChoice("x", EnvironmentKey(REPO, "1.0"), other, "export"))


# ----------------------------------------------------------- the repository, offline, sandboxed

TINY_PYPROJECT = """\
[build-system]
requires = ["flit_core >=3.2,<4"]
build-backend = "flit_core.buildapi"

[project]
name = "tinyrepo"
version = "0.1"
description = "a repository under test"

[project.scripts]
tinyrepo-hello = "tinyrepo:hello"
"""


def sandbox(env: BuiltEnvironment, repo: Path, instance: Path, command: str, step: str) -> str:
    """Run `command` in /testbed as the runner does: no network, the environment read-only,
    the per-instance folder writable only for the install step."""
    variables = instance_environment(
        env, step="install" if step == "install" else "test", home="/tmp"
    )
    arguments = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
    for system in ("/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc"):
        if os.path.islink(system):
            arguments += ["--symlink", os.readlink(system), system]
        elif os.path.isdir(system):
            arguments += ["--ro-bind", system, system]
    arguments += [
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--ro-bind", str(env.base_prefix), str(env.base_prefix),
        "--ro-bind", str(env.root), str(env.root),
        "--bind" if step == "install" else "--ro-bind", str(instance), str(env.instance_prefix),
        "--bind", str(repo), "/testbed", "--chdir", "/testbed", "--clearenv",
    ]  # fmt: skip
    for name, value in variables.items():
        arguments += ["--setenv", name, value]
    result = subprocess.run([*arguments, "bash", "-c", command], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap cannot run")
def test_offline_editable_install_in_the_sandbox(
    tiny_env: BuiltEnvironment, tmp_path: Path
) -> None:
    repo = tmp_path / "testbed"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(TINY_PYPROJECT)
    (repo / "tinyrepo.py").write_text(
        '"""tiny"""\ndef hello():\n    print("hello from", __file__)\n'
    )
    (repo / "tests" / "test_it.py").write_text(
        "import tinyrepo\ndef test_it():\n    tinyrepo.hello()\n"
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    instance = tmp_path / "instance"
    instance.mkdir()
    spec = RepoSpec(REPO, "0.1", MINOR, "python -m pip install -e .", "python -m unittest")
    command = repository_install_command(spec)
    assert command is not None
    sandbox(tiny_env, repo, instance, command, "install")
    # what the install wrote went to the instance folder, nothing to the environment
    assert list(instance.glob(f"lib/python{MINOR}/site-packages/*.pth"))
    assert (instance / "bin" / "tinyrepo-hello").is_file()
    assert verify_manifest(tiny_env.root).intact

    probe = textwrap.dedent(
        """\
        set -e
        tinyrepo-hello
        python -c 'import tinyrepo, six; print("imported", tinyrepo.__file__)'
        ln -s "$(command -v python)" /tmp/linked-python
        /tmp/linked-python -c 'import six, tinyrepo; print("linked ok")'
        python -c 'import flit_core' 2>/dev/null && echo "build tools" || echo "no build tools"
        python -c 'import urllib.request as u; u.urlopen("http://pypi.org", timeout=3)' \\
            2>/dev/null && echo "network" || echo "no network"
        """
    )
    output = sandbox(tiny_env, repo, instance, probe, "test")
    assert "hello from /testbed/tinyrepo.py" in output
    assert "imported /testbed/tinyrepo.py" in output
    assert "linked ok" in output  # tox-current-env starts Python through such a link
    assert "no build tools" in output
    assert "no network" in output


# ----------------------------------------------------------------------------- concurrent builds

_BUILD = """\
import json, sys
from pathlib import Path
from passbench.stages.benchmarks.swebench.locks import lock_from_export
from passbench.stages.benchmarks.swebench.environments import build_environment
lock = lock_from_export(sys.argv[1], "example/offline")
offline = ("--no-index", "--find-links", sys.argv[3])
env = build_environment(lock, Path(sys.argv[2]), pip_args=offline)
print(json.dumps([env.status, str(env.root)]))
"""


def test_concurrent_builders_build_once(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "tinydep", "1.0", "VALUE = 42\n")
    text = export("tinydep==1.0")
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    processes = [
        subprocess.Popen([sys.executable, "-c", _BUILD, text, str(cache), str(wheels)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(2)
    ]  # fmt: skip
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        outcomes.append(json.loads(out))
    assert sorted(status for status, _ in outcomes) == ["built", "cached"]
    assert outcomes[0][1] == outcomes[1][1]
    assert len(list((cache / "builds").iterdir())) == 1
    lock = lock_from_export(text, "example/offline")
    opened = open_environment(lock, cache)
    assert opened is not None and str(opened.root) == outcomes[0][1]


def test_a_failed_build_is_never_published(tmp_path: Path) -> None:
    lock = lock_from_export(export("tinydep==9.9"), "example/offline")
    with pytest.raises(EnvironmentError_, match="pip install failed"):
        build_environment(lock, tmp_path, pip_args=("--no-index", "--find-links", str(tmp_path)))
    assert open_environment(lock, tmp_path) is None
    assert list((tmp_path / "builds").iterdir()) == []


def test_refuses_unpinned_and_missing_python(tmp_path: Path) -> None:
    spec_lock = lock_from_spec(spec_for("psf/requests", "2.3"))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unpinned"):
        build_environment(spec_lock, tmp_path)
    ancient = lock_from_export(export("six==1.16.0").replace(PYTHON, "2.5.6"), REPO)
    with pytest.raises(EnvironmentError_, match=r"no Python 2\.5 on this machine"):
        build_environment(ancient, tmp_path)
    assert not (tmp_path / spec_lock.sha256).exists()


# ------------------------------------------------------------------------- install commands


@pytest.mark.parametrize(
    ("repo", "version", "expected"),
    [
        ("psf/requests", "2.26", "python -m pip install {flags} --prefix {prefix} ."),
        ("pallets/flask", "2.3", "python -m pip install {flags} --prefix {prefix} -e ."),
        (
            "astropy/astropy",
            "5.0",
            "python -m pip install {flags} --prefix {prefix} -e '.[test]' --verbose",
        ),
        (
            "scikit-learn/scikit-learn",
            "1.3",
            "python -m pip install {flags_isolated} --prefix {prefix} -v --no-use-pep517 "
            "--no-build-isolation -e .",
        ),
        (
            "matplotlib/matplotlib",
            "3.8",
            "python -m pip install {flags_isolated} --prefix {prefix} --no-build-isolation "
            "-e '.[dev]'",
        ),
        ("django/django", "2.2", "python setup.py install --prefix {prefix}"),
    ],
)
def test_install_commands_run_offline(repo: str, version: str, expected: str) -> None:
    flags = (
        "--no-build-isolation --no-deps --no-index --no-cache-dir --disable-pip-version-check "
        "--no-input --no-warn-script-location"
    )
    spec = spec_for(repo, version)
    assert spec is not None
    command = repository_install_command(spec)
    body = expected.format(
        flags=flags,
        flags_isolated=flags.replace("--no-build-isolation ", ""),
        prefix='"$PASSBENCH_SITE_PREFIX"',
    )
    assert command == f'mkdir -p "$PASSBENCH_SITE_PACKAGES" && {body}'


def test_install_commands_compound_none_and_unknown() -> None:
    spec = RepoSpec("o/r", "1", "3.9", "python setup.py build; python setup.py install", "pytest")
    assert repository_install_command(spec) == (
        'mkdir -p "$PASSBENCH_SITE_PACKAGES" && python setup.py build ; '
        'python setup.py install --prefix "$PASSBENCH_SITE_PREFIX"'
    )
    assert repository_install_command(RepoSpec("o/r", "1", "3.9", None, "pytest")) is None
    with pytest.raises(InputError, match="cannot run 'make install' offline"):
        repository_install_command(RepoSpec("o/r", "1", "3.9", "make install", "pytest"))


def test_instance_environment(tiny_env: BuiltEnvironment) -> None:
    install = instance_environment(tiny_env, step="install", home="/tmp/home")
    test = instance_environment(tiny_env, step="test", home="/tmp/home")
    site = f"{tiny_env.root}/instance/lib/python{MINOR}/site-packages"
    assert install["PASSBENCH_SITE_PACKAGES"] == test["PASSBENCH_SITE_PACKAGES"] == site
    assert install["PYTHONPATH"] == f"{site}:{tiny_env.build_tools}"
    assert install["PIP_NO_INDEX"] == "1"
    assert "PYTHONPATH" not in test and "PIP_NO_INDEX" not in test
    assert test["PATH"].startswith(f"{tiny_env.root}/instance/bin:{tiny_env.root}/bin:")
    assert test["GIT_CONFIG_KEY_0"] == "safe.directory"


def test_a_changed_environment_is_refused(
    tiny_env: BuiltEnvironment, tiny_lock: EnvironmentLock, cache: Path
) -> None:
    planted = tiny_env.root / "lib" / f"python{MINOR}" / "site-packages" / "zz-planted.pth"
    planted.write_text("import os\n")
    try:
        with pytest.raises(EnvironmentError_, match=r"zz-planted.pth was added.*force=True"):
            build_environment(tiny_lock, cache)
    finally:
        planted.unlink()
    assert build_environment(tiny_lock, cache).status == "cached"
