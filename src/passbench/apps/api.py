"""The Python API: what `passbench.evaluate`, `passbench.generate` and `passbench.load_results`
are (the package's `__init__` imports them from here on first use, so `import passbench` stays
light).

Each function does what the command of the same name does, with the same defaults, and returns
records instead of printing: keyword arguments are the command's flags (None: not given), and
settings are resolved as on the command line, defaults < config file (`config`, else
./passbench.toml when it exists) < `PASSBENCH_*` environment variables (`environ`, else
os.environ) < the arguments given. docs/python-api.md shows them in use.

    results = passbench.evaluate("samples.jsonl", benchmark="humaneval")
    results.pass_at_k["pass@1"], results.tasks["HumanEval/0"][0].status

The work itself is done by the stages, composed in passbench.apps.pipeline as for the CLI.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TypeVar

from passbench.apps.pipeline import (
    GenerationOutcome,
    GenerationSettings,
    SampleFiles,
    evaluate_settings,
    generate_samples,
    official_model_config,
    offline_model_hub,
    refuse_without_isolation,
    sample_files,
    sample_identifier,
)
from passbench.core.errors import InputError
from passbench.core.progress import Progress
from passbench.core.records import Sample
from passbench.core.samplefile import write_jsonl_atomic
from passbench.core.settings import Resolved, resolve
from passbench.stages.benchmarks import (
    DEFAULT_BENCHMARK,
    check_executable,
    check_split,
    get_benchmark,
    load_benchmark,
)
from passbench.stages.benchmarks.selection import TaskSelection, select_tasks
from passbench.stages.evaluate import Evaluator
from passbench.stages.providers import ResponseCache
from passbench.stages.results import RunResults, load_results

__all__ = ["evaluate", "generate", "load_results"]

PathArg = str | os.PathLike[str]
SamplesArg = PathArg | Iterable[Sample | Mapping[str, Any]]
T = TypeVar("T")

#: Where results go when neither `output_dir` nor a samples file says (as `evaluate
#: --ground-truth` and `generate` default).
DEFAULT_OUTPUT_DIR = Path("results")


def evaluate(
    samples: SamplesArg | None = None,
    *,
    ground_truth: bool = False,
    benchmark: str | None = None,
    version: str | None = None,
    split: str | None = None,
    subset: str | None = None,
    tasks: str | Sequence[str] | None = None,
    id_range: str | tuple[int, int] | None = None,
    since: str | None = None,
    until: str | None = None,
    output_dir: PathArg | None = None,
    name: str = "samples",
    calibrated: bool | None = None,
    pass_k: str | Sequence[int] | None = None,
    workers: int | None = None,
    timeout_per_task: float | None = None,
    min_time_limit: float | None = None,
    gt_time_limit_factor: float | None = None,
    memory_mb: int | None = None,
    tmp_mb: int | None = None,
    allow_network: bool | None = None,
    check_ground_truth: bool = True,
    resume: bool = True,
    allow_unsandboxed: bool | None = None,
    backend: str | None = None,
    endpoint: str | None = None,
    image: str | None = None,
    ray_address: str | None = None,
    verify_fraction: float | None = None,
    env_dir: PathArg | None = None,
    dataset_path: PathArg | None = None,
    data_dir: PathArg | None = None,
    cache_dir: PathArg | None = None,
    nltk_data: PathArg | None = None,
    config: PathArg | None = None,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    runs: int | None = None,
    epochs: int | None = None,
) -> RunResults:
    """Run samples (or, with `ground_truth=True`, the canonical solutions) against the tasks'
    tests in the sandbox and score pass@k, as `passbench evaluate` does; the result files are
    written as it writes them, and returned read back (`load_results`).

    `samples` is a samples file (.jsonl or .jsonl.gz: `task_id` and `solution` or
    `completion`), or the samples themselves: `Sample` records or mappings with those keys.
    Samples given in memory are written to `<output_dir>/<name>.jsonl` first (default output
    folder: ./results), so the result files and the journal an interrupted run resumes from
    sit beside them; a `Sample`'s `sample_index` is not kept (a task's samples are numbered in
    the order given). For a file, results go beside it unless `output_dir` says otherwise.

    Every other argument is the flag of the same name, None meaning "not given" (then the
    config file, the environment, else the CLI's default decides): benchmark (default: the
    first built-in, bigcodebench), split ("complete"), subset ("full"), tasks (ids, a list
    or comma-separated), id_range ("0-10" or (0, 10)), workers (0: from the cores),
    backend ("local": bubblewrap here) and so on; `check_ground_truth=False` is --no-gt and
    `resume=False` is --no-resume; `runs` and `epochs` are --runs and --epochs
    (docs/statistics.md). `progress` receives progress reports (nothing is printed).

    Raises a PassbenchError subclass with a message naming what to fix: InputError for bad
    arguments, SandboxError where samples cannot be isolated (unless `allow_unsandboxed`).
    """
    if ground_truth == (samples is not None):
        raise InputError("give exactly one of samples and ground_truth=True", field="samples")
    resolved = _resolve(
        "evaluate",
        config,
        environ,
        benchmark=benchmark,
        version=version,
        split=split,
        subset=subset,
        output_dir=output_dir,
        calibrated=calibrated,
        pass_k=pass_k,
        workers=workers,
        timeout_per_task=timeout_per_task,
        min_time_limit=min_time_limit,
        gt_time_limit_factor=gt_time_limit_factor,
        memory_mb=memory_mb,
        tmp_mb=tmp_mb,
        allow_network=allow_network,
        allow_unsandboxed=allow_unsandboxed,
        backend=backend,
        endpoint=endpoint,
        image=image,
        ray_address=ray_address,
        verify_fraction=verify_fraction,
        env_dir=env_dir,
        dataset_path=dataset_path,
        data_dir=data_dir,
        cache_dir=cache_dir,
        nltk_data=nltk_data,
        runs=runs,
        epochs=epochs,
    )
    selection = _selection(tasks, id_range, since, until)
    settings = evaluate_settings(
        resolved, selection, check_ground_truth=check_ground_truth, resume=resume
    )
    check_executable(get_benchmark(settings.benchmark))  # before the isolation check
    refuse_without_isolation(settings, resolved.paths)  # before anything is written
    samples_path = None
    if samples is not None:
        samples_path = _samples_file(samples, resolved["output_dir"], name)
        settings = replace(settings, samples=samples_path)
    evaluator = Evaluator(settings, resolved.paths, progress)
    if samples_path is None:
        truth = evaluator.run_ground_truth(settings.output_dir or DEFAULT_OUTPUT_DIR)
        return load_results(truth.path)
    outcome = evaluator.evaluate_samples(samples_path, settings.output_dir)
    return load_results(outcome.eval_results_path)


def generate(
    model: str,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    revision: str | None = None,
    options: Mapping[str, Any] | None = None,
    benchmark: str | None = None,
    version: str | None = None,
    split: str | None = None,
    subset: str | None = None,
    tasks: str | Sequence[str] | None = None,
    id_range: str | tuple[int, int] | None = None,
    since: str | None = None,
    until: str | None = None,
    n_samples: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    max_new_tokens: int | None = None,
    stop: Sequence[str] | None = None,
    seed: int | None = None,
    reasoning_effort: str | None = None,
    thinking_budget: int | None = None,
    concurrency: int | None = None,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    timeout: float | None = None,
    chat: bool | None = None,
    prefill: bool | None = None,
    output: PathArg | None = None,
    output_dir: PathArg | None = None,
    cache: PathArg | bool = True,
    resume: bool = True,
    dataset_path: PathArg | None = None,
    data_dir: PathArg | None = None,
    cache_dir: PathArg | None = None,
    config: PathArg | None = None,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> GenerationOutcome:
    """Ask a model for samples of every selected task and sanitize each as it arrives, as
    `passbench generate` does; returns what was written (`outcome.files.sanitized` is the
    samples file to evaluate), the token usage and the extraction failures.

    `model` is a model id, or a [models.NAME] table's name in the config file. The keyword
    arguments are the flags of the same name (None: not given; the official defaults apply:
    greedy, 1280 new tokens, one sample per task); `options` holds provider options (as
    `--option KEY=VALUE`), `timeout` is --timeout (seconds per request). Files are named as
    the official tool names them in `output_dir` (default ./results) unless `output` names the
    raw file. `cache`: True for the response cache in passbench's cache folder, a path for
    another file, False for none. `resume=False` starts the files afresh.

    Works inside a running event loop (a notebook): the requests then run on a thread.
    """
    resolved = _resolve(
        "generate",
        config,
        environ,
        benchmark=benchmark,
        version=version,
        split=split,
        subset=subset,
        n_samples=n_samples,
        output_dir=output_dir,
        dataset_path=dataset_path,
        data_dir=data_dir,
        cache_dir=cache_dir,
        cache=cache if not isinstance(cache, bool) else None,
    )
    flags: dict[str, Any] = {
        "provider": provider,
        "base_url": base_url,
        "temperature": temperature,
        "top_p": top_p,
        "max_new_tokens": max_new_tokens,
        "seed": seed,
        "reasoning_effort": reasoning_effort,
        "thinking_budget": thinking_budget,
        "concurrency": concurrency,
        "requests_per_minute": requests_per_minute,
        "tokens_per_minute": tokens_per_minute,
        "timeout_s": timeout,
        "stop": list(stop) if stop else None,
    }
    provider_options = dict(options or {})
    if revision:
        provider_options["revision"] = revision
    if provider_options:
        flags["options"] = provider_options
    model_config = official_model_config(model, flags, resolved.config)

    paths = resolved.paths
    bench = get_benchmark(resolved["benchmark"])
    chosen_split = check_split(bench, resolved["split"])
    loaded = load_benchmark(
        bench.info.name,
        version=resolved["version"],
        subset=resolved["subset"],
        dataset_path=resolved["dataset_path"],
        data_dir=paths.data_dir,
        cache_dir=paths.cache_dir,
        mirror=paths.mirror,
        download=not paths.offline,
        progress=progress,
    )
    selection = _selection(tasks, id_range, since, until)
    chosen = select_tasks(loaded.tasks, selection.task_ids, selection.id_range, selection.window)
    if output is not None:
        files = SampleFiles.beside(Path(output))
    else:
        identifier = sample_identifier(
            model_config,
            bench.info.name,
            loaded.subset,
            chosen_split,
            resolved["n_samples"],
            prefill=prefill,
        )
        files = sample_files(resolved["output_dir"], identifier)
    generation = GenerationSettings(
        config=model_config,
        split=chosen_split,
        n_samples=resolved["n_samples"],
        chat=chat,
        prefill=prefill,
        official_stops=not stop,
        resume=resume,
    )
    offline_model_hub(paths, os.environ)
    response_cache = None
    if cache is not False:
        response_cache = ResponseCache(resolved["cache"] or paths.cache_dir / "generations.sqlite")
    try:
        return _run_coroutine(
            generate_samples(generation, chosen, files, cache=response_cache, progress=progress)
        )
    finally:
        if response_cache is not None:
            response_cache.close()


# ---- helpers ------------------------------------------------------------------------------


def _resolve(
    command: str, config: PathArg | None, environ: Mapping[str, str] | None, **given: Any
) -> Resolved:
    """The command's settings, as the CLI resolves them, with `given` as its flags."""
    flags = {
        key: Path(value) if isinstance(value, os.PathLike) else value
        for key, value in given.items()
        if value is not None
    }
    try:
        return resolve(
            command,
            flags=flags,
            environ=os.environ if environ is None else environ,
            config_path=Path(config) if config is not None else None,
            defaults={"benchmark": DEFAULT_BENCHMARK},
        )
    except InputError as error:
        # a keyword's bad value is named by the keyword, not by the CLI's flag
        keyword = (error.field or "").removeprefix("--").replace("-", "_")
        if error.path is None and keyword in flags:
            raise InputError(error.bare_message, field=keyword) from None
        raise


