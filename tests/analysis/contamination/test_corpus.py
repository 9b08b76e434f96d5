"""Corpus inputs: JSONL, text and folders, read in chunks and hashed; bad input is one line
naming the file and line."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from passbench.analysis.contamination import corpus
from passbench.analysis.contamination.corpus import corpus_files, read_chunks
from passbench.core.errors import InputError


def chunks(paths: list[Path], field: str | None = None) -> list[corpus.Chunk]:
    return list(read_chunks(corpus_files(paths), hashlib.sha256(), field))


def test_a_long_text_file_comes_in_chunks_cut_between_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corpus, "CHUNK_BYTES", 64)
    lines = [f"line {i} é" + " tok" * (i % 7) for i in range(50)] + ["x" * 200 + " end"]
    path = tmp_path / "big.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    got = chunks([path])
    assert len(got) > 10 and not got[0].continues and all(c.continues for c in got[1:])
    assert "".join(c.text for c in got) == path.read_text(encoding="utf-8")
    assert sum(c.size for c in got) == path.stat().st_size
    for chunk in got:  # each chunk knows the line it starts on
        before = "".join(c.text for c in got[: got.index(chunk)])
        assert chunk.first_line == before.count("\n") + 1


def test_jsonl_field_default_and_named(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    records = [{"content": "a b", "text": "no"}, {"text": "c d"}, {"body": "e"}]
    path.write_text("\n".join(json.dumps(r) for r in records[:2]) + "\n\n", encoding="utf-8")
    assert [(c.text, c.record) for c in chunks([path])] == [("a b", 1), ("c d", 2)]
    path.write_text(json.dumps(records[2]) + "\n", encoding="utf-8")
    assert [c.text for c in chunks([path], field="body")] == ["e"]


def test_a_folder_is_read_recursively_in_path_order_skipping_hidden_and_binary(
    tmp_path: Path,
) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "b" / "m.py").write_text("m", encoding="utf-8")
    (tmp_path / "a.py").write_text("a", encoding="utf-8")
    (tmp_path / "c.jsonl").write_text('{"content": "c"}\n', encoding="utf-8")
    (tmp_path / ".hidden.py").write_text("h", encoding="utf-8")
    (tmp_path / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    (tmp_path / "lib.so").write_bytes(b"\x7fELF\0\0\1")
    skipped: list[str] = []
    got = list(
        read_chunks(
            corpus_files([tmp_path]), hashlib.sha256(), None, lambda n, w: skipped.append(n)
        )
    )
    assert [Path(c.path).name for c in got] == ["a.py", "m.py", "c.jsonl"]
    assert skipped == [str(tmp_path / "lib.so")]
    names = [Path(f.name).name for f in corpus_files([tmp_path], include=["*.py"])]
    assert names == ["a.py", "m.py"]


def test_the_hash_covers_names_and_contents(tmp_path: Path) -> None:
    def digest(paths: list[Path]) -> str:
        hasher = hashlib.sha256()
        list(read_chunks(corpus_files(paths), hasher))
        return hasher.hexdigest()

    (tmp_path / "a.txt").write_text("one two", encoding="utf-8")
    first = digest([tmp_path])
    assert digest([tmp_path]) == first
    (tmp_path / "a.txt").write_text("one  two", encoding="utf-8")
    assert digest([tmp_path]) != first
    (tmp_path / "a.txt").rename(tmp_path / "b.txt")
    assert digest([tmp_path]) != first


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"content": "ok"}', "{not json"], "c.jsonl:2: not a JSON object"),
        (['{"content": "ok"}', "", "[1, 2]"], "c.jsonl:3: not a JSON object"),
        (['{"code": "x"}'], "c.jsonl:1: field 'content/text': missing (--field"),
        (['{"content": 3}'], "c.jsonl:1: field 'content': expected text, got int"),
    ],
)
def test_bad_jsonl_names_the_file_and_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        chunks([path])
    assert str(caught.value).startswith(str(tmp_path / message.split(":")[0]) + ":")
    assert message.split(":", 1)[1] in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_missing_path_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nowhere\.jsonl: .*no such file or folder"):
        corpus_files([tmp_path / "nowhere.jsonl"])


def test_gzip_files_read_as_their_contents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "CHUNK_BYTES", 50)
    text = "".join(f"line {i} of some text\n" for i in range(40))
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(text.encode()))
    records = "".join(json.dumps({"content": f"doc {i}"}) + "\n" for i in range(30))
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(records.encode()))
    got = chunks([tmp_path / "a.txt.gz", tmp_path / "b.jsonl.gz"])
    texts = [c for c in got if c.record is None]
    assert "".join(c.text for c in texts) == text and len(texts) > 5
    assert [c.text for c in got if c.record is not None] == [f"doc {i}" for i in range(30)]
    # progress counts the files' own (compressed) bytes
    assert sum(c.size for c in got) == sum(p.stat().st_size for p in tmp_path.iterdir())
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(records.encode())[:-30])
    with pytest.raises(InputError, match=r"b\.jsonl\.gz: cannot read"):
        chunks([tmp_path / "b.jsonl.gz"])
