"""Facts about SWE-bench's environments, as data: the per-(repository, version) install specs and
the rules that turn a conda export into PyPI pins.

The specs restate, as our own records, what SWE-bench's `MAP_REPO_VERSION_TO_SPECS`
(`swebench/harness/constants/python.py`, later `swebench/data_specs/python.py`, removed in 5.0
when the eval scripts moved into the dataset) said for the repositories passbench evaluates:
the Python version, the conda `packages` (a package list, or "requirements.txt" /
"environment.yml" meaning the repository's own file at the instance's environment_setup_commit),
`pip_packages`, `pre_install` (run in the working copy before the install and committed, so
`git diff` does not show it), `install`, `eval_commands` and `test_cmd`.
tests/stages/benchmarks/swebench/test_specs.py checks them against every dataset row's
`eval_script`, so a typo here fails a test.

The conda rules (`classify_conda`) decide, per package of an export, whether it is an ordinary
PyPI package (pinned), the interpreter, or left out, and why:

1. `python` is the interpreter: its version is the lock's Python pin (pyenv provides it).
2. CONDA_ONLY_PYTHON: Python packages with no PyPI release (CDAT, ESMF): left out, and the
   environment is not the official one (tests that import them are skipped here).
3. CONDA_METAPACKAGES: conda-side packaging artefacts (a metapackage, or one half of a conda
   split): left out, their PyPI package is pinned through the companion named in the table.
4. A build string with a Python tag (`py39h06a4308_0`, `pyhd8ed1ab_0`, `py_0`,
   `unix_pyh707e725_0`, `nompi_py310h...`, `pyge310_...`) marks a Python package: pinned under
   its PyPI name (CONDA_TO_PYPI where conda renamed it, else the same name). pip, setuptools
   and wheel are pinned like any other (they decide how `pip install -e .` behaves).
5. Anything else is a native library or data (libgcc, openssl, ncurses, readline, sqlite, tk,
   xz, zlib, libffi, ca-certificates, tzdata, hdf5, proj...): left out. The pyenv interpreter
   links the system's libraries and PyPI wheels bundle their own.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Literal

# ------------------------------------------------------------------ per-(repository, version) specs


@dataclass(frozen=True)
class RepoSpec:
    """SWE-bench's install spec for one (repository, version)."""

    repo: str
    version: str
    python: str  # minor version: "3.9"
    install: str | None  # the shell command that installs the repository in /testbed
    test_cmd: str
    packages: str = ""  # conda packages, or "requirements.txt" / "environment.yml"
    pip_packages: tuple[str, ...] = ()
    pre_install: tuple[str, ...] = ()
    eval_commands: tuple[str, ...] = ()
    no_use_env: bool = False  # xarray: `conda create` then `conda env update`


_PYTEST = "pytest -rA"
_ASTROPY_PY36 = "pytest -rA -vv -o console_output_style=classic --tb=no"
_DJANGO = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
_SEABORN = "pytest --no-header -rA"
_SPHINX = "tox --current-env -epy39 -v --"
_SYMPY = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose"
_EDITABLE = "python -m pip install -e ."

_SPECS: dict[tuple[str, str], RepoSpec] = {}


def _add(repo: str, versions: str, **fields: object) -> None:
    for version in versions.split():
        _SPECS[repo, version] = RepoSpec(repo=repo, version=version, **fields)  # type: ignore[arg-type]


def _edit(repo: str, versions: str, **changes: object) -> None:
    for version in versions.split():
        _SPECS[repo, version] = replace(_SPECS[repo, version], **changes)  # type: ignore[arg-type]


