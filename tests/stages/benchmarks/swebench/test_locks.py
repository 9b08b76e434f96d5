"""locks.py: a lock from every real export (nothing dropped silently), the spec fallback, which
lock an instance gets, and the stability of the identity (sha256)."""

from __future__ import annotations

import collections
import gzip
import json
from pathlib import Path

import pytest

from passbench.core.errors import InputError
from passbench.stages.benchmarks.swebench.locks import (
    INFERRED,
    EnvironmentKey,
    LockCatalog,
    lock_from_export,
    lock_from_spec,
    parse_export,
    read_exports,
)
from passbench.stages.benchmarks.swebench.specs import spec_for, spec_keys
from passbench.stages.evalenv.lock import parse_lock

from .envdata import EXPORTS, LITE, VERIFIED, Row, read_rows


@pytest.fixture(scope="module")
def exports(data_dir: Path) -> dict[str, str]:
    return read_exports(data_dir / "swebench" / EXPORTS)


@pytest.fixture(scope="module")
def verified(data_dir: Path) -> list[Row]:
    return read_rows(data_dir / "swebench" / VERIFIED)


@pytest.fixture(scope="module")
def catalog(exports: dict[str, str], verified: list[Row]) -> LockCatalog:
    return LockCatalog(exports, verified)


def test_every_export_yields_a_lock_and_every_pin_is_accounted_for(
    exports: dict[str, str], verified: list[Row]
) -> None:
    rows = {row.instance_id: row for row in verified}
    assert len(exports) == 203
    locks = {}
    for instance_id, text in exports.items():
        row = rows[instance_id]
        lock = lock_from_export(text, row.repo, row.version, where=instance_id)
        export = parse_export(text, where=instance_id)
        from_conda = [pin for pin in lock.pins if pin.origin.startswith("conda ")]
        from_pip = [pin for pin in lock.pins if pin.origin == "pip"]
        # every conda pin: the interpreter, a PyPI pin, or left out with its reason
        assert len(export.conda) == 1 + len(from_conda) + len(lock.left_out), instance_id
        assert all(item.reason for item in lock.left_out)
        # every pip pin is installed as it is
        assert sorted((p.name, p.version) for p in from_pip) == sorted(export.pip), instance_id
        # the runtime part is a valid evalenv lock; the text says everything left out
        assert len(parse_lock(lock.text).pins) == len(lock.pins)
        for item in lock.left_out:
            assert f"#   {item.name}={item.version}={item.build}  [{item.kind}]" in lock.text
        assert instance_id not in lock.text  # instances sharing an export share a lock
        assert lock.python == export_python(text)
        locks[lock.sha256] = lock
    # one lock per distinct export text
    assert len(locks) == len(set(exports.values())) == 42
    per_repo = collections.Counter(lock.repo for lock in locks.values())
    assert per_repo["sympy/sympy"] == 2  # 75 instances of 12 versions
    assert per_repo["psf/requests"] == 2


def export_python(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("  - python=")).split("=")[1]


REQUESTS_5414 = """\
# passbench SWE-bench environment lock, schema 1
# repository: psf/requests
# kind: export (the pins of an official image's conda export)
# python: 3.9.20
# export sha256: 7ff9c7aafd0d4bd23ebe517bb01f1b762694340e73fb5e25438714dfafe40f64
#
# runtime: pip install --no-deps of exactly these
certifi==2024.8.30  # pip
charset-normalizer==2.0.12  # pip
exceptiongroup==1.2.0  # conda exceptiongroup=1.2.0=py39h06a4308_0
idna==3.10  # pip
iniconfig==1.1.1  # conda iniconfig=1.1.1=pyhd3eb1b0_0
packaging==24.1  # conda packaging=24.1=py39h06a4308_0
pip==24.2  # conda pip=24.2=py39h06a4308_0
pluggy==1.0.0  # conda pluggy=1.0.0=py39h06a4308_1
pytest==7.4.4  # conda pytest=7.4.4=py39h06a4308_0
setuptools==75.1.0  # conda setuptools=75.1.0=py39h06a4308_0
tomli==2.0.1  # conda tomli=2.0.1=py39h06a4308_0
urllib3==1.26.20  # pip
wheel==0.44.0  # conda wheel=0.44.0=py39h06a4308_0
#
# left out of the conda export:
"""


