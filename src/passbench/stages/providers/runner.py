"""The machinery around providers, written once: concurrency, rate limits, retries, timeouts,
the response cache, usage and cost, progress, and the Completion records.

    runner = ModelRunner(provider, config, cache=ResponseCache(path), progress=progress)
    async for completion in runner.iter_completions(prompts, n_samples=5):
        ...                                 # in the order they finish
    runner.usage                            # tokens, cost, requests, retries so far

A PermanentProviderError (bad key, unknown model, a 400 that is not about a parameter) stops
the whole run at once; samples already answered stay in the cache, so a re-run resumes.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from passbench.core.errors import PermanentProviderError, ProviderError
from passbench.core.progress import NullProgress, Progress
from passbench.core.records import Completion, Prompt, Usage
from passbench.stages.providers.base import (
    Capabilities,
    Choice,
    GenerationParams,
    Provider,
    ProviderCallError,
    ProviderRequest,
    ProviderResponse,
)
from passbench.stages.providers.cache import CachedSample, ResponseCache, cache_key
from passbench.stages.providers.config import ModelConfig
from passbench.stages.providers.failures import classify
from passbench.stages.providers.ratelimit import RateLimiter
from passbench.stages.providers.reasoning import separate
from passbench.stages.providers.retry import RetryPolicy


@dataclass
class UsageTotals:
    """What a run has cost so far. Cached samples cost nothing and are counted apart."""

    requests: int = 0
    samples: int = 0  # generated in this run
    cached_samples: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # None when no price is known
    retries: int = 0
    rate_limited: int = 0
    dropped_params: set[str] = field(default_factory=set)

    def summary(self) -> str:
        """One line for a progress bar."""
        text = f"{self.input_tokens:,} in / {self.output_tokens:,} out tok"
        if self.cost_usd is not None:
            text += f", ${self.cost_usd:.4f}"
        if self.cached_samples:
            text += f", {self.cached_samples} cached"
        return text


def _estimate_tokens(request: ProviderRequest) -> int:
    """A rough token count for the tokens-per-minute bucket, corrected after the response."""
    chars = len(request.text) + sum(len(m.get("content", "")) for m in request.messages)
    output = (request.params.max_new_tokens or 0) * request.n
    return chars // 4 + output + 1


def _split_usage(total: int, parts: int) -> list[int]:
    """Spread a call's token count over its samples so the samples add up to the call."""
    share, rest = divmod(total, parts)
    return [share + (1 if index < rest else 0) for index in range(parts)]


class _Stopped(Exception):
    """Raised in workers after another worker hit a permanent error: start nothing new."""


@dataclass(frozen=True)
class _Job:
    """Samples `indices` of one prompt, still to generate."""

    prompt: Prompt
    request: ProviderRequest  # with n and seed filled in per call
    keys: Mapping[int, str]  # sample index -> cache key
    indices: tuple[int, ...]


