"""What inspect reports: recomputed scores, failures, breakdowns, filters and task detail."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy import stats

from passbench.analysis.report.analysis import (
    Options,
    filter_tasks,
    inspect_run,
    task_detail,
    trim_traceback,
)
from passbench.analysis.report.domains import DOMAINS, LIBRARY_DOMAIN, domain_of, task_domains
from passbench.stages.results import RunResults
from passbench.stages.results.taskinfo import TaskCatalog

FAST = Options(resamples=500, engine="python")


def exact_pass_at_k(n: int, c: int, k: int) -> float:
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def test_official_summary(official_run: RunResults, catalog: TaskCatalog) -> None:
    inspection = inspect_run(official_run, catalog, FAST)
    summary = inspection.summary
    assert summary.pass_at_k == {"pass@1": pytest.approx(6 / 14)}
    assert summary.n_tasks == 14 and summary.samples_per_task == {1: 14}
    expected = stats.binomtest(6, 14).proportion_ci(0.95, method="exact")
    assert summary.exact_pass_at_1 is not None
    assert summary.exact_pass_at_1.low == pytest.approx(expected.low, abs=1e-9)
    assert summary.exact_pass_at_1.high == pytest.approx(expected.high, abs=1e-9)
    interval = summary.intervals["pass@1"]
    assert interval.low <= 6 / 14 <= interval.high
    # a Hard run: every Hard task it lacks is missing, and nothing else
    assert len(summary.missing_tasks) == len(catalog.hard_ids) - 14
    assert set(summary.missing_tasks) <= catalog.hard_ids
    assert summary.gt_pass_rate == 1.0
    assert summary.categories_from == "tracebacks"
    assert summary.isolation is None and summary.origin == "official"
    assert any("pass@5, pass@10 not computed" in note for note in summary.notes)


def test_passbench_summary_recomputes_pass_at_k(our_run: RunResults, catalog: TaskCatalog) -> None:
    options = Options(ks=(1, 2, 5), resamples=500, engine="python")
    summary = inspect_run(our_run, catalog, options).summary
    counts = our_run.counts()
    for k in (1, 2, 5):
        expected = sum(exact_pass_at_k(n, c, k) for n, c in counts.values()) / len(counts)
        assert summary.pass_at_k[f"pass@{k}"] == pytest.approx(expected, abs=1e-12)
    assert summary.exact_pass_at_1 is None  # five samples a task: no binomial count
    assert summary.stored_pass_at_k["pass@1"] == pytest.approx(summary.pass_at_k["pass@1"])
    assert "BigCodeBench/108" in summary.missing_tasks
    assert summary.dataset_sha256 is not None and summary.dataset_sha256.startswith("5d5d0bd4")
    assert summary.isolation == "bubblewrap" and summary.categories_from == "recorded"
    assert not any("differs" in note for note in summary.notes)


def test_failure_groups_count_samples_and_tasks(our_run: RunResults, catalog: TaskCatalog) -> None:
    groups = {g.label: g for g in inspect_run(our_run, catalog, FAST).failures}
    assert set(groups) == {
        "assertion_failed",
        "exception:KeyError",
        "timeout",
        "import_error",
        "syntax_error",
        "killed",
        "out_of_memory",
        "tampered",
    }
    expected_samples = sum(
        1
        for samples in our_run.tasks.values()
        for s in samples
        if s.category is not None and s.category.value == "assertion_failed"
    )
    assert groups["assertion_failed"].samples == expected_samples
    assert groups["timeout"].tasks == 2 and groups["timeout"].examples == (
        "BigCodeBench/17",
        "BigCodeBench/101",
    )
    assert groups["killed"].example_message == "killed by signal 9 (SIGKILL)"


def test_breakdowns_by_library_domain_and_hard(
    official_run: RunResults, catalog: TaskCatalog
) -> None:
    inspection = inspect_run(official_run, catalog, FAST)
    libraries = {s.name: s for s in inspection.by_library}
    seaborn_tasks = [t for t in official_run.tasks if "seaborn" in catalog.tasks[t].libs]
    assert libraries["seaborn"].tasks == len(seaborn_tasks) == 3
    assert libraries["seaborn"].pass_at_1 == 0.0
    domains = {s.name: s for s in inspection.by_domain}
    visual = [
        t for t in official_run.tasks if "visualization" in task_domains(catalog.tasks[t].libs)
    ]
    solved = [t for t in visual if official_run.tasks[t][0].passed]
    assert domains["visualization"].tasks == len(visual)
    assert domains["visualization"].pass_at_1 == pytest.approx(len(solved) / len(visual))
    assert inspection.hard_subset is None  # the run is all Hard tasks: no subset to single out


def test_hard_subset_inside_a_full_run(catalog: TaskCatalog) -> None:
    from passbench.stages.results import SampleResult

    hard = sorted(catalog.hard_ids)[:3]
    other = [
        t
        for t in ("BigCodeBench/0", "BigCodeBench/1", "BigCodeBench/2")
        if t not in catalog.hard_ids
    ]
    tasks = {
        t: (SampleResult(t, 0, "pass" if i == 0 else "fail", "", {}),)
        for i, t in enumerate([*hard, *other])
    }
    run = RunResults(path=__import__("pathlib").Path("x_eval_results.json"), date=None, tasks=tasks)
    inspection = inspect_run(run, catalog, FAST)
    assert inspection.hard_subset is not None
    assert inspection.hard_subset.tasks == 3
    assert inspection.hard_subset.pass_at_1 == pytest.approx(1 / 3)
    assert len(inspection.summary.missing_tasks) == len(catalog.tasks) - len(tasks)


def test_without_task_data_the_report_still_works(official_run: RunResults) -> None:
    inspection = inspect_run(official_run, TaskCatalog(note="no data"), FAST)
    assert inspection.by_library == () and inspection.by_domain == ()
    assert inspection.summary.missing_tasks == ()
    assert any("no data" in note for note in inspection.summary.notes)


def test_pass_at_k_curve(our_run: RunResults, catalog: TaskCatalog) -> None:
    curve = inspect_run(our_run, catalog, FAST).pass_at_k_curve
    assert [k for k, _ in curve] == [1, 2, 3, 4, 5]
    values = [v for _, v in curve]
    assert values == sorted(values)


def test_filters(official_run: RunResults, catalog: TaskCatalog) -> None:
    rows = inspect_run(official_run, catalog, FAST).tasks
    ids = lambda kept: [row.task_id for row in kept]  # noqa: E731
    assert ids(filter_tasks(rows, statuses=["timeout"])) == ["BigCodeBench/17"]
    assert ids(filter_tasks(rows, categories=["timeout"])) == [
        "BigCodeBench/17",
        "BigCodeBench/101",
    ]
    assert ids(filter_tasks(rows, categories=["KeyError"])) == ["BigCodeBench/37"]
    assert ids(filter_tasks(rows, categories=["exception"])) == [
        "BigCodeBench/37",
        "BigCodeBench/92",
    ]
    assert ids(filter_tasks(rows, categories=["exception:ValueError"])) == ["BigCodeBench/92"]
    assert ids(filter_tasks(rows, libs=["seaborn"])) == [
        "BigCodeBench/37",
        "BigCodeBench/99",
        "BigCodeBench/101",
    ]
    assert ids(filter_tasks(rows, statuses=["fail"], libs=["seaborn"])) == ids(
        filter_tasks(rows, libs=["seaborn"])
    )
    assert len(filter_tasks(rows)) == 14


def test_task_detail(our_run: RunResults, catalog: TaskCatalog) -> None:
    inspection = inspect_run(our_run, catalog, FAST)
    detail = task_detail(our_run, inspection, catalog, "BigCodeBench/37")
    assert detail is not None
    assert [s.status for s in detail.samples] == ["fail", "fail", "pass", "fail", "fail"]
    assert detail.samples[0].label == "exception:KeyError"
    assert [name for name, _ in detail.samples[0].failing_tests] == ["test_case_1", "test_case_2"]
    assert detail.canonical_solution is not None and "def task_func" in detail.canonical_solution
    assert detail.test is not None and "class TestCases" in detail.test
    assert task_detail(our_run, inspection, catalog, "BigCodeBench/9999") is None


def test_trim_traceback_keeps_the_head_and_the_end() -> None:
    text = "\n".join(f"line {i}" for i in range(100))
    trimmed = trim_traceback(text, lines=10).splitlines()
    assert trimmed[:3] == ["line 0", "line 1", "line 2"]
    assert trimmed[-1] == "line 99" and "cut" in trimmed[3]
    assert trim_traceback("short\n") == "short"


def test_every_library_in_bigcodebench_has_a_domain(catalog: TaskCatalog) -> None:
    libraries = {lib for task in catalog.tasks.values() for lib in task.libs}
    assert libraries <= set(LIBRARY_DOMAIN)
    assert set(LIBRARY_DOMAIN.values()) == set(DOMAINS)
    assert domain_of("not-a-library") == "other"
    assert task_domains(["pandas", "numpy", "flask"]) == ("computation", "network")
