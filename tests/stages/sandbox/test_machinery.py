"""Which files count as test machinery, and which changes to shared configuration files do."""

from __future__ import annotations

import pytest

from passbench.stages.sandbox.host.machinery import (
    MACHINERY_NAMES,
    MACHINERY_PATHS,
    is_test_machinery,
    machinery_changed,
    machinery_reason,
)


@pytest.mark.parametrize(
    "path",
    [
        "conftest.py",
        "tests/unit/conftest.py",
        "./testing/conftest.py",
        "pytest.ini",
        "sub/.pytest.ini",
        "pytest.toml",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "setup.py",
        "src/sitecustomize.py",
        "usercustomize.py",
        "evil.pth",
        "lib/site-packages/x.pth",
        "pkg/__pycache__/mod.cpython-311.pyc",
        "pkg/mod.pyc",
        "evil.dist-info/entry_points.txt",
        "src/evil.egg-info/entry_points.txt",
        "bin/test",
        "sympy/testing/runtests.py",
        "sympy/utilities/runtests.py",
        "sympy/testing/pytest.py",
        "tests/runtests.py",
        "django/test/runner.py",
    ],
)
def test_machinery(path: str) -> None:
    assert is_test_machinery(path)
    assert machinery_reason(path)


@pytest.mark.parametrize(
    "path",
    [
        "",
        "src/flask/app.py",
        "tests/test_conftest.py",  # a test file, restored by the official reset anyway
        "conftest.py.orig",
        "docs/conftest.rst",
        "sympy/utilities/randtest.py",  # a gold patch edits it
        "django/test/testcases.py",  # library code Django's own tests cover
        "src/_pytest/python.py",  # pytest's code under test
        "tests/bin/test.py",
        "pythonpath.txt",
    ],
)
def test_not_machinery(path: str) -> None:
    assert not is_test_machinery(path)
    assert machinery_reason(path) is None


def test_every_rule_says_why() -> None:
    for table in (MACHINERY_NAMES, MACHINERY_PATHS):
        assert all(why.strip() for why in table.values())


def test_whole_files_change_with_any_edit() -> None:
    assert machinery_changed("conftest.py", None, "import pytest\n")  # added
    assert machinery_changed("a/conftest.py", "x = 1\n", None)  # deleted
    assert machinery_changed("setup.py", "setup()\n", "setup(name='x')\n")
    assert not machinery_changed("conftest.py", "x = 1\n", "x = 1\n")
    assert not machinery_changed("src/app.py", "a\n", "b\n")


SETUP_CFG = """\
[metadata]
name = pylint

[options]
install_requires =
    astroid>=2.6.5
    isort>=4.2.5,<6

[options.entry_points]
console_scripts =
    pylint = pylint:run_pylint

[tool:pytest]
testpaths = tests
markers =
    acceptance

[isort]
known_third_party = astroid, sphinx
"""


def test_setup_cfg_counts_only_what_pytest_reads() -> None:
    # what the gold patch of pylint-dev__pylint-4661 does: a dependency and isort settings
    honest = SETUP_CFG.replace("    astroid>=2.6.5\n", "    appdirs>=1.4.0\n    astroid>=2.6.5\n")
    honest = honest.replace("astroid, sphinx", "appdirs, astroid, sphinx")
    assert not machinery_changed("setup.cfg", SETUP_CFG, honest)
    scripts = SETUP_CFG.replace("run_pylint\n", "run_pylint\n    epylint = pylint:run_epylint\n")
    assert not machinery_changed("setup.cfg", SETUP_CFG, scripts)
    addopts = SETUP_CFG.replace("testpaths = tests\n", "testpaths = tests\naddopts = -p evil\n")
    assert machinery_changed("setup.cfg", SETUP_CFG, addopts)
    plugin = SETUP_CFG.replace("run_pylint\n", "run_pylint\npytest11 =\n    evil = evil\n")
    assert machinery_changed("setup.cfg", SETUP_CFG, plugin)
    section = SETUP_CFG + "\n[pytest]\naddopts = -p evil\n"
    assert machinery_changed("setup.cfg", SETUP_CFG, section)
    assert machinery_changed("setup.cfg", None, "[tool:pytest]\naddopts = -x\n")
    assert not machinery_changed("setup.cfg", None, "[metadata]\nname = x\n")


def test_tox_ini_counts_its_pytest_section() -> None:
    tox = "[tox]\nenvlist = py39\n\n[pytest]\naddopts = -rA\n"
    assert not machinery_changed("tox.ini", tox, tox.replace("py39", "py310"))
    assert machinery_changed("tox.ini", tox, tox.replace("-rA", "-rA -p evil"))
    # a comment changes nothing pytest reads
    assert not machinery_changed("tox.ini", tox, tox.replace("[pytest]", "[pytest]\n# note"))


PYPROJECT = """\
[project]
name = "flask"
dependencies = ["werkzeug>=2.2"]

[project.scripts]
flask = "flask.cli:main"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""


def test_pyproject_counts_its_pytest_tables_and_plugin_entry_points() -> None:
    deps = PYPROJECT.replace('"werkzeug>=2.2"', '"werkzeug>=2.3"')
    assert not machinery_changed("pyproject.toml", PYPROJECT, deps)
    options = PYPROJECT.replace('["tests"]', '["tests"]\naddopts = "-p evil"')
    assert machinery_changed("pyproject.toml", PYPROJECT, options)
    plugin = PYPROJECT + '\n[project.entry-points.pytest11]\nevil = "evil"\n'
    assert machinery_changed("pyproject.toml", PYPROJECT, plugin)
    poetry = PYPROJECT + '\n[tool.poetry.plugins."pytest11"]\nevil = "evil"\n'
    assert machinery_changed("pyproject.toml", PYPROJECT, poetry)
    native = PYPROJECT + "\n[tool.pytest]\naddopts = ['-p', 'evil']\n"
    assert machinery_changed("pyproject.toml", PYPROJECT, native)
    # a file that no longer parses counts whole
    assert machinery_changed("pyproject.toml", PYPROJECT, PYPROJECT + "[[broken\n")
