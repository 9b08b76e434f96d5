"""The network stand-ins, end to end on small real repositories (fixture.py): a repository whose
tests call httpbin through HTTPBIN_URL and expect a connect to an unroutable address to time
out (as requests' do) is graded in the sandbox with the loopback httpbin and the tarpit; the
same tests fail for a repository without stand-ins; no real network path opens; and a patch
cannot replace or displace the service.

The loopback httpbin runs from its tool environment (services.py), built once in the user's
environments folder (`passbench env create swebench-verified --subset requests` builds it
too): the first run needs PyPI and takes about 40 s, later ones find it built."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.stages.sandbox.conftest import BWRAP

from passbench.core.errors import EnvironmentError_
from passbench.core.settings import Paths
from passbench.stages.benchmarks.swebench.services import (
    HTTPBIN_PORT,
    build_httpbin,
    open_httpbin,
)
from passbench.stages.benchmarks.swebench.testenvs import environments_folder
from passbench.stages.evaluate import EvaluateSettings, Evaluator

from .fixture import CALC_FIXED, SmallBench, make_small_bench

pytestmark = [
    pytest.mark.bwrap,
    pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the stand-ins need passbench run as root"),
]

NET_TESTS = (
    "tests/test_net.py::test_httpbin_answers",
    "tests/test_net.py::test_connect_to_an_unroutable_address_times_out",
    "tests/test_net.py::test_no_real_network",
)

#: What requests' tests do, in small: httpbin at HTTPBIN_URL, a connect to TARPIT that must time
#: out; and what must stay impossible: the internet and the host's own interfaces.
NET_TESTS_SOURCE = """\
import json
import os
import socket
import time
import urllib.error
import urllib.request

import pytest

HTTPBIN = os.environ.get("HTTPBIN_URL", "http://httpbin.org/").rstrip("/") + "/"


def test_httpbin_answers():
    with urllib.request.urlopen(HTTPBIN + "get?probe=1", timeout=20) as response:
        data = json.load(response)
    assert data["args"] == {{"probe": "1"}}
    with pytest.raises(urllib.error.HTTPError) as teapot:
        urllib.request.urlopen(HTTPBIN + "status/418", timeout=20)
    assert teapot.value.code == 418


def test_connect_to_an_unroutable_address_times_out():
    sock = socket.socket()
    sock.settimeout(0.5)
    started = time.monotonic()
    with pytest.raises(socket.timeout):
        sock.connect(("10.255.255.1", 80))
    assert time.monotonic() - started >= 0.4


def test_no_real_network():
    for address in {outside!r}:
        sock = socket.socket()
        sock.settimeout(1.0)
        with pytest.raises(OSError):
            sock.connect(tuple(address))
            sock.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
            assert not sock.recv(1), f"{{address}} answered"
"""

#: A test that passes only if the service the tests talk to is not httpbin: the patch's work.
FORGED_TEST = """\
import json
import os
import urllib.request

import calc

HTTPBIN = os.environ.get("HTTPBIN_URL", "http://127.0.0.1:{port}/").rstrip("/") + "/"


def test_forged():
    with urllib.request.urlopen(HTTPBIN + "get", timeout=20) as response:
        assert json.load(response).get("forged") is True
"""

#: Appended to the gold fix: at import (the tests import calc) it tries what a patch could to
#: put its own httpbin in place: kill the service, write over its code, take its port.
DISPLACE = """

import http.server as _http
import json as _json
import os as _os
import threading as _threading


