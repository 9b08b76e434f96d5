"""`passbench generate`: ask a model for samples of every task, sanitize each as it arrives.

Two files are written, appended to sample by sample, named as the official `bigcodebench.generate`
names them (see passbench.apps.pipeline): `<stem>.jsonl` with the raw answers (`task_id`,
`raw_solution` and passbench's own fields: sample_index, model, provider, params, usage,
latency_s, finish_reason) and `<stem>-sanitized_calibrated.jsonl`, ready for `passbench
evaluate`, with `solution` and the raw answer beside it (`sanitize_error` where no usable program
was found). An interrupted run resumes per sample: a re-run asks only for what neither file has,
and answers already paid for come from the response cache.

The options are shared with `passbench run` through `generation_options`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from passbench.apps.cli._progress import RichProgress
from passbench.apps.cli.dryrun import DRY_RUN_OPTIONS, print_dry_run
from passbench.apps.cli.options import (
    benchmark_option,
    config_option,
    data_options,
    data_settings,
    resolve_options,
    selection_options,
    split_option,
    subset_option,
    task_selection,
    version_option,
)
from passbench.apps.pipeline import (
    GenerationOutcome,
    GenerationSettings,
    SampleFiles,
    generate_samples,
    official_model_config,
    sample_files,
    sample_identifier,
)
from passbench.apps.pipeline import offline_model_hub as offline_hub
from passbench.core.records import Task
from passbench.core.settings import ConfigFile, Resolved
from passbench.stages.benchmarks import Benchmark, LoadedBenchmark, get_benchmark
from passbench.stages.benchmarks.base import check_split
from passbench.stages.benchmarks.selection import select_tasks
from passbench.stages.providers import ModelConfig, ResponseCache
from passbench.stages.providers.config import parse_provider_options

F = TypeVar("F", bound=Callable[..., Any])
_T = TypeVar("_T")

_GENERATION_OPTIONS: tuple[Callable[[Any], Any], ...] = (
    click.option("--model", "-m", required=True, help="Model id, or a [models.NAME] table's name."),
    click.option("--provider", "-p", help="openai, anthropic, google, mistral, ollama, vllm, hf."),
    click.option("--base-url", help="API endpoint (OpenAI-compatible servers, Ollama host...)."),
    config_option,
    click.option("--revision", help="Model revision (hf, vllm; default main, in file names too)."),
    click.option(
        "--option",
        "provider_options",
        multiple=True,
        metavar="KEY=VALUE",
        help="Provider option, as in [models.NAME.options] (repeatable; VALUE is read as a TOML "
        "value, else as text), e.g. --option max_model_len=4096 --option device=cpu.",
    ),
    benchmark_option,
    version_option,
    split_option,
    subset_option,
    data_options,
    click.option(
        "--n-samples", "-n", type=click.IntRange(min=1), help="Samples per task (default 1)."
    ),
    click.option("--temperature", type=float, help="Sampling temperature (default 0: greedy)."),
    click.option("--top-p", type=float),
    click.option("--max-new-tokens", type=click.IntRange(min=1), help="Default 1280 (official)."),
    click.option(
        "--stop", multiple=True, help="Stop sequence (repeatable); replaces the official."
    ),
    click.option("--seed", type=int, help="Sample i of a prompt uses seed + i."),
    click.option("--reasoning-effort", help="low / medium / high (reasoning models)."),
    click.option("--thinking-budget", type=click.IntRange(min=0), help="Thinking tokens."),
    click.option("--concurrency", type=click.IntRange(min=1), help="Requests in flight."),
    click.option("--requests-per-minute", type=click.FloatRange(min=0, min_open=True)),
    click.option("--tokens-per-minute", type=click.FloatRange(min=0, min_open=True)),
    click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True)),
    click.option(
        "--chat/--direct-completion",
        "chat",
        default=None,
        help="Chat prompts or direct completion (default: chat, unless a local model has no "
        "template).",
    ),
    click.option(
        "--prefill/--no-prefill",
        default=None,
        help="Start the answer with the response prefix (default: only for hf / vllm, as "
        "official).",
    ),
    selection_options,
    click.option(
        "--output-dir",
        type=click.Path(path_type=Path, file_okay=False),
        help="Folder for sample (and result) files (default: ./results).",
    ),
    click.option(
        "--cache",
        "cache_path",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Response cache (default: generations.sqlite in passbench's cache folder).",
    ),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache."),
    click.option(
        "--no-resume",
        is_flag=True,
        help="Start the sample files afresh instead of keeping the samples they hold.",
    ),
    *DRY_RUN_OPTIONS,
)


def generation_options(function: F) -> F:
    """Every option of `passbench generate` but --output (shared with `passbench run`)."""
    for option in reversed(_GENERATION_OPTIONS):
        function = option(function)
    return function


@dataclass(frozen=True)
class Selection:
    """The benchmark, the split and the tasks a command works on."""

    benchmark: Benchmark
    loaded: LoadedBenchmark
    split: str
    tasks: list[Task]


def model_config(options: Mapping[str, Any], config_file: ConfigFile | None = None) -> ModelConfig:
    """The model's settings: its [models.NAME] table in the config file (if any) with the flags
    on top, and the official defaults for what neither sets (apps.pipeline)."""
    flags = {
        name: options[name]
        for name in (
            "provider",
            "base_url",
            "temperature",
            "top_p",
            "max_new_tokens",
            "seed",
            "reasoning_effort",
            "thinking_budget",
            "concurrency",
            "requests_per_minute",
            "tokens_per_minute",
            "timeout_s",
        )
    }
    flags["stop"] = list(options["stop"]) or None
    provider_options = parse_provider_options(options["provider_options"])
    if options["revision"]:
        provider_options["revision"] = options["revision"]
    if provider_options:
        flags["options"] = provider_options
    return official_model_config(options["model"], flags, config_file)


def select(resolved: Resolved, options: Mapping[str, Any]) -> Selection:
    """Load the benchmark and pick the tasks --tasks and --id-range name (all by default)."""
    bench = get_benchmark(resolved["benchmark"])
    split = check_split(bench, resolved["split"])
    with RichProgress() as progress:  # shows anything only when a download happens
        loaded = bench.load(
            resolved["version"], resolved["subset"], data=data_settings(resolved), progress=progress
        )
    selection = task_selection(options)
    chosen = select_tasks(loaded.tasks, selection.task_ids, selection.id_range, selection.window)
    return Selection(bench, loaded, split, chosen)


def generation_settings(
    resolved: Resolved, options: Mapping[str, Any], config: ModelConfig, split: str
) -> GenerationSettings:
    return GenerationSettings(
        config=config,
        split=split,
        n_samples=resolved["n_samples"],
        chat=options["chat"],
        prefill=options["prefill"],
        official_stops=not options["stop"],
        resume=not options["no_resume"],
    )


def output_files(
    resolved: Resolved,
    options: Mapping[str, Any],
    config: ModelConfig,
    selection: Selection,
    output: Path | None,
    n_samples: int | None = None,
) -> SampleFiles:
    """The raw and sanitized sample files: beside --output, else officially named in
    --output-dir (with `n_samples` samples per task; default --n-samples)."""
    if output is not None:
        return SampleFiles.beside(output)
    identifier = sample_identifier(
        config,
        selection.benchmark.info.name,
        selection.loaded.subset,
        selection.split,
        n_samples or resolved["n_samples"],
        prefill=options["prefill"],
    )
    return sample_files(resolved["output_dir"], identifier)


def open_cache(resolved: Resolved, options: Mapping[str, Any]) -> ResponseCache | None:
    if options["no_cache"]:
        return None
    path = resolved["cache"] or resolved.paths.cache_dir / "generations.sqlite"
    return ResponseCache(path)


def with_cache_and_progress(
    resolved: Resolved,
    options: Mapping[str, Any],
    work: Callable[[ResponseCache | None, RichProgress], Coroutine[Any, Any, _T]],
) -> _T:
    """Run `work` (generation, or a whole run) under a progress bar with the response cache,
    which is closed however the work ends; the model hub offline when the user asked so."""
    offline_model_hub(resolved, os.environ)
    cache = open_cache(resolved, options)
    try:
        with RichProgress() as progress:
            return asyncio.run(work(cache, progress))
    finally:
        if cache is not None:
            cache.close()


def offline_model_hub(resolved: Resolved, environ: MutableMapping[str, str]) -> None:
    """HF_HUB_OFFLINE=1 with PASSBENCH_OFFLINE (apps.pipeline.offline_model_hub)."""
    offline_hub(resolved.paths, environ)


def print_generation(console: Console, outcome: GenerationOutcome, n_tasks: int) -> None:
    """What generation did: samples new and kept, mode, tokens and cost, extraction failures."""
    usage = outcome.usage
    if outcome.chat is None:
        console.print(
            f"Nothing to generate: all {outcome.kept_samples} samples for {n_tasks} tasks "
            "were kept from an earlier run."
        )
    else:
        mode = "chat" + (" with prefill" if outcome.prefill else "") if outcome.chat else ""
        kept = f", {outcome.kept_samples} kept from an earlier run" if outcome.kept_samples else ""
        console.print(
            f"Generated {outcome.new_samples} samples for {n_tasks} tasks "
            f"({mode or 'direct completion'}){kept}: {usage.summary()}; "
            f"{usage.requests} requests, {usage.retries} retries"
        )
    if usage.dropped_params:
        console.print(f"The server refused: {', '.join(sorted(usage.dropped_params))}")
    if outcome.extraction_failures:
        count = sum(len(keys) for keys in outcome.extraction_failures.values())
        console.print(f"[bold yellow]{count} extraction failures[/] (recorded as sanitize_error):")
        for reason, keys in sorted(outcome.extraction_failures.items(), key=lambda i: -len(i[1])):
            shown = ", ".join(keys[:8]) + (f", … ({len(keys) - 8} more)" if len(keys) > 8 else "")
            console.print(f"  {len(keys)} × {reason}: {shown}")
    if outcome.truncated:
        keys = outcome.truncated
        shown = ", ".join(keys[:8]) + (f", … ({len(keys) - 8} more)" if len(keys) > 8 else "")
        console.print(
            f"[bold yellow]{len(keys)} answers cut short[/] (token limit or unclosed thinking, "
            f"recorded as truncated): {shown}"
        )
    console.print(f"Wrote {outcome.files.raw}\nWrote {outcome.files.sanitized}")


@click.command()
@generation_options
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Raw samples file to write (default: named as the official tool names it, in "
    "--output-dir); the sanitized one goes beside it.",
)
@click.pass_context
def generate(ctx: click.Context, /, **options: Any) -> None:
    """Generate samples with a model for every task of a benchmark, and sanitize them."""
    console = Console(stderr=True)
    resolved = resolve_options(ctx, "generate", options)
    config = model_config(options, resolved.config)
    selection = select(resolved, options)
    generation = generation_settings(resolved, options, config, selection.split)
    if options["dry_run"]:
        print_dry_run(config, list(selection.tasks), generation, options["price_file"])
        return
    files = output_files(resolved, options, config, selection, options["output"])
    outcome = with_cache_and_progress(
        resolved,
        options,
        lambda cache, progress: generate_samples(
            generation, selection.tasks, files, cache=cache, progress=progress
        ),
    )
    print_generation(console, outcome, len(selection.tasks))
