"""Wires the stages together: generate -> sanitize -> evaluate -> summary.

This is the only module that composes stages; the work itself is done by `prompts`,
`providers`, `sanitize` and `evaluate`. What lives here is the bookkeeping between them:

- the sample files, named as the official `bigcodebench.generate` names them:
  `<model>--<revision>--bigcodebench[-hard]-<split>--<backend>-<temperature>-<n>.jsonl` (raw
  answers) and the same stem with `-sanitized_calibrated.jsonl` (what is evaluated, with the raw
  answer kept beside it in `raw_solution`);
- appending each sample to both files as it arrives, so an interrupted run loses at most the
  samples in flight, and resuming per sample: a re-run asks only for the (task, sample index)
  pairs neither file has;
- the summary, which tells extraction failures (the sanitizer found no usable program) apart
  from test failures.

    files = sample_files(output_dir, sample_identifier(config, "bigcodebench", "hard", ...))
    outcome = await run_pipeline(generation, evaluate_settings, paths, files, cache=cache)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from passbench.apps.reflections import Reflections, reflecting_file
from passbench.apps.samplerows import (
    Appender,
    read_rows,
    row_key,
    sample_row,
    sanitized_row,
    task_fields,
)
from passbench.core.errors import InputError, SandboxError
from passbench.core.progress import NullProgress, Progress
from passbench.core.records import Prompt, Task
from passbench.core.samplefile import sample_file_stem
from passbench.core.settings import ConfigFile, Paths, Resolved
from passbench.stages.benchmarks import check_split, get_benchmark
from passbench.stages.benchmarks.selection import TaskSelection
from passbench.stages.evaluate import EvaluateSettings, EvaluationOutcome, Evaluator
from passbench.stages.prompts import build_prompt, stop_sequences
from passbench.stages.providers import (
    Capabilities,
    ModelConfig,
    ModelRunner,
    Provider,
    ResponseCache,
    UsageTotals,
    create_provider,
    load_model_config,
)
from passbench.stages.providers.config import OFFICIAL_REASONING_EFFORT, reasoning_named_model
from passbench.stages.providers.registry import official_name_suffix, official_sampling_top_p
from passbench.stages.results import load_results
from passbench.stages.sandbox import check_isolation
from passbench.stages.sandbox.base import Limits

#: What the official generate appends to the sample file's name.
SANITIZED_SUFFIX = "-sanitized_calibrated"
#: The official generate's default `--revision`.
DEFAULT_REVISION = "main"
#: The official generate's default `--max_new_tokens`.
OFFICIAL_MAX_NEW_TOKENS = 1280


# ---- settings shared by the CLI and the Python API ----------------------------------------


def official_model_config(
    model: str, flags: Mapping[str, Any], config_file: ConfigFile | None = None
) -> ModelConfig:
    """The model's settings: its [models.NAME] table in the config file (if any) with `flags`
    on top (None: not given), and the official defaults for what neither sets: 1280 new
    tokens, greedy, and when sampling the top_p the official tool uses with that provider."""
    config = load_model_config(model, config=config_file, flags=flags)
    if config.params.max_new_tokens is None:
        config = replace(
            config, params=replace(config.params, max_new_tokens=OFFICIAL_MAX_NEW_TOKENS)
        )
    if config.params.temperature is None:
        config = replace(config, params=replace(config.params, temperature=0.0))
    if config.params.temperature and config.params.top_p is None:
        top_p = official_sampling_top_p(config)
        if top_p is not None:
            config = replace(config, params=replace(config.params, top_p=top_p))
    return config


def offline_model_hub(paths: Paths, environ: MutableMapping[str, str]) -> None:
    """With PASSBENCH_OFFLINE, local models (hf, vllm) load from the Hugging Face cache only:
    a missing model is an error naming the cache instead of a download. Set before the
    provider's SDK is imported, which reads it."""
    if paths.offline:
        environ.setdefault("HF_HUB_OFFLINE", "1")


