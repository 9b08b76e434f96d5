"""`passbench image build`: the runner image the docker/podman backends start."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import click

from passbench.core.errors import PassbenchError, SandboxError
from passbench.stages.benchmarks import benchmark_toolchains
from passbench.stages.sandbox.remote.images import (
    DEFAULT_PYTHON,
    ImageSpec,
    build_command,
    find_context,
)


@click.group()
def image() -> None:
    """The container image the docker and podman backends run (docs/backend-containers.md)."""


@image.command()
@click.option(
    "--engine",
    type=click.Choice(["docker", "podman"]),
    default=None,
    help="Container engine to build with (default: docker when it is on PATH, else podman).",
)
@click.option("--tag", default=None, help="Image tag (default: passbench:VERSION-LOCK12).")
@click.option(
    "--platform",
    "platforms",
    default="",
    help="Platforms, comma-separated (linux/amd64,linux/arm64); default: this machine's.",
)
@click.option(
    "--python",
    default=DEFAULT_PYTHON,
    show_default=True,
    help="The base image's Python (minor version): it picks the environment's lock.",
)
@click.option(
    "--base-image",
    default=None,
    help="Base image (default: python:PYTHON-slim-bookworm; pin it with @sha256:DIGEST).",
)
@click.option(
    "--environment",
    "environments",
    multiple=True,
    help="Evaluation environment to build in (repeatable; default: bigcodebench). "
    "--environment none builds an image without one.",
)
@click.option(
    "--pip-arg",
    "pip_args",
    multiple=True,
    help="Extra argument for every pip install in the build (repeatable), e.g. "
    "--pip-arg=--index-url=URL.",
)
@click.option(
    "--with-multipl-e",
    "multiple",
    is_flag=True,
    help="Add MultiPL-E's toolchains (node, g++, the JDK with javatuples, rustc, Lua with "
    "luaunit); the tag gets -multipl-e.",
)
@click.option("--network", default=None, help="The build's network (the engine's --network).")
@click.option(
    "--context",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The passbench checkout to build from (default: the one this passbench runs from).",
)
@click.option("--dry-run", is_flag=True, help="Print the build command and do not run it.")
def build(
    engine: str | None,
    tag: str | None,
    platforms: str,
    python: str,
    base_image: str | None,
    environments: tuple[str, ...],
    pip_args: tuple[str, ...],
    multiple: bool,
    network: str | None,
    context: Path | None,
    dry_run: bool,
) -> None:
    """Build the runner image: this passbench version, bubblewrap, and the evaluation
    environment from this version's lock, tagged with both (passbench:0.1.0-abb485e92207)."""
    chosen = engine or ("docker" if shutil.which("docker") else "podman")
    if environments == ("none",):
        environments = ()
    elif not environments:
        environments = ("bigcodebench",)
    spec = ImageSpec(
        python=python,
        environments=environments,
        base_image=base_image,
        pip_args=pip_args,
        toolchains=benchmark_toolchains() if multiple else None,
    )
    command = build_command(
        chosen,
        spec,
        context or find_context(),
        tag=tag,
        platforms=tuple(p for p in platforms.split(",") if p),
        network=network,
    )
    click.echo(shlex.join(command))
    if dry_run:
        return
    if shutil.which(chosen) is None:
        raise SandboxError(f"`{chosen}` is not on PATH: install it, or choose --engine")
    status = subprocess.run(command, check=False).returncode
    if status != 0:
        raise PassbenchError(f"{chosen} build failed (exit {status}); its output is above")
    click.echo(f"built {tag or spec.tag()}")
