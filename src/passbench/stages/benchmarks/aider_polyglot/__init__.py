"""Aider's polyglot benchmark: `benchmark.py` (data, prompts, programs, scores), `prompts.py`
(Aider's chat), `edits.py` (its whole-file and SEARCH/REPLACE edit formats), `toolchains.py`
(each language's offline test run)."""