def evaluate_settings(
    resolved: Resolved,
    selection: TaskSelection,
    *,
    samples: Path | None = None,
    check_ground_truth: bool = True,
    resume: bool = True,
) -> EvaluateSettings:
    """EvaluateSettings from resolved settings (of `evaluate` or `run`: passbench.core.settings)
    and what is not a setting: the samples, the task selection, whether the ground truth is
    checked and whether the journal's verdicts are reused."""
    return EvaluateSettings(
        benchmark=resolved["benchmark"],
        version=resolved["version"],
        split=check_split(get_benchmark(resolved["benchmark"]), resolved["split"]),
        subset=resolved["subset"],
        samples=samples,
        output_dir=resolved["output_dir"],
        task_ids=selection.task_ids,
        id_range=selection.id_range,
        window=selection.window,
        calibrated=resolved["calibrated"],
        pass_k=resolved["pass_k"],
        timeout_per_task_s=resolved["timeout_per_task"],
        min_time_limit_s=resolved["min_time_limit"],
        gt_time_limit_factor=resolved["gt_time_limit_factor"],
        check_ground_truth=check_ground_truth,
        workers=resolved["workers"],
        limits=Limits(
            memory_mb=resolved["memory_mb"],
            tmp_mb=resolved["tmp_mb"],
            allow_network=resolved["allow_network"],
        ),
        env_dir=resolved["env_dir"],
        dataset_path=resolved["dataset_path"],
        nltk_data=resolved["nltk_data"],
        allow_unsandboxed=resolved["allow_unsandboxed"],
        resume=resume,
        backend=resolved["backend"],
        endpoint=resolved["endpoint"],
        image=resolved["image"],
        ray_address=resolved["ray_address"],
        token=resolved["token"],
        verify_fraction=resolved["verify_fraction"],
        runs=resolved["runs"],
        epochs=resolved["epochs"],
    )


def refuse_without_isolation(settings: EvaluateSettings, paths: Paths) -> None:
    """SandboxError (one line: why, how to fix) when samples could not be isolated here and
    the user did not allow running them unsandboxed; checked before any work or progress
    output (the sandbox would refuse too, later)."""
    if settings.allow_unsandboxed:
        return
    if settings.backend != "local" and settings.verify_fraction == 0:
        return  # nothing runs here; the remote backend says what isolation it gave
    refused = check_isolation(Path(sys.executable), paths.cache_dir / "scratch")
    if refused is not None:
        raise SandboxError(refused)


# ---- file names ---------------------------------------------------------------------------


def _temperature_text(temperature: float | None, n_samples: int) -> str:
    """As the official name prints it: greedy decoding (temperature 0, one sample) becomes the
    integer 0; any other temperature stays the float it was given (0.8, 0.0)."""
    if not temperature and n_samples == 1:
        return "0"
    return str(float(temperature or 0.0))


def sample_identifier(
    config: ModelConfig,
    benchmark: str,
    subset: str,
    split: str,
    n_samples: int,
    *,
    prefill: bool | None = None,
) -> str:
    """The official sample file stem, without `-sanitized_calibrated` (bigcodebench/generate.py,
    run_codegen): the model id with "/" as "--", the revision, the benchmark with the subset
    unless it is full, the split, the backend, the temperature and the number of samples."""
    model = config.model
    if reasoning_named_model(model):  # on every backend, as officially
        model += f"--{config.params.reasoning_effort or OFFICIAL_REASONING_EFFORT}"
    model += official_name_suffix(config)
    name = model.replace("/", "--")
    if prefill is False:
        name += "--skip_prefill"
    revision = str(config.options.get("revision") or DEFAULT_REVISION)
    extra = f"-{subset}" if subset != "full" else ""
    temperature = _temperature_text(config.params.temperature, n_samples)
    return (
        f"{name}--{revision}--{benchmark}{extra}-{split}--{config.provider}-"
        f"{temperature}-{n_samples}"
    )


