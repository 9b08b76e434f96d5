"""passbench.apps.api, the Python API: `evaluate` and `generate` do what the commands do, with
their defaults and settings, and return records (the real sandbox, real HumanEval tasks, the
fake OpenAI-compatible server through the real SDK)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.stages.providers.servers.canonical_fake import CanonicalChatServer

import passbench
from passbench.core.errors import InputError, SandboxError
from passbench.core.records import Sample
from passbench.stages.benchmarks import DataSettings, get_benchmark

TASKS = ("HumanEval/0", "HumanEval/2", "HumanEval/7")
RIGHT = {
    "HumanEval/0": "def has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
    " for b in numbers[i + 1:])\n",
    "HumanEval/2": "def truncate_number(number):\n    return number % 1.0\n",
    "HumanEval/7": "def filter_by_substring(strings, substring):\n"
    "    return [s for s in strings if substring in s]\n",
}


@pytest.fixture
def environ(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What the API reads instead of os.environ; no passbench.toml from elsewhere."""
    monkeypatch.chdir(tmp_path)
    return {"PASSBENCH_DATA_DIR": str(data_dir), "PASSBENCH_CACHE_DIR": str(tmp_path / "cache")}


@pytest.mark.bwrap
def test_evaluate_samples_in_memory_returns_the_results_it_wrote(
    environ: dict[str, str], tmp_path: Path
) -> None:
    samples = [Sample(task_id=t, solution=code) for t, code in RIGHT.items()]
    samples.append(
        Sample(task_id="HumanEval/2", solution="def truncate_number(x):\n    return x\n")
    )
    results = passbench.evaluate(
        samples, benchmark="humaneval", tasks=list(TASKS), pass_k=[1], environ=environ
    )
    assert isinstance(results, passbench.RunResults)
    written = tmp_path / "results" / "samples_eval_results.json"
    assert results.path.resolve() == written and (tmp_path / "results" / "samples.jsonl").is_file()
    assert results.pass_at_k == pytest.approx({"pass@1": (1 + 0.5 + 1) / 3})
    assert results.pass_at_k == passbench.load_results(written).pass_at_k
    statuses = {t: [s.status for s in samples] for t, samples in results.tasks.items()}
    assert statuses == {
        "HumanEval/0": ["pass"],
        "HumanEval/2": ["pass", "fail"],
        "HumanEval/7": ["pass"],
    }
    assert results.isolation == "bubblewrap" and results.gt_pass_rate == 1.0
    assert results.benchmark == "humaneval" and results.split == "complete"


@pytest.mark.bwrap
def test_evaluate_a_samples_file_and_the_ground_truth_as_the_cli_does(
    environ: dict[str, str], tmp_path: Path
) -> None:
    samples = tmp_path / "model.jsonl"
    samples.write_text(
        "".join(json.dumps({"task_id": t, "solution": c}) + "\n" for t, c in RIGHT.items())
    )
    results = passbench.evaluate(
        str(samples), benchmark="humaneval", id_range=(0, 3), environ=environ
    )
    # beside the samples, as the CLI writes them; tasks without samples are recorded as such
    assert results.path == tmp_path / "model_eval_results.json"
    assert results.pass_at_k == {"pass@1": 1.0}
    assert results.recorded_missing_tasks == ("HumanEval/1",)

    truth = passbench.evaluate(
        ground_truth=True,
        benchmark="humaneval",
        tasks="HumanEval/0, HumanEval/1",
        output_dir=tmp_path / "gt",
        environ=environ,
    )
    assert truth.path == tmp_path / "gt" / "ground_truth.json"
    assert truth.gt_pass_rate == 1.0 and set(truth.tasks) == {"HumanEval/0", "HumanEval/1"}


