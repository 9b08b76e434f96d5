"""The evaluation environment's interpreter never sees the host's API keys: every way passbench
runs it on the host (import probe, NLTK's downloader, pip, its version) gets a whitelisted
environment and a private HOME. A .pth file in the environment records what each run saw, as
any package installed there could."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from passbench.core.errors import EnvironmentError_
from passbench.core.progress import NullProgress
from passbench.stages.evalenv import create, nltk_data
from passbench.stages.evalenv.check import check_imports
from passbench.stages.evalenv.hostenv import scrubbed_environment
from passbench.stages.evalenv.lock import parse_lock

from .conftest import make_venv

SECRETS = {
    "OPENAI_API_KEY": "sk-fake-openai",
    "ANTHROPIC_API_KEY": "sk-fake-anthropic",
    "HF_TOKEN": "hf_fake",
    "AWS_SECRET_ACCESS_KEY": "fake",
    "SOME_SERVICE_PASSWORD": "fake",
    "PIP_API_TOKEN": "fake",  # pip settings are kept for pip, but not one named as a secret
}


@pytest.fixture
def recording_env(tmp_path: Path) -> tuple[Path, Path]:
    """A real venv whose interpreter appends its environment to a log at every start."""
    root = tmp_path / "env"
    python = make_venv(root)
    log = tmp_path / "seen.jsonl"
    site = root / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    record = "dict(os.environ, ARGV=' '.join(sys.argv))"
    (site / "site-packages" / "zz_record.pth").write_text(
        f"import os, sys, json; open({str(log)!r}, 'a').write(json.dumps({record}) + '\\n')\n"
    )
    return python, log


def _runs(log: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_no_run_of_the_environment_s_python_sees_the_host_s_secrets(
    recording_env: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python, log = recording_env
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PIP_INDEX_URL", "https://pypi.example/simple")
    monkeypatch.setenv("https_proxy", "http://proxy.example:3128")

    check_imports(python, ["json"])
    nltk_data.download_packages(python, tmp_path / "nltk", ["punkt"], probe_timeout_s=1.0)
    create._python_version(python)
    create._pip_check(python.parents[1])
    lock_file = tmp_path / "lock.txt"
    lock_file.write_text("tiny==1.0\n")
    with pytest.raises(EnvironmentError_):  # this venv has no pip: only its start matters
        create._pip_install(
            python.parents[1],
            parse_lock("tiny==1.0\n", path=str(lock_file)),
            ["--no-index"],
            NullProgress(),
            None,
        )

    # by command line (a venv's .pth file may run twice per start: lib and lib64)
    runs = {seen.pop("ARGV"): seen for seen in _runs(log)}
    assert len(runs) == 5, sorted(runs)
    real_home = os.path.expanduser("~")
    for seen in runs.values():
        assert not set(SECRETS) & set(seen), sorted(set(SECRETS) & set(seen))
        assert seen["HOME"] != real_home and not Path(seen["HOME"]).exists()  # private, gone
        assert seen["PYTHONDONTWRITEBYTECODE"] == "1"
    probe = runs["-c json"]
    download = next(seen for argv, seen in runs.items() if argv.endswith("punkt"))
    pip_install = next(seen for argv, seen in runs.items() if " install " in argv)
    assert "https_proxy" not in probe and "PIP_INDEX_URL" not in probe
    assert download["https_proxy"] == "http://proxy.example:3128"  # the downloader needs it
    assert pip_install["PIP_INDEX_URL"] == "https://pypi.example/simple"  # pip's own setting


def test_the_whitelist_keeps_only_what_it_names(tmp_path: Path) -> None:
    host = {"PATH": "/bin", "LANG": "en_US.UTF-8", "GITHUB_TOKEN": "x", "MY_APP_SETTING": "y"}
    env = scrubbed_environment(tmp_path, environ=host)
    assert env["PATH"] == "/bin" and env["LANG"] == "en_US.UTF-8"
    assert "GITHUB_TOKEN" not in env and "MY_APP_SETTING" not in env
    assert env["HOME"] == str(tmp_path)