@dataclass(frozen=True)
class SampleFiles:
    """The two files one generation writes: raw answers, and sanitized samples beside them."""

    raw: Path
    sanitized: Path

    @classmethod
    def beside(cls, raw: Path) -> SampleFiles:
        """`raw` and `<its stem>-sanitized_calibrated.jsonl` in the same folder."""
        return cls(
            raw=raw, sanitized=raw.with_name(f"{sample_file_stem(raw)}{SANITIZED_SUFFIX}.jsonl")
        )


def sample_files(output_dir: Path, identifier: str) -> SampleFiles:
    return SampleFiles.beside(output_dir / f"{identifier}.jsonl")


# ---- generation settings and planning -----------------------------------------------------


@dataclass(frozen=True)
class GenerationSettings:
    """How to ask the model (the ModelConfig says who the model is)."""

    config: ModelConfig
    split: str = "complete"
    n_samples: int = 1
    chat: bool | None = None  # None: the provider decides
    prefill: bool | None = None  # None: only where the chat template is rendered locally
    official_stops: bool = True  # add the official local backends' stop sequences
    resume: bool = True  # False: start both files afresh


def plan_prompts(
    tasks: Sequence[Task],
    split: str,
    capabilities: Capabilities,
    *,
    chat: bool | None,
    prefill: bool | None,
) -> tuple[list[Prompt], bool, bool]:
    """The prompts, and the (chat, prefill) decided for this provider.

    chat None: the provider decides (a local model without a chat template completes directly).
    prefill None: as the official tool, only where the chat template is rendered locally.
    """
    use_chat = capabilities.chat if chat is None else chat
    if use_chat and not capabilities.chat:
        raise InputError("this model has no chat template; it can only complete text", field="chat")
    if not use_chat and not capabilities.completion:
        raise InputError("this provider has no direct-completion mode; use --chat", field="chat")
    use_prefill = capabilities.chat_template if prefill is None else prefill
    prompts = [
        build_prompt(
            task,
            split,
            chat=use_chat,
            prefill=use_prefill,
            chat_template=capabilities.chat_template,
        )
        for task in tasks
    ]
    return prompts, use_chat, use_prefill


# ---- generation ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerationOutcome:
    files: SampleFiles
    usage: UsageTotals
    chat: bool | None  # None when nothing had to be generated (the model was not asked)
    prefill: bool | None
    new_samples: int  # written by this run
    kept_samples: int  # already in the files from an earlier run
    extraction_failures: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # reason -> "task_id#index" of every sample in the sanitized file whose extraction failed
    # "task_id#index" of the samples whose answer was cut short (token limit, unclosed
    # thinking): no answer, so not counted among the extraction failures
    truncated: tuple[str, ...] = ()