class ModelRunner:
    """Runs a provider over many prompts and samples, with all the shared machinery."""

    def __init__(
        self,
        provider: Provider,
        config: ModelConfig,
        *,
        cache: ResponseCache | None = None,
        progress: Progress | None = None,
        retry: RetryPolicy | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.provider = provider
        self.config = config
        self.capabilities: Capabilities = config.apply_capabilities(provider.capabilities)
        self.cache = cache
        self.progress: Progress = progress or NullProgress()
        self.usage = UsageTotals(cost_usd=0.0 if config.prices is not None else None)
        self.retry = retry or RetryPolicy(max_retries=config.max_retries)
        self.limiter = RateLimiter(config.requests_per_minute, config.tokens_per_minute)
        concurrency = config.concurrency or self.capabilities.default_concurrency
        self._semaphore = asyncio.Semaphore(concurrency)
        self._disabled: set[str] = set(config.drop_params)
        self._rng = rng or random.Random()
        self._warned: set[str] = set()
        self._stopped = False
        self.params, dropped = self._supported_params(config.params)
        for name in dropped:
            self._warn_once(
                f"capability:{name}",
                f"{provider.name} model {provider.model} does not take '{name}'; not sending it",
            )
        self._dropped_by_capability = dropped
        timeout = config.timeout_s if config.timeout_s is not None else None
        self.timeout_s = timeout if timeout is not None else self.capabilities.default_timeout_s

    # ---- public API ---------------------------------------------------------------------

    async def iter_completions(
        self, prompts: Sequence[Prompt], n_samples: int = 1, *, first_index: int = 0
    ) -> AsyncIterator[Completion]:
        """Yield each sample's Completion as soon as it exists (cached ones first). The samples
        of each prompt are numbered from `first_index` (a follow-up request continues one
        sample's own conversation, and keeps its index, its seed and its cache key)."""
        if n_samples < 1:
            raise ValueError("n_samples must be at least 1")
        self.progress.start(len(prompts) * n_samples, f"{self.provider.name}:{self.provider.model}")
        queue: asyncio.Queue[Completion | BaseException | None] = asyncio.Queue()
        jobs: list[_Job] = []
        try:
            for prompt in prompts:
                cached, job = self._plan(prompt, n_samples, first_index)
                for completion in cached:
                    self.usage.cached_samples += 1
                    yield completion
                if cached:
                    self.progress.advance(len(cached), info=self.usage.summary())
                if job is not None:
                    jobs.extend(self._chunks(job))
            if not jobs:
                return
            async for completion in self._drain(jobs, queue):
                yield completion
        finally:
            self.progress.finish()

    async def generate(self, prompts: Sequence[Prompt], n_samples: int = 1) -> list[Completion]:
        """All completions, ordered by prompt then sample index."""
        order = {prompt.task_id: position for position, prompt in enumerate(prompts)}
        out = [completion async for completion in self.iter_completions(prompts, n_samples)]
        return sorted(out, key=lambda c: (order.get(c.task_id, 0), c.sample_index))

    # ---- planning -----------------------------------------------------------------------

    def _supported_params(
        self, params: GenerationParams
    ) -> tuple[GenerationParams, tuple[str, ...]]:
        dropped = self.capabilities.unsupported(params)
        cleared: dict[str, Any] = {name: None for name in dropped if name != "stop"}
        if "stop" in dropped:
            cleared["stop"] = ()
        return replace(params, **cleared), dropped

    def _request_for(self, prompt: Prompt) -> ProviderRequest:
        prefix = prompt.response_prefix
        if prefix and not self.capabilities.prefill:
            self._warn_once(
                "prefill",
                f"{self.provider.name} model {self.provider.model} cannot continue an assistant "
                "prefix; sending the prompt without it",
            )
            prefix = ""
        return ProviderRequest(
            text=prompt.text,
            messages=tuple(prompt.messages),
            response_prefix=prefix,
            params=self.params,
            timeout_s=self.timeout_s,
        )

    def _plan(
        self, prompt: Prompt, n_samples: int, first_index: int = 0
    ) -> tuple[list[Completion], _Job | None]:
        request = self._request_for(prompt)
        prompt_key = {
            "text": request.text,
            "messages": [dict(m) for m in request.messages],
            "response_prefix": request.response_prefix,
        }
        key_params = {
            **self.config.params.as_dict(),
            "options": dict(self.config.options),
        }
        keys = {
            index: cache_key(
                provider=self.provider.name,
                endpoint=self.config.base_url or "",
                model=self.provider.model,
                params=key_params,
                prompt=prompt_key,
                sample_index=index,
            )
            for index in range(first_index, first_index + n_samples)
        }
        cached: list[Completion] = []
        missing: list[int] = []
        for index, key in keys.items():
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is None:
                missing.append(index)
            else:
                cached.append(self._from_cache(prompt, index, hit))
        job = _Job(prompt, request, keys, tuple(missing)) if missing else None
        return cached, job

    def _chunks(self, job: _Job) -> Iterable[_Job]:
        size = max(1, self.capabilities.max_n)
        if self.config.samples_per_request is not None:
            size = min(size, self.config.samples_per_request)
        for start in range(0, len(job.indices), size):
            yield replace(job, indices=job.indices[start : start + size])

    # ---- running ------------------------------------------------------------------------

    async def _drain(
        self, jobs: list[_Job], queue: asyncio.Queue[Completion | BaseException | None]
    ) -> AsyncIterator[Completion]:
        async def worker(job: _Job) -> None:
            try:
                for completion in await self._run_job(job):
                    queue.put_nowait(completion)
            except _Stopped:
                pass
            except BaseException as error:
                queue.put_nowait(error)
                if not isinstance(error, Exception):
                    raise
            finally:
                queue.put_nowait(None)

        tasks = [asyncio.create_task(worker(job)) for job in jobs]
        remaining = len(tasks)
        try:
            while remaining:
                item = await queue.get()
                if item is None:
                    remaining -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    yield item
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _run_job(self, job: _Job) -> list[Completion]:
        """Generate every sample in `job`, asking again for any the server left out."""
        done: list[Completion] = []
        pending = list(job.indices)
        while pending:
            request = replace(
                job.request,
                n=len(pending),
                params=self._seeded(job.request.params, pending[0]),
            )
            async with self._semaphore:
                if self._stopped:
                    raise _Stopped
                response, latency = await self._call(request, job.prompt.task_id)
            choices = response.choices[: len(pending)]
            if not choices:
                raise ProviderError(
                    f"{self.provider.name} model {self.provider.model} returned no output "
                    f"for {job.prompt.task_id}"
                )
            indices, pending = pending[: len(choices)], pending[len(choices) :]
            done.extend(self._record(job, indices, response, latency))
        return done

    def _seeded(self, params: GenerationParams, first_index: int) -> GenerationParams:
        # Samples of one prompt must differ yet be reproducible: offset the seed by the index.
        if params.seed is None:
            return params
        return replace(params, seed=params.seed + first_index)

    async def _call(self, request: ProviderRequest, task_id: str) -> tuple[ProviderResponse, float]:
        """One call with rate limiting, timeout, and retries; returns (response, latency)."""
        attempt = 0
        while True:
            if self._stopped:
                raise _Stopped
            request = replace(request, disabled=frozenset(self._disabled))
            estimate = _estimate_tokens(request)
            await self.limiter.acquire(estimate)
            started = time.monotonic()
            try:
                response = await self._with_timeout(request)
            except ProviderCallError as error:
                verdict = classify(error)
                self.limiter.settle(estimate, 0)
                if verdict == "rejected" and error.rejected_param not in self._disabled:
                    param = str(error.rejected_param)
                    self._disabled.add(param)
                    self.usage.dropped_params.add(param)
                    self.progress.warn(
                        f"{self.provider.name} model {self.provider.model} rejects '{param}' "
                        f"({error.bare_message}); retrying without it"
                    )
                    continue
                if verdict in ("rejected", "permanent"):
                    self._stopped = True  # before the semaphore is released to the next worker
                    raise PermanentProviderError(
                        f"{self.provider.name} model {self.provider.model} ({task_id}): {error}"
                    ) from error
                attempt += 1
                if attempt > self.retry.max_retries:
                    raise ProviderError(
                        f"{self.provider.name} model {self.provider.model} ({task_id}): "
                        f"giving up after {attempt} tries: {error}"
                    ) from error
                self.usage.retries += 1
                if verdict == "rate_limit":
                    self.usage.rate_limited += 1
                delay = self.retry.delay(attempt, retry_after_s=error.retry_after_s, rng=self._rng)
                if verdict == "rate_limit":
                    self.limiter.pause(delay)  # everyone waits, not just this request
                self.progress.warn(f"{error}; retry {attempt} in {delay:.1f}s")
                await asyncio.sleep(delay)
                continue
            latency = time.monotonic() - started
            self.usage.requests += 1
            self.limiter.settle(estimate, response.input_tokens + response.output_tokens)
            return response, latency

    async def _with_timeout(self, request: ProviderRequest) -> ProviderResponse:
        if self.timeout_s is None:
            return await self.provider.generate(request)
        # The SDK gets the same timeout; this is the backstop for one that does not honour it.
        try:
            return await asyncio.wait_for(self.provider.generate(request), self.timeout_s + 5.0)
        except asyncio.TimeoutError:
            raise ProviderCallError(
                f"no answer within {self.timeout_s:g}s", kind="timeout"
            ) from None

    # ---- records ------------------------------------------------------------------------

    def _cost(self, input_tokens: int, output_tokens: int) -> float | None:
        prices = self.config.prices
        return prices.cost(input_tokens, output_tokens) if prices is not None else None

    def _params_record(
        self, request: ProviderRequest, response: ProviderResponse
    ) -> dict[str, Any]:
        record: dict[str, Any] = request.params.as_dict()
        if self._dropped_by_capability:
            record["unsupported"] = list(self._dropped_by_capability)
        if request.disabled:
            record["rejected_by_server"] = sorted(request.disabled)
        if request.response_prefix:
            record["response_prefix"] = request.response_prefix
        record["sent"] = dict(response.sent)
        return record

    def _record(
        self,
        job: _Job,
        indices: list[int],
        response: ProviderResponse,
        latency: float,
    ) -> list[Completion]:
        count = len(indices)
        inputs = [response.input_tokens] + [0] * (count - 1)  # the prompt is paid for once
        outputs = _split_usage(response.output_tokens, count)
        params = self._params_record(
            replace(job.request, disabled=frozenset(self._disabled)), response
        )
        model = response.model or self.provider.model
        completions: list[Completion] = []
        rows: list[tuple[str, CachedSample]] = []
        for position, index in enumerate(indices):
            choice = separate(response.choices[position])
            cost = self._cost(inputs[position], outputs[position])
            completion = Completion(
                task_id=job.prompt.task_id,
                sample_index=index,
                text=choice.answer,
                model=model,
                provider=self.provider.name,
                params=params,
                usage=Usage(inputs[position], outputs[position], cost),
                latency_s=latency,
                finish_reason=response.choices[position].finish_reason,
                reasoning=choice.reasoning,
                truncated=choice.truncated,
            )
            completions.append(completion)
            rows.append((job.keys[index], self._to_cache(completion)))
        if self.cache is not None:
            self.cache.put_many(rows)
        self.usage.samples += count
        self.usage.input_tokens += response.input_tokens
        self.usage.output_tokens += response.output_tokens
        call_cost = self._cost(response.input_tokens, response.output_tokens)
        if call_cost is not None and self.usage.cost_usd is not None:
            self.usage.cost_usd += call_cost
        self.progress.advance(count, info=self.usage.summary())
        return completions

    @staticmethod
    def _to_cache(completion: Completion) -> CachedSample:
        return CachedSample(
            text=completion.text,
            finish_reason=completion.finish_reason,
            model=completion.model,
            params=dict(completion.params),
            input_tokens=completion.usage.input_tokens,
            output_tokens=completion.usage.output_tokens,
            cost_usd=completion.usage.cost_usd,
            latency_s=completion.latency_s,
            reasoning=completion.reasoning,
            truncated=completion.truncated,
        )

    def _from_cache(self, prompt: Prompt, index: int, hit: CachedSample) -> Completion:
        # a row cached before thinking was kept apart still has it inline: separate it now
        # (a no-op on newer rows, whose text is the answer alone)
        choice = separate(
            Choice(text=hit.text, finish_reason=hit.finish_reason, reasoning=hit.reasoning)
        )
        return Completion(
            task_id=prompt.task_id,
            sample_index=index,
            text=choice.answer,
            model=hit.model,
            provider=self.provider.name,
            params=hit.params,
            usage=Usage(hit.input_tokens, hit.output_tokens, hit.cost_usd),
            latency_s=hit.latency_s,
            finish_reason=hit.finish_reason,
            reasoning=choice.reasoning,
            truncated=hit.truncated or choice.truncated,
        )

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.progress.warn(message)


async def generate_completions(
    provider: Provider,
    config: ModelConfig,
    prompts: Sequence[Prompt],
    *,
    n_samples: int = 1,
    cache: ResponseCache | None = None,
    progress: Progress | None = None,
) -> tuple[list[Completion], UsageTotals]:
    """Convenience: run `prompts` through `provider`, closing it afterwards."""
    runner = ModelRunner(provider, config, cache=cache, progress=progress)
    try:
        completions = await runner.generate(prompts, n_samples)
    finally:
        await provider.aclose()
    return completions, runner.usage
