"""The runner image the docker/podman backends start: its tag, labels and build command.

The image (Dockerfile at the repository root) holds this passbench version and evaluation
environments built from its locks. Its tag names both, `passbench:0.1.0-abb485e92207`, so a
tag never moves to other contents; its labels say the same for the backend to check before a
run (sandbox/remote/container.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from passbench.core.errors import InputError
from passbench.stages.evalenv.lock import packaged_lock_path, read_lock
from passbench.stages.evalenv.specs import get_spec

REPOSITORY = "passbench"
#: The Python of the image's default base (the official evaluator's, BigCodeBench's lock for it).
DEFAULT_PYTHON = "3.10"
DEFAULT_ENVIRONMENTS = ("bigcodebench",)

LABEL_VERSION = "org.passbench.version"
LABEL_PYTHON = "org.passbench.python_version"


def lock_label(environment: str) -> str:
    return f"org.passbench.env.{environment}.lock_sha256"


def passbench_version() -> str:
    return version("passbench")


def environment_lock(environment: str, python: str) -> str:
    """The sha256 of the lock `environment` is built from under Python `python` ("3.10")."""
    spec = get_spec(environment)
    return read_lock(packaged_lock_path(spec.lock_for(python))).sha256


@dataclass(frozen=True)
class Toolchains:
    """Compilers and runtimes an image adds for other languages' benchmarks: the Debian packages
    to install and the executables and files to check after (from the benchmark's own table)."""

    packages: tuple[str, ...]
    tools: tuple[str, ...]


@dataclass(frozen=True)
class ImageSpec:
    """What goes into an image."""

    python: str = DEFAULT_PYTHON  # the base image's Python, minor version: picks the locks
    environments: tuple[str, ...] = DEFAULT_ENVIRONMENTS
    base_image: str | None = None  # default: python:PYTHON-slim-bookworm
    pip_args: tuple[str, ...] = ()  # for every pip install in the build (offline builds)
    toolchains: Toolchains | None = None  # MultiPL-E's (node, g++, the JDK, rustc, Lua)

    @property
    def multiple(self) -> bool:
        return self.toolchains is not None

    @property
    def base(self) -> str:
        return self.base_image or f"python:{self.python}-slim-bookworm"

    def tag(self) -> str:
        """`passbench:VERSION-LOCK12`: this version and the environment's lock, so the tag
        names the contents (`-noenv` for an image without environments)."""
        toolchains = "-multipl-e" if self.multiple else ""
        if not self.environments:
            return f"{REPOSITORY}:{passbench_version()}-py{self.python}-noenv{toolchains}"
        locks = "-".join(environment_lock(name, self.python)[:12] for name in self.environments)
        return f"{REPOSITORY}:{passbench_version()}-{locks}{toolchains}"

    def build_args(self) -> dict[str, str]:
        args = {
            "BASE_IMAGE": self.base,
            "PASSBENCH_VERSION": passbench_version(),
            "PYTHON_VERSION": self.python,
            "ENVIRONMENTS": " ".join(self.environments),
            "PIP_ARGS": " ".join(self.pip_args),
        }
        unknown = sorted(set(self.environments) - set(DEFAULT_ENVIRONMENTS))
        if unknown:
            raise InputError(f"the image cannot build environment '{unknown[0]}'")
        for name in self.environments:
            args[f"{name.upper()}_LOCK_SHA256"] = environment_lock(name, self.python)
        if self.toolchains is not None:
            args.update(toolchain_build_args(self.toolchains))
        return args


def toolchain_build_args(toolchains: Toolchains) -> dict[str, str]:
    """MULTIPLE=1 and the toolchains' Debian packages and the executables and files to check."""
    return {
        "MULTIPLE": "1",
        "MULTIPLE_PACKAGES": " ".join(dict.fromkeys(toolchains.packages)),
        "MULTIPLE_TOOLS": " ".join(dict.fromkeys(toolchains.tools)),
    }


def default_image() -> str:
    """The image the backends run when none is named: what `passbench image build` tags."""
    return ImageSpec().tag()


def build_command(
    engine: str,
    spec: ImageSpec,
    context: Path,
    *,
    tag: str | None = None,
    platforms: tuple[str, ...] = (),
    network: str | None = None,
) -> list[str]:
    """The engine's build command for `spec` from the checkout at `context`.

    Several platforms need a multi-platform builder: `docker buildx build` (whose result must
    go to a registry: add --push yourself, or build one platform at a time to load it), or
    podman's manifest list (`--manifest`)."""
    tag = tag or spec.tag()
    if engine == "docker" and len(platforms) > 1:
        command = ["docker", "buildx", "build"]
    else:
        command = [engine, "build"]
    if platforms:
        command.append("--platform=" + ",".join(platforms))
    if network:
        command.append(f"--network={network}")
    for name, value in spec.build_args().items():
        command += ["--build-arg", f"{name}={value}"]
    if engine == "podman" and len(platforms) > 1:
        command += ["--manifest", tag]
    else:
        command += ["--tag", tag]
    command += ["--file", str(context / "Dockerfile"), str(context)]
    return command


def find_context(start: Path | None = None) -> Path:
    """The passbench checkout holding the Dockerfile: the one this passbench is installed from
    (an editable install), else InputError saying to pass --context."""
    here = (start or Path(__file__)).resolve()
    for folder in here.parents:
        if (folder / "Dockerfile").is_file() and (folder / "pyproject.toml").is_file():
            return folder
    raise InputError(
        "building the image needs a passbench source checkout (its Dockerfile and src/): "
        "pass --context DIR",
        field="--context",
    )