def _displace():
    for pid in filter(str.isdigit, _os.listdir("/proc")):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
        except OSError:
            continue
        if int(pid) != _os.getpid() and any(b"httpbin" in part for part in argv):
            try:
                _os.kill(int(pid), 9)
            except OSError:
                pass
            python = argv[0].decode()
            for root, _dirs, files in _os.walk(_os.path.dirname(_os.path.dirname(python))):
                if "core.py" in files and root.endswith("httpbin"):
                    try:
                        open(_os.path.join(root, "core.py"), "a").write("FORGED = True\\n")
                    except OSError:
                        pass

    class Forged(_http.BaseHTTPRequestHandler):
        def do_GET(self):
            body = _json.dumps({"forged": True}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    try:
        server = _http.HTTPServer(("127.0.0.1", PORT), Forged)
    except OSError:
        return
    _threading.Thread(target=server.serve_forever, daemon=True).start()


_displace()
"""


@pytest.fixture(scope="module")
def httpbin_built() -> None:
    """The loopback httpbin's tool environment, built where `evaluate` looks for it."""
    root = environments_folder()
    try:
        if open_httpbin(root) is None:
            build_httpbin(root)
    except EnvironmentError_ as error:
        pytest.skip(f"the loopback httpbin's environment cannot be built here: {error}")


@pytest.fixture()
def outside_listeners() -> Iterator[list[tuple[str, int]]]:
    """Addresses that answer on the host: its loopback and its other interfaces, plus one of
    the internet; none may be reachable from inside."""
    sockets = []
    addresses: list[tuple[str, int]] = []
    hosts = ["127.0.0.1", *_host_addresses()]
    for host in hosts:
        server = socket.socket()
        server.bind((host, 0))
        server.listen()
        sockets.append(server)
        addresses.append(server.getsockname()[:2])
    addresses.append(("1.1.1.1", 53))
    addresses.append(("127.0.0.1", HTTPBIN_PORT + 1))
    yield addresses
    for server in sockets:
        server.close()


def _host_addresses() -> list[str]:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.1", 9))  # no packet is sent: it only picks the route
        found = probe.getsockname()[0]
    except OSError:
        return []
    finally:
        probe.close()
    return [] if found.startswith("127.") else [found]


def _bench(root: Path, repo: str, files: dict[str, str], tests: tuple[str, ...]) -> SmallBench:
    return make_small_bench(
        root, repos=(repo,), version="2.4", base_files=files, also_passing=tests
    )


def _evaluate(small: SmallBench, out: Path, patch: str) -> dict[str, object]:
    out.mkdir(parents=True)
    (instance,) = [str(row["instance_id"]) for row in small.rows]
    predictions = {instance: {"model_name_or_path": "org/model", "model_patch": patch}}
    (out / "preds.json").write_text(json.dumps(predictions))
    settings = EvaluateSettings(benchmark="swebench-verified", workers=1, check_ground_truth=False)
    paths = Paths(cache_dir=out / "cache", data_dir=small.data_dir, repos_dir=small.repos_dir)
    outcome = Evaluator(settings, paths).evaluate_samples(out / "preds.json", out / "results")
    (entry,) = json.loads(outcome.eval_results_path.read_text())["eval"][instance]
    return dict(entry)


def _failing(entry: dict[str, object]) -> list[str]:
    buckets = [entry["fail_to_pass"], entry["pass_to_pass"]]
    return sorted(test for bucket in buckets for test in bucket["failure"])  # type: ignore[index]


@pytest.mark.usefixtures("httpbin_built")
def test_httpbin_and_tarpit_tests_pass_with_the_stand_ins_and_nothing_else_is_reachable(
    tmp_path: Path, outside_listeners: list[tuple[str, int]]
) -> None:
    files = {"tests/test_net.py": NET_TESTS_SOURCE.format(outside=outside_listeners)}
    with_stand_ins = _bench(tmp_path / "requests", "psf/requests", files, NET_TESTS)
    entry = _evaluate(with_stand_ins, tmp_path / "out-requests", with_stand_ins.gold_patch)
    assert entry["status"] == "pass", (_failing(entry), entry["reason"])
    # without stand-ins (a repository NETWORK_STAND_INS does not name) the same tests fail
    without = _bench(tmp_path / "calc", "octo/calc", files, NET_TESTS)
    entry = _evaluate(without, tmp_path / "out-calc", without.gold_patch)
    assert entry["status"] == "fail"
    assert _failing(entry) == sorted(NET_TESTS[:2])


@pytest.mark.hostile
@pytest.mark.usefixtures("httpbin_built")
def test_a_patch_cannot_replace_or_displace_the_loopback_httpbin(tmp_path: Path) -> None:
    files = {"tests/test_forged.py": FORGED_TEST.format(port=HTTPBIN_PORT)}
    tests = ("tests/test_forged.py::test_forged",)
    small = _bench(tmp_path / "requests", "psf/requests", files, tests)
    attack = DISPLACE.replace("PORT", str(HTTPBIN_PORT))
    hostile = _patch_appending(small, attack)
    entry = _evaluate(small, tmp_path / "out-requests", hostile)
    assert entry["status"] == "fail" and _failing(entry) == list(tests)
    # the attack works where nothing holds the port: the test above can fail
    control = _bench(tmp_path / "calc", "octo/calc", files, tests)
    entry = _evaluate(control, tmp_path / "out-calc", _patch_appending(control, attack))
    assert entry["status"] == "pass", _failing(entry)


def _patch_appending(small: SmallBench, text: str) -> str:
    """A patch of calc/__init__.py: the gold fix with `text` added at its end."""
    work = small.repos_dir.parent / f"attack-{len(text)}"
    (mirror,) = small.repos_dir.iterdir()
    subprocess.run(["git", "clone", "-q", str(mirror), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", small.base_commit], check=True)
    (work / "calc" / "__init__.py").write_text(CALC_FIXED + text)
    done = subprocess.run(
        ["git", "-C", str(work), "diff"], capture_output=True, text=True, check=True
    )
    return done.stdout
