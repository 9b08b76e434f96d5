"""pass@k and the statistics around it, checked against closed forms and scipy."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from passbench.core import scoring
from passbench.core.scoring import (
    bootstrap_means,
    clopper_pearson,
    mcnemar_exact,
    mean_pass_at_k,
    pass_at_k,
    pass_at_k_intervals,
    pass_at_k_table,
    regularized_beta,
)


def closed_form(n: int, c: int, k: int) -> Fraction:
    """1 - C(n-c, k) / C(n, k), exactly."""
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@st.composite
def n_c_k(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 200))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


# --- pass@k ---------------------------------------------------------------------------------


@given(n_c_k())
def test_pass_at_k_matches_the_closed_form(values: tuple[int, int, int]) -> None:
    n, c, k = values
    assert pass_at_k(n, c, k) == pytest.approx(float(closed_form(n, c, k)), abs=1e-12)


@given(n_c_k())
def test_pass_at_k_is_a_probability(values: tuple[int, int, int]) -> None:
    assert 0.0 <= pass_at_k(*values) <= 1.0


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_at_1_is_the_share_of_correct_samples(values: tuple[int, int]) -> None:
    n, c = values
    assert pass_at_k(n, c, 1) == pytest.approx(c / n, abs=1e-12)


@given(n_c_k())
def test_pass_at_k_is_one_when_every_draw_contains_a_correct_sample(
    values: tuple[int, int, int],
) -> None:
    n, c, k = values
    if n - c < k:
        assert pass_at_k(n, c, k) == 1.0


@given(n_c_k())
def test_pass_at_k_grows_with_k(values: tuple[int, int, int]) -> None:
    n, c, k = values
    if k < n:
        assert pass_at_k(n, c, k + 1) >= pass_at_k(n, c, k) - 1e-12


@given(n_c_k())
def test_pass_at_k_grows_with_correct_samples(values: tuple[int, int, int]) -> None:
    n, c, k = values
    if c < n:
        assert pass_at_k(n, c + 1, k) >= pass_at_k(n, c, k) - 1e-12


def test_pass_at_k_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError):
        pass_at_k(5, 2, 6)


def test_pass_at_k_table_skips_k_above_the_smallest_sample_count() -> None:
    counts = {"a": (10, 3), "b": (5, 5)}
    table = pass_at_k_table(counts, [1, 5, 10])
    assert set(table) == {"pass@1", "pass@5"}
    assert table["pass@1"] == pytest.approx((0.3 + 1.0) / 2)
    assert table["pass@5"] == pytest.approx((float(closed_form(10, 3, 5)) + 1.0) / 2)
    assert math.isnan(mean_pass_at_k([], 1))


# --- exact intervals and tests --------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "a", "b"),
    [(0.3, 2.0, 5.0), (0.5, 0.5, 0.5), (0.999, 600.0, 541.0), (0.01, 1.0, 1140.0), (0.7, 30, 3)],
)
def test_regularized_beta_matches_scipy(x: float, a: float, b: float) -> None:
    assert regularized_beta(x, a, b) == pytest.approx(special.betainc(a, b, x), abs=1e-12)


@pytest.mark.parametrize(
    ("successes", "trials"),
    [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (1, 1140), (570, 1140), (1139, 1140), (75, 148)],
)
def test_clopper_pearson_matches_scipy(successes: int, trials: int) -> None:
    expected = stats.binomtest(successes, trials).proportion_ci(0.95, method="exact")
    low, high = clopper_pearson(successes, trials)
    assert low == pytest.approx(expected.low, abs=1e-10)
    assert high == pytest.approx(expected.high, abs=1e-10)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_clopper_pearson_matches_the_beta_quantiles(
    values: tuple[int, int], confidence: float
) -> None:
    successes, trials = values
    alpha = 1 - confidence
    low, high = clopper_pearson(successes, trials, confidence)
    expected_low = (
        0.0 if successes == 0 else stats.beta.ppf(alpha / 2, successes, trials - successes + 1)
    )
    expected_high = (
        1.0
        if successes == trials
        else stats.beta.ppf(1 - alpha / 2, successes + 1, trials - successes)
    )
    assert low == pytest.approx(expected_low, abs=1e-9)
    assert high == pytest.approx(expected_high, abs=1e-9)
    assert low <= successes / trials <= high


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_exact_matches_scipy_binomtest(only_first: int, only_second: int) -> None:
    total = only_first + only_second
    expected = 1.0 if total == 0 else stats.binomtest(only_first, total, 0.5).pvalue
    assert mcnemar_exact(only_first, only_second) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_mcnemar_exact_is_symmetric_and_one_for_balanced_counts() -> None:
    assert mcnemar_exact(3, 11) == mcnemar_exact(11, 3)
    assert mcnemar_exact(7, 7) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)


# --- bootstrap ------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["python", "numpy"])
def test_bootstrap_is_reproducible_with_a_seed(engine: str) -> None:
    values = [float(i % 3 == 0) for i in range(200)]
    first = bootstrap_means({"x": values}, seed=7, engine=engine, resamples=500)["x"]
    again = bootstrap_means({"x": values}, seed=7, engine=engine, resamples=500)["x"]
    other = bootstrap_means({"x": values}, seed=8, engine=engine, resamples=500)["x"]
    assert (first.low, first.high) == (again.low, again.high)
    assert (first.low, first.high) != (other.low, other.high)
    assert first.engine == engine and first.seed == 7 and first.resamples == 500


@pytest.mark.parametrize("engine", ["python", "numpy"])
def test_bootstrap_interval_agrees_with_the_normal_approximation(engine: str) -> None:
    """For a mean of 1,000 Bernoulli(0.3) values the percentile interval is close to
    p ± 1.96 sqrt(p(1-p)/n); the bootstrap's Monte Carlo error stays well inside 0.006."""
    values = [1.0] * 300 + [0.0] * 700
    interval = bootstrap_means({"x": values}, engine=engine, resamples=4000)["x"]
    half_width = 1.959964 * math.sqrt(0.3 * 0.7 / 1000)
    assert interval.low == pytest.approx(0.3 - half_width, abs=0.006)
    assert interval.high == pytest.approx(0.3 + half_width, abs=0.006)