def test_snapshot_requests(exports: dict[str, str]) -> None:
    lock = lock_from_export(exports["psf__requests-5414"], "psf/requests", "2.26")
    assert lock.text.startswith(REQUESTS_5414)
    assert [item.name for item in lock.left_out] == [
        "_libgcc_mutex", "_openmp_mutex", "ca-certificates", "ld_impl_linux-64", "libffi",
        "libgcc-ng", "libgomp", "libstdcxx-ng", "ncurses", "openssl", "readline", "sqlite", "tk",
        "tzdata", "xz", "zlib",
    ]  # fmt: skip
    assert {item.kind for item in lock.left_out} == {"native"}
    assert lock.build_pins == ()
    # the identity: the same bytes on every machine, run after run
    assert lock.sha256 == "fa1e327ca810b2c4ea3311b8ba09a7cc34bce5df3e2a2730773360bf72f6fe3a"
    assert lock_from_export(exports["psf__requests-5414"], "psf/requests", "2.26") == lock


def test_snapshot_xarray_conda_forge_stack(exports: dict[str, str]) -> None:
    lock = lock_from_export(exports["pydata__xarray-2905"], "pydata/xarray", "0.12")
    assert lock.python == "3.10.15"
    kinds = collections.Counter(item.kind for item in lock.left_out)
    assert kinds == {"native": 148, "metapackage": 7, "conda-only": 6, "duplicate": 1, "stdlib": 1}
    assert lock.conda_only == ("cdat_info", "cdms2", "cdtime", "distarray", "esmpy", "libcf")
    pins = {pin.name: pin for pin in lock.pins}
    assert len(pins) == 156
    # an empty package on conda-forge for 3.10; PyPI's sdist does not compile there
    assert "backports.zoneinfo" not in pins
    for pypi, conda in [
        ("matplotlib", "matplotlib-base"),
        ("Brotli", "brotli-python"),
        ("scitools-iris", "iris"),
        ("msgpack", "msgpack-python"),
        ("tzdata", "python-tzdata"),
        ("seaborn", "seaborn-base"),
        ("antlr4-python3-runtime", "antlr-python-runtime"),
    ]:
        assert pins[pypi].origin.startswith(f"conda {conda}="), pypi
    assert pins["numpy"].version == "1.23.0" and pins["numpy"].origin == "pip"
    # conda's pyarrow and its pyarrow-core half are one PyPI package
    assert pins["pyarrow"].version == "17.0.0"
    # ... and conda's importlib-resources and importlib_resources too
    duplicate = next(item for item in lock.left_out if item.kind == "duplicate")
    assert duplicate.name == "importlib_resources"
    assert duplicate.reason == "the same PyPI package as importlib-resources=6.4.5=pyhd8ed1ab_0"
    # the build backend the environment lacks, and none it has
    assert [pin.name for pin in lock.build_pins] == ["setuptools-scm"]


def test_snapshot_sphinx_inferred_pins_and_astropy_py36(exports: dict[str, str]) -> None:
    sphinx = lock_from_export(exports["sphinx-doc__sphinx-10323"], "sphinx-doc/sphinx", "5.0")
    assert {pin.name: pin.version for pin in sphinx.inferred} == {
        "sphinxcontrib-applehelp": "2.0.0",
        "sphinxcontrib-devhelp": "2.0.0",
        "sphinxcontrib-htmlhelp": "2.1.0",
        "sphinxcontrib-jsmath": "1.0.1",
        "sphinxcontrib-qthelp": "2.0.0",
        "sphinxcontrib-serializinghtml": "2.0.0",
    }
    assert f"sphinxcontrib-qthelp==2.0.0  # {INFERRED}" in sphinx.text
    capped = lock_from_export(exports["sphinx-doc__sphinx-8721"], "sphinx-doc/sphinx", "3.5")
    assert {pin.name: pin.version for pin in capped.inferred}["sphinxcontrib-applehelp"] == "1.0.4"
    astropy = lock_from_export(exports["astropy__astropy-7166"], "astropy/astropy", "1.3")
    assert astropy.python == "3.6.13"
    assert {pin.name: pin.origin for pin in astropy.pins}["certifi"].startswith("conda certifi=")
    pytest_lock = lock_from_export(exports["pytest-dev__pytest-5262"], "pytest-dev/pytest", "4.5")
    assert [pin.name for pin in pytest_lock.build_pins] == [
        "setuptools-scm",
        "packaging",
        "tomli",
        "typing-extensions",
    ]


