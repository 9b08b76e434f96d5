"""`passbench contamination overlap`, `inspect --exclude-contaminated` and `--model-cutoff`,
end to end on the real benchmark data and result files."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.analysis.report.result_files import OFFICIAL

from passbench.apps.cli import cli, main
from passbench.stages.benchmarks import DataSettings, get_benchmark

LCB = "livecodebench/lcb-submissions.O1-Mini-2024-09-12.N1.codegeneration_eval_all.json"


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path) -> None:
    monkeypatch.setenv("PASSBENCH_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PASSBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PASSBENCH_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "160")


def invoke(*arguments: str) -> Result:
    result = CliRunner().invoke(cli, list(arguments))
    assert result.exit_code == 0, result.output
    return result


def instruction(data_dir: Path, task_id: str) -> str:
    data = DataSettings(data_dir=data_dir, download=False)
    loaded = get_benchmark("bigcodebench").load(data=data)
    return loaded.get(task_id).prompts["instruct"]


def test_overlap_json_finds_the_planted_instructions(tmp_path: Path, data_dir: Path) -> None:
    planted = {
        task_id: instruction(data_dir, task_id).split("```")[0]
        for task_id in ("BigCodeBench/13", "BigCodeBench/15")
    }
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"content": "import os\n"})
        + "\n"
        + "".join(
            json.dumps({"content": f'def f():\n    """{text}"""\n'}) + "\n"
            for text in planted.values()
        ),
        encoding="utf-8",
    )
    target = tmp_path / "overlap.json"
    output = invoke(
        "contamination",
        "overlap",
        "--corpus",
        str(corpus),
        "--subset",
        "hard",
        "--format",
        "json",
        "-o",
        str(target),
    ).stdout
    document = json.loads(output)
    assert json.loads(target.read_text(encoding="utf-8")) == document
    assert {"BigCodeBench/13", "BigCodeBench/15"} <= set(document["contaminated"])
    assert document["contaminated"] == document["contaminated_by_n"]["10"]
    assert document["benchmark"] == "bigcodebench" and document["split"] == "instruct"
    assert document["n"] == [10, 13] and document["tokenizer"].startswith("whitespace")
    assert document["thresholds"]["min_shared_ngrams"] == 1
    assert len(document["tasks"]) == document["task_count"] == 148
    expected = hashlib.sha256(str(corpus).encode() + b"\0" + corpus.read_bytes()).hexdigest()
    assert document["corpus"]["sha256"] == expected
    assert document["corpus"]["documents"] == 3
    task = document["tasks"]["BigCodeBench/15"]
    tokens = planted["BigCodeBench/15"].split()
    assert task["contaminated"] and task["tokens"] == len(tokens)
    # every 10-gram but the first is in the corpus: there the first word is glued to the
    # docstring's quotes ('"""Calculate'), a different whitespace token
    assert task["shared"]["10"] == task["ngrams"]["10"] - 1
    lcs = task["longest_common_substring"]
    assert lcs["tokens"] == len(tokens) - 1 and lcs["text"] == " ".join(tokens[1:])
    assert lcs["source"] == {"path": str(corpus), "line": 2, "record": 3}
    clean = document["tasks"][next(t for t in document["tasks"] if t not in planted)]
    assert set(clean) == set(task)


def test_overlap_of_a_completion_benchmark_uses_its_prompt(tmp_path: Path) -> None:
    (tmp_path / "lib.so").write_bytes(b"\x7fELF\0\0 from typing import List")
    corpus = tmp_path / "corpus.txt"
    # HumanEval/0's prompt starts with these 11 tokens
    corpus.write_text(
        "from typing import List\n\n\ndef has_close_elements(numbers: List[float], "
        "threshold: float) -> bool:\n",
        encoding="utf-8",
    )
    document = json.loads(
        invoke(
            "contamination",
            "overlap",
            "--corpus",
            str(tmp_path),
            "-b",
            "humaneval",
            "--tasks",
            "0,1",
            "--format",
            "json",
        ).stdout
    )
    assert document["split"] == "complete" and document["prompt_text"] == "the complete prompt"
    assert document["corpus"]["files"] == 2 and document["corpus"]["skipped"] == 1
    assert document["corpus"]["skipped_examples"][0].startswith(str(tmp_path / "lib.so"))
    assert document["contaminated"] == ["HumanEval/0"] and list(document["tasks"]) == [
        "HumanEval/0",
        "HumanEval/1",
    ]


