"""Choosing a backend, and the rlimit-only fallback: refused unless allowed; when allowed (or
named), loud and recorded."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from passbench.core.errors import SandboxError, UnknownNameError
from passbench.core.records import Isolation
from passbench.stages.sandbox import BACKENDS, SandboxConfig, check_isolation, open_sandbox

from .conftest import BWRAP, needs_bwrap
from .helpers import PYTHON, TEST_LIMITS, run_one, unittest_program


def test_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="local-rlimit"):
        open_sandbox(SandboxConfig(python=PYTHON), backend="nope")


def test_registry_is_lazy_strings() -> None:
    assert all(":" in target for target in BACKENDS.values())


def test_forced_fallback_warns_and_records_rlimit() -> None:
    warnings: list[str] = []
    config = SandboxConfig(python=PYTHON, workers=1, limits=TEST_LIMITS)
    with open_sandbox(config, backend="local-rlimit", warn=warnings.append) as sandbox:
        assert sandbox.isolation == Isolation.RLIMIT
        result = run_one(sandbox, unittest_program("fb", "def f(x):\n    return x + 1"))
    assert result.status == "pass"
    assert result.isolation == Isolation.RLIMIT
    assert len(warnings) == 1 and "WITHOUT sandbox isolation" in warnings[0]


def test_default_warning_goes_through_the_warnings_module() -> None:
    with pytest.warns(RuntimeWarning, match="WITHOUT sandbox isolation"):
        open_sandbox(SandboxConfig(python=PYTHON), backend="local-rlimit").close()


def test_broken_interpreter_is_a_sandbox_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-python"
    with pytest.raises(SandboxError):
        open_sandbox(SandboxConfig(python=missing, allow_unsandboxed=True), warn=lambda m: None)


def test_worker_that_cannot_start_is_a_sandbox_error(tmp_path: Path) -> None:
    # the interpreter itself is fine, but the worker dies as it starts (a broken environment)
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "if sys.argv and sys.argv[0].endswith('_runner.py'):\n"
        "    sys.stderr.write('broken environment\\n')\n"
        "    sys.exit(3)\n"
    )
    config = SandboxConfig(python=PYTHON, workers=1, env=(("PYTHONPATH", str(tmp_path)),))
    program = unittest_program("x", "def f(x):\n    return x + 1")
    sandbox = open_sandbox(config, backend="local-rlimit", warn=lambda m: None)
    with sandbox, pytest.raises(SandboxError, match=r"failed to start.*broken environment"):
        list(sandbox.run([program]))


def test_missing_preload_module_is_warned_once() -> None:
    warnings: list[str] = []
    config = SandboxConfig(python=PYTHON, workers=1, limits=TEST_LIMITS)
    program = unittest_program("pre", "def f(x):\n    return x + 1")
    program = replace(program, preload=("no_such_module_xyz",))
    with open_sandbox(config, backend="local-rlimit", warn=warnings.append) as sandbox:
        assert [r.status for r in sandbox.run([program, replace(program, key="pre2")])] == [
            "pass",
            "pass",
        ]
    assert [w for w in warnings if "no_such_module_xyz" in w] == [
        "the evaluation environment cannot import no_such_module_xyz: "
        "ModuleNotFoundError: No module named 'no_such_module_xyz'"
    ]


def test_missing_bubblewrap_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxError) as refused:
        open_sandbox(SandboxConfig(python=PYTHON), warn=lambda m: None)
    message = str(refused.value)
    assert "\n" not in message
    assert "bubblewrap is not installed" in message
    assert "apt-get install bubblewrap" in message and "--allow-unsandboxed" in message
    assert check_isolation(PYTHON) is not None


def test_missing_bubblewrap_falls_back_loudly_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    warnings: list[str] = []
    config = SandboxConfig(python=PYTHON, allow_unsandboxed=True)
    with open_sandbox(config, warn=warnings.append) as sandbox:
        assert sandbox.isolation == Isolation.RLIMIT
    assert "bubblewrap is not installed" in warnings[0]


def test_bubblewrap_without_namespaces_is_refused_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. a container without user namespaces: bwrap is there, but the probe run fails
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace,' >&2\n"
        "echo 'likely because the kernel does not allow non-privileged user namespaces' >&2\n"
        "exit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    with pytest.raises(SandboxError) as refused:
        open_sandbox(SandboxConfig(python=PYTHON))
    message = str(refused.value)
    assert "\n" not in message
    assert "No permissions to create new namespace, likely because" in message
    assert "kernel.unprivileged_userns_clone=1" in message and "--allow-unsandboxed" in message
    warnings: list[str] = []
    allowed = SandboxConfig(python=PYTHON, allow_unsandboxed=True)
    with open_sandbox(allowed, warn=warnings.append) as sandbox:
        assert sandbox.isolation == Isolation.RLIMIT
    assert "No permissions to create new namespace" in warnings[0]


def test_isolation_check_passes_where_bubblewrap_works() -> None:
    if not BWRAP:
        pytest.skip("bubblewrap cannot run here")
    assert check_isolation(PYTHON) is None


@needs_bwrap
def test_folders_under_tmp_are_refused_not_silently_hidden(tmp_path: Path) -> None:
    # the sandbox shows the sample's scratch folder as /tmp: a virtual environment or NLTK
    # data under the host's /tmp would vanish (the interpreter "not found", data missing)
    import venv

    venv.create(tmp_path / "venv", symlinks=True)
    with pytest.raises(SandboxError, match=r"interpreter's folder .*venv is under /tmp"):
        open_sandbox(SandboxConfig(python=tmp_path / "venv" / "bin" / "python"))
    data = tmp_path / "nltk_data"
    data.mkdir()
    with pytest.raises(SandboxError, match=r"read-only folder .*nltk_data is under /tmp"):
        open_sandbox(SandboxConfig(python=PYTHON, read_only_paths=(data,)))