def test_evaluate_refuses_what_the_cli_refuses(environ: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(InputError, match="exactly one of samples and ground_truth"):
        passbench.evaluate(benchmark="humaneval", environ=environ)
    with pytest.raises(InputError, match="exactly one of samples and ground_truth"):
        passbench.evaluate("s.jsonl", ground_truth=True, environ=environ)
    with pytest.raises(InputError, match="field 'workers': must be at least 0"):
        passbench.evaluate("s.jsonl", workers=-1, environ=environ)
    with pytest.raises(InputError, match="field 'runs': must be at least 1"):
        passbench.evaluate("s.jsonl", runs=0, environ=environ)
    with pytest.raises(InputError, match="field 'epochs': expected an integer"):
        passbench.evaluate("s.jsonl", epochs="two", environ=environ)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="field 'pass_k': expected comma-separated integers"):
        passbench.evaluate("s.jsonl", pass_k="a", environ=environ)
    with pytest.raises(InputError, match="expected LOW-HIGH"):
        passbench.evaluate("s.jsonl", id_range=(3, 1), environ=environ)
    with pytest.raises(InputError, match="no samples given"):
        passbench.evaluate([], benchmark="humaneval", environ=environ)
    # the environment and the config file apply as on the command line: the flag wins
    with pytest.raises(InputError, match="PASSBENCH_WORKERS"):
        passbench.evaluate("s.jsonl", environ={**environ, "PASSBENCH_WORKERS": "many"})
    (tmp_path / "passbench.toml").write_text('[evaluate]\nbackend = "nowhere"\n')
    with pytest.raises(InputError, match="nowhere"):
        passbench.evaluate("s.jsonl", environ=environ)


@pytest.mark.bwrap
def test_evaluate_refuses_samples_it_cannot_isolate_before_writing_anything(
    environ: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bin-without-bwrap").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin-without-bwrap"))  # as without bubblewrap
    samples = [Sample(task_id="HumanEval/2", solution=RIGHT["HumanEval/2"])]
    with pytest.raises(SandboxError, match="refusing to run samples without sandbox isolation"):
        passbench.evaluate(
            samples, benchmark="humaneval", output_dir=tmp_path / "out", environ=environ
        )
    assert not (tmp_path / "out").exists()  # not even the samples


def _canonical_server(data_dir: Path, tmp_path: Path) -> CanonicalChatServer:
    data = DataSettings(data_dir=data_dir, cache_dir=tmp_path / "cache", download=False)
    tasks = [
        t for t in get_benchmark("humaneval").load(None, "full", data=data) if t.task_id in TASKS
    ]
    return CanonicalChatServer(tasks, get_benchmark("humaneval"))


@pytest.mark.bwrap
def test_generate_then_evaluate_scores_the_canonical_answers(
    environ: dict[str, str], data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = _canonical_server(data_dir, tmp_path)
    try:
        outcome = passbench.generate(
            "fake-chat",
            provider="openai",
            base_url=f"{server.url}/v1",
            benchmark="humaneval",
            tasks=TASKS,
            environ=environ,
        )
        assert isinstance(outcome, passbench.GenerationOutcome)
        # named as the official tool names them, in ./results, greedy by default
        assert outcome.files.raw == Path("results") / (
            "fake-chat--main--humaneval-complete--openai-0-1.jsonl"
        )
        assert outcome.new_samples == 3 and outcome.kept_samples == 0 and outcome.chat is True
        (first, *_) = server.bodies("/chat/completions")
        assert first["max_tokens"] == 1280 and first["temperature"] == 0.0  # official defaults

        results = passbench.evaluate(
            outcome.files.sanitized, benchmark="humaneval", tasks=TASKS, environ=environ
        )
        assert results.pass_at_k == {"pass@1": 1.0}

        # again inside a running event loop (a notebook): the requests run on a thread, and
        # every sample is kept from the first run
        async def in_a_loop() -> passbench.GenerationOutcome:
            return passbench.generate(
                "fake-chat",
                provider="openai",
                base_url=f"{server.url}/v1",
                benchmark="humaneval",
                tasks=TASKS,
                cache=False,
                environ=environ,
            )

        again = asyncio.run(in_a_loop())
        assert again.new_samples == 0 and again.kept_samples == 3
    finally:
        server.close()