async def generate_samples(
    generation: GenerationSettings,
    tasks: Sequence[Task],
    files: SampleFiles,
    *,
    cache: ResponseCache | None = None,
    progress: Progress | None = None,
    provider: Provider | None = None,
) -> GenerationOutcome:
    """Generate the samples `files` still lack, sanitize each, append both rows as it arrives.
    `provider`: one the caller opened and closes (else one is created for this call)."""
    progress = progress or NullProgress()
    if not tasks:
        raise InputError("no tasks selected", field="tasks")
    if not generation.resume:
        for path in (files.raw, files.sanitized, reflecting_file(files.raw)):
            path.unlink(missing_ok=True)
    by_id = {task.task_id: task for task in tasks}
    raw_rows = [row for row in read_rows(files.raw) if row["task_id"] in by_id]
    done = {row_key(row) for row in raw_rows}
    sanitized_done = {row_key(row) for row in read_rows(files.sanitized)}
    wanted = {(task.task_id, index) for task in tasks for index in range(generation.n_samples)}
    kept = len(done & wanted)

    sanitized_out = Appender(files.sanitized)
    raw_out = Appender(files.raw)
    usage = UsageTotals()
    use_chat: bool | None = None
    use_prefill: bool | None = None
    try:
        # A crash between the two appends leaves a raw row without its sanitized twin.
        for row in raw_rows:
            if row_key(row) not in sanitized_done:
                sanitized_out.write(sanitized_row(row, by_id[row["task_id"]], generation.split))
        # samples an earlier run held for a reflection continue from their last answer
        held = {row_key(row) for row in read_rows(reflecting_file(files.raw))} - done
        covered = done | held
        todo = [
            task
            for task in tasks
            if any((task.task_id, i) not in covered for i in range(generation.n_samples))
        ]
        asked_ids = {task.task_id for task in todo}
        held_ids = {task_id for task_id, _ in held}
        reflecting = [t for t in tasks if t.task_id in held_ids - asked_ids]
        if todo or reflecting:
            usage, use_chat, use_prefill, new = await _generate(
                generation,
                _Asked(todo, reflecting, files.raw),
                done,
                raw_out,
                sanitized_out,
                cache,
                progress,
                provider,
            )
        else:
            new = 0
    finally:
        raw_out.close()
        sanitized_out.close()
    failures: dict[str, list[str]] = {}
    truncated: list[str] = []
    for row in read_rows(files.sanitized):
        if row["task_id"] not in by_id:
            continue
        if row.get("truncated"):
            truncated.append(f"{row['task_id']}#{row['sample_index']}")
        elif row.get("sanitize_error"):
            failures.setdefault(str(row["sanitize_error"]), []).append(
                f"{row['task_id']}#{row['sample_index']}"
            )
    return GenerationOutcome(
        files=files,
        usage=usage,
        chat=use_chat,
        prefill=use_prefill,
        new_samples=new,
        kept_samples=kept,
        extraction_failures={reason: tuple(keys) for reason, keys in failures.items()},
        truncated=tuple(truncated),
    )


def request_config(
    generation: GenerationSettings,
    capabilities: Capabilities,
    use_chat: bool,
    use_prefill: bool,
    *,
    benchmark: str,
) -> ModelConfig:
    """The model's settings as requests carry them: with the official stop sequences where
    the official tool sends them (its local backends; its API backends send none)."""
    config = generation.config
    local_protocol = capabilities.chat_template or not use_chat
    if generation.official_stops and not config.params.stop and local_protocol:
        stops = stop_sequences(use_chat, benchmark=benchmark, prefill=use_prefill)
        config = replace(config, params=replace(config.params, stop=stops))
    return config


@dataclass(frozen=True)
class _Asked:
    """The tasks whose samples are asked for, and those whose samples only continue their
    reflections (held by an earlier run, `reflections.py`)."""

    todo: Sequence[Task]
    reflecting: Sequence[Task]
    raw: Path


async def _generate(
    generation: GenerationSettings,
    asked: _Asked,
    done: set[tuple[str, int]],
    raw_out: Appender,
    sanitized_out: Appender,
    cache: ResponseCache | None,
    progress: Progress,
    given: Provider | None = None,
) -> tuple[UsageTotals, bool, bool, int]:
    config = generation.config
    provider = given or create_provider(config)
    written = 0
    tasks = [*asked.todo, *asked.reflecting]
    try:
        capabilities = config.apply_capabilities(provider.capabilities)
        prompts, use_chat, use_prefill = plan_prompts(
            tasks, generation.split, capabilities, chat=generation.chat, prefill=generation.prefill
        )
        config = request_config(
            generation, capabilities, use_chat, use_prefill, benchmark=tasks[0].benchmark
        )
        runner = ModelRunner(provider, config, cache=cache, progress=progress)
        by_id = {prompt.task_id: prompt for prompt in prompts}
        tasks_by_id = {task.task_id: task for task in tasks}
        # a chat answer whose edits cannot be applied is asked again (Aider's reflections)
        reflections = Reflections(
            asked.raw, tasks_by_id, by_id, generation.split, chat=use_chat, done=done
        )

        def write(raw: dict[str, Any]) -> None:
            nonlocal written
            raw_out.write(raw)
            sanitized_out.write(sanitized_row(raw, tasks_by_id[raw["task_id"]], generation.split))
            done.add(row_key(raw))
            written += 1

        # Samples an earlier run wrote are answered from the response cache (or, without
        # one, generated again and not written twice).
        todo_ids = {task.task_id for task in asked.todo}
        first = [prompt for prompt in prompts if prompt.task_id in todo_ids]
        try:
            async for completion in runner.iter_completions(first, generation.n_samples):
                key = (completion.task_id, completion.sample_index)
                if key in done or key in reflections.held:
                    continue
                raw = sample_row(completion, by_id[completion.task_id], chat=use_chat)
                raw.update(task_fields(tasks_by_id[completion.task_id]))
                if not reflections.hold(raw):
                    write(raw)
            await reflections.settle(runner, write)
        finally:
            reflections.close()
    finally:
        if given is None:
            await provider.aclose()
    return runner.usage, use_chat, use_prefill, written


