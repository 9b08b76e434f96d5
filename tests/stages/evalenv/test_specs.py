"""The registry of environment specs and the files each spec relies on."""

from __future__ import annotations

from importlib import resources

import pytest

from passbench.core.errors import UnknownNameError
from passbench.stages.evalenv.lock import packaged_lock_path, read_lock
from passbench.stages.evalenv.specs import get_spec, spec_names


def _apt_packages() -> set[str]:
    text = resources.files("passbench.stages.evalenv").joinpath("apt-packages.txt").read_text()
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def test_every_spec_ships_a_valid_lock() -> None:
    for name in spec_names():
        lock = read_lock(packaged_lock_path(get_spec(name).lock_file))
        assert lock.pins


def test_apt_list_names_the_package_of_every_program_tasks_run() -> None:
    packages = _apt_packages()
    assert all(" " not in package for package in packages)
    for name in spec_names():
        for program in get_spec(name).executables:
            assert program.apt_package in packages, program


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="known: bigcodebench"):
        get_spec("bigcodebenc")
