"""The overlap check: BigCodeBench's n-gram rule exactly, the longest shared run and where it is,
across chunk boundaries, against a brute-force reference."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from passbench.analysis.contamination import OverlapSettings, Source, check_overlap, corpus
from passbench.analysis.contamination.corpus import Chunk
from passbench.analysis.contamination.overlap import OverlapScanner

TASK = " ".join(f"w{i}" for i in range(30))  # 30 distinct tokens: w0 .. w29


def words(low: int, high: int) -> str:
    return " ".join(f"w{i}" for i in range(low, high))


def one(texts: dict[str, str], path: Path, **settings: int) -> dict[str, object]:
    report = check_overlap(texts, [path], OverlapSettings(**settings))  # type: ignore[arg-type]
    return {result.task_id: result for result in report.tasks}


def test_a_shared_10_gram_is_a_hit_and_9_shared_tokens_are_not(tmp_path: Path) -> None:
    corpus_file = tmp_path / "code.py"
    corpus_file.write_text(
        f"x = 1\n# {words(0, 10)} other\n"  # exactly w0..w9: one 10-gram
        f"# {words(15, 24)} end\n",  # w15..w23: nine tokens, a near miss
        encoding="utf-8",
    )
    results = one({"T/exact": words(0, 12), "T/near": words(15, 30)}, corpus_file)
    exact, near = results["T/exact"], results["T/near"]
    assert exact.hits[10] == (words(0, 10),) and exact.hits[13] == ()  # type: ignore[attr-defined]
    assert near.hits[10] == () and near.lcs == 9  # type: ignore[attr-defined]
    assert near.lcs_text == words(15, 24)  # type: ignore[attr-defined]
    assert near.closest == Source(str(corpus_file), 3)  # type: ignore[attr-defined]
    report = check_overlap({"T/exact": words(0, 12), "T/near": words(15, 30)}, [corpus_file])
    assert report.contaminated() == ["T/exact"]


def test_tokens_are_whitespace_split_so_punctuation_and_case_count(tmp_path: Path) -> None:
    text = "Returns the list of all the numbers that are even, in order."
    corpus_file = tmp_path / "a.txt"
    corpus_file.write_text(text.replace("even,", "even") + "\n" + text.upper(), encoding="utf-8")
    assert check_overlap({"T/0": text}, [corpus_file]).contaminated() == []
    corpus_file.write_text("prefix\n" + text.replace(" ", "\n  \t"), encoding="utf-8")
    assert check_overlap({"T/0": text}, [corpus_file]).contaminated() == ["T/0"]


def test_min_shared_and_the_first_n_decide_contaminated(tmp_path: Path) -> None:
    corpus_file = tmp_path / "a.txt"
    corpus_file.write_text(words(0, 11), encoding="utf-8")  # two 10-grams, no 13-gram
    texts = {"T/0": TASK}
    assert check_overlap(texts, [corpus_file], OverlapSettings(min_shared=2)).contaminated()
    assert not check_overlap(texts, [corpus_file], OverlapSettings(min_shared=3)).contaminated()
    assert not check_overlap(texts, [corpus_file], OverlapSettings(ns=(13, 10))).contaminated()


def test_closest_source_is_the_longest_runs_first_place(tmp_path: Path) -> None:
    folder = tmp_path / "repo"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "a.py").write_text(f"a\n\n{words(0, 12)}\n", encoding="utf-8")
    (folder / "pkg" / "b.py").write_text("b\n" * 5 + f"  # {words(3, 25)}\n", encoding="utf-8")
    (folder / "z.jsonl").write_text(
        json.dumps({"content": f"c\n{words(3, 25)}"}) + "\n", encoding="utf-8"
    )
    result = one({"T/0": TASK}, folder)["T/0"]
    assert result.lcs == 22 and result.lcs_text == words(3, 25)  # type: ignore[attr-defined]
    assert result.closest == Source(str(folder / "pkg" / "b.py"), 6)  # type: ignore[attr-defined]
    # the same run only in the JSONL record: its file line (record) and line in the document
    (folder / "pkg" / "b.py").unlink()
    result = one({"T/0": TASK}, folder)["T/0"]
    assert result.closest == Source(str(folder / "z.jsonl"), 2, record=1)  # type: ignore[attr-defined]


def test_jsonl_records_are_separate_documents(tmp_path: Path) -> None:
    """BigCodeBench takes each record's n-grams apart: a 10-gram split over two records is no
    hit, while a text file is one document however its lines fall."""
    lines = [json.dumps({"text": words(0, 5)}), "", json.dumps({"text": words(5, 10)})]
    (tmp_path / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "c.txt").write_text(words(0, 5) + "\n" + words(5, 10) + "\n", encoding="utf-8")
    assert check_overlap({"T/0": TASK}, [tmp_path / "c.jsonl"]).contaminated() == []
    report = check_overlap({"T/0": TASK}, [tmp_path / "c.txt"])
    assert report.contaminated() == ["T/0"]
    assert report.corpus.documents == 1 and report.corpus.files == 1


def _reference(texts: dict[str, str], documents: list[str], n: int) -> dict[str, set[str]]:
    """BigCodeBench's n_gram_check.py, literally: set(ngrams(doc.split(), n)) per document."""

    def grams(text: str) -> set[str]:
        tokens = text.split()
        return {" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}

    corpus_grams = set().union(*(grams(d) for d in documents)) if documents else set()
    return {task_id: grams(text) & corpus_grams for task_id, text in texts.items()}


def _longest(task: list[str], document: list[str]) -> int:
    best, previous = 0, [0] * (len(document) + 1)
    for token in task:
        current = [0] * (len(document) + 1)
        for j, other in enumerate(document, 1):
            if token == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_bigcodebenchs_rule_and_brute_force_lcs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Random tasks and documents over a small vocabulary (so runs are shared often), with
    task text spliced in; text chunks far smaller than a document, so runs cross chunks."""
    monkeypatch.setattr(corpus, "CHUNK_BYTES", 97)
    rng = random.Random(seed)
    vocabulary = [f"t{i}" for i in range(6)] + ["x", "y(", "z:"]
    texts = {f"T/{i}": " ".join(rng.choices(vocabulary, k=rng.randint(5, 40))) for i in range(8)}
    documents = []
    for _ in range(5):
        tokens = rng.choices([*vocabulary, "other"], k=rng.randint(50, 300))
        task = rng.choice(list(texts.values())).split()
        start = rng.randrange(len(task))
        tokens[10:10] = task[start : start + rng.randint(5, 25)]
        lines, position = [], 0
        while position < len(tokens):
            width = rng.randint(1, 12)
            lines.append(" ".join(tokens[position : position + width]))
            position += width
        documents.append("\n".join(lines))
    (tmp_path / "c.jsonl").write_text(
        "".join(json.dumps({"content": d}) + "\n" for d in documents), encoding="utf-8"
    )
    (tmp_path / "one.txt").write_text(documents[0], encoding="utf-8")
    settings = OverlapSettings(ns=(5, 7), lcs_min=3)
    for path, docs in ((tmp_path / "c.jsonl", documents), (tmp_path / "one.txt", documents[:1])):
        report = check_overlap(texts, [path], settings)
        for n in (5, 7):
            expected = _reference(texts, docs, n)
            got = {r.task_id: set(r.hits[n]) for r in report.tasks}
            assert got == expected, (path.name, n)
            assert report.contaminated(n) == [t for t in texts if expected[t]]
        for result in report.tasks:
            task_tokens = texts[result.task_id].split()
            longest = max(_longest(task_tokens, d.split()) for d in docs)
            assert result.lcs == (longest if longest >= 3 else 0), result.task_id


@pytest.mark.parametrize("separator", ["\n", " "])
def test_memory_does_not_hold_the_corpus(separator: str) -> None:
    """A scanner keeps its task index and the last 30 tokens (the longest task's length) of
    the previous chunk, nothing more, with or without newlines in the text."""
    scanner = OverlapScanner({"T/0": TASK}, OverlapSettings())
    filler = separator.join("x = y + 1  # w1 w2" for _ in range(20000))
    for number in range(5):
        scanner.scan_chunk(Chunk("big.txt", None, 1, filler + " ", number > 0, len(filler)))
        assert len(scanner._tail.split()) == 30 and len(scanner._tail) < 200
