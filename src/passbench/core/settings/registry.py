"""Every setting passbench has: its key, type, default, environment variable, by command.

docs/configuration.md documents each one; tests/core/settings/test_docs.py fails when one is
missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIG_FILE_NAME = "passbench.toml"

#: Sandbox backends a user can choose (passbench.stages.sandbox.BACKENDS less the test-only ones;
#: tests/stages/sandbox/test_registry_and_fallback.py keeps them in step).
BACKEND_NAMES = ("local", "remote", "e2b", "ray", "docker", "podman")

#: Top-level tables of a config file that are not a command's: the providers read them.
PROVIDER_TABLES = ("models", "prices")


@dataclass(frozen=True)
class Setting:
    """One setting: its config key, type, default and where else it may come from.

    `kind` is "text", "integer", "number", "boolean", "path" or "ks" (k values for pass@k:
    "1,5,10" or a list of integers). `param` is the CLI parameter that sets it, when its name
    is not `key` (the flag is then `--` + `param` with dashes).
    """

    key: str
    kind: str
    default: Any
    help: str
    env: str | None = None
    param: str | None = None
    minimum: float | None = None
    above: float | None = None  # the value must be greater than this
    below: float | None = None  # the value must be less than this
    choices: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        return "--" + (self.param or self.key).replace("_", "-")


def _setting(key: str, kind: str, default: Any, help: str, **extra: Any) -> Setting:
    return Setting(key=key, kind=kind, default=default, help=help, **extra)


#: Settings every command has (top level of the config file, or any command's table).
GLOBAL: tuple[Setting, ...] = (
    _setting(
        "data_dir",
        "path",
        None,
        "A folder laid out like shared/datasets, searched for benchmark data (and NLTK data) "
        "before the cache.",
        env="PASSBENCH_DATA_DIR",
    ),
    _setting(
        "cache_dir",
        "path",
        None,
        "passbench's cache: downloaded data (datasets/), ground-truth timings, the response "
        "cache. Default: the user cache folder (~/.cache/passbench on Linux).",
        env="PASSBENCH_CACHE_DIR",
    ),
    _setting(
        "offline",
        "boolean",
        False,
        "Never reach the network for data: no dataset, NLTK, package or model-weight "
        "downloads; a missing file is an error saying where passbench looked.",
        env="PASSBENCH_OFFLINE",
    ),
    _setting(
        "repos_dir",
        "path",
        None,
        "A folder of git repositories named <owner>__<name>.git (bare, or a git directory "
        "without a work tree) that repository-level benchmarks (SWE-bench) read instead of "
        "cloning from GitHub.",
        env="PASSBENCH_REPOS",
        param="repos",
    ),
    _setting(
        "download_mirror",
        "text",
        None,
        "A base URL replacing https://github.com in every data download URL.",
        env="PASSBENCH_DOWNLOAD_MIRROR",
    ),
)

_BENCHMARK = _setting(
    "benchmark",
    "text",
    None,
    "A registered benchmark's name (`passbench tasks list --help` lists them; default: the "
    "first built-in).",
)
_VERSION = _setting("version", "text", None, "Dataset version (default: the benchmark's).")
_SPLIT = _setting(
    "split",
    "text",
    None,
    "A split the benchmark offers (default: its first: complete, or Aider's whole edits).",
)
_SUBSET = _setting("subset", "text", "full", "full or hard (hard: BigCodeBench).")
_DATASET_PATH = _setting(
    "dataset_path", "path", None, "A task file (.jsonl, .jsonl.gz) used instead of looking one up."
)
_PASS_K = _setting("pass_k", "ks", (1, 5, 10), "k values for pass@k.")
_ENV_DIR = _setting(
    "env_dir",
    "path",
    None,
    "The evaluation environment's folder (default: the user data folder's envs/NAME).",
    env="PASSBENCH_ENV_DIR",
)

_EVALUATE: tuple[Setting, ...] = (
    _BENCHMARK,
    _VERSION,
    _SPLIT,
    _SUBSET,
    _DATASET_PATH,
    _setting(
        "output_dir",
        "path",
        None,
        "Where result files go (default: beside the samples; ./results for --ground-truth).",
    ),
    _PASS_K,
    _setting(
        "workers",
        "integer",
        0,
        "Concurrent samples (0: from the cores and memory).",
        env="PASSBENCH_WORKERS",
        minimum=0,
    ),
    _setting(
        "timeout_per_task",
        "number",
        None,
        "Per-task limit in seconds (default: the benchmark's official one).",
        above=0,
    ),
    _setting(
        "min_time_limit",
        "number",
        1.0,
        "Lower bound of the per-task (BigCodeBench) or per-input (HumanEval(+)) limit, s.",
        minimum=0,
    ),
    _setting(
        "gt_time_limit_factor",
        "number",
        4.0,
        "HumanEval(+): each input may take this many times the canonical solution's time.",
        minimum=0,
    ),
    _setting("memory_mb", "integer", 4096, "Address-space limit per sample, MiB.", minimum=1),
    _setting(
        "tmp_mb", "integer", 512, "What a sample may store in its /tmp (on disk), MiB.", minimum=1
    ),
    _ENV_DIR,
    _setting("nltk_data", "path", None, "NLTK data folder samples see (NLTK_DATA)."),
    _setting("calibrated", "boolean", True, "Prefix solutions with the task's code prompt."),
    _setting("allow_network", "boolean", False, "Let samples reach the network."),
    _setting(
        "allow_unsandboxed",
        "boolean",
        False,
        "Where bubblewrap cannot isolate samples, run them with resource limits only instead "
        "of refusing (every result file then says unsandboxed).",
    ),
    _setting(
        "backend",
        "text",
        "local",
        "Where samples run: local (bubblewrap here), remote (a passbench serve at endpoint), "
        "e2b (E2B sandboxes from the template `image`), ray (the nodes of a Ray cluster at "
        "`ray_address`), docker/podman (containers of the runner image); docs/backends.md "
        "describes each.",
        choices=BACKEND_NAMES,
    ),
    _setting("endpoint", "text", None, "The remote backend's URL (http://HOST:PORT/)."),
    _setting(
        "image",
        "text",
        None,
        "docker/podman backends: the image to run (default: the one `passbench image build` "
        "tags for this version); e2b: the template.",
    ),
    _setting(
        "ray_address",
        "text",
        None,
        "ray backend: the cluster (auto, ray://HOST:10001, HOST:6379); default: RAY_ADDRESS, "
        "else a cluster on this machine.",
    ),
    _setting(
        "token",
        "text",
        None,
        "Bearer token for the remote backend (its PASSBENCH_SERVE_TOKEN); set it in the "
        "environment, not on a command line.",
        env="PASSBENCH_REMOTE_TOKEN",
    ),
    _setting(
        "verify_fraction",
        "number",
        0.0,
        "Backends other than local: run this fraction of their verdicts again here and report "
        "every one that differs.",
        minimum=0,
        below=1.000001,
    ),
    _setting(
        "runs",
        "integer",
        1,
        "Execute every sample (with --ground-truth: every reference) this many times: flaky "
        "samples are listed, unstable references quarantined; pass@k counts the first run.",
        minimum=1,
    ),
    _setting(
        "epochs",
        "integer",
        1,
        "The samples are this many independent generations per task (run: generate them): "
        "pass@1 per epoch, their mean and a Student-t interval.",
        minimum=1,
    ),
)

_GENERATE: tuple[Setting, ...] = (
    _BENCHMARK,
    _VERSION,
    _SPLIT,
    _SUBSET,
    _DATASET_PATH,
    _setting("n_samples", "integer", 1, "Samples per task.", minimum=1),
    _setting("output_dir", "path", Path("results"), "Folder for sample (and result) files."),
    _setting(
        "cache",
        "path",
        None,
        "The response cache (default: generations.sqlite in the cache folder).",
        param="cache_path",
    ),
)

_SCORING: tuple[Setting, ...] = (
    _PASS_K,
    _setting("bootstrap", "integer", 2000, "Bootstrap resamples (over tasks).", minimum=1),
    _setting("seed", "integer", 0, "Seed of the bootstrap."),
    _setting("confidence", "number", 0.95, "Confidence level of the intervals.", above=0, below=1),
    _setting(
        "dataset_version",
        "text",
        None,
        "Dataset version of a run whose file does not say (default: the benchmark's).",
    ),
    _setting("limit", "integer", 20, "Rows listed in the terminal (0: all / none).", minimum=0),
)

_SERVE: tuple[Setting, ...] = (
    _setting("host", "text", "127.0.0.1", "Address the server listens on."),
    _setting("port", "integer", 7860, "Port the server listens on.", minimum=1, below=65536),
    _setting(
        "concurrency",
        "integer",
        1,
        "Requests evaluated at once; the others wait in the queue.",
        minimum=1,
    ),
    _setting(
        "queue_size",
        "integer",
        64,
        "Requests that may wait; more are refused at once.",
        minimum=1,
    ),
    _setting("max_upload_mb", "integer", 200, "Largest samples file accepted, MiB.", minimum=1),
    _setting(
        "token",
        "text",
        None,
        "Bearer token every request but /health must carry (Authorization: Bearer TOKEN). "
        "Unset: no authentication. Set it in the environment, not on a command line.",
        env="PASSBENCH_SERVE_TOKEN",
    ),
    _setting(
        "workers",
        "integer",
        0,
        "Most concurrent samples of one request (a request's `parallel` is capped here; "
        "0: from the cores and memory).",
        minimum=0,
    ),
    _setting(
        "memory_mb",
        "integer",
        4096,
        "Most address space per sample, MiB (a request's max_as_limit/max_data_limit are "
        "capped here).",
        minimum=1,
    ),
    _setting(
        "tmp_mb", "integer", 512, "What a sample may store in its /tmp (on disk), MiB.", minimum=1
    ),
    _ENV_DIR,
    _setting("nltk_data", "path", None, "NLTK data folder samples see (NLTK_DATA)."),
    _setting(
        "jobs_dir",
        "path",
        None,
        "Where each request's samples, journal and result files are kept (default: the "
        "cache folder's serve/jobs).",
    ),
)

_DB = _setting(
    "db",
    "text",
    None,
    "The results store's SQLAlchemy URL (default: sqlite:///<user data folder>/passbench.db).",
    env="PASSBENCH_DB",
)

_EVALUATE_BY_KEY = {setting.key: setting for setting in _EVALUATE}

#: `passbench leaderboard`: the store, the admin token, and how a worker runs jobs (through the
#: same backends as `evaluate`).
_LEADERBOARD: tuple[Setting, ...] = (
    _DB,
    _setting(
        "admin_token",
        "text",
        None,
        "The token that may hide or delete any entry (the web app reads it); set it in the "
        "environment, not in a file others can read.",
        env="PASSBENCH_ADMIN_TOKEN",
    ),
    *(
        _EVALUATE_BY_KEY[key]
        for key in (
            "backend",
            "endpoint",
            "image",
            "ray_address",
            "token",
            "workers",
            "env_dir",
            "nltk_data",
            "memory_mb",
            "tmp_mb",
        )
    ),
    _setting(
        "work_dir",
        "path",
        None,
        "Where a worker keeps each job's samples, journal and result files (default: the cache "
        "folder's leaderboard/jobs); workers sharing it resume each other's verdicts.",
    ),
    _setting(
        "lease_s",
        "number",
        300.0,
        "How long a worker holds a job without a heartbeat before it returns to the queue, s.",
        above=0,
    ),
    _setting("poll_s", "number", 5.0, "How often an idle worker looks for a job, s.", above=0),
    _setting(
        "max_attempts",
        "integer",
        3,
        "Claims of a job whose workers all died before it is marked failed.",
        minimum=1,
    ),
)

#: `passbench run`'s own: multi-turn runs (apps/tries.py, docs/run.md).
_TRIES: tuple[Setting, ...] = (
    _setting(
        "tries",
        "integer",
        1,
        "Tries per sample: after each, every failing sample is asked again with its test "
        "output (Aider's protocol); chat models only.",
        minimum=1,
    ),
    _setting(
        "feedback_lines",
        "integer",
        0,
        "Lines of test output a follow-up request shows (0, the default: every line, as Aider).",
        minimum=0,
    ),
)

#: Every command's settings besides GLOBAL, by command (the config file's table names).
COMMANDS: dict[str, tuple[Setting, ...]] = {
    "evaluate": _EVALUATE,
    "generate": _GENERATE,
    # `run` is generate then evaluate: generate's settings, and evaluate's it lacks.
    "run": _GENERATE
    + tuple(s for s in _EVALUATE if s.key not in {g.key for g in _GENERATE})
    + _TRIES,
    "sanitize": (
        _BENCHMARK,
        _VERSION,
        _SPLIT,
        _SUBSET,
        _DATASET_PATH,
        _setting("jobs", "integer", None, "Worker processes (default: the cores).", minimum=1),
    ),
    "syncheck": (_BENCHMARK, _VERSION, _SUBSET, _DATASET_PATH),
    "serve": _SERVE,
    "tasks": (_BENCHMARK, _VERSION, _SPLIT, _SUBSET, _DATASET_PATH),
    "inspect": _SCORING,
    "contamination": (
        _BENCHMARK,
        _VERSION,
        _setting(
            "split",
            "text",
            None,
            "Whose prompt text is checked (default: instruct where the benchmark has it).",
        ),
        _SUBSET,
        _DATASET_PATH,
    ),
    "compare": (
        *_SCORING,
        _setting(
            "rule",
            "text",
            "majority",
            "When a task counts as solved for McNemar's test.",
            choices=("majority", "any"),
        ),
    ),
    "db": (_DB,),
    "leaderboard": _LEADERBOARD,
    "env": (
        _setting(
            "env_dir",
            "path",
            None,
            "The environment's folder (default: the user data folder's envs/NAME).",
            env="PASSBENCH_ENV_DIR",
            param="path",
        ),
        _setting("python", "text", None, "Interpreter `env create` builds from."),
        _setting(
            "nltk_data",
            "path",
            None,
            "Local NLTK data folder `env create` copies from (default: DATA_DIR/nltk_data).",
        ),
    ),
}


def settings_of(command: str) -> tuple[Setting, ...]:
    """GLOBAL and the command's own settings."""
    if command not in COMMANDS:
        raise KeyError(f"no settings for command {command!r}")
    own = COMMANDS[command]
    keys = {setting.key for setting in own}
    return tuple(s for s in GLOBAL if s.key not in keys) + own


#: Environment variables passbench reads, and the setting each one feeds.
ENVIRONMENT_VARIABLES: dict[str, str] = {
    setting.env: setting.key
    for settings in (GLOBAL, *COMMANDS.values())
    for setting in settings
    if setting.env is not None
}
