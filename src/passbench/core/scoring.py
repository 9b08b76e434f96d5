"""Scoring: pass@k and the statistics around it. Pure functions, no I/O."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimator of pass@k for one task: 1 - C(n-c, k) / C(n, k).

    n samples, c of them correct (Chen et al. 2021). Computed as a product to stay exact and
    stable for large n.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Mean pass@k over tasks given (n, c) per task."""
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values:
        return math.nan
    return sum(values) / len(values)


def pass_at_k_table(counts: Mapping[str, tuple[int, int]], ks: Iterable[int]) -> dict[str, float]:
    """{"pass@k": mean} for every k not above the smallest number of samples per task."""
    if not counts:
        return {}
    smallest = min(n for n, _ in counts.values())
    return {
        f"pass@{k}": mean_pass_at_k(counts.values(), k)
        for k in sorted(set(ks))
        if 1 <= k <= smallest
    }


# --- confidence intervals and paired tests ---------------------------------------------------
#
# Everything below is pure Python (math, random, fractions) so passbench keeps its light core
# dependencies. The bootstrap uses numpy when it is importable, only because it is ~50x faster;
# both engines are seeded and reproducible, and the result records which engine drew it.

DEFAULT_RESAMPLES = 2000  # percentile intervals need ~2000 resamples to settle (Efron & Tibshirani)
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE = 0.95


def per_task_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> list[float]:
    """pass@k of each task, in the order given, from (n, c) per task."""
    return [pass_at_k(n, c, k) for n, c in counts]


def regularized_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b), the CDF of Beta(a, b) at x.

    Continued fraction with the modified Lentz method (Numerical Recipes 6.4); it converges
    quickly on the side of the mode it is used on, the other side comes from symmetry.
    """
    if a <= 0 or b <= 0:
        raise ValueError(f"need a > 0 and b > 0, got a={a}, b={b}")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(1.0 - x, b, a) / b


def _beta_continued_fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for x={x}, a={a}, b={b}")


def beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b), by bisection on its CDF (monotone, so always converges)."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"need 0 <= q <= 1, got {q}")
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        if regularized_beta(middle, a, b) < q:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def clopper_pearson(
    successes: int, trials: int, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """Exact (Clopper-Pearson) binomial confidence interval for successes / trials.

    Conservative: it covers the true rate at least `confidence` of the time. Fits pass@1 with
    one sample per task, where the tasks passed are a binomial count.
    """
    if trials <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    alpha = 1.0 - confidence
    low = 0.0 if successes == 0 else beta_quantile(alpha / 2, successes, trials - successes + 1)
    high = (
        1.0
        if successes == trials
        else beta_quantile(1 - alpha / 2, successes + 1, trials - successes)
    )
    return (low, high)


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts.

    Under the null both kinds of discordant pair are equally likely, so the smaller count is
    Binomial(b + c, 1/2); the p-value doubles its lower tail (exact, with integer arithmetic).
    """
    if only_first < 0 or only_second < 0:
        raise ValueError("discordant counts must be non-negative")
    total = only_first + only_second
    if total == 0:
        return 1.0
    smaller = min(only_first, only_second)
    tail = sum(math.comb(total, i) for i in range(smaller + 1))
    return min(1.0, float(Fraction(2 * tail, 2**total)))


@dataclass(frozen=True)
class Interval:
    """A confidence interval and how it was computed."""

    low: float
    high: float
    method: str  # "bootstrap-percentile", "clopper-pearson"
    confidence: float = DEFAULT_CONFIDENCE
    resamples: int = 0
    seed: int | None = None
    engine: str = ""  # "numpy" or "python" for the bootstrap

    def as_list(self) -> list[float]:
        return [self.low, self.high]


def bootstrap_means(
    columns: Mapping[str, Sequence[float]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    engine: str = "auto",
) -> dict[str, Interval]:
    """Percentile bootstrap intervals for the mean of each column, resampling rows (tasks).

    All columns are resampled with the same row indices, so statistics that share tasks
    (pass@1 and pass@5, or a paired difference) stay consistent with each other.
    `engine`: "auto" (numpy when importable), "numpy" or "python".
    """
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns differ in length: {sorted(lengths)}")
    if resamples < 1:
        raise ValueError(f"need at least one resample, got {resamples}")
    size = lengths.pop() if lengths else 0
    chosen = _choose_engine(engine)
    if size == 0:
        return {
            name: Interval(math.nan, math.nan, "bootstrap-percentile", confidence, 0, seed, chosen)
            for name in columns
        }
    if chosen == "numpy":
        replicates = _bootstrap_numpy(columns, size, resamples, seed)
    else:
        replicates = _bootstrap_python(columns, size, resamples, seed)
    alpha = 1.0 - confidence
    return {
        name: Interval(
            # Rounded to 12 places: a mean that is exactly 0 in theory can come out as 1e-17,
            # which would otherwise read as "the interval excludes zero".
            round(_quantile(sorted(values), alpha / 2), 12),
            round(_quantile(sorted(values), 1 - alpha / 2), 12),
            "bootstrap-percentile",
            confidence,
            resamples,
            seed,
            chosen,
        )
        for name, values in replicates.items()
    }


def _choose_engine(engine: str) -> str:
    if engine not in ("auto", "numpy", "python"):
        raise ValueError(f"unknown bootstrap engine {engine!r}: use auto, numpy or python")
    if engine == "python":
        return "python"
    try:
        import numpy  # noqa: F401
    except ImportError:
        if engine == "numpy":
            raise
        return "python"
    return "numpy"


def _bootstrap_python(
    columns: Mapping[str, Sequence[float]], size: int, resamples: int, seed: int
) -> dict[str, list[float]]:
    rng = random.Random(seed)
    indices = range(size)
    getters = {name: list(values).__getitem__ for name, values in columns.items()}
    replicates: dict[str, list[float]] = {name: [] for name in columns}
    for _ in range(resamples):
        drawn = rng.choices(indices, k=size)
        for name, getter in getters.items():
            replicates[name].append(sum(map(getter, drawn)) / size)
    return replicates


def _bootstrap_numpy(
    columns: Mapping[str, Sequence[float]], size: int, resamples: int, seed: int
) -> dict[str, list[float]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    arrays = {name: np.asarray(values, dtype=np.float64) for name, values in columns.items()}
    replicates: dict[str, list[float]] = {name: [] for name in columns}
    # Chunks keep the index matrix to a few MB whatever the number of tasks.
    chunk = max(1, 2_000_000 // size)
    done = 0
    while done < resamples:
        rows = min(chunk, resamples - done)
        drawn = rng.integers(0, size, size=(rows, size))
        for name, array in arrays.items():
            replicates[name].extend(array[drawn].mean(axis=1).tolist())
        done += rows
    return replicates


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default 'linear' method)."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    fraction = position - below
    return ordered[below] + (ordered[above] - ordered[below]) * fraction


def pass_at_k_intervals(
    counts: Mapping[str, tuple[int, int]],
    ks: Iterable[int],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    engine: str = "auto",
) -> dict[str, Interval]:
    """Bootstrap-over-tasks interval for each pass@k that pass_at_k_table reports."""
    if not counts:
        return {}
    smallest = min(n for n, _ in counts.values())
    columns = {
        f"pass@{k}": per_task_pass_at_k(counts.values(), k)
        for k in sorted(set(ks))
        if 1 <= k <= smallest
    }
    return bootstrap_means(
        columns, resamples=resamples, confidence=confidence, seed=seed, engine=engine
    )