# ---- the whole run ------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSummary:
    """What one run comes to, with extraction failures apart from test failures."""

    n_tasks: int
    n_samples: int
    passed: int
    test_failures: int  # ran and failed (or timed out) though the program was extracted
    extraction_failures: int  # failed, and the sanitizer had found no usable program
    pass_at_k: Mapping[str, float]
    gt_pass_rate: float | None
    truncated: int = 0  # failed with an answer cut short: "no answer (truncated)"


@dataclass(frozen=True)
class RunOutcome:
    generation: GenerationOutcome
    evaluation: EvaluationOutcome
    summary: RunSummary


def summarize(
    sanitized: Path, evaluation: EvaluationOutcome, task_ids: Iterable[str]
) -> RunSummary:
    """Join the evaluation's verdicts with the sanitizer's notes, sample by sample, on
    (task_id, sample_index): the index generate gave each sample, which the evaluator keeps."""
    wanted = set(task_ids)
    unextracted = {
        row_key(row)
        for row in read_rows(sanitized)
        if row["task_id"] in wanted and row.get("sanitize_error")
    }
    verdicts = load_results(evaluation.eval_results_path)
    passed = test_failures = extraction_failures = truncated = 0
    for task_id, samples in verdicts.tasks.items():
        for sample in samples:
            if sample.passed:
                passed += 1
            elif sample.no_answer:  # cut short: no answer to extract or to test
                truncated += 1
            elif (task_id, sample.sample_index) in unextracted:
                extraction_failures += 1
            else:
                test_failures += 1
    truth = evaluation.ground_truth
    return RunSummary(
        n_tasks=evaluation.n_tasks,
        n_samples=evaluation.n_samples,
        passed=passed,
        test_failures=test_failures,
        extraction_failures=extraction_failures,
        truncated=truncated,
        pass_at_k=dict(evaluation.pass_at_k),
        gt_pass_rate=truth.pass_rate if truth is not None else None,
    )


async def run_pipeline(
    generation: GenerationSettings,
    evaluation: EvaluateSettings,
    paths: Paths,
    files: SampleFiles,
    *,
    output_dir: Path,
    cache: ResponseCache | None = None,
    progress: Progress | None = None,
) -> RunOutcome:
    """Generate (resuming), sanitize, evaluate (resuming from its journal) and summarize the
    tasks `evaluation.task_ids` selects. The evaluator is set up first, so a missing
    evaluation environment stops the run before any request is paid for."""
    evaluator = Evaluator(replace(evaluation, samples=files.sanitized), paths, progress)
    generated = await generate_samples(
        generation, evaluator.tasks, files, cache=cache, progress=progress
    )
    evaluated = evaluator.evaluate_samples(files.sanitized, output_dir)
    summary = summarize(files.sanitized, evaluated, (task.task_id for task in evaluator.tasks))
    return RunOutcome(generation=generated, evaluation=evaluated, summary=summary)