def _pins(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# psf/requests
_add(
    "psf/requests",
    "0.7 0.8 0.9 0.11 0.13 0.14 1.1 1.2 2.0 2.2 2.3 2.4 2.5 2.7 2.8 2.9 2.10 2.11 2.12 2.17 "
    "2.18 2.19 2.22 2.26 2.25 2.27 2.31 3.0",
    python="3.9",
    packages="pytest",
    install="python -m pip install .",
    test_cmd=_PYTEST,
)

# pallets/flask
_FLASK_21 = _pins(
    "setuptools==70.0.0 click==8.1.3 itsdangerous==2.1.2 Jinja2==3.1.2 MarkupSafe==2.1.1 "
    "Werkzeug==2.3.7"
)
_add(
    "pallets/flask",
    "2.0",
    python="3.9",
    packages="requirements.txt",
    install=_EDITABLE,
    test_cmd=_PYTEST,
    pip_packages=_pins(
        "setuptools==70.0.0 Werkzeug==2.3.7 Jinja2==3.0.1 itsdangerous==2.1.2 click==8.0.1 "
        "MarkupSafe==2.1.3"
    ),
)
_add(
    "pallets/flask",
    "2.1",
    python="3.10",
    packages="requirements.txt",
    install=_EDITABLE,
    test_cmd=_PYTEST,
    pip_packages=_FLASK_21,
)
_add(
    "pallets/flask",
    "2.2 2.3 3.0 3.1",
    python="3.11",
    packages="requirements.txt",
    install=_EDITABLE,
    test_cmd=_PYTEST,
    pip_packages=_FLASK_21,
)

# mwaskom/seaborn
_SEABORN_PINS = (
    "contourpy==1.1.0 cycler==0.11.0 fonttools==4.42.1 importlib-resources==6.0.1 "
    "kiwisolver==1.4.5 matplotlib==3.7.2 numpy==1.25.2 packaging==23.1 {pandas} pillow==10.0.0 "
    "pyparsing==3.0.9 pytest python-dateutil==2.8.2 pytz==2023.3.post1 scipy==1.11.2 "
    "six==1.16.0 tzdata==2023.1 zipp==3.16.2"
)
_add(
    "mwaskom/seaborn",
    "0.11",
    python="3.9",
    install=_EDITABLE,
    test_cmd=_SEABORN,
    pip_packages=_pins(_SEABORN_PINS.format(pandas="pandas==1.3.5")),
)
_add(
    "mwaskom/seaborn",
    "0.12 0.13 0.14",
    python="3.9",
    install="python -m pip install -e .[dev]",
    test_cmd=_SEABORN,
    pip_packages=_pins(_SEABORN_PINS.format(pandas="pandas==2.0.0")),
)

# pytest-dev/pytest
_add(
    "pytest-dev/pytest",
    "4.4 4.5 4.6 5.0 5.1 5.2 5.3 5.4 6.0 6.2 6.3 7.0 7.1 7.2 7.4 8.0 8.1 8.2 8.3 8.4",
    python="3.9",
    install=_EDITABLE,
    test_cmd=_PYTEST,
)
_PYTEST_PINS = {
    "4.4": "atomicwrites==1.4.1 attrs==23.1.0 more-itertools==10.1.0 pluggy==0.13.1 py==1.11.0 "
    "setuptools==68.0.0 six==1.16.0",
    "4.5": "atomicwrites==1.4.1 attrs==23.1.0 more-itertools==10.1.0 pluggy==0.11.0 py==1.11.0 "
    "setuptools==68.0.0 six==1.16.0 wcwidth==0.2.6",
    "4.6": "atomicwrites==1.4.1 attrs==23.1.0 more-itertools==10.1.0 packaging==23.1 "
    "pluggy==0.13.1 py==1.11.0 six==1.16.0 wcwidth==0.2.6",
    "5.0 5.1 5.2": "atomicwrites==1.4.1 attrs==23.1.0 more-itertools==10.1.0 packaging==23.1 "
    "pluggy==0.13.1 py==1.11.0 wcwidth==0.2.6",
    "5.3": "attrs==23.1.0 more-itertools==10.1.0 packaging==23.1 pluggy==0.13.1 py==1.11.0 "
    "wcwidth==0.2.6",
    "5.4": "py==1.11.0 packaging==23.1 attrs==23.1.0 more-itertools==10.1.0 pluggy==0.13.1",
    "6.0": "attrs==23.1.0 iniconfig==2.0.0 more-itertools==10.1.0 packaging==23.1 "
    "pluggy==0.13.1 py==1.11.0 toml==0.10.2",
    "6.2 6.3": "attrs==23.1.0 iniconfig==2.0.0 packaging==23.1 pluggy==0.13.1 py==1.11.0 "
    "toml==0.10.2",
    "7.0": "attrs==23.1.0 iniconfig==2.0.0 packaging==23.1 pluggy==0.13.1 py==1.11.0",
    "7.1 7.2": "attrs==23.1.0 iniconfig==2.0.0 packaging==23.1 pluggy==0.13.1 py==1.11.0 "
    "tomli==2.0.1",
    "7.4 8.0 8.1 8.2 8.3 8.4": "iniconfig==2.0.0 packaging==23.1 pluggy==1.3.0 "
    "exceptiongroup==1.1.3 tomli==2.0.1",
}
for _versions, _text in _PYTEST_PINS.items():
    _edit("pytest-dev/pytest", _versions, pip_packages=_pins(_text))
_edit("pytest-dev/pytest", "6.3", pre_install=("sed -i 's/>=>=/>=/' setup.cfg",))

# sympy/sympy
_add(
    "sympy/sympy",
    "0.7 1.0 1.1 1.2 1.4 1.5 1.6 1.7 1.8 1.9 1.10 1.11 1.12",
    python="3.9",
    packages="mpmath flake8",
    install=_EDITABLE,
    test_cmd=_SYMPY,
    pip_packages=("mpmath==1.3.0", "flake8-comprehensions"),
)
_add(
    "sympy/sympy",
    "1.13 1.14",
    python="3.9",
    packages="requirements.txt",
    install=_EDITABLE,
    test_cmd=_SYMPY,
    pip_packages=("mpmath==1.3.0",),
)

# pylint-dev/pylint
_add(
    "pylint-dev/pylint",
    "2.8 2.9 2.10 2.11 2.13 2.14 2.15 2.16 2.17 3.0 3.1 3.2 3.3 4.0",
    python="3.9",
    packages="requirements.txt",
    install=_EDITABLE,
    test_cmd=_PYTEST,
)
_edit(
    "pylint-dev/pylint",
    "2.8",
    pip_packages=("pyenchant==3.2",),
    pre_install=("apt-get update && apt-get install -y libenchant-2-dev hunspell-en-us",),
)
_edit("pylint-dev/pylint", "3.0 3.1 3.2 3.3 4.0", pip_packages=("astroid==3.0.0a6", "setuptools"))

# sphinx-doc/sphinx
_add(
    "sphinx-doc/sphinx",
    "1.5 1.6 1.7 1.8 2.0 2.1 2.2 2.3 2.4 3.0 3.1 3.2 3.3 3.4 3.5 4.0 4.1 4.2 4.3 4.4 4.5 5.0 "
    "5.1 5.2 5.3 6.0 6.2 7.0 7.1 7.2 7.3 7.4 8.0 8.1",
    python="3.9",
    install="python -m pip install -e .[test]",
    test_cmd=_SPHINX,
    pip_packages=("tox==4.16.0", "tox-current-env==0.0.11", "Jinja2==3.0.3"),
    pre_install=("sed -i 's/pytest/pytest -rA/' tox.ini",),
)
# Version caps SWE-bench wrote into setup.py so old Sphinx installs the dependencies of its day.
_SPHINX_CAPS = (
    "sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py",
    "sed -i 's/sphinxcontrib-applehelp/sphinxcontrib-applehelp<=1.0.7/' setup.py",
    "sed -i 's/sphinxcontrib-devhelp/sphinxcontrib-devhelp<=1.0.5/' setup.py",
    "sed -i 's/sphinxcontrib-qthelp/sphinxcontrib-qthelp<=1.0.6/' setup.py",
    "sed -i 's/alabaster>=0.7,<0.8/alabaster>=0.7,<0.7.12/' setup.py",
    "sed -i \"s/'packaging',/'packaging', 'markupsafe<=2.0.1',/\" setup.py",
)
_SPHINX_HTMLHELP_RANGE = (
    "sed -i 's/sphinxcontrib-htmlhelp>=2.0.0/sphinxcontrib-htmlhelp>=2.0.0,<=2.0.4/' setup.py",
    "sed -i 's/sphinxcontrib-serializinghtml>=1.1.5/sphinxcontrib-serializinghtml>=1.1.5,<=1.1.9/' "
    "setup.py",
)
_SPHINX_HTMLHELP_EITHER = (
    "grep -q 'sphinxcontrib-htmlhelp>=2.0.0' setup.py && "
    "sed -i 's/sphinxcontrib-htmlhelp>=2.0.0/sphinxcontrib-htmlhelp>=2.0.0,<=2.0.4/' setup.py || "
    "sed -i 's/sphinxcontrib-htmlhelp/sphinxcontrib-htmlhelp<=2.0.4/' setup.py",
    "grep -q 'sphinxcontrib-serializinghtml>=1.1.5' setup.py && "
    "sed -i 's/sphinxcontrib-serializinghtml>=1.1.5/sphinxcontrib-serializinghtml>=1.1.5,<=1.1.9/' "
    "setup.py || "
    "sed -i 's/sphinxcontrib-serializinghtml/sphinxcontrib-serializinghtml<=1.1.9/' setup.py",
)
_SPHINX_HTMLHELP_PLAIN = (
    "sed -i 's/sphinxcontrib-htmlhelp/sphinxcontrib-htmlhelp<=2.0.4/' setup.py",
    "sed -i 's/sphinxcontrib-serializinghtml/sphinxcontrib-serializinghtml<=1.1.9/' setup.py",
)
for _version in ["3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "4.0", "4.1", "4.2", "4.3", "4.4"]:
    _extra = (
        _SPHINX_HTMLHELP_RANGE
        if _version in ("4.2", "4.3", "4.4")
        else _SPHINX_HTMLHELP_EITHER
        if _version == "4.1"
        else _SPHINX_HTMLHELP_PLAIN
    )
    _spec = _SPECS["sphinx-doc/sphinx", _version]
    _edit("sphinx-doc/sphinx", _version, pre_install=_spec.pre_install + _SPHINX_CAPS + _extra)
for _version in ["7.2", "7.3", "7.4", "8.0", "8.1"]:
    _spec = _SPECS["sphinx-doc/sphinx", _version]
    _edit(
        "sphinx-doc/sphinx",
        _version,
        pre_install=(*_spec.pre_install, "apt-get update && apt-get install -y graphviz"),
    )
_edit("sphinx-doc/sphinx", "8.0 8.1", python="3.10")

# astropy/astropy
_add(
    "astropy/astropy",
    "3.0 3.1 3.2 4.1 4.2 4.3 5.0 5.1 5.2 v5.3",
    python="3.9",
    install="python -m pip install -e .[test] --verbose",
    test_cmd=_PYTEST,
    pip_packages=_pins(
        "attrs==23.1.0 exceptiongroup==1.1.3 execnet==2.0.2 hypothesis==6.82.6 iniconfig==2.0.0 "
        "numpy==1.25.2 packaging==23.1 pluggy==1.3.0 psutil==5.9.5 pyerfa==2.0.0.3 "
        "pytest-arraydiff==0.5.0 pytest-astropy-header==0.2.2 pytest-astropy==0.10.0 "
        "pytest-cov==4.1.0 pytest-doctestplus==1.0.0 pytest-filter-subpackage==0.1.2 "
        "pytest-mock==3.11.1 pytest-openfiles==0.5.0 pytest-remotedata==0.4.0 "
        "pytest-xdist==3.3.1 pytest==7.4.0 PyYAML==6.0.1 setuptools==68.0.0 "
        "sortedcontainers==2.4.0 tomli==2.0.1"
    ),
)
_add(
    "astropy/astropy",
    "0.1 0.2 0.3 0.4 1.1 1.2 1.3",
    python="3.6",
    install="python -m pip install -e .[test] --verbose",
    test_cmd=_ASTROPY_PY36,
    packages="setuptools==38.2.4",
    pip_packages=_pins(
        "attrs==17.3.0 exceptiongroup==0.0.0a0 execnet==1.5.0 hypothesis==3.44.2 cython==0.27.3 "
        "jinja2==2.10 MarkupSafe==1.0 numpy==1.16.0 packaging==16.8 pluggy==0.6.0 psutil==5.4.2 "
        "pyerfa==1.7.0 pytest-arraydiff==0.1 pytest-astropy-header==0.1 pytest-astropy==0.2.1 "
        "pytest-cov==2.5.1 pytest-doctestplus==0.1.2 pytest-filter-subpackage==0.1 "
        "pytest-forked==0.2 pytest-mock==1.6.3 pytest-openfiles==0.2.0 "
        "pytest-remotedata==0.2.0 pytest-xdist==1.20.1 pytest==3.3.1 PyYAML==3.12 "
        "sortedcontainers==1.5.9 tomli==0.2.0"
    ),
)
_edit(
    "astropy/astropy",
    "4.1 4.2 4.3 5.0 5.1 5.2 v5.3",
    pre_install=(
        'sed -i \'s/requires = \\["setuptools",/requires = \\["setuptools==68.0.0",/\' '
        "pyproject.toml",
    ),
)
_edit("astropy/astropy", "v5.3", python="3.10")

# pydata/xarray
_add(
    "pydata/xarray",
    "0.12 0.18 0.19 0.20 2022.03 2022.06 2022.09 2023.07 2024.05",
    python="3.10",
    packages="environment.yml",
    install=_EDITABLE,
    test_cmd=_PYTEST,
    no_use_env=True,
    pip_packages=_pins(
        "numpy==1.23.0 packaging==23.1 pandas==1.5.3 pytest==7.4.0 python-dateutil==2.8.2 "
        "pytz==2023.3 six==1.16.0 scipy==1.11.1 setuptools==68.0.0 dask==2022.8.1"
    ),
)

# django/django, matplotlib/matplotlib, scikit-learn/scikit-learn: no exports in ../shared, so
# only what `env check` needs to say why they cannot be built from pins.
_DJANGO_LOCALE = (
    "export LANG=en_US.UTF-8",
    "export LC_ALL=en_US.UTF-8",
    "export PYTHONIOENCODING=utf8",
    "export LANGUAGE=en_US:en",
)
_add(
    "django/django",
    "1.7 1.8 1.9 1.10 1.11 2.0 2.1 2.2",
    python="3.5",
    packages="requirements.txt",
    install="python setup.py install",
    test_cmd=_DJANGO,
    pip_packages=("setuptools",),
    pre_install=(
        "apt-get update && apt-get install -y locales",
        "echo 'en_US UTF-8' > /etc/locale.gen",
        "locale-gen en_US.UTF-8",
    ),
    eval_commands=_DJANGO_LOCALE,
)
_edit("django/django", "1.9", test_cmd="./tests/runtests.py --verbosity 2")
_add(
    "django/django",
    "1.4 1.5 1.6",
    python="3.5",
    install="python setup.py install",
    test_cmd=_DJANGO,
)
_add(
    "django/django",
    "3.0 3.1 3.2",
    python="3.6",
    packages="requirements.txt",
    install=_EDITABLE,
    test_cmd=_DJANGO,
    eval_commands=(
        "sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen",
        "export LANG=en_US.UTF-8",
        "export LANGUAGE=en_US:en",
        "export LC_ALL=en_US.UTF-8",
    ),
)
for _versions, _python in (("4.0", "3.8"), ("4.1 4.2", "3.9"), ("5.0 5.1 5.2", "3.11")):
    _add(
        "django/django",
        _versions,
        python=_python,
        packages="requirements.txt",
        install=_EDITABLE,
        test_cmd=_DJANGO,
    )

_QHULL = "wget qhull-2020-src-8.0.2.tgz from www.qhull.org"  # summarised: a download at setup
_add(
    "matplotlib/matplotlib",
    "3.5 3.6 3.7 3.8 3.9",
    python="3.11",
    packages="environment.yml",
    install=_EDITABLE,
    test_cmd=_PYTEST,
    pre_install=("apt-get install imagemagick ffmpeg texlive cm-super dvipng", _QHULL),
    pip_packages=_pins(
        "contourpy==1.1.0 cycler==0.11.0 fonttools==4.42.1 ghostscript kiwisolver==1.4.5 "
        "numpy==1.25.2 packaging==23.1 pillow==10.0.0 pikepdf pyparsing==3.0.9 "
        "python-dateutil==2.8.2 six==1.16.0 setuptools==68.1.2 setuptools-scm==7.1.0 "
        "typing-extensions==4.7.1"
    ),
)
_edit(
    "matplotlib/matplotlib",
    "3.8 3.9",
    install='python -m pip install --no-build-isolation -e ".[dev]"',
)
_add(
    "matplotlib/matplotlib",
    "3.1 3.2 3.3 3.4",
    python="3.8",
    packages="requirements.txt",
    install=_EDITABLE,
    test_cmd=_PYTEST,
    pre_install=("apt-get install imagemagick ffmpeg libfreetype6-dev pkg-config texlive", _QHULL),
    pip_packages=("pytest", "ipython"),
)
_add(
    "matplotlib/matplotlib",
    "3.0",
    python="3.7",
    packages="requirements.txt",
    install=_EDITABLE,
    test_cmd=_PYTEST,
    pre_install=("apt-get install imagemagick ffmpeg libfreetype6-dev pkg-config", _QHULL),
    pip_packages=("pytest",),
)
_add(
    "scikit-learn/scikit-learn",
    "0.20 0.21 0.22",
    python="3.6",
    packages="numpy scipy cython pytest pandas matplotlib",
    install="python -m pip install -v --no-use-pep517 --no-build-isolation -e .",
    test_cmd=_PYTEST,
    pip_packages=("cython", "numpy==1.19.2", "setuptools", "scipy==1.5.2"),
)
_add(
    "scikit-learn/scikit-learn",
    "1.3 1.4 1.5 1.6",
    python="3.9",
    packages="'numpy==1.19.2' 'scipy==1.5.2' 'cython==3.0.10' pytest 'pandas<2.0.0' "
    "'matplotlib<3.9.0' setuptools pytest joblib threadpoolctl",
    install="python -m pip install -v --no-use-pep517 --no-build-isolation -e .",
    test_cmd=_PYTEST,
    pip_packages=("cython", "setuptools", "numpy", "scipy"),
)


def spec_for(repo: str, version: str) -> RepoSpec | None:
    """SWE-bench's spec for (repo, version), or None when SWE-bench has none we carry."""
    return _SPECS.get((repo, version))


def working_copy_edits(spec: RepoSpec) -> tuple[str, ...]:
    """The spec's `pre_install` commands that edit files of the working copy, in order.

    The official image runs every `pre_install` command in /testbed at build time and commits
    the result (`git commit --allow-empty -am SWE-bench`), so the model patch applies to, and
    the tests run on, the edited tree: Sphinx's `sed -i 's/pytest/pytest -rA/' tox.ini` is what
    makes its tox run print the `-rA` summary the official parser reads, and its setup.py caps,
    pytest 6.3's setup.cfg fix and astropy's pyproject.toml pin are there too. The other
    commands act on the machine (apt-get, /etc/locale.gen, locale-gen, downloads): `env check`
    asks for what they provide, nothing runs them per instance. An edit is a command whose every
    `&&`/`||` step is `sed -i` or `grep -q` on a path inside the repository."""
    return tuple(command for command in spec.pre_install if _edits_working_copy(command))


def _edits_working_copy(command: str) -> bool:
    try:
        steps = [shlex.split(step) for step in re.split(r"&&|\|\|", command)]
    except ValueError:
        return False
    for words in steps:
        if words[:2] not in (["sed", "-i"], ["grep", "-q"]) or len(words) < 4:
            return False
        target = words[-1]
        if target.startswith(("/", "-")) or ".." in target.split("/"):
            return False
    return True


def spec_keys() -> list[tuple[str, str]]:
    """Every (repo, version) with a spec."""
    return sorted(_SPECS)


# ------------------------------------------------- offline install: build backends, system needs

# Build backends the repositories' own `pyproject.toml` / `setup.py` ask for that the exported
# environments lack: official images install them in pip's isolated build environment (from
# PyPI, unpinned, on the day the image was built); offline they must be here beforehand. They go
# to a separate folder of the environment that is on PYTHONPATH only while the repository is
# installed, never while tests run, so the tests see exactly the exported packages. Versions:
# the releases current when the exports were made (autumn 2024), for each Python minor version.
# A name the runtime pins already (packaging, tomli...) is dropped: the environment's own is used.
_SCM_PY39 = (
    "setuptools-scm==8.1.0",
    "packaging==24.1",
    "tomli==2.0.2",
    "typing-extensions==4.12.2",
)
_FLIT = ("flit-core==3.9.0",)
BUILD_TOOLS: dict[str, dict[str, tuple[str, ...]]] = {
    "pytest-dev/pytest": {"3.9": _SCM_PY39},  # setuptools_scm writes src/_pytest/_version.py
    "pydata/xarray": {"3.10": _SCM_PY39},
    "astropy/astropy": {
        "3.9": (*_SCM_PY39, "cython==0.29.30", "extension-helpers==1.1.1"),
        "3.10": (*_SCM_PY39, "cython==0.29.30", "extension-helpers==1.1.1"),
    },
    "mwaskom/seaborn": {"3.9": _FLIT},
    "sphinx-doc/sphinx": {"3.9": _FLIT, "3.10": _FLIT},
    "pallets/flask": {"3.9": _FLIT, "3.10": _FLIT, "3.11": _FLIT},
}

# Where the repository's pyproject.toml asks for a build backend the environment's own cannot stand
# in for, the version pip's build isolation installed instead, on PYTHONPATH during the install
# only (ahead of the environment's): pylint 3.0 requires setuptools~=66.1 and wheel~=0.37.1, and
# its export's setuptools 41.6.0 predates pyproject metadata (the install would be "UNKNOWN").
# pylint 2.15 from its pyproject.toml on (pylint-dev__pylint-7277; the version's earlier commits
# have only setup.py) requires setuptools~=62.6: that setuptools has no PEP 660 hook, so pip falls
# back to `setup.py develop`, which puts the working copy itself on sys.path; the export's
# setuptools 75 makes a PEP 660 install instead, whose import hook maps the package but leaves
# /testbed off sys.path, and pylint's checkers (found through sys.path) then fail to load.
# The commits with only setup.py get `setup.py develop` either way.
ISOLATED_BACKENDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("pylint-dev/pylint", "2.15"): ("setuptools==62.6.0", "wheel==0.37.1"),
    ("pylint-dev/pylint", "3.0"): ("setuptools==66.1.1", "wheel==0.37.1"),
}

# Packages the official images hold that their exports omit: SWE-bench's exports leave out the
# repository's own distribution and, with it, every package whose name starts with the same word,
# so Sphinx's exports lack the six sphinxcontrib-* packages Sphinx depends on. Versions: what pip
# resolves for Sphinx under the spec's pre_install caps (3.0-4.4) or without caps (5.0+), as of the
# exports (autumn 2024; sphinxcontrib-jsmath 2.0.0 came later); the 3.0 set matches the install log
# of an official sphinx 3.0 image quoted in SWE-bench issue #228. Inferred, so a lock that uses
# them says so and is not presented as the official environment.
_SPHINXCONTRIB_CAPPED = (
    "sphinxcontrib-applehelp==1.0.4 sphinxcontrib-devhelp==1.0.2 sphinxcontrib-htmlhelp==2.0.1 "
    "sphinxcontrib-jsmath==1.0.1 sphinxcontrib-qthelp==1.0.3 sphinxcontrib-serializinghtml==1.1.5"
)
_SPHINXCONTRIB_LATEST = (
    "sphinxcontrib-applehelp==2.0.0 sphinxcontrib-devhelp==2.0.0 sphinxcontrib-htmlhelp==2.1.0 "
    "sphinxcontrib-jsmath==1.0.1 sphinxcontrib-qthelp==2.0.0 sphinxcontrib-serializinghtml==2.0.0"
)
_SPHINX_CAPPED_VERSIONS = _pins("3.0 3.1 3.2 3.3 3.4 3.5 4.0 4.1 4.2 4.3 4.4")
_SPHINX_LATER_VERSIONS = _pins("4.5 5.0 5.1 5.2 5.3 6.0 6.2 7.0 7.1 7.2 7.3 7.4 8.0 8.1")
EXPORT_GAPS: dict[tuple[str, str], tuple[str, ...]] = {
    **{("sphinx-doc/sphinx", v): _pins(_SPHINXCONTRIB_CAPPED) for v in _SPHINX_CAPPED_VERSIONS},
    **{("sphinx-doc/sphinx", v): _pins(_SPHINXCONTRIB_LATEST) for v in _SPHINX_LATER_VERSIONS},
}

# Debian packages a spec's pre_install asks for, and how to tell they are on this machine.
ProbeKind = Literal["program", "library", "file"]


@dataclass(frozen=True)
class SystemNeed:
    apt_package: str
    probe_kind: ProbeKind
    probe: str  # a program on PATH, a library for ctypes.util.find_library, or a file path


SYSTEM_NEEDS: dict[str, SystemNeed] = {
    need.apt_package: need
    for need in (
        SystemNeed("graphviz", "program", "dot"),
        SystemNeed("libenchant-2-dev", "library", "enchant-2"),
        SystemNeed("hunspell-en-us", "file", "/usr/share/hunspell/en_US.dic"),
        SystemNeed("locales", "program", "locale-gen"),
        SystemNeed("imagemagick", "program", "convert"),
        SystemNeed("ffmpeg", "program", "ffmpeg"),
        SystemNeed("texlive", "program", "latex"),
        SystemNeed("cm-super", "file", "/usr/share/texmf/fonts/type1/public/cm-super"),
        SystemNeed("dvipng", "program", "dvipng"),
        SystemNeed("libfreetype6-dev", "library", "freetype"),
        SystemNeed("pkg-config", "program", "pkg-config"),
    )
}

# ------------------------------------------------------------------------------ network tests

# Tests that need the internet in the official images (the container's network is open):
# requests' suites call http://httpbin.org (HTTPBIN_URL) and connect to 10.255.255.1 to provoke
# timeouts. Observed on 2026-11-26 by running each Verified instance's test command with the gold
# patch in bubblewrap without network, in its environment from these locks: every listed test
# that did not pass failed with a connection error, and every other listed test passed. An
# instance not in the table was not checked (`NETWORK_NOTES` says so for its repository).


def _tests(*parts: str) -> tuple[str, ...]:
    """(prefix, "name name ...") pairs -> test ids."""
    return tuple(
        prefix + name
        for prefix, names in zip(parts[::2], parts[1::2], strict=True)
        for name in names.split()
    )


NETWORK_TESTS: dict[str, tuple[str, ...]] = {
    "psf__requests-1142": (),
    "psf__requests-1724": _tests(
        "test_requests.py::RequestsTestCase::",
        "test_BASICAUTH_TUPLE_HTTP_200_OK_GET test_DIGESTAUTH_WRONG_HTTP_401_GET "
        "test_DIGEST_AUTH_RETURNS_COOKIE test_DIGEST_AUTH_SETS_SESSION_COOKIES "
        "test_DIGEST_HTTP_200_OK_GET test_DIGEST_STREAM test_HTTP_200_OK_GET_ALTERNATIVE "
        "test_HTTP_200_OK_GET_WITH_MIXED_PARAMS test_HTTP_200_OK_GET_WITH_PARAMS "
        "test_HTTP_200_OK_HEAD test_HTTP_200_OK_PUT test_HTTP_302_ALLOW_REDIRECT_GET "
        "test_POSTBIN_GET_POST_FILES_WITH_DATA test_cookie_persists_via_api "
        "test_cookie_quote_wrapped test_cookie_removed_on_expire test_cookie_sent_on_redirect "
        "test_custom_content_type test_decompress_gzip test_different_encodings_dont_break_post "
        "test_fixes_1329 test_generic_cookiejar_works test_header_remove_is_case_insensitive "
        "test_mixed_case_scheme_acceptable test_params_are_merged_case_sensitive "
        "test_prepared_from_session test_prepared_request_hook "
        "test_request_cookie_overrides_session_cookie test_request_ok_set "
        "test_requests_in_history_are_not_overridden test_session_pickling test_set_cookie_on_301 "
        "test_status_raising test_time_elapsed_blank test_unicode_get test_unicode_header_name "
        "test_unicode_method_name test_unicode_multipart_post test_uppercase_scheme_redirect "
        "test_urlencoded_get_query_multivalued_param test_user_agent_transfers",
    ),
    "psf__requests-1766": _tests(
        "test_requests.py::RequestsTestCase::",
        "test_BASICAUTH_TUPLE_HTTP_200_OK_GET test_DIGESTAUTH_QUOTES_QOP_VALUE "
        "test_DIGESTAUTH_WRONG_HTTP_401_GET test_DIGEST_AUTH_RETURNS_COOKIE "
        "test_DIGEST_AUTH_SETS_SESSION_COOKIES test_DIGEST_STREAM "
        "test_HTTP_200_OK_GET_ALTERNATIVE test_HTTP_200_OK_GET_WITH_MIXED_PARAMS "
        "test_HTTP_200_OK_GET_WITH_PARAMS test_HTTP_200_OK_HEAD test_HTTP_200_OK_PUT "
        "test_HTTP_302_ALLOW_REDIRECT_GET test_POSTBIN_GET_POST_FILES_WITH_DATA "
        "test_basicauth_with_netrc test_cookie_persists_via_api test_cookie_quote_wrapped "
        "test_cookie_sent_on_redirect test_custom_content_type test_decompress_gzip "
        "test_different_encodings_dont_break_post test_fixes_1329 test_generic_cookiejar_works "
        "test_header_remove_is_case_insensitive test_mixed_case_scheme_acceptable "
        "test_params_are_merged_case_sensitive test_prepared_request_hook "
        "test_request_and_response_are_pickleable test_request_cookie_overrides_session_cookie "
        "test_request_ok_set test_requests_in_history_are_not_overridden test_session_pickling "
        "test_set_cookie_on_301 test_status_raising test_time_elapsed_blank test_unicode_get "
        "test_unicode_header_name test_unicode_multipart_post test_uppercase_scheme_redirect "
        "test_urlencoded_get_query_multivalued_param test_user_agent_transfers",
    ),
    "psf__requests-1921": _tests(
        "test_requests.py::RequestsTestCase::",
        "test_DIGESTAUTH_QUOTES_QOP_VALUE test_DIGESTAUTH_WRONG_HTTP_401_GET "
        "test_DIGEST_AUTH_RETURNS_COOKIE test_DIGEST_STREAM "
        "test_HTTP_200_OK_GET_WITH_MIXED_PARAMS test_HTTP_200_OK_GET_WITH_PARAMS "
        "test_HTTP_200_OK_HEAD test_HTTP_200_OK_PUT test_HTTP_302_ALLOW_REDIRECT_GET "
        "test_POSTBIN_GET_POST_FILES test_POSTBIN_GET_POST_FILES_WITH_DATA "
        "test_basicauth_with_netrc test_cookie_persists_via_api test_cookie_quote_wrapped "
        "test_cookie_removed_on_expire test_custom_content_type test_decompress_gzip "
        "test_different_encodings_dont_break_post test_fixes_1329 test_generic_cookiejar_works "
        "test_header_remove_is_case_insensitive test_mixed_case_scheme_acceptable "
        "test_param_cookiejar_works test_params_are_merged_case_sensitive "
        "test_prepared_from_session test_prepared_request_hook test_pyopenssl_redirect "
        "test_request_and_response_are_pickleable test_request_cookie_overrides_session_cookie "
        "test_request_cookies_not_persisted test_request_ok_set "
        "test_requests_in_history_are_not_overridden test_session_pickling test_set_cookie_on_301 "
        "test_status_raising test_time_elapsed_blank test_unicode_get test_unicode_header_name "
        "test_unicode_method_name test_unicode_multipart_post test_uppercase_scheme_redirect "
        "test_urlencoded_get_query_multivalued_param test_user_agent_transfers",
    ),
    "psf__requests-2317": _tests(
        "test_requests.py::RequestsTestCase::",
        "test_BASICAUTH_TUPLE_HTTP_200_OK_GET test_DIGESTAUTH_QUOTES_QOP_VALUE "
        "test_DIGESTAUTH_WRONG_HTTP_401_GET test_DIGEST_AUTH_RETURNS_COOKIE "
        "test_DIGEST_AUTH_SETS_SESSION_COOKIES test_DIGEST_HTTP_200_OK_GET test_DIGEST_STREAM "
        "test_HTTP_200_OK_GET_ALTERNATIVE test_HTTP_200_OK_GET_WITH_MIXED_PARAMS "
        "test_HTTP_200_OK_GET_WITH_PARAMS test_HTTP_200_OK_HEAD test_HTTP_200_OK_PUT "
        "test_HTTP_302_ALLOW_REDIRECT_GET test_POSTBIN_GET_POST_FILES "
        "test_POSTBIN_GET_POST_FILES_WITH_DATA test_auth_is_retained_for_redirect_on_host "
        "test_auth_is_stripped_on_redirect_off_host test_basicauth_with_netrc "
        "test_cookie_persists_via_api test_cookie_quote_wrapped test_cookie_removed_on_expire "
        "test_cookie_sent_on_redirect test_custom_content_type test_decompress_gzip "
        "test_different_encodings_dont_break_post test_fixes_1329 test_generic_cookiejar_works "
        "test_header_remove_is_case_insensitive test_history_is_always_a_list "
        "test_json_param_post_content_type_works test_manual_redirect_with_partial_body_read "
        "test_mixed_case_scheme_acceptable test_param_cookiejar_works "
        "test_params_are_merged_case_sensitive test_prepared_from_session "
        "test_prepared_request_hook test_pyopenssl_redirect "
        "test_redirect_with_wrong_gzipped_header test_request_and_response_are_pickleable "
        "test_request_cookie_overrides_session_cookie test_request_cookies_not_persisted "
        "test_request_ok_set test_requests_history_is_saved "
        "test_requests_in_history_are_not_overridden test_session_pickling test_set_cookie_on_301 "
        "test_status_raising test_time_elapsed_blank test_unicode_get test_unicode_header_name "
        "test_unicode_method_name test_uppercase_scheme_redirect "
        "test_urlencoded_get_query_multivalued_param test_user_agent_transfers",
        "test_requests.py::TestTimeout::",
        "test_connect_timeout test_encoded_methods test_none_timeout test_read_timeout "
        "test_stream_timeout test_total_timeout_connect",
    ),
    "psf__requests-2931": _tests(
        "test_requests.py::TestTimeout::",
        "test_connect_timeout test_total_timeout_connect",
    ),
    "psf__requests-5414": _tests(
        "tests/test_requests.py::TestTimeout::",
        "test_connect_timeout[timeout0] test_connect_timeout[timeout1] "
        "test_total_timeout_connect[timeout0] test_total_timeout_connect[timeout1]",
    ),
    "psf__requests-6028": (),
    # Sphinx: linkcheck tests fetch www.google.com, www.w3.org and www.sphinx-doc.org,
    # test_latex_images www.python.org (observed 2026-11-27 the same way, every Verified
    # instance; the others: every listed test passed without network).
    "sphinx-doc__sphinx-7440": (),
    "sphinx-doc__sphinx-7454": (),
    "sphinx-doc__sphinx-7462": (),
    "sphinx-doc__sphinx-7590": (),
    "sphinx-doc__sphinx-7748": (),
    "sphinx-doc__sphinx-7757": (),
    "sphinx-doc__sphinx-7889": (),
    "sphinx-doc__sphinx-7910": (),
    "sphinx-doc__sphinx-7985": _tests(
        "tests/test_build_linkcheck.py::", "test_defaults test_defaults_json test_anchors_ignored"
    ),
    "sphinx-doc__sphinx-8035": (),
    "sphinx-doc__sphinx-8056": (),
    "sphinx-doc__sphinx-8120": (),
    "sphinx-doc__sphinx-8265": (),
    "sphinx-doc__sphinx-8269": _tests(
        "tests/test_build_linkcheck.py::", "test_defaults test_defaults_json test_anchors_ignored"
    ),
    "sphinx-doc__sphinx-8459": (),
    "sphinx-doc__sphinx-8475": _tests(
        "tests/test_build_linkcheck.py::", "test_defaults test_defaults_json test_anchors_ignored"
    ),
    "sphinx-doc__sphinx-8548": (),
    "sphinx-doc__sphinx-8551": (),
    "sphinx-doc__sphinx-8593": (),
    "sphinx-doc__sphinx-8595": (),
    "sphinx-doc__sphinx-8621": (),
    "sphinx-doc__sphinx-8638": (),
    "sphinx-doc__sphinx-8721": (),
    "sphinx-doc__sphinx-9229": (),
    "sphinx-doc__sphinx-9230": (),
    "sphinx-doc__sphinx-9258": (),
    "sphinx-doc__sphinx-9281": (),
    "sphinx-doc__sphinx-9320": (),
    "sphinx-doc__sphinx-9367": (),
    "sphinx-doc__sphinx-9461": (),
    "sphinx-doc__sphinx-9591": (),
    "sphinx-doc__sphinx-9602": (),
    "sphinx-doc__sphinx-9658": (),
    "sphinx-doc__sphinx-9673": (),
    "sphinx-doc__sphinx-9698": (),
    "sphinx-doc__sphinx-9711": (),
    "sphinx-doc__sphinx-10323": (),
    "sphinx-doc__sphinx-10435": ("tests/test_build_latex.py::test_latex_images",),
    "sphinx-doc__sphinx-10449": (),
    "sphinx-doc__sphinx-10466": (),
    "sphinx-doc__sphinx-10614": (),
    "sphinx-doc__sphinx-10673": (),
    "sphinx-doc__sphinx-11445": (),
    "sphinx-doc__sphinx-11510": (),
}


@dataclass(frozen=True)
class NetworkStandIns:
    """What stands in for the internet in a repository's runs (services.py starts them)."""

    # the variable the tests read httpbin's URL from ("" for none): a loopback httpbin is
    # started and its URL put there
    httpbin_variable: str = ""
    # connects to addresses nothing answers (requests' TARPIT, 10.255.255.1) wait for their
    # timeout instead of failing at once
    tarpit: bool = False


#: Per repository. requests' test files read `HTTPBIN_URL` (0.14 to 2.9: `os.environ.get(
#: 'HTTPBIN_URL', 'http://httpbin.org/')`; from 2.10 on pytest-httpbin's own loopback fixture,
#: which ignores it) and connect to TARPIT = 10.255.255.1 for their timeout tests (2.4 on).
NETWORK_STAND_INS: dict[str, NetworkStandIns] = {
    "psf/requests": NetworkStandIns(httpbin_variable="HTTPBIN_URL", tarpit=True),
}

#: Of NETWORK_TESTS, those the stand-ins do not serve: they reach named hosts of the internet
#: (https://httpbin.org itself, https:// against HTTPBIN_URL's plain-HTTP host, a redirect to
#: www.google.co.uk). Observed on 2026-11-27 with the gold patch in the sandbox with the
#: loopback httpbin and the tarpit, each Verified and Lite requests instance; for a repository
#: without stand-ins, every NETWORK_TESTS entry needs the internet.
_MIXED_CASE = "test_requests.py::RequestsTestCase::test_mixed_case_scheme_acceptable"
_PYOPENSSL = "test_requests.py::RequestsTestCase::test_pyopenssl_redirect"
_OFF_HOST = "test_requests.py::RequestsTestCase::test_auth_is_stripped_on_redirect_off_host"
_STREAM = "test_requests.py::TestTimeout::test_stream_timeout"
INTERNET_TESTS: dict[str, tuple[str, ...]] = {
    # https:// + HTTPBIN_URL's host: httpbin.org answers HTTPS, the loopback one plain HTTP
    "psf__requests-1724": (_MIXED_CASE,),
    "psf__requests-1766": (_MIXED_CASE,),
    # and https://httpbin.org/status/301
    "psf__requests-1921": (_MIXED_CASE, _PYOPENSSL),
    # and https://httpbin.org/redirect/5, a redirect to www.google.co.uk,
    # https://httpbin.org/delay/10
    "psf__requests-2317": (
        "test_requests.py::RequestsTestCase::test_requests_history_is_saved",
        _OFF_HOST,
        _MIXED_CASE,
        _PYOPENSSL,
        _STREAM,
    ),
    "psf__requests-2931": (),
    "psf__requests-5414": (),
    # Lite (not in NETWORK_TESTS: observed with the stand-ins only)
    "psf__requests-1963": (_PYOPENSSL, _STREAM),
    "psf__requests-2148": (_OFF_HOST, _MIXED_CASE, _PYOPENSSL, _STREAM),
}

NETWORK_NOTES: dict[str, str] = {
    "psf/requests": (
        "test_requests.py calls http://httpbin.org (HTTPBIN_URL) in many tests; they run "
        "against the loopback httpbin where it can be started"
    ),
}


def internet_tests(instance_id: str, repo: str) -> tuple[str, ...] | None:
    """The tests of an instance that need the internet even with its repository's stand-ins;
    None when the instance was not checked."""
    if repo in NETWORK_STAND_INS and instance_id in INTERNET_TESTS:
        return INTERNET_TESTS[instance_id]
    known = NETWORK_TESTS.get(instance_id)
    if known is None or repo not in NETWORK_STAND_INS:
        return known
    return ()


# ------------------------------------------------------------------------ conda classification

LeftOutKind = Literal["native", "metapackage", "conda-only", "overridden", "duplicate", "stdlib"]

# Python packages that exist only on conda-forge at these versions (CDAT, ESMF's Python API), and
# the fragments of test ids that show a test needs them.
CONDA_ONLY_PYTHON: dict[str, tuple[str, ...]] = {
    "cdms2": ("cdms2",),
    "cdtime": ("cdms2",),
    "cdat_info": ("cdms2",),
    "libcf": ("cdms2",),
    "distarray": ("cdms2",),
    "esmpy": ("esmpy", "esmf"),
}

# Backports conda-forge still ships, as empty packages, for Pythons whose standard library has the
# module (from this version on); PyPI's sdist does not compile there (backports.zoneinfo, 3.10).
STDLIB_BACKPORTS: dict[str, tuple[int, int]] = {"backports.zoneinfo": (3, 9)}

# conda-side packaging artefacts -> the companion through which the PyPI package is pinned
CONDA_METAPACKAGES: dict[str, str] = {
    "cached-property": "cached_property",
    "importlib_metadata": "importlib-metadata",
    "typing-extensions": "typing_extensions",
    "seaborn": "seaborn-base",
    "pyarrow-core": "pyarrow",
    "python_abi": "python (an ABI tag, no files)",
    "nomkl": "the BLAS choice (no files)",
}

# conda name -> PyPI name, where they differ beyond PEP 503 normalisation
CONDA_TO_PYPI: dict[str, str] = {
    "antlr-python-runtime": "antlr4-python3-runtime",
    "brotli-python": "Brotli",
    "iris": "scitools-iris",
    "matplotlib-base": "matplotlib",
    "msgpack-python": "msgpack",
    "python-eccodes": "eccodes",
    "python-fastjsonschema": "fastjsonschema",
    "python-tzdata": "tzdata",
    "python-xxhash": "xxhash",
    "seaborn-base": "seaborn",
}

_PYTHON_BUILD_TAG = re.compile(r"(^|_)py(\d|h|_|ge)")


@dataclass(frozen=True)
class CondaDecision:
    """What the lock does with one conda pin `name=version=build`."""

    name: str
    version: str
    build: str
    action: Literal["pin", "interpreter", "leave-out"]
    pypi_name: str = ""  # for "pin"
    kind: LeftOutKind | None = None  # for "leave-out"
    reason: str = field(default="")


def classify_conda(name: str, version: str, build: str) -> CondaDecision:
    """Apply the module's rules to one conda pin."""
    if name == "python":
        return CondaDecision(name, version, build, "interpreter", reason="the interpreter")
    if name in CONDA_ONLY_PYTHON:
        return CondaDecision(
            name,
            version,
            build,
            "leave-out",
            kind="conda-only",
            reason="Python package published only on conda-forge at this version",
        )
    if name in CONDA_METAPACKAGES:
        return CondaDecision(
            name,
            version,
            build,
            "leave-out",
            kind="metapackage",
            reason=f"conda metapackage or split; pinned through {CONDA_METAPACKAGES[name]}",
        )
    if _PYTHON_BUILD_TAG.search(build):
        pypi = CONDA_TO_PYPI.get(name, name)
        why = "Python build tag" + (f"; PyPI name {pypi}" if pypi != name else "")
        return CondaDecision(name, version, build, "pin", pypi_name=pypi, reason=why)
    return CondaDecision(
        name,
        version,
        build,
        "leave-out",
        kind="native",
        reason="native library or data from conda (no Python build tag)",
    )
