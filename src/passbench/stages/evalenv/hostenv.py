"""The environment variables an evaluation environment's interpreter gets on the host.

passbench runs the environment's Python outside the sandbox to build and check it (venv, pip,
the import probe, NLTK's downloader, its version). That interpreter runs code from hundreds of
third-party packages; none of it needs the user's API keys. So it never inherits the host's
environment: it gets a whitelist (not a blacklist, which misses the next `*_CREDENTIALS`), a
HOME of its own that is deleted afterwards, and no bytecode writes (a .pyc written into the
environment after its manifest would read as tampering, and a planted one would run).

    with host_environment(network=True, pip=True) as env:
        subprocess.run([python, "-m", "pip", ...], env=env)
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import platformdirs

#: Passed through from the host when set: where programs are, and how text is encoded.
_BASE = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
#: For steps that download (pip, NLTK's downloader): proxies and certificate authorities.
_PROXIES = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")
_NETWORK = (
    *_PROXIES,
    *(name.upper() for name in _PROXIES),
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
)
#: pip's own settings (index, find-links, certificates...) are kept for pip, but never one
#: whose name says it is a secret.
_PIP_PREFIX = "PIP_"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|CREDENTIALS|AUTH)$")


def scrubbed_environment(
    home: Path,
    *,
    network: bool = False,
    pip: bool = False,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment for one run of the environment's interpreter: the whitelisted
    host variables, HOME (and its XDG folders) at `home`, no user site, no bytecode writes."""
    host = os.environ if environ is None else environ
    names = _BASE + (_NETWORK if network else ())
    env = {name: host[name] for name in names if name in host}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    if pip:
        env.update(
            (name, value)
            for name, value in host.items()
            if name.startswith(_PIP_PREFIX) and not _SECRET_NAME.search(name)
        )
        # HOME moves, so point pip at the user's own cache and config, which it would use
        env.setdefault("PIP_CACHE_DIR", platformdirs.user_cache_dir("pip"))
        config = Path(platformdirs.user_config_dir("pip")) / "pip.conf"
        if "PIP_CONFIG_FILE" not in env and config.is_file():
            env["PIP_CONFIG_FILE"] = str(config)
    env.update(
        {
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "PYTHONNOUSERSITE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    return env


@contextmanager
def host_environment(
    *, network: bool = False, pip: bool = False, environ: Mapping[str, str] | None = None
) -> Iterator[dict[str, str]]:
    """`scrubbed_environment` with a fresh private HOME, removed when the block ends."""
    with tempfile.TemporaryDirectory(prefix="passbench-home-") as home:
        yield scrubbed_environment(Path(home), network=network, pip=pip, environ=environ)