def test_bootstrap_of_a_constant_column_is_a_point() -> None:
    interval = bootstrap_means({"x": [0.25] * 50}, engine="python", resamples=100)["x"]
    assert interval.low == pytest.approx(0.25) and interval.high == pytest.approx(0.25)


def test_bootstrap_keeps_columns_paired() -> None:
    """The same rows are drawn for every column, so identical columns get identical bounds."""
    values = [0.0, 0.2, 0.9, 1.0, 0.4, 0.4, 0.7]
    result = bootstrap_means({"a": values, "b": list(values)}, engine="python", resamples=300)
    assert (result["a"].low, result["a"].high) == (result["b"].low, result["b"].high)


def test_bootstrap_rejects_ragged_columns_and_handles_empty_input() -> None:
    with pytest.raises(ValueError):
        bootstrap_means({"a": [1.0], "b": [1.0, 0.0]})
    empty = bootstrap_means({"a": []})["a"]
    assert math.isnan(empty.low) and math.isnan(empty.high)


def test_pass_at_k_intervals_cover_the_estimate() -> None:
    counts = {f"t{i}": (10, i % 11) for i in range(60)}
    table = pass_at_k_table(counts, [1, 5, 10])
    intervals = pass_at_k_intervals(counts, [1, 5, 10, 20], engine="python", resamples=400)
    assert set(intervals) == set(table)
    for key, interval in intervals.items():
        assert interval.low <= table[key] <= interval.high
        assert interval.method == "bootstrap-percentile"


def test_default_bootstrap_settings_are_documented_values() -> None:
    assert scoring.DEFAULT_SEED == 0
    assert scoring.DEFAULT_RESAMPLES == 2000
