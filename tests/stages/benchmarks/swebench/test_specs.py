"""specs.py: the install specs agree with every official eval script, and the conda rules
decide every package of every real export."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from passbench.stages.benchmarks.swebench.locks import parse_export, read_exports
from passbench.stages.benchmarks.swebench.specs import (
    CONDA_METAPACKAGES,
    CONDA_ONLY_PYTHON,
    CONDA_TO_PYPI,
    EXPORT_GAPS,
    NETWORK_TESTS,
    RepoSpec,
    classify_conda,
    spec_for,
    spec_keys,
    working_copy_edits,
)

from .envdata import EXPORTS, LITE, LITE_DEV, VERIFIED, read_rows

SPEC_REPOS = {
    "astropy/astropy",
    "django/django",
    "matplotlib/matplotlib",
    "mwaskom/seaborn",
    "pallets/flask",
    "psf/requests",
    "pydata/xarray",
    "pylint-dev/pylint",
    "pytest-dev/pytest",
    "scikit-learn/scikit-learn",
    "sphinx-doc/sphinx",
    "sympy/sympy",
}


@pytest.mark.parametrize("dataset", [VERIFIED, LITE, LITE_DEV])
def test_specs_match_every_official_eval_script(data_dir: Path, dataset: str) -> None:
    """The install line, the test command and the eval commands each row's eval_script runs are
    the ones the spec table restates (a typo in specs.py fails here)."""
    checked = 0
    for row in read_rows(data_dir / "swebench" / dataset):
        spec = spec_for(row.repo, row.version)
        if row.repo not in SPEC_REPOS:
            assert spec is None
            continue
        assert spec is not None, f"{row.instance_id}: no spec for {row.repo} {row.version}"
        lines = row.eval_script.splitlines()
        assert spec.install in lines, row.instance_id
        test_line = lines[lines.index(": '>>>>> Start Test Output'") + 1]
        assert f"{test_line} ".startswith(spec.test_cmd + " "), row.instance_id
        for command in spec.eval_commands:
            assert command in lines, row.instance_id
        checked += 1
    assert checked > 0 or dataset == LITE_DEV


def test_every_spec_names_a_python_and_a_test_command() -> None:
    for repo, version in spec_keys():
        spec = spec_for(repo, version)
        assert spec is not None
        assert re.fullmatch(r"3\.\d+", spec.python), (repo, version)
        assert spec.test_cmd


@pytest.mark.parametrize(
    ("name", "version", "build", "action", "detail"),
    [
        ("python", "3.9.20", "he870216_1", "interpreter", ""),
        ("libgcc-ng", "11.2.0", "h1234567_1", "leave-out", "native"),
        ("openssl", "3.0.15", "h5eee18b_0", "leave-out", "native"),
        ("tzdata", "2024b", "h04d1e81_0", "leave-out", "native"),
        ("ca-certificates", "2024.9.24", "h06a4308_0", "leave-out", "native"),
        ("_libgcc_mutex", "0.1", "main", "leave-out", "native"),
        ("cdms2", "3.1.5", "py310h366d46e_22", "leave-out", "conda-only"),
        ("libcf", "1.0.3", "py310h1588dd5_117", "leave-out", "conda-only"),
        ("seaborn", "0.13.2", "hd8ed1ab_2", "leave-out", "metapackage"),
        ("python_abi", "3.10", "5_cp310", "leave-out", "metapackage"),
        ("pip", "24.2", "py39h06a4308_0", "pin", "pip"),
        ("setuptools", "75.1.0", "py39h06a4308_0", "pin", "setuptools"),
        ("matplotlib-base", "3.9.2", "py310h68603db_1", "pin", "matplotlib"),
        ("seaborn-base", "0.13.2", "pyhd8ed1ab_2", "pin", "seaborn"),
        ("python-tzdata", "2024.2", "pyhd8ed1ab_0", "pin", "tzdata"),
        ("click", "8.1.7", "unix_pyh707e725_0", "pin", "click"),
        ("h5py", "3.11.0", "nompi_py310hf054cd7_102", "pin", "h5py"),
        ("botocore", "1.35.23", "pyge310_1234567_0", "pin", "botocore"),
        ("asciitree", "0.3.3", "py_2", "pin", "asciitree"),
    ],
)
def test_conda_rules(name: str, version: str, build: str, action: str, detail: str) -> None:
    decision = classify_conda(name, version, build)
    assert decision.action == action
    assert decision.reason
    if action == "pin":
        assert decision.pypi_name == detail
    elif action == "leave-out":
        assert decision.kind == detail


def test_every_conda_package_of_every_export_is_decided(data_dir: Path) -> None:
    """Nothing falls through: each conda pin is the interpreter, a PyPI pin or left out with a
    reason, and a Python-tagged package is left out only when a table says so."""
    exports = read_exports(data_dir / "swebench" / EXPORTS)
    seen: dict[str, set[str]] = {"pin": set(), "interpreter": set(), "leave-out": set()}
    for instance_id, text in exports.items():
        for name, version, build in parse_export(text, where=instance_id).conda:
            decision = classify_conda(name, version, build)
            assert decision.reason, name
            seen[decision.action].add(name)
            python_tagged = re.search(r"(^|_)py(\d|h|_|ge)", build) is not None
            if decision.action == "leave-out" and python_tagged:
                assert name in CONDA_ONLY_PYTHON or name in CONDA_METAPACKAGES, name
    assert seen["interpreter"] == {"python"}
    assert {"pip", "setuptools", "wheel", "pytest", "certifi"} <= seen["pin"]
    assert {"libgcc-ng", "openssl", "ncurses", "readline", "sqlite", "tk", "xz", "zlib"} <= (
        seen["leave-out"]
    )
    # every table entry is used by some export (no stale rules)
    used = seen["pin"] | seen["leave-out"]
    assert set(CONDA_TO_PYPI) <= used
    assert set(CONDA_ONLY_PYTHON) <= used
    assert set(CONDA_METAPACKAGES) <= used


def test_network_table_names_only_listed_tests(data_dir: Path) -> None:
    rows = {row.instance_id: row for row in read_rows(data_dir / "swebench" / VERIFIED)}
    for instance_id, tests in NETWORK_TESTS.items():
        listed = set(rows[instance_id].fail_to_pass) | set(rows[instance_id].pass_to_pass)
        assert set(tests) <= listed, instance_id
    assert len(NETWORK_TESTS["psf__requests-5414"]) == 4
    assert NETWORK_TESTS["psf__requests-1142"] == ()
    sphinx = [row for row in rows.values() if row.repo == "sphinx-doc/sphinx"]
    assert all(row.instance_id in NETWORK_TESTS for row in sphinx)
    assert sum(bool(NETWORK_TESTS[row.instance_id]) for row in sphinx) == 4


def test_export_gaps_pin_exactly() -> None:
    for (repo, version), pins in EXPORT_GAPS.items():
        assert spec_for(repo, version) is not None
        assert all(re.fullmatch(r"[A-Za-z0-9.-]+==[0-9.]+", pin) for pin in pins)


def test_working_copy_edits_are_the_pre_install_commands_on_repository_files() -> None:
    sphinx = spec_for("sphinx-doc/sphinx", "7.2")
    assert sphinx is not None
    assert working_copy_edits(sphinx) == ("sed -i 's/pytest/pytest -rA/' tox.ini",)
    either = spec_for("sphinx-doc/sphinx", "4.1")
    assert either is not None and len(working_copy_edits(either)) == len(either.pre_install) == 9
    for machine in (("django/django", "2.2"), ("pylint-dev/pylint", "2.8")):
        spec = spec_for(*machine)
        assert spec is not None and spec.pre_install and working_copy_edits(spec) == ()
    outside = RepoSpec(
        "o/r", "1", "3.9", None, "pytest", pre_install=("sed -i 's/a/b/' /etc/hosts",)
    )
    assert working_copy_edits(outside) == ()
