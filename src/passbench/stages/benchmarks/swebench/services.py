"""What stands in for the internet where a repository's tests reach it in the official images.

requests' tests until 2.9 call httpbin at `HTTPBIN_URL` (default http://httpbin.org/; later ones
use pytest-httpbin's fixture, a server of their own on loopback), and its timeout tests connect
to 10.255.255.1, an address nothing answers (`TARPIT`). In the sandbox there is no network: the
calls fail at once ("Network is unreachable") where the official container waits for an answer.
`specs.NETWORK_STAND_INS` says, per repository, what stands in:

- a loopback httpbin: httpbin's own app (the PyPI package that httpbin.org runs), from a tool
  environment of its own built by `environments.build_environment` from the pins below (never
  the instance's environment: no patch can reach or replace it), served on 127.0.0.1 inside
  the run's network namespace as a user of its own (`sandbox.host.repository`), with its URL
  in the variable the tests read;
- the tarpit: the run's network namespace drops what it sends to any address but loopback, so
  a connect waits for its timeout, as on a networked machine where nothing answers.

Both need passbench to run as root (a second user and namespace root inside the sandbox for a
moment). Through `--backend ray` or `remote` the httpbin's tool environment goes by identity
(its lock's sha256 in the node's or server's own 'swebench' cache), as the test environment
does: build it there with `passbench env create swebench-verified --subset requests`. Tests
that reach named hosts of the internet (https://httpbin.org directly, a redirect to
www.google.co.uk) still fail: `specs.INTERNET_TESTS` lists them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passbench.core.records import LoopbackService
from passbench.stages.benchmarks.swebench.environments import (
    BuiltEnvironment,
    build_environment,
    open_environment,
)
from passbench.stages.benchmarks.swebench.locks import EnvironmentLock, Requirement
from passbench.stages.benchmarks.swebench.specs import NETWORK_STAND_INS, NetworkStandIns

#: The tool environment's repository name in its lock and record (no SWE-bench repository).
HTTPBIN_TOOL = "passbench/loopback-httpbin"
HTTPBIN_PYTHON = "3.11"
#: httpbin and its dependencies as pip resolved them on 2026-11-27 for Python 3.11 (exact pins:
#: the service the tests talk to is the same on every machine).
HTTPBIN_PINS: tuple[tuple[str, str], ...] = (
    ("blinker", "1.9.0"),
    ("brotlicffi", "1.2.1.0"),
    ("cffi", "2.1.1"),
    ("click", "8.5.1"),
    ("decorator", "5.3.1"),
    ("Flask", "3.1.3"),
    ("greenlet", "2.0.2"),
    ("httpbin", "0.10.4"),
    ("itsdangerous", "2.2.0"),
    ("Jinja2", "3.1.6"),
    ("MarkupSafe", "3.0.4"),
    ("pycparser", "3.12"),
    ("six", "1.17.0"),
    ("Werkzeug", "3.1.9"),
)
#: Where it listens inside the run (its own network namespace: no other run shares the port).
HTTPBIN_PORT = 58080
#: The run's file (read-only at /run/passbench/files/<name>) the service runs.
HTTPBIN_SCRIPT_FILE = "loopback-httpbin.py"
HTTPBIN_SCRIPT = '''\
"""passbench's loopback httpbin: httpbin's app on 127.0.0.1:<port>, werkzeug's threaded
HTTP/1.1 server, its request log off (the tests' output is the official log)."""
import logging
import sys

from httpbin import app
from werkzeug.serving import make_server

logging.getLogger("werkzeug").setLevel(logging.ERROR)
make_server("127.0.0.1", int(sys.argv[-1]), app, threaded=True).serve_forever()
'''


def httpbin_lock() -> EnvironmentLock:
    """The tool environment's lock: its pins and the script it serves with (both in its sha)."""
    pins = tuple(Requirement(name, version, "passbench") for name, version in HTTPBIN_PINS)
    script_sha = hashlib.sha256(HTTPBIN_SCRIPT.encode()).hexdigest()
    text = "".join(
        [
            f"# {HTTPBIN_TOOL}: a loopback stand-in for httpbin.org (passbench)\n",
            f"# python {HTTPBIN_PYTHON}\n",
            f"# script sha256: {script_sha}\n",
            *(f"{name}=={version}\n" for name, version in HTTPBIN_PINS),
        ]
    )
    return EnvironmentLock(
        repo=HTTPBIN_TOOL,
        kind="spec",
        python=HTTPBIN_PYTHON,
        pins=pins,
        build_pins=(),
        unpinned=(),
        left_out=(),
        text=text,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
    )


def open_httpbin(cache_dir: Path) -> BuiltEnvironment | None:
    """The built tool environment (integrity-checked), or None."""
    return open_environment(httpbin_lock(), cache_dir)


def build_httpbin(
    cache_dir: Path,
    *,
    force: bool = False,
    pip_args: Sequence[str] = (),
    on_output: Callable[[str], None] | None = None,
) -> BuiltEnvironment:
    return build_environment(
        httpbin_lock(), cache_dir, force=force, pip_args=pip_args, on_output=on_output
    )


def stand_ins_for(repo: str) -> NetworkStandIns | None:
    return NETWORK_STAND_INS.get(repo)


def can_stand_in() -> str | None:
    """None when this process can start the stand-ins, else why not."""
    if os.geteuid() != 0:
        return "the loopback httpbin and the tarpit need passbench run as root"
    return None


@dataclass(frozen=True)
class RunStandIns:
    """What one run gets: services, the tarpit, the files they read, and what verdicts record."""

    services: tuple[LoopbackService, ...] = ()
    tarpit: bool = False
    files: tuple[tuple[str, str], ...] = ()
    record: dict[str, Any] | None = None  # None: nothing stands in


def run_stand_ins(repo: str, cache_dir: Path, files_dir: str) -> RunStandIns:
    """The stand-ins a run of `repo` gets on this machine: those of NETWORK_STAND_INS that can
    run here (as root; httpbin once its tool environment is built), the others not at all."""
    wanted = stand_ins_for(repo)
    if wanted is None or can_stand_in() is not None:
        return RunStandIns()
    services: list[LoopbackService] = []
    files: list[tuple[str, str]] = []
    record: dict[str, Any] = {"tarpit": wanted.tarpit}
    if wanted.httpbin_variable:
        built = open_httpbin(cache_dir)
        if built is not None:
            services.append(
                LoopbackService(
                    name="httpbin",
                    argv=(str(built.python), "-I", f"{files_dir}/{HTTPBIN_SCRIPT_FILE}"),
                    port=HTTPBIN_PORT,
                    read_only=tuple(str(path) for path in built.readonly_paths),
                    variables=((wanted.httpbin_variable, "http://127.0.0.1:{port}/"),),
                    # a Ray node or a server runs its own build of the same lock
                    environment=built.by_identity(),
                )
            )
            files.append((HTTPBIN_SCRIPT_FILE, HTTPBIN_SCRIPT))
            record["httpbin"] = {
                "lock_sha256": built.lock_sha256,
                "httpbin": dict(HTTPBIN_PINS)["httpbin"],
                "python": built.python_version,
                "variable": wanted.httpbin_variable,
            }
        else:
            record["httpbin"] = None  # wanted, not built: its tests fail as without network
    return RunStandIns(tuple(services), wanted.tarpit, tuple(files), record)
