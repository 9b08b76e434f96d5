"""What the tests of SWE-bench environments and of the backends that run instances elsewhere
(test_testenvs.py, test_ray.py, test_remote.py) share: the instances, their pins, the
evaluation they compare, and a second small bench of the "extras" a runner elsewhere must find
by identity as well: a requests-style instance whose tests talk to the loopback httpbin and
wait out a connect in the tarpit (and a copy of it for a hostile patch), and an instance whose
setup bootstraps a git submodule.
The fixtures that build them once per test process are in conftest.py."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from passbench.core.settings import Paths
from passbench.stages.benchmarks.swebench.services import HTTPBIN_PORT
from passbench.stages.evaluate import EvaluateSettings, Evaluator

from .fixture import CALC_FIXED, SmallBench, make_small_bench
from .test_evaluate import HELPERS_TEST
from .test_network import DISPLACE

PYTHON = ".".join(map(str, sys.version_info[:3]))
INSTANCE = "octo__calc-1"
OTHER = "octo__other-2"  # same repository history, no export: no lock, no environment
#: pytest and what it needs on this Python, as an official export's pip section pins them
PINS = ("pytest==8.3.3", "pluggy==1.5.0", "iniconfig==2.0.0", "packaging==24.1")
CLI = [sys.executable, "-m", "passbench.apps.cli"]

#: Fixes add (FAIL_TO_PASS passes) and breaks sub (PASS_TO_PASS fails): not resolved.
FIX_AND_BREAK = (
    "diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n"
    "+++ b/calc/__init__.py\n@@ -1,6 +1,6 @@\n def add(a, b):\n-    return a - b\n"
    "+    return a + b\n \n \n def sub(a, b):\n-    return a - b\n+    return b - a\n"
)
#: Verdict fields the benchmark judges from the raw data a node or server sends back.
JUDGED = (
    "status",
    "resolution",
    "fail_to_pass",
    "pass_to_pass",
    "channel",
    "parser_disagrees",
    "machinery_restored",
    "environment",
    "environment_lock",
)


def export(python: str, pins: tuple[str, ...]) -> str:
    lines = ["name: testbed", "channels:", "  - defaults", "dependencies:"]
    lines += [f"  - python={python}=h1234567_0", "  - pip:", *(f"      - {p}" for p in pins)]
    return "\n".join([*lines, "prefix: /opt/miniconda3/envs/testbed", ""])


def make_small(root: Path) -> SmallBench:
    """Two instances of one history; an official export (pytest's pins) for the first."""
    bench = make_small_bench(root, ("octo/calc", "octo/other"))
    rows = [{"instance_id": INSTANCE, "environment_yml": export(PYTHON, PINS)}]
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    target = bench.data_dir / "swebench" / "swebench-verified-environments.jsonl.gz"
    target.write_bytes(gzip.compress(text, mtime=0))
    return bench


def mirror_copies(source: Path, dest: Path, names: tuple[str, ...] = ()) -> Path:
    """`git clone --mirror` of the mirrors in `source` (those named `names`, else all) into
    `dest`: a machine's own folder of them."""
    dest.mkdir(parents=True, exist_ok=True)
    for mirror in sorted(source.iterdir()):
        if names and mirror.name not in names:
            continue
        subprocess.run(
            ["git", "clone", "-q", "--mirror", str(mirror), str(dest / mirror.name)], check=True
        )
    return dest


def evaluate(
    data_dir: Path, repos_dir: Path, out: Path, predictions: dict[str, str], **settings: object
) -> dict[str, dict[str, object]]:
    """Evaluate `predictions` (instance -> patch); each instance's entry, and "backend"."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "preds.json"
    path.write_text(
        json.dumps(
            {key: {"model_name_or_path": "m", "model_patch": p} for key, p in predictions.items()}
        )
    )
    chosen = EvaluateSettings(
        benchmark="swebench-verified",
        workers=2,
        check_ground_truth=False,
        **settings,  # type: ignore[arg-type]
    )
    paths = Paths(cache_dir=out / "cache", data_dir=data_dir, repos_dir=repos_dir)
    outcome = Evaluator(chosen, paths).evaluate_samples(path, out / "results")
    data = json.loads(outcome.eval_results_path.read_text())
    entries = {task: dict(found[0]) for task, found in data["eval"].items()}
    entries["backend"] = dict(data["passbench"]["backend"])
    return entries


# -- the extras: a loopback service and a git submodule

SERVED = "psf__requests-1"  # its tests call the loopback httpbin (psf/requests gets one)
HOSTILE = "psf__requests-2"  # the same instance, for a patch that tries to displace it
NESTED = "octo__astro-1"  # its setup bootstraps the astropy_helpers submodule
SUBMODULE_MIRROR = "octo__helpers.git"
HTTPBIN_TEST = "tests/test_net.py::test_httpbin_answers"
#: passes only with the tarpit (psf/requests gets one): without it the connect fails at once
TARPIT_TEST = "tests/test_net.py::test_connect_to_an_unroutable_address_times_out"
NET_TEST = """\
import json
import os
import socket
import urllib.request


def test_httpbin_answers():
    url = os.environ.get("HTTPBIN_URL", "http://httpbin.org/").rstrip("/") + "/get?probe=1"
    with urllib.request.urlopen(url, timeout=20) as response:
        assert json.load(response)["args"] == {"probe": "1"}


def test_connect_to_an_unroutable_address_times_out():
    sock = socket.socket()
    sock.settimeout(0.2)
    try:
        sock.connect(("10.255.255.1", 80))  # requests' TARPIT
    except socket.timeout:
        pass
"""


@dataclass(frozen=True)
class ExtrasBench:
    data_dir: Path
    repos_dir: Path  # psf__requests.git, octo__astro.git and the submodule's octo__helpers.git
    predictions: dict[str, str]  # the gold patches; the hostile one for HOSTILE
    submodule_commit: str


def make_extras(root: Path) -> ExtrasBench:
    served = make_small_bench(
        root / "requests",
        ("psf/requests",),
        version="2.4",
        base_files={"tests/test_net.py": NET_TEST},
        also_passing=(HTTPBIN_TEST, TARPIT_TEST),
    )
    nested = make_small_bench(
        root / "astro",
        ("octo/astro",),
        base_files={
            "ah_bootstrap.py": "# setup.py imports it\n",
            "setup.cfg": "[ah_bootstrap]\nauto_use = True\n",
            "tests/test_helpers.py": HELPERS_TEST,
        },
        also_passing=("tests/test_helpers.py::test_the_submodule_is_there",),
        submodule=("astropy_helpers", "octo/helpers", {"astropy_helpers/__init__.py": "V = 3\n"}),
    )
    (row,) = served.rows
    rows = [row, {**row, "instance_id": HOSTILE}, *nested.rows]
    data_dir = root / "data"
    (data_dir / "swebench").mkdir(parents=True)
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    for name in ("swebench-verified", "swebench-lite", "swebench-lite-dev"):
        (data_dir / "swebench" / f"{name}.jsonl.gz").write_bytes(gzip.compress(text, mtime=0))
    repos_dir = root / "repos"
    for bench in (served, nested):
        shutil.copytree(bench.repos_dir, repos_dir, dirs_exist_ok=True)
    astro = str(repos_dir / "octo__astro.git")
    gitlink = subprocess.run(
        ["git", "--git-dir", astro, "ls-tree", nested.base_commit, "astropy_helpers"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[2]
    attack = DISPLACE.replace("PORT", str(HTTPBIN_PORT))
    predictions = {
        SERVED: served.gold_patch,
        HOSTILE: _gold_with(served, attack),
        NESTED: nested.gold_patch,
    }
    return ExtrasBench(data_dir, repos_dir, predictions, gitlink)


def _gold_with(bench: SmallBench, text: str) -> str:
    """The gold fix of calc/__init__.py with `text` appended to the file."""
    work = bench.repos_dir.parent / "attack"
    (mirror,) = bench.repos_dir.iterdir()
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "clone", "-q", str(mirror), str(work)], check=True, env=env)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", bench.base_commit], check=True)
    (work / "calc" / "__init__.py").write_text(CALC_FIXED + text)
    done = subprocess.run(
        ["git", "-C", str(work), "diff"], capture_output=True, text=True, check=True
    )
    return done.stdout
