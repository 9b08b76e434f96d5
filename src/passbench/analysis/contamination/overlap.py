"""N-gram overlap between benchmark prompts and a corpus: BigCodeBench's contamination check.

BigCodeBench (decontamination/n_gram_check.py) splits each task's instruct prompt before its
first code fence, `instruct_prompt.split("```")[0]`, into whitespace tokens (`str.split()`),
takes the set of its n-grams (tokens joined by one space, n = 10 and 13), does the same for every
corpus document (`content.split()`), and counts a task as contaminated when the two sets share
any n-gram. This module applies the same rule (same tokens, same n-grams, per document) and
adds, per task, the longest run of tokens it shares with the corpus and where that run is.

Why it scales: every token of a shared n-gram (or of any shared run) is a token of some task,
so a corpus chunk is first mapped to one byte per token, "is this token in the tasks'
vocabulary" (a set lookup done in C), and only runs of at least `seed` such tokens (found by a
regular expression, also in C) are looked at in Python. There each position's `seed`-gram is
looked up in an index of the tasks' seed-grams, and each hit is extended to its maximal shared
run. Memory holds the tasks' index (small) and one chunk; it does not grow with the corpus.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, pairwise

from passbench.analysis.contamination.corpus import Chunk


@dataclass(frozen=True)
class OverlapSettings:
    """n-gram sizes (the first decides `contaminated`), how many distinct shared n-grams make a
    task contaminated (BigCodeBench: 1), and the shortest shared run reported as a task's
    longest common substring."""

    ns: tuple[int, ...] = (10, 13)
    min_shared: int = 1
    lcs_min: int = 8

    def __post_init__(self) -> None:
        if not self.ns or min(self.ns) < 1 or self.min_shared < 1 or self.lcs_min < 1:
            raise ValueError("n, min_shared and lcs_min must be at least 1")

    @property
    def seed(self) -> int:
        """The length of the index's keys: no shared run shorter than this is looked at."""
        return min(self.lcs_min, *self.ns)


@dataclass(frozen=True)
class Source:
    """Where in the corpus: a file and line, or a JSONL file's record (its line in the file)
    and the line within the record's document."""

    path: str
    line: int
    record: int | None = None

    def describe(self) -> str:
        if self.record is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.record} (record), line {self.line}"


@dataclass(frozen=True)
class TaskOverlap:
    """One task's result."""

    task_id: str
    tokens: int
    ngrams: Mapping[int, int]  # n -> distinct n-grams of the task's text
    hits: Mapping[int, tuple[str, ...]]  # n -> its n-grams found in the corpus, in text order
    lcs: int  # tokens of the longest run shared with the corpus (0: none of lcs_min or more)
    lcs_text: str
    closest: Source | None  # where that run is (its first occurrence)


@dataclass
class _State:
    tokens: list[str]
    hit_positions: dict[int, set[int]] = field(default_factory=dict)
    best: int = 0
    best_start: int = 0
    closest: Source | None = None


