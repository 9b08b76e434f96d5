"""The one environment check every remote backend uses (wire.offered_environment), with each
backend's own words: what it lacks, and how to get the same lock."""

from __future__ import annotations

import pytest

from passbench.core.errors import SandboxError
from passbench.stages.sandbox.base import EnvironmentRef
from passbench.stages.sandbox.remote import remote
from passbench.stages.sandbox.remote.container import LABEL_PYTHON, LABEL_VERSION, image_environment
from passbench.stages.sandbox.remote.e2b_backend import template_environment
from passbench.stages.sandbox.remote.wire import offered_environment

LOCK = "a" * 64
OFFERED = {"bigcodebench": {"lock_sha256": LOCK, "python_version": "3.10.14"}, "host": {}}


def test_the_named_environment_with_its_lock_and_python() -> None:
    wanted = EnvironmentRef("bigcodebench", LOCK)
    found = offered_environment(OFFERED, wanted, where="x", lock_hint="h")
    assert found == EnvironmentRef("bigcodebench", LOCK, "3.10.14")
    # no lock asked for: the offered one is taken
    taken = offered_environment(OFFERED, EnvironmentRef("bigcodebench"), where="x", lock_hint="h")
    assert taken.lock_sha256 == LOCK


def test_each_backend_refuses_in_its_own_words() -> None:
    missing, other = EnvironmentRef("humanevalplus"), EnvironmentRef("bigcodebench", "b" * 64)
    info = {"environments": OFFERED}
    with pytest.raises(SandboxError) as error:
        remote._environment(info, missing, "http://h:1")
    assert str(error.value) == (
        "remote backend http://h:1 has no 'humanevalplus' environment (it has: bigcodebench, host)"
    )
    with pytest.raises(SandboxError) as error:
        remote._environment(info, other, "http://h:1")
    assert str(error.value) == (
        "remote backend http://h:1: its 'bigcodebench' environment is lock aaaaaaaaaaaa, this "
        "run's is bbbbbbbbbbbb; build the same environment on both sides, or run without a "
        "local one to take the server's"
    )
    with pytest.raises(SandboxError) as error:
        template_environment(info, missing, "e2b template t")
    assert str(error.value) == (
        "e2b template t has no 'humanevalplus' environment (it has: bigcodebench, host): "
        "rebuild the template from deploy/e2b"
    )
    with pytest.raises(SandboxError) as error:
        template_environment(info, other, "e2b template t")
    assert str(error.value).endswith(
        "this run's is bbbbbbbbbbbb; build both from the same passbench and Python version"
    )
    from passbench.stages.sandbox.remote.container import passbench_version

    labels = {
        LABEL_VERSION: passbench_version(),
        LABEL_PYTHON: "3.12.3",
        "org.passbench.env.bigcodebench.lock_sha256": LOCK,
        "org.passbench.env.empty.lock_sha256": "",
    }
    with pytest.raises(SandboxError) as error:
        image_environment(labels, missing, "img")
    assert str(error.value) == "image img has no 'humanevalplus' environment (it has: bigcodebench)"
    with pytest.raises(SandboxError) as error:
        image_environment(labels, other, "img")
    assert str(error.value) == (
        "image img: its 'bigcodebench' environment is lock aaaaaaaaaaaa, this run's is "
        "bbbbbbbbbbbb; build the image from the same lock (`passbench image build`), or run "
        "without a local environment to take the image's"
    )
    assert image_environment(labels, EnvironmentRef("bigcodebench"), "img").python_version == (
        "3.12.3"
    )
