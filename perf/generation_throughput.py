"""How close generation gets to the rate-limit-bound minimum.

A fake OpenAI server on 127.0.0.1 answers every request after a fixed latency (default 2 s);
passbench's openai provider (the real `openai` SDK) generates N samples under a requests/minute
limit. The fastest any client can go is N / limit minutes; a sequential client needs N x latency.

    .venv/bin/python perf/generation_throughput.py            # 1,140 samples, 600/min, 2 s
    .venv/bin/python perf/generation_throughput.py --samples 200 --latency 0.5
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.stages.providers.servers.openai_fake import OpenAIFake

from passbench.core.records import Prompt
from passbench.stages.providers import ModelRunner, create_provider, load_model_config


async def measure(
    samples: int, rpm: float, latency: float, concurrency: int
) -> tuple[float, int, int]:
    server = OpenAIFake(latency_s=latency)
    try:
        config = load_model_config(
            "bench-model",
            flags={
                "provider": "openai",
                "base_url": f"{server.url}/v1",
                "requests_per_minute": rpm,
                "concurrency": concurrency,
                "max_new_tokens": 512,
            },
        )
        provider = create_provider(config, {})
        runner = ModelRunner(provider, config)
        prompts = [
            Prompt(
                task_id=f"Bench/{i}",
                split="instruct",
                text=f"task {i}",
                messages=({"role": "user", "content": f"task {i}"},),
            )
            for i in range(samples)
        ]
        started = time.perf_counter()
        completions = await runner.generate(prompts, n_samples=1)
        elapsed = time.perf_counter() - started
        await provider.aclose()
        return elapsed, len(completions), server.max_in_flight
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=1140)
    parser.add_argument("--rpm", type=float, default=600.0, help="requests per minute limit")
    parser.add_argument(
        "--latency", type=float, default=2.0, help="seconds the server takes per request"
    )
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()

    elapsed, done, peak = asyncio.run(
        measure(args.samples, args.rpm, args.latency, args.concurrency)
    )
    bound = args.samples / args.rpm * 60.0
    sequential = args.samples * args.latency
    print(f"samples generated      : {done}")
    print(f"wall time              : {elapsed:.1f} s ({elapsed / 60:.2f} min)")
    print(f"rate-limit-bound minimum: {bound:.1f} s ({bound / 60:.2f} min)")
    print(f"sequential client       : {sequential:.0f} s ({sequential / 60:.1f} min)")
    print(f"overhead over the bound : {elapsed - bound:.1f} s; peak requests in flight: {peak}")


if __name__ == "__main__":
    main()
