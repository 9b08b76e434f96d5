"""`passbench generate --dry-run` and `passbench run --dry-run`: the requests they would send,
their tokens and cost; nothing is sent, no provider is built (no API key is read, no local model
is loaded), nothing is written. The options are generate's, so `run` has them through
generate's parameters, and both print through `print_dry_run`.

The prompts are the ones the run would build (`pipeline.plan_prompts`, the same task selection,
split, chat/prefill choice); tokens and prices are `stages.providers.estimate`'s.
"""

from __future__ import annotations

from pathlib import Path

import click

from passbench.apps.pipeline import GenerationSettings, plan_prompts
from passbench.core.records import Task
from passbench.stages.providers.config import ModelConfig
from passbench.stages.providers.estimate import (
    Estimate,
    declared_capabilities,
    plan_requests,
    prompt_text,
    resolve_prices,
    token_counter,
)

#: --dry-run and --prices (generate's options; run takes them from generate).
DRY_RUN_OPTIONS = (
    click.option(
        "--dry-run",
        is_flag=True,
        help="Print the requests, their tokens and cost, and stop: nothing is sent.",
    ),
    click.option(
        "--prices",
        "price_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="TOML or JSON file of USD per million tokens by model id (for --dry-run).",
    ),
)


def estimate_run(
    config: ModelConfig,
    tasks: list[Task],
    generation: GenerationSettings,
    price_file: Path | None,
) -> tuple[Estimate, str, bool]:
    """(the estimate, the first prompt's text, whether the prompts are chat messages)."""
    capabilities = declared_capabilities(config)
    prompts, use_chat, _ = plan_prompts(
        tasks, generation.split, capabilities, chat=generation.chat, prefill=generation.prefill
    )
    count, method = token_counter()
    requests = plan_requests(
        prompts, generation.n_samples, config, capabilities, chat=use_chat, count=count
    )
    prices, source = resolve_prices(config, price_file)
    first = prompt_text(prompts[0], use_chat) if prompts else ""
    return Estimate(tuple(requests), method, prices, source), first, use_chat


def print_dry_run(
    config: ModelConfig,
    tasks: list[Task],
    generation: GenerationSettings,
    price_file: Path | None,
) -> None:
    estimate, first, chat = estimate_run(config, tasks, generation, price_file)
    echo = click.echo
    echo("Dry run: nothing is sent and nothing is written.")
    echo(f"{'request':>7}  {'task':<28} {'samples':<9} {'input tok':>9}  {'max output tok':>14}")
    for number, request in enumerate(estimate.requests, start=1):
        low, high = request.samples[0], request.samples[-1]
        indices = str(low) if low == high else f"{low}-{high}"
        echo(
            f"{number:>7}  {request.task_id:<28} {indices:<9} {request.input_tokens:>9,}  "
            f"{request.max_output_tokens:>14,}"
        )
    if estimate.requests:
        echo(f"\nThe first request's prompt ({'chat message' if chat else 'text to complete'}):")
        echo(first.rstrip("\n"))
    samples = sum(len(r.samples) for r in estimate.requests)
    echo(
        f"\n{len(estimate.requests):,} requests for {samples:,} samples of {len(tasks):,} tasks "
        f"to {config.provider}:{config.model}"
    )
    echo(f"input tokens: {estimate.input_tokens:,} ({estimate.token_method})")
    echo(
        f"output tokens: at most {estimate.max_output_tokens:,} "
        f"(max_new_tokens {config.params.max_new_tokens or 0:,} per sample)"
    )
    prices = estimate.prices
    if prices is None or estimate.input_cost is None or estimate.max_output_cost is None:
        echo(f"cost: unknown ({estimate.price_source})")
        return
    echo(
        f"prices: ${prices.input:g} in / ${prices.output:g} out per million tokens "
        f"({estimate.price_source})"
    )
    echo(
        f"cost: ${estimate.input_cost:.4f} input + at most ${estimate.max_output_cost:.4f} "
        f"output = at most ${estimate.input_cost + estimate.max_output_cost:.4f}"
    )