def test_isolated_backend_shadows_the_environments(exports: dict[str, str]) -> None:
    """pylint 3.0's pyproject wants setuptools~=66.1; its export has setuptools 41.6.0, which
    would install it as "UNKNOWN": the install step gets what pip's isolation would have."""
    lock = lock_from_export(exports["pylint-dev__pylint-8898"], "pylint-dev/pylint", "3.0")
    assert {pin.name: pin.version for pin in lock.pins}["setuptools"] == "41.6.0"
    assert [(pin.name, pin.version, pin.origin) for pin in lock.build_pins] == [
        ("setuptools", "66.1.1", "build: as pip's isolation would"),
        ("wheel", "0.37.1", "build: as pip's isolation would"),
    ]
    assert "#   setuptools==66.1.1  # build: as pip's isolation would" in lock.text


def test_an_older_isolated_backend_shadows_a_newer_environment(exports: dict[str, str]) -> None:
    """pylint 2.15's pyproject (pylint-dev__pylint-7277) wants setuptools~=62.6, which has no
    PEP 660 hook: pip's isolation falls back to `setup.py develop`, which puts the working copy
    on sys.path. The export's setuptools 75 would make a PEP 660 install instead (an import
    hook, the working copy off sys.path, and pylint's checkers unloadable): the install step
    gets the older backend, ahead of the environment's."""
    lock = lock_from_export(exports["pylint-dev__pylint-7277"], "pylint-dev/pylint", "2.15")
    environment = {pin.name: pin.version for pin in lock.pins}["setuptools"]
    assert int(environment.split(".")[0]) >= 64
    assert [(pin.name, pin.version, pin.origin) for pin in lock.build_pins] == [
        ("setuptools", "62.6.0", "build: as pip's isolation would"),
        ("wheel", "0.37.1", "build: as pip's isolation would"),
    ]


def test_pip_section_overrides_conda(tmp_path: Path) -> None:
    text = (
        "name: testbed\ndependencies:\n  - python=3.9.20=he870216_1\n"
        "  - numpy=1.26.0=py39h1234567_0\n  - pip:\n      - numpy==1.25.2\n      - six==1.16.0\n"
    )
    lock = lock_from_export(text, "example/repo")
    assert {pin.name: pin.version for pin in lock.pins} == {"numpy": "1.25.2", "six": "1.16.0"}
    assert [(item.name, item.kind) for item in lock.left_out] == [("numpy", "overridden")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: testbed\ndependencies:\n  - python=3.9\n", "line 3: conda entry 'python=3.9'"),
        (
            "name: testbed\ndependencies:\n  - python=3.9.1=h_0\n  - pip:\n      - six>=1\n",
            "line 5: pip entry 'six>=1' is not name==version",
        ),
        ("name: testbed\ndependencies:\n  - six=1.0=py_0\n", "no python=VERSION pin"),
        ("name: testbed\nchannels:\n  defaults\n", "line 3: unexpected 'defaults'"),
        ("name: testbed\n", "no dependencies"),
    ],
)
def test_bad_exports_name_the_line(text: str, message: str) -> None:
    with pytest.raises(InputError, match="environment_yml") as raised:
        lock_from_export(text, "example/repo", where="row 7")
    assert message in str(raised.value)
    assert str(raised.value).startswith("row 7: ")


def test_read_exports_errors(tmp_path: Path) -> None:
    path = tmp_path / "exports.jsonl.gz"
    row = {"instance_id": "a__b-1", "environment_yml": "x"}
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(InputError, match=r"exports.jsonl.gz:2: field 'instance_id': listed twice"):
        read_exports(path)
    path.write_bytes(gzip.compress(b'{"instance_id": "a"}\n'))
    with pytest.raises(InputError, match=r":1: field 'environment_yml'"):
        read_exports(path)