def _selection(
    tasks: str | Sequence[str] | None,
    id_range: str | tuple[int, int] | None,
    since: str | None,
    until: str | None,
) -> TaskSelection:
    """--tasks, --id-range, --since and --until, from strings or Python values."""
    if tasks is not None and not isinstance(tasks, str):
        tasks = ",".join(tasks)
    if id_range is not None and not isinstance(id_range, str):
        low, high = id_range
        id_range = f"{low}-{high}"
    return TaskSelection.parse(tasks, id_range, since, until)


def _samples_file(samples: SamplesArg, output_dir: Path | None, name: str) -> Path:
    """The samples file to evaluate: `samples` itself when it is a path, else the samples
    written to `<output_dir>/<name>.jsonl`."""
    if isinstance(samples, (str, os.PathLike)):
        return Path(samples)
    if not name or "/" in name or name.startswith("."):
        raise InputError(f"expected a file stem such as 'samples', got {name!r}", field="name")
    rows = [_sample_row(sample) for sample in samples]
    if not rows:
        raise InputError("no samples given", field="samples")
    folder = output_dir if output_dir is not None else DEFAULT_OUTPUT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    write_jsonl_atomic(path, rows)
    return path


def _sample_row(sample: Sample | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(sample, Sample):
        row = {key: value for key, value in asdict(sample).items() if value is not None}
        row.pop("sample_index", None)  # numbered in the order given
        row.pop("source_line", None)
        return row
    if isinstance(sample, Mapping):
        return dict(sample)
    raise InputError(
        f"expected a Sample or a mapping with task_id and solution, got {type(sample).__name__}",
        field="samples",
    )


def _run_coroutine(work: Awaitable[T]) -> T:
    """Run `work` to its end: here, or on a thread of its own when this thread already runs an
    event loop (Jupyter), where asyncio.run would refuse."""

    async def wrapped() -> T:
        return await work

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrapped())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="passbench-generate") as pool:
        return pool.submit(asyncio.run, wrapped()).result()
