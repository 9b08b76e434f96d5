"""Programs, limits and verdicts as JSON: what a remote backend sends and receives.

Plain JSON only (no pickle): a server reads programs from clients it does not trust, and a
client reads verdicts from a server it checks (`--verify-fraction`). Every reader validates
types and says which field is wrong (errors.WireError, one line).

Protocol 2 added "repository" programs (SWE-bench: `RepositorySpec`, with the repository, its
submodules, its test environment and its loopback services' tool environments by identity
beside the caller's paths, which the runner resolves on its own machine:
remote/repositories.py). Requests of protocol 1 are still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from passbench.core.errors import BackendUnavailable, SandboxError, WireError
from passbench.core.records import (
    ErrorCategory,
    ExecResult,
    IOSpec,
    Isolation,
    LoopbackService,
    ProcessSpec,
    Program,
    RepositoryEnvironment,
    RepositorySpec,
    RepositorySubmodule,
)
from passbench.stages.sandbox.base import EnvironmentRef, Limits

#: Version of this format, as this side writes it: 2 added "repository" programs.
PROTOCOL = 2
#: The versions a reader accepts: a request of protocol 1 is a protocol 2 request without
#: repository programs.
READABLE_PROTOCOLS = (1, 2)

_STYLES = ("unittest", "script", "io", "process", "repository")
_STATUSES = ("pass", "fail", "timeout")


def _need(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if name not in data:
        raise WireError(f"{where}: field '{name}' is missing")
    value = data[name]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise WireError(f"{where}: field '{name}' must be a number, got a boolean")
    if not isinstance(value, kind):
        raise WireError(f"{where}: field '{name}' has the wrong type ({type(value).__name__})")
    return value


def _optional(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if data.get(name) is None:
        return None
    return _need(data, name, kind, where)


def offered_environment(
    environments: Mapping[str, Any],
    wanted: EnvironmentRef,
    *,
    where: str,
    missing_hint: str = "",
    lock_hint: str,
) -> EnvironmentRef:
    """The environment of `environments` ({name: {lock_sha256, python_version}}, as a server,
    a template's agent or an image's labels describe them) that serves `wanted`: the same
    name, and the same lock when one is asked for. Otherwise SandboxError: `where` names the
    backend ("image X", "remote backend URL"), `missing_hint` follows the list of what it has
    (from ": ..."), `lock_hint` says how to get the same lock. One check for every remote
    backend, so they refuse alike."""
    offered = environments.get(wanted.name)
    if not isinstance(offered, Mapping):
        raise SandboxError(
            f"{where} has no '{wanted.name}' environment "
            f"(it has: {', '.join(sorted(environments)) or 'none'}){missing_hint}"
        )
    lock = str(offered.get("lock_sha256", ""))
    if wanted.lock_sha256 and lock != wanted.lock_sha256:
        raise SandboxError(
            f"{where}: its '{wanted.name}' environment is lock {lock[:12]}, this run's is "
            f"{wanted.lock_sha256[:12]}; {lock_hint}"
        )
    return EnvironmentRef(wanted.name, lock, str(offered.get("python_version", "")))


def program_to_json(program: Program) -> dict[str, Any]:
    return asdict(program)


def program_from_json(data: Any, where: str = "program") -> Program:
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    style = _need(data, "style", str, where)
    if style not in _STYLES:
        raise WireError(f"{where}: field 'style' must be one of {', '.join(_STYLES)}")
    preload = _need(data, "preload", list, where)
    if not all(isinstance(module, str) for module in preload):
        raise WireError(f"{where}: field 'preload' must be a list of module names")
    io = None
    if data.get("io") is not None:
        spec = _need(data, "io", dict, where)
        limits = _need(spec, "time_limits", list, f"{where}.io")
        wanted = _need(spec, "want_values", list, f"{where}.io")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in limits):
            raise WireError(f"{where}.io: field 'time_limits' must be numbers")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in wanted):
            raise WireError(f"{where}.io: field 'want_values' must be integers")
        io = IOSpec(
            entry_point=_need(spec, "entry_point", str, f"{where}.io"),
            inputs_json=_need(spec, "inputs_json", str, f"{where}.io"),
            time_limits=tuple(float(x) for x in limits),
            want_values=tuple(wanted),
            guard=_need(spec, "guard", str, f"{where}.io"),
            reference=bool(_need(spec, "reference", bool, f"{where}.io")),
        )
    if (style == "io") != (io is not None):
        raise WireError(f"{where}: an 'io' program needs field 'io', and only it")
    process = _process_from_json(data.get("process"), where)
    if (style == "process") != (process is not None):
        raise WireError(f"{where}: a 'process' program needs field 'process', and only it")
    repository = _repository_from_json(data.get("repository"), where)
    if (style == "repository") != (repository is not None):
        raise WireError(f"{where}: a 'repository' program needs field 'repository', and only it")
    timeout = float(_need(data, "timeout_s", (int, float), where))
    if not 0 < timeout <= 24 * 3600:
        raise WireError(f"{where}: field 'timeout_s' must be in (0, 86400]")
    expected = _optional(data, "expected_duration_s", (int, float), where)
    share = _optional(data, "expected_cpu_share", (int, float), where)
    return Program(
        key=_need(data, "key", str, where),
        task_id=_need(data, "task_id", str, where),
        source=_need(data, "source", str, where),
        style=style,
        test_class=_need(data, "test_class", str, where),
        timeout_s=timeout,
        expected_duration_s=None if expected is None else float(expected),
        expected_cpu_share=None if share is None else float(share),
        preload=tuple(preload),
        io=io,
        process=process,
        repository=repository,
    )


def safe_relative_path(path: str) -> bool:
    """A path that stays inside the folder it is written to: relative, no `..` part."""
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def _process_from_json(data: Any, where: str) -> ProcessSpec | None:
    if data is None:
        return None
    where = f"{where}.process"
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")

    def argv(value: Any, name: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
            raise WireError(f"{where}: field '{name}' must be a non-empty list of strings")
        return tuple(value)

    builds = _need(data, "build", list, where)
    filename = _need(data, "filename", str, where)
    if not filename or "/" in filename or filename in (".", ".."):
        raise WireError(f"{where}: field 'filename' must be a plain file name")
    markers = _need(data, "syntax_markers", list, where)
    if not all(isinstance(marker, str) for marker in markers):
        raise WireError(f"{where}: field 'syntax_markers' must be strings")
    files = data.get("files", [])  # absent: a client from before the field
    if not isinstance(files, list) or not all(
        isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(part, str) for part in pair)
        and safe_relative_path(pair[0])
        for pair in files
    ):
        raise WireError(f"{where}: field 'files' must be [relative path, text] pairs")
    rule = data.get("pass_rule", "exit")  # absent: a client from before the field
    if rule not in ("exit", "silent"):
        raise WireError(f"{where}: field 'pass_rule' must be 'exit' or 'silent'")
    return ProcessSpec(
        filename=filename,
        build=tuple(argv(command, "build") for command in builds),
        run=argv(_need(data, "run", list, where), "run"),
        build_timeout_s=float(_need(data, "build_timeout_s", (int, float), where)),
        run_timeout_s=float(_need(data, "run_timeout_s", (int, float), where)),
        output_cap=int(_need(data, "output_cap", int, where)),
        syntax_markers=tuple(markers),
        pass_rule=rule,
        files=tuple((path, text) for path, text in files),
    )


def _strings(value: Any, name: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise WireError(f"{where}: field '{name}' must be a list of strings")
    return tuple(value)


def _pairs(value: Any, name: str, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        for pair in value
    ):
        raise WireError(f"{where}: field '{name}' must be [text, text] pairs")
    return tuple((first, second) for first, second in value)


def plain_name(name: str) -> bool:
    """A file name with no folder in it."""
    return bool(name) and "/" not in name and name not in (".", "..") and "\0" not in name


def _positive(data: Mapping[str, Any], name: str, where: str) -> int:
    number = _need(data, name, int, where)
    if number < 1:
        raise WireError(f"{where}: field '{name}' must be at least 1")
    return int(number)


def _repository_from_json(data: Any, where: str) -> RepositorySpec | None:
    """A repository program's spec, its types checked. Its host paths are the caller's: a
    runner never uses them as they are (remote/repositories.py resolves them on its machine)."""
    if data is None:
        return None
    where = f"{where}.repository"
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    files = _pairs(_need(data, "files", list, where), "files", where)
    if not all(plain_name(name) for name, _ in files):
        raise WireError(f"{where}: field 'files' must name plain files")
    submodules = data.get("submodules") or []  # absent: a client from before the field
    if not isinstance(submodules, list):
        raise WireError(f"{where}: field 'submodules' must be a list")
    services = data.get("services") or []
    if not isinstance(services, list):
        raise WireError(f"{where}: field 'services' must be a list")
    return RepositorySpec(
        git_dir=_need(data, "git_dir", str, where),
        commit=_need(data, "commit", str, where),
        script=_need(data, "script", str, where),
        python=_optional(data, "python", str, where),
        files=files,
        read_only=_strings(_need(data, "read_only", list, where), "read_only", where),
        env=_pairs(_need(data, "env", list, where), "env", where),
        fresh_dirs=_strings(_need(data, "fresh_dirs", list, where), "fresh_dirs", where),
        channel=bool(_need(data, "channel", bool, where)),
        memory_mb=_positive(data, "memory_mb", where),
        output_cap=_positive(data, "output_cap", where),
        repo=_need(data, "repo", str, where),
        environment=_repository_environment(data.get("environment"), where),
        tarpit=bool(_optional(data, "tarpit", bool, where)),
        submodules=tuple(
            _submodule(item, f"{where}.submodules[{i}]") for i, item in enumerate(submodules)
        ),
        services=tuple(_service(item, f"{where}.services[{i}]") for i, item in enumerate(services)),
    )


def _submodule(data: Any, where: str) -> RepositorySubmodule:
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    path = _need(data, "path", str, where)
    if not safe_relative_path(path):
        raise WireError(f"{where}: field 'path' must be a relative path inside the working copy")
    return RepositorySubmodule(
        path=path,
        git_dir=_need(data, "git_dir", str, where),
        commit=_need(data, "commit", str, where),
        repo=_need(data, "repo", str, where),
    )


def _service(data: Any, where: str) -> LoopbackService:
    """A loopback service: its command and folders are the caller's, which a runner replaces
    with its own build of the tool environment it names (remote/repositories.py)."""
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    argv = _strings(_need(data, "argv", list, where), "argv", where)
    if not argv:
        raise WireError(f"{where}: field 'argv' must name a command")
    port = _need(data, "port", int, where)
    if not 1024 <= port <= 65535:
        raise WireError(f"{where}: field 'port' must be in 1024..65535")
    timeout = float(_need(data, "start_timeout_s", (int, float), where))
    if not 0 < timeout <= 600:
        raise WireError(f"{where}: field 'start_timeout_s' must be in (0, 600]")
    return LoopbackService(
        name=_need(data, "name", str, where),
        argv=argv,
        port=port,
        read_only=_strings(_need(data, "read_only", list, where), "read_only", where),
        variables=_pairs(_need(data, "variables", list, where), "variables", where),
        start_timeout_s=timeout,
        environment=_repository_environment(data.get("environment"), where),
    )


def _repository_environment(data: Any, where: str) -> RepositoryEnvironment | None:
    if data is None:
        return None
    where = f"{where}.environment"
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    record = _need(data, "record", str, where)
    if not plain_name(record):
        raise WireError(f"{where}: field 'record' must be a plain file name")
    return RepositoryEnvironment(
        cache=_need(data, "cache", str, where),
        lock_sha256=_need(data, "lock_sha256", str, where),
        python_version=_need(data, "python_version", str, where),
        root=_need(data, "root", str, where),
        base_prefix=_need(data, "base_prefix", str, where),
        record=record,
        rewrite=_strings(_need(data, "rewrite", list, where), "rewrite", where),
    )


def limits_to_json(limits: Limits) -> dict[str, Any]:
    return asdict(limits)


def limits_from_json(data: Any, where: str = "limits") -> Limits:
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    known = {f.name for f in fields(Limits)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise WireError(f"{where}: unknown field '{unknown[0]}'")
    values: dict[str, Any] = {}
    for name in known & set(data):
        if name == "allow_network":
            values[name] = bool(_need(data, name, bool, where))
        elif name == "cpu_s":
            values[name] = _optional(data, name, (int, float), where)
        else:
            number = _need(data, name, int, where)
            if number < 1:
                raise WireError(f"{where}: field '{name}' must be at least 1")
            values[name] = number
    return Limits(**values)


def result_to_json(result: ExecResult) -> dict[str, Any]:
    data = asdict(result)
    data["category"] = result.category.value if result.category else None
    data["isolation"] = result.isolation.value
    data["details"] = dict(result.details)
    return data


def result_from_json(data: Any, where: str = "result") -> ExecResult:
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    status = _need(data, "status", str, where)
    if status not in _STATUSES:
        raise WireError(f"{where}: field 'status' must be one of {', '.join(_STATUSES)}")
    details = _need(data, "details", dict, where)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in details.items()):
        raise WireError(f"{where}: field 'details' must map test names to text")
    category = _optional(data, "category", str, where)
    isolation = _need(data, "isolation", str, where)
    try:
        parsed_category = ErrorCategory(category) if category else None
        parsed_isolation = Isolation(isolation)
    except ValueError as error:
        raise WireError(f"{where}: {error}") from None
    outputs = _optional(data, "outputs", dict, where)
    inputs_done = _optional(data, "inputs_done", int, where)
    # absent from older servers' verdicts
    cpu = _optional(data, "cpu_s", (int, float), where)
    cpu_wait = _optional(data, "cpu_wait_s", (int, float), where)
    return ExecResult(
        key=_need(data, "key", str, where),
        task_id=_need(data, "task_id", str, where),
        status=status,
        category=parsed_category,
        details=details,
        duration_s=float(_need(data, "duration_s", (int, float), where)),
        wall_s=float(_need(data, "wall_s", (int, float), where)),
        isolation=parsed_isolation,
        reason=_need(data, "reason", str, where),
        tests_run=_need(data, "tests_run", int, where),
        stdout_tail=_need(data, "stdout_tail", str, where),
        network=bool(_need(data, "network", bool, where)),
        outputs=outputs,
        inputs_done=inputs_done,
        cpu_s=None if cpu is None else float(cpu),
        cpu_wait_s=None if cpu_wait is None else float(cpu_wait),
    )


def line(data: Mapping[str, Any]) -> bytes:
    """One NDJSON line."""
    return json.dumps(data, separators=(",", ":")).encode() + b"\n"


@dataclass(frozen=True)
class RunRequest:
    """A batch of programs to run, as every backend that runs them elsewhere sends it: the
    body of the server's POST /passbench/v1/run, the agent's standard input."""

    environment: EnvironmentRef  # by name and lock ("" = whichever the runner has)
    limits: Limits
    workers: int  # concurrent samples; 0 = decide from the cores there
    programs: tuple[Program, ...]


def request_to_json(request: RunRequest) -> dict[str, Any]:
    return {
        "protocol": PROTOCOL,
        "environment": {
            "name": request.environment.name,
            "lock_sha256": request.environment.lock_sha256,
        },
        "limits": limits_to_json(request.limits),
        "workers": request.workers,
        "programs": [program_to_json(program) for program in request.programs],
    }


def request_from_json(data: Any, where: str = "request") -> RunRequest:
    if not isinstance(data, Mapping):
        raise WireError(f"{where}: not an object")
    if data.get("protocol") not in READABLE_PROTOCOLS:
        readable = " and ".join(str(version) for version in READABLE_PROTOCOLS)
        raise WireError(f"{where}: protocol {data.get('protocol')!r}; this side reads {readable}")
    environment = data.get("environment")
    if not isinstance(environment, Mapping) or not isinstance(environment.get("name"), str):
        raise WireError(f"{where}: field 'environment' must name an environment")
    lock = environment.get("lock_sha256") or ""
    if not isinstance(lock, str):
        raise WireError(f"{where}: field 'environment.lock_sha256' must be text")
    workers = data.get("workers", 0)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
        raise WireError(f"{where}: field 'workers' must be a non-negative integer")
    raw = data.get("programs")
    if not isinstance(raw, list):
        raise WireError(f"{where}: field 'programs' must be a list")
    programs = tuple(program_from_json(p, f"programs[{i}]") for i, p in enumerate(raw))
    keys = [program.key for program in programs]
    if len(set(keys)) != len(keys):
        raise WireError(f"{where}: program keys must be unique")
    return RunRequest(
        environment=EnvironmentRef(environment["name"], lock),
        limits=limits_from_json(data.get("limits", {}), f"{where}.limits"),
        workers=workers,
        programs=programs,
    )


def read_verdicts(
    lines: Iterable[str | bytes], where: str, done: dict[str, Any]
) -> Iterator[ExecResult]:
    """The verdicts in a runner's NDJSON answer (serve/programs.py, remote/agent.py), as they
    arrive. The closing {"done": true, ...} line is copied into `done`. An {"error"} line
    raises BackendUnavailable when it says to retry, SandboxError otherwise; an answer that
    ends without its closing line raises BackendUnavailable (the runner was lost)."""
    for text in lines:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if not text.strip():
            continue  # a heartbeat
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            raise WireError(f"{where}: a line that is not an object: {text[:200]}")
        if "error" in message:
            if message.get("retry"):
                raise BackendUnavailable(f"{where}: {message['error']}")
            raise SandboxError(f"{where}: {message['error']}")
        if message.get("done"):
            done.update(message)
            return
        yield result_from_json(message, f"{where} verdict")
    raise BackendUnavailable(f"{where}: the answer ended before the run did")