def test_spec_fallback_is_marked_approximate_with_what_is_unpinned() -> None:
    for repo, version in spec_keys():
        spec = spec_for(repo, version)
        assert spec is not None
        lock = lock_from_spec(spec)
        assert lock.kind == "spec"
        assert "approximate, never the official environment" in lock.text
        assert f"# spec: SWE-bench's install spec of {repo} {version}" in lock.text
        assert lock.unpinned  # a spec never pins the repository's own dependencies
        assert "# UNPINNED" in lock.text
    requests = lock_from_spec(spec_for("psf/requests", "2.3"))  # type: ignore[arg-type]
    assert requests.python == "3.9" and requests.pins == ()
    assert [item.label for item in requests.unpinned] == [
        "pytest",
        "pip",
        "setuptools",
        "wheel",
        "the repository's own dependencies",
    ]
    flask = lock_from_spec(spec_for("pallets/flask", "2.0"))  # type: ignore[arg-type]
    assert {pin.name: pin.version for pin in flask.pins}["Werkzeug"] == "2.3.7"
    assert str(flask.unpinned[0]).startswith("requirements.txt: the repository's file")
    assert flask.unpinned[0].requirement == ""  # nothing pip could resolve without the repo
    sympy = lock_from_spec(spec_for("sympy/sympy", "1.1"))  # type: ignore[arg-type]
    assert [pin.name for pin in sympy.pins] == ["mpmath"]
    assert "flake8-comprehensions" in [item.requirement for item in sympy.unpinned]
    sklearn = lock_from_spec(spec_for("scikit-learn/scikit-learn", "1.3"))  # type: ignore[arg-type]
    assert {pin.name for pin in sklearn.pins} >= {"numpy", "scipy", "cython"}
    assert "pandas<2.0.0" in [item.requirement for item in sklearn.unpinned]


def test_catalog_chooses_export_then_sibling_then_spec(
    catalog: LockCatalog, verified: list[Row], data_dir: Path
) -> None:
    rows = {row.instance_id: row for row in read_rows(data_dir / "swebench" / LITE)}
    own = catalog.choose(next(r for r in verified if r.instance_id == "psf__requests-1921"))
    assert own is not None and own.source == "export"
    assert own.key == EnvironmentKey("psf/requests", "2.3")
    # Lite's requests-1963 is not in Verified; requests-1921 has its recipe (2.3, 3eb69be8)
    sibling = catalog.choose(rows["psf__requests-1963"])
    assert sibling is not None and sibling.source == "sibling-export"
    assert sibling.borrowed_from == "psf__requests-1921"
    assert sibling.lock == own.lock
    assert "approximate" in sibling.note
    spec = catalog.choose(rows["psf__requests-863"])  # 0.14: no Verified instance
    assert spec is not None and spec.source == "spec" and spec.lock.kind == "spec"
    assert catalog.choose(Row("x__y-1", "x/y", "1.0", "abc", (), ())) is None


def test_sibling_choice_is_the_majority_then_the_first(exports: dict[str, str]) -> None:
    texts = sorted(set(exports.values()))[:2]
    rows = [Row(f"o__r-{n}", "o/r", "1.0", "c0ffee", (), ()) for n in (1, 2, 3)]
    majority = LockCatalog({"o__r-1": texts[0], "o__r-2": texts[1], "o__r-3": texts[1]}, rows)
    choice = majority.choose(Row("o__r-9", "o/r", "1.0", "c0ffee", (), ()))
    assert choice is not None and choice.borrowed_from == "o__r-2"
    tie = LockCatalog({"o__r-2": texts[1], "o__r-1": texts[0]}, rows)
    choice = tie.choose(Row("o__r-9", "o/r", "1.0", "c0ffee", (), ()))
    assert choice is not None and choice.borrowed_from == "o__r-1"
    other_commit = tie.choose(Row("o__r-9", "o/r", "1.0", "decaf", (), ()))
    assert other_commit is None  # no sibling of that recipe, and o/r has no spec