class OverlapScanner:
    """Feed it a corpus's chunks in order (`scan`), then read `results()`."""

    def __init__(self, texts: Mapping[str, str], settings: OverlapSettings) -> None:
        self.settings = settings
        self._ids = list(texts)
        self._states = [_State(text.split()) for text in texts.values()]
        seed = settings.seed
        self._index: dict[str, list[tuple[int, int]]] = {}
        vocabulary: set[str] = set()
        bigrams: set[tuple[str, str]] = set()
        for number, state in enumerate(self._states):
            tokens = state.tokens
            vocabulary.update(tokens)
            bigrams.update(pairwise(tokens))
            for start in range(len(tokens) - seed + 1):
                key = " ".join(tokens[start : start + seed])
                self._index.setdefault(key, []).append((number, start))
        self._vocabulary = frozenset(vocabulary)
        self._bigrams = frozenset(bigrams)
        self._runs = re.compile(b"\x01{%d,}" % seed)
        self._bigram_runs = re.compile(b"\x01{%d,}" % (seed - 1)) if seed > 1 else None
        #: tokens of the previous chunk carried into the next one; no shared run is longer
        #: than the longest task, so a run crossing a chunk boundary is found whole
        self._carry_tokens = max((len(s.tokens) for s in self._states), default=0)
        self._tail = ""
        self._tail_line = 1
        self.documents = 0

    def scan(self, chunks: Iterable[Chunk]) -> None:
        for chunk in chunks:
            self.scan_chunk(chunk)

    def scan_chunk(self, chunk: Chunk) -> None:
        if chunk.continues:
            text, first_line = self._tail + chunk.text, self._tail_line
        else:
            text, first_line = chunk.text, chunk.first_line
            self.documents += 1
        tokens = text.split()
        improved = self._match(tokens)
        if improved:
            starts = _line_starts(text)
            for number, token in improved.items():
                line = first_line + bisect_right(starts, token) - 1
                self._states[number].closest = Source(chunk.path, line, chunk.record)
        if chunk.record is None:
            self._tail, self._tail_line = _tail(text, first_line, self._carry_tokens)

    def _match(self, tokens: list[str]) -> dict[int, int]:
        """Every maximal shared run in `tokens`; returns the tasks whose longest run grew,
        with the run's first token."""
        seed = self.settings.seed
        states, index = self._states, self._index
        improved: dict[int, int] = {}
        for low, high in self._segments(tokens):
            words = tokens[low:high]
            # the segment's seed-grams looked up in C; Python sees only the positions that hit
            grams = map(" ".join, zip(*(words[k:] for k in range(seed)), strict=False))
            found_at = list(map(index.get, grams))
            for offset in compress(range(len(found_at)), found_at):
                i = low + offset
                for number, start in found_at[offset] or ():
                    state = states[number]
                    mine = state.tokens
                    if i > low and start > 0 and tokens[i - 1] == mine[start - 1]:
                        continue  # inside a run found from its start
                    length = seed
                    limit = min(high - i, len(mine) - start)
                    while length < limit and tokens[i + length] == mine[start + length]:
                        length += 1
                    self._record(number, state, start, length)
                    if length > state.best:
                        state.best, state.best_start = length, start
                        improved[number] = i
        return improved

    def _segments(self, tokens: list[str]) -> Iterator[tuple[int, int]]:
        """The spans of `tokens` where a shared run of `seed` tokens or more can be: every
        token is a task's word and every adjacent pair a task's bigram (two filters done in
        C, each far cheaper than a seed-gram lookup). A maximal shared run lies inside one."""
        flags = bytes(map(self._vocabulary.__contains__, tokens))
        for run in self._runs.finditer(flags):
            low, high = run.span()
            if self._bigram_runs is None:
                yield low, high
                continue
            words = tokens[low:high]
            pairs = bytes(map(self._bigrams.__contains__, pairwise(words)))
            for inner in self._bigram_runs.finditer(pairs):
                yield low + inner.start(), low + inner.end() + 1

    def _record(self, number: int, state: _State, start: int, length: int) -> None:
        for n in self.settings.ns:
            if length >= n:
                state.hit_positions.setdefault(n, set()).update(
                    range(start, start + length - n + 1)
                )

    def results(self) -> list[TaskOverlap]:
        settings = self.settings
        out = []
        for task_id, state in zip(self._ids, self._states, strict=True):
            tokens = state.tokens
            ngrams, hits = {}, {}
            for n in settings.ns:
                ngrams[n] = len(_ngrams(tokens, n, range(len(tokens) - n + 1)))
                positions = sorted(state.hit_positions.get(n, ()))
                hits[n] = tuple(_ngrams(tokens, n, positions))
            reported = state.best >= settings.lcs_min
            out.append(
                TaskOverlap(
                    task_id=task_id,
                    tokens=len(tokens),
                    ngrams=ngrams,
                    hits=hits,
                    lcs=state.best if reported else 0,
                    lcs_text=(
                        " ".join(tokens[state.best_start : state.best_start + state.best])
                        if reported
                        else ""
                    ),
                    closest=state.closest if reported else None,
                )
            )
        return out


def _ngrams(tokens: Sequence[str], n: int, positions: Iterable[int]) -> list[str]:
    """The distinct n-grams starting at `positions`, in that order."""
    return list(dict.fromkeys(" ".join(tokens[p : p + n]) for p in positions))


def _line_starts(text: str) -> list[int]:
    """For each line of `text`, the index of its first token among text.split()'s."""
    starts, count = [], 0
    for line in text.split("\n"):
        starts.append(count)
        count += len(line.split())
    return starts


def _tail(text: str, first_line: int, tokens: int) -> tuple[str, int]:
    """The end of `text` from its last `tokens` tokens on (a line may be cut: a file without
    newlines keeps the tail bounded too), and the line it starts on."""
    if tokens == 0:
        return "", first_line + text.count("\n")
    parts = text.rsplit(None, tokens)
    if len(parts) <= tokens:  # no more tokens than that: keep it all
        return text, first_line
    head = len(parts[0])
    start = len(text) - len(text[head:].lstrip())
    return text[start:], first_line + text.count("\n", 0, start)


def contaminated(results: Sequence[TaskOverlap], n: int, min_shared: int = 1) -> list[str]:
    """The tasks sharing at least `min_shared` distinct n-grams with the corpus."""
    return [r.task_id for r in results if len(r.hits.get(n, ())) >= min_shared]
