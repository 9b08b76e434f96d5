"""envcheck.py: per instance, whether it can be evaluated here and why not, on the real rows and
exports with this machine's interpreters and system packages replaced by fixed answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from passbench.stages.benchmarks.swebench.envcheck import (
    Support,
    check_instances,
    support_table,
    system_need_met,
)
from passbench.stages.benchmarks.swebench.environments import Interpreter
from passbench.stages.benchmarks.swebench.locks import LockCatalog, read_exports
from passbench.stages.benchmarks.swebench.specs import SYSTEM_NEEDS, SystemNeed

from .envdata import EXPORTS, LITE, VERIFIED, Row, read_rows

#: pyenv as on the reference machine: 3.6 to 3.13, no 3.5
INSTALLED = ("3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13")


def pyenv(pin: str) -> Interpreter | None:
    minor = ".".join(pin.split(".")[:2])
    if minor not in INSTALLED:
        return None
    return Interpreter(Path(f"/pyenv/{minor}.99/bin/python{minor}"), f"{minor}.99", "pyenv",
                       Path(f"/pyenv/{minor}.99"))  # fmt: skip


@pytest.fixture(scope="module")
def verified(data_dir: Path) -> list[Row]:
    return read_rows(data_dir / "swebench" / VERIFIED)


@pytest.fixture(scope="module")
def catalog(data_dir: Path, verified: list[Row]) -> LockCatalog:
    return LockCatalog(read_exports(data_dir / "swebench" / EXPORTS), verified)


def check(rows: list[Row], catalog: LockCatalog, **options: bool) -> dict[str, Support]:
    supports = check_instances(rows, catalog, find_python=pyenv, on_host=lambda need: False,
                               **options)  # fmt: skip
    return {support.instance_id: support for support in supports}


def kinds(support: Support, blocking: bool) -> set[str]:
    return {p.kind for p in support.problems if p.blocking == blocking}


def test_verified_per_repository(verified: list[Row], catalog: LockCatalog) -> None:
    supports = check(verified, catalog)
    assert support_table(supports.values()) == [
        # repository, official, evaluable, total
        # 1.3 and 3.1 bootstrap the astropy_helpers submodule: it comes from its mirror;
        # astropy__astropy-8707's eval script installs pytest<7.2 online before the tests
        ("astropy/astropy", 21, 21, 22),
        ("django/django", 0, 0, 231),  # no exports here; the spec leaves requirements unpinned
        ("matplotlib/matplotlib", 0, 0, 34),
        ("mwaskom/seaborn", 2, 2, 2),
        ("pallets/flask", 1, 1, 1),
        # 4 list tests of https://httpbin.org or www.google.co.uk; the loopback httpbin and
        # the tarpit serve the rest
        ("psf/requests", 4, 4, 8),
        ("pydata/xarray", 0, 19, 22),  # conda-only CDAT left out; 3 list cdms2 tests
        ("pylint-dev/pylint", 10, 10, 10),
        ("pytest-dev/pytest", 19, 19, 19),
        ("scikit-learn/scikit-learn", 0, 0, 32),
        # sphinxcontrib-* inferred; 7.2 needs graphviz; 4 list tests that fetch web pages
        ("sphinx-doc/sphinx", 0, 38, 44),
        ("sympy/sympy", 75, 75, 75),
    ]
    assert kinds(supports["psf__requests-1724"], True) == {"network"}
    served = supports["psf__requests-2931"]
    assert served.official and kinds(served, False) == {"network"}
    assert served.problems[0].detail.startswith("2 listed tests run against the loopback httpbin")
    # where the stand-ins cannot run (not root), their tests cannot pass: blocking
    blocked = check_instances([r for r in verified if r.repo == "psf/requests"], catalog,
                              find_python=pyenv, stand_ins_blocked="not root")  # fmt: skip
    assert support_table(blocked) == [("psf/requests", 2, 2, 8)]
    (why,) = [p for p in blocked[5].problems if p.blocking]
    assert why.detail.startswith("2 listed tests need the loopback httpbin (HTTPBIN_URL) or the ")
    assert "not root" in why.detail
    assert kinds(supports["astropy__astropy-7166"], True) == set()
    (pinned,) = supports["astropy__astropy-8707"].problems
    assert pinned.blocking and "pip install -q 'pytest<7.2'" in pinned.detail
    assert kinds(supports["pydata__xarray-3305"], True) == {"conda-only"}
    assert kinds(supports["pydata__xarray-2905"], False) == {"conda-only"}
    sphinx = [s for s in supports.values() if s.repo == "sphinx-doc/sphinx" and not s.evaluable]
    assert sorted(kinds(s, True).pop() for s in sphinx) == ["network"] * 4 + ["system"] * 2
    sphinx_72 = [s for s in sphinx if kinds(s, True) == {"system"}]
    assert "graphviz" in sphinx_72[0].problems[-1].detail
    linkcheck = supports["sphinx-doc__sphinx-8269"].problems[-1].detail
    assert linkcheck.startswith("3 listed tests need the internet") and "httpbin" not in linkcheck
    django = [s for s in supports.values() if s.repo == "django/django"]
    assert sum("python" in kinds(s, True) for s in django) == 2  # Python 3.5: 1.9 and 1.11
    flask = supports["pallets__flask-5014"]
    assert flask.official and flask.lock_source == "export" and flask.problems == ()
    assert flask.python_pin == "3.11.10" and flask.python_found == "3.11.99"
    choice = catalog.choose(next(r for r in verified if r.instance_id == "pallets__flask-5014"))
    assert choice is not None and flask.lock_sha256 == choice.lock.sha256


def test_lite_siblings_and_specs(data_dir: Path, catalog: LockCatalog) -> None:
    lite = read_rows(data_dir / "swebench" / LITE)
    strict = check(lite, catalog)
    sibling = strict["psf__requests-1963"]
    assert sibling.lock_source == "sibling-export"
    # observed with the stand-ins: test_pyopenssl_redirect fetches https://httpbin.org
    assert not sibling.evaluable and not sibling.official
    assert kinds(sibling, False) == {"approximate"} and kinds(sibling, True) == {"network"}
    unchecked = strict["psf__requests-3362"]  # not run here: a caveat, not a verdict
    assert any(p.kind == "network" and not p.blocking for p in unchecked.problems)
    spec_only = strict["psf__requests-863"]
    assert spec_only.lock_source == "spec"
    assert kinds(spec_only, True) == {"unpinned"}
    relaxed = check(lite, catalog, allow_unpinned=True)["psf__requests-863"]
    assert relaxed.evaluable and not relaxed.official
    assert "unpinned" in kinds(relaxed, False)
    sympy = strict["sympy__sympy-20049"]
    assert sympy.lock_source == "sibling-export" and sympy.evaluable and not sympy.official


def test_no_interpreter_and_no_lock(verified: list[Row], catalog: LockCatalog) -> None:
    supports = check_instances(verified[:5], catalog, find_python=lambda pin: None,
                               on_host=lambda need: True)  # fmt: skip
    assert all("python" in kinds(s, True) for s in supports)
    alien = Row("o__r-1", "o/r", "1.0", "abc", (), ())
    (support,) = check_instances([alien], catalog, find_python=pyenv)
    assert [p.kind for p in support.problems] == ["no-lock"]
    assert support.lock_source is None and not support.evaluable


def test_host_probes(tmp_path: Path) -> None:
    assert system_need_met(SystemNeed("coreutils", "program", "ls"))
    assert not system_need_met(SystemNeed("nothing", "program", "no-such-program-here"))
    assert system_need_met(SystemNeed("libc6", "library", "c"))
    assert not system_need_met(SystemNeed("nothing", "library", "no-such-library-here"))
    assert system_need_met(SystemNeed("x", "file", str(tmp_path)))
    assert not system_need_met(SystemNeed("x", "file", str(tmp_path / "missing")))
    assert set(SYSTEM_NEEDS) >= {"graphviz", "libenchant-2-dev", "hunspell-en-us"}