def test_bad_corpus_and_options_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"content": "a"}\n{"content": "b"\n', encoding="utf-8")
    for arguments, message in [
        (["--corpus", str(corpus)], f"error: {corpus}:2: not a JSON object"),
        (["--corpus", str(tmp_path / "none")], f"error: {tmp_path / 'none'}: "),
        (["--corpus", str(tmp_path), "-b", "humaneval", "--split", "instruct"], "split"),
    ]:
        with pytest.raises(SystemExit) as caught:
            main(["contamination", "overlap", *arguments])
        assert caught.value.code == 2
        # the progress bar's last state may stand above it
        errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
        assert len(errors) == 1 and message in errors[0], errors


def test_inspect_excludes_the_flagged_tasks(tmp_path: Path) -> None:
    flagged = ["BigCodeBench/13", "BigCodeBench/15", "BigCodeBench/999"]
    overlap = tmp_path / "overlap.json"
    overlap.write_text(
        json.dumps(
            {
                "kind": "contamination-overlap",
                "benchmark": "bigcodebench",
                "contaminated": flagged,
                "corpus": {"sha256": "ab" * 32},
                "n": [10, 13],
            }
        ),
        encoding="utf-8",
    )
    document = json.loads(
        invoke(
            "inspect",
            str(OFFICIAL),
            "--exclude-contaminated",
            str(overlap),
            "--format",
            "json",
            "--bootstrap",
            "100",
        ).stdout
    )
    scores = {s["tasks"]: (s["count"], s["pass@1"]) for s in document["contamination"]["scores"]}
    # the fixture: 6 of 14 tasks pass; 13 passes and 15 fails
    assert scores["all tasks"] == (14, pytest.approx(6 / 14))
    assert scores["clean"] == (12, pytest.approx(5 / 12))
    assert scores["contaminated"] == (2, pytest.approx(1 / 2))
    summary = document["summary"]
    assert summary["n_tasks"] == 12 and summary["pass_at_k"]["pass@1"] == pytest.approx(5 / 12)
    # flagged tasks are left out, not missing (the fixture holds 14 of the 148 Hard tasks)
    plain = json.loads(
        invoke("inspect", str(OFFICIAL), "--format", "json", "--bootstrap", "100").stdout
    )
    missing = plain["summary"]["missing_tasks"]
    assert "BigCodeBench/999" in missing
    assert summary["missing_tasks"] == [t for t in missing if t not in flagged]
    assert "contamination" not in plain
    table = invoke("inspect", str(OFFICIAL), "--exclude-contaminated", str(overlap)).stdout
    assert "with and without" in table and "41.67%" in table


def test_inspect_refuses_an_overlap_file_of_another_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlap = tmp_path / "overlap.json"
    other = {"kind": "contamination-overlap", "benchmark": "humaneval", "contaminated": []}
    overlap.write_text(json.dumps(other), encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["inspect", str(OFFICIAL), "--exclude-contaminated", str(overlap)])
    assert "checked humaneval tasks, and the run is bigcodebench" in capsys.readouterr().err
    overlap.write_text("[]", encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["inspect", str(OFFICIAL), "--exclude-contaminated", str(overlap)])
    assert "not a `passbench contamination overlap` result file" in capsys.readouterr().err


def test_model_cutoff_scores_the_problems_after_it_beside_all(data_dir: Path) -> None:
    path = data_dir / LCB
    rows = json.loads(path.read_text(encoding="utf-8"))
    cutoff = dt.date(2024, 5, 25)  # 10 problems are dated on it: not after it
    after = [r for r in rows if dt.datetime.fromisoformat(r["contest_date"]).date() > cutoff]
    on_cutoff = [r for r in rows if dt.datetime.fromisoformat(r["contest_date"]).date() == cutoff]
    document = json.loads(
        invoke(
            "inspect",
            str(path),
            "--model-cutoff",
            str(cutoff),
            "--format",
            "json",
            "--bootstrap",
            "100",
        ).stdout
    )
    every, window = document["livecodebench"]["windows"]
    assert every["problems"] == len(rows) == 880
    assert window["window"] == f"after cutoff {cutoff}" and window["since"] == "2024-05-26"
    assert window["problems"] == len(after) and 0 < len(after) < len(rows)
    mean = sum(r["pass@1"] for r in after) / len(after)
    assert window["pass@1"] == pytest.approx(mean)
    assert document["summary"]["n_tasks"] == len(after)
    assert on_cutoff and not {r["question_id"] for r in on_cutoff} & {
        t["task_id"] for t in document["tasks"]
    }
    table = invoke("inspect", str(path), "--model-cutoff", str(cutoff)).stdout
    assert f"after cutoff {cutoff}" in table and f"of {len(after)}" in table


def test_model_cutoff_needs_dates_and_no_since(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for arguments, message in [
        (
            [str(OFFICIAL), "--model-cutoff", "2024-01-01"],
            "needs a benchmark whose tasks carry contest dates",
        ),
        ([str(data_dir / LCB), "--model-cutoff", "2024-01-01", "--since", "2024-02-01"],
         "give it or --since, not both"),
        ([str(data_dir / LCB), "--model-cutoff", "May 2024"], "expected a date YYYY-MM-DD"),
    ]:  # fmt: skip
        with pytest.raises(SystemExit) as caught:
            main(["inspect", *arguments])
        assert caught.value.code == 2
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1, error
    with pytest.raises(SystemExit):
        main(["compare", str(OFFICIAL), str(OFFICIAL), "--model-cutoff", "2024-01-01"])
    assert "needs a benchmark whose tasks carry contest dates" in capsys.readouterr().err
