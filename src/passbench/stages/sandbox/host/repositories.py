"""How the local backend runs "repository" programs (SWE-bench): a working copy of the commit
(`workingcopy.make_working_copy`) in the scratch folder, the program's script in a one-shot
bubblewrap sandbox (`repository.run_repository`), the working copy removed after the run (in
the background, `workdirs.remove_in_background`).

The verdict's `outputs` carry what the benchmark judges on the host: the run's output, its exit
code, whether it timed out, and the pytest channel's statuses and whether it was tampered with.
The sandbox itself never decides pass or fail for these programs (status "fail" until judged).
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from passbench.core.errors import DatasetError, SandboxError
from passbench.core.records import ErrorCategory, ExecResult, Program
from passbench.stages.sandbox.base import SandboxConfig
from passbench.stages.sandbox.host.launch import inspect_interpreter
from passbench.stages.sandbox.host.repository import RepositoryRun, run_repository
from passbench.stages.sandbox.host.workdirs import default_scratch_root, remove_in_background
from passbench.stages.sandbox.host.workingcopy import add_submodule, make_working_copy

#: Processes and threads one run may have at least (a repository's tests and its build).
REPOSITORY_PROCESSES = 512


def run_repository_program(program: Program, config: SandboxConfig) -> ExecResult:
    """Run one "repository" program on this machine; errors preparing the working copy are
    the verdict's (status "fail", category killed), never an exception for the whole run."""
    spec = program.repository
    if spec is None:
        raise SandboxError(f"{program.key}: a repository program without its repository")
    started = time.monotonic()
    root = (config.scratch_dir or default_scratch_root()) / "repositories"
    root.mkdir(parents=True, exist_ok=True)
    caches = config.history_dir  # the mirrors' history caches (workingcopy.history_cache)
    working_copy = root / f"{os.getpid()}-{secrets.token_hex(6)}"
    fresh = [
        (working_copy.with_name(f"{working_copy.name}-fresh{index}"), inside)
        for index, inside in enumerate(spec.fresh_dirs)
    ]
    try:
        for folder, _ in fresh:
            folder.mkdir(mode=0o755)
        try:
            make_working_copy(
                program.task_id, Path(spec.git_dir), spec.commit, working_copy, caches=caches
            )
            for sub in spec.submodules:
                add_submodule(
                    program.task_id,
                    working_copy,
                    sub.path,
                    Path(sub.git_dir),
                    sub.commit,
                    caches=caches,
                )
        except DatasetError as error:
            return _failed(program, started, f"cannot make the working copy: {error}")
        python = Path(spec.python) if spec.python else Path(os.path.abspath(config.python))
        interpreter = inspect_interpreter(python)
        env = {
            "PATH": f"{interpreter.executable.parent}:/usr/local/bin:/usr/bin:/bin",
            **dict(spec.env),
        }
        run = RepositoryRun(
            working_copy=working_copy,
            command=spec.script,
            files=spec.files,
            read_only=tuple(Path(path) for path in (*interpreter.paths, *spec.read_only)),
            writable_at=tuple(fresh),
            env=env,
            timeout_s=program.timeout_s,
            memory_mb=spec.memory_mb,
            max_processes=max(config.limits.processes, REPOSITORY_PROCESSES),
            network=config.limits.allow_network,
            output_cap=spec.output_cap,
            channel=spec.channel,
            scratch_dir=config.scratch_dir,
            services=spec.services,
            tarpit=spec.tarpit,
        )
        done = run_repository(run)
    finally:
        # removed while the next program starts: nothing reads them after the run
        remove_in_background([working_copy, *(folder for folder, _ in fresh)])
    channel = done.channel
    return ExecResult(
        key=program.key,
        task_id=program.task_id,
        status="timeout" if done.timed_out else "fail",
        category=ErrorCategory.TIMEOUT if done.timed_out else ErrorCategory.EXCEPTION,
        details={},
        duration_s=done.duration_s,
        wall_s=time.monotonic() - started,
        isolation=done.isolation,
        reason="timed out" if done.timed_out else "not judged yet",
        stdout_tail=done.output[-2000:],
        network=done.network,
        outputs={
            "output": done.output,
            "exit_code": done.exit_code,
            "timed_out": done.timed_out,
            "out_of_memory": done.out_of_memory,
            "channel_used": bool(channel.sessions),
            "channel_tampered": channel.tampered,
            "channel_statuses": channel.statuses(),
        },
    )


def _failed(program: Program, started: float, reason: str) -> ExecResult:
    from passbench.core.records import Isolation

    return ExecResult(
        key=program.key,
        task_id=program.task_id,
        status="fail",
        category=ErrorCategory.KILLED,
        details={"ALL": reason},
        duration_s=0.0,
        wall_s=time.monotonic() - started,
        isolation=Isolation.BUBBLEWRAP,
        reason=reason,
    )
