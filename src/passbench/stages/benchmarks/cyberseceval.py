"""CyberSecEval "instruct": prompts that invite insecure code, scored by a static detector.

The prompt set of Meta's CyberSecEval (PurpleLlama `CybersecurityBenchmarks`, instruct-v2: 1,681
prompts in 8 languages). Each prompt was written from a real function that the Insecure Code
Detector (ICD) flags; a model's answer is scored by running the same detector over the code in
it: the vulnerable percentage of a language is the share of its answers with any finding.

It has no tests to execute (`executable = False`): `passbench evaluate` and `run` refuse it and
name `passbench security`, which runs the detector over the samples file. This module gives the
tasks, the prompts and the extraction, as CyberSecEval does them:

- prompt (`query_llm.process_prompt` -> `llms/*.py` `query`): the dataset's `test_case_prompt`
  as the only user message, no system prompt and no prefill; chat models only (every
  CyberSecEval LLM is a chat API). Its sampling defaults are temperature 0.6 and top_p 0.9
  (`llms/llm_base.py`); passbench's defaults stay greedy unless the flags say otherwise.
- extraction: `sanitize/cyberseceval.py` (the first fenced block, else the whole answer).
- tasks: one per row, in the file's order; the id is `CyberSecEval/instruct/<language>/<prompt_id>`
  (the language as the ICD names it: python, javascript, cpp, csharp, c, rust, java, php); the
  metadata carries the language, the CWE, the ICD pattern and the origin code the prompt was
  written from (CyberSecEval's BLEU reference).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passbench.core.errors import InputError
from passbench.core.records import Prompt, Task
from passbench.stages.benchmarks._fields import json_array_records
from passbench.stages.benchmarks.base import BenchmarkBase, BenchmarkInfo, TaskId, no_tests_error
from passbench.stages.benchmarks.data import DataFile
from passbench.stages.benchmarks.prompting import PromptStyle, identity

if TYPE_CHECKING:
    from passbench.stages.sanitize import SanitizeResult


@dataclass(frozen=True)
class Language:
    """One language of the prompt set: its key (the ICD's `Language` value, the dataset's
    `language`) and its name for people."""

    key: str
    title: str


#: The dataset's languages; Python first (the first subset after `full`, and a bare number
#: names a Python prompt), then the others as the dataset orders them.
LANGUAGES: dict[str, Language] = {
    language.key: language
    for language in (
        Language("python", "Python"),
        Language("c", "C"),
        Language("cpp", "C++"),
        Language("csharp", "C#"),
        Language("javascript", "JavaScript"),
        Language("java", "Java"),
        Language("rust", "Rust"),
        Language("php", "PHP"),
    )
}

#: PurpleLlama at the commit the shared copy was taken from (see the data's PROVENANCE).
_COMMIT = "4be64c3a24442b51c76175e6ec67722cc3f5fe38"
_URL_PATH = (
    f"meta-llama/PurpleLlama/raw/{_COMMIT}/CybersecurityBenchmarks/datasets/instruct/"
    "instruct-v2.json"
)
_PREFIX = "CyberSecEval/instruct/"
_TASK_ID = re.compile(rf"{re.escape(_PREFIX)}([a-z]+)/(0|[1-9][0-9]*)")
#: The benchmark's one split: the prompt is an instruction, but the split keeps the name every
#: command defaults to (as LiveCodeBench's does), so no --split is needed.
SPLIT = "complete"


def task_id(language: str, prompt_id: int) -> str:
    return f"{_PREFIX}{language}/{prompt_id}"


def parse_instruct(path: Path, benchmark: str = "cyberseceval-instruct") -> tuple[Task, ...]:
    """Tasks of a CyberSecEval instruct JSON file (an array of rows; instruct-v2's fields)."""
    tasks: list[Task] = []
    seen: set[str] = set()
    for record in json_array_records(path, "CyberSecEval", "prompts"):
        language = record.text("language")
        if language not in LANGUAGES:
            raise record.error("language", f"'{language}' is not one of {', '.join(LANGUAGES)}")
        if record.text("variant") != "instruct":
            raise record.error("variant", "expected 'instruct'")
        number = record.number("prompt_id")
        if number != int(number) or number < 0:
            raise record.error("prompt_id", "expected a whole number >= 0")
        prompt_id = int(number)
        identifier = task_id(language, prompt_id)
        if identifier in seen:
            raise record.error("prompt_id", f"{prompt_id} appears twice for {language}")
        seen.add(identifier)
        prompt = record.text("test_case_prompt")
        if not prompt.strip():
            raise record.error("test_case_prompt", "empty")
        rule = record.record.get("rule")
        tasks.append(
            Task(
                benchmark=benchmark,
                task_id=identifier,
                entry_point="",
                prompts={SPLIT: prompt},
                code_prompt="",
                test="",
                canonical_solution="",
                metadata={
                    "language": language,
                    "prompt_id": prompt_id,
                    "cwe_identifier": record.text("cwe_identifier"),
                    "pattern_id": record.text("pattern_id"),
                    "pattern_desc": record.text("pattern_desc"),
                    "analyzer": record.text("analyzer"),
                    "rule": rule if isinstance(rule, str) else None,
                    "origin_code": record.text("origin_code"),
                    "line_text": record.text("line_text"),
                    "line_number": int(record.number("line_number")),
                    "file_path": record.text("file_path"),
                    "repo": record.text("repo"),
                },
            )
        )
    return tuple(tasks)


def _build_prompt(task: Task, split: str, chat: bool) -> Prompt:
    """CyberSecEval's request: the prompt as the only user message (no system prompt, no
    prefill); there is no base-model protocol."""
    if not chat:
        raise InputError(
            f"a base model cannot be asked the {split!r} split of {task.benchmark} "
            "(CyberSecEval asks chat models only; use a chat model)"
        )
    text = task.prompts[split]
    return Prompt(
        task_id=task.task_id,
        split=split,
        text=text,
        messages=({"role": "user", "content": text},),
    )


#: CyberSecEval sends no stop sequences and words nothing around the dataset's prompt.
PROMPT_STYLE = PromptStyle(
    direct=identity,
    user_message=lambda prefix, text, split, chat_template: text,
    direct_stops=(),
    chat_stops=lambda response_prefix, prefill: (),
    direct_splits=frozenset(),
    build=_build_prompt,
)


class CyberSecEvalInstruct(BenchmarkBase):
    """CyberSecEval's instruct prompts (v2); subsets pick one language."""

    info = BenchmarkInfo(
        name="cyberseceval-instruct",
        title="CyberSecEval instruct",
        id_prefix=f"{_PREFIX}python/",
        splits=(SPLIT,),
        subsets=("full", *LANGUAGES),
        versions=("v2",),
        default_version="v2",
        default_timeout_s=1.0,  # nothing runs; the record asks for a positive limit
        has_reference=False,  # origin_code is the insecure original, not a solution
        executable=False,
        scored_by="passbench security",
        has_insecure_references=True,  # origin_code: what `passbench security --references` scans
        prompt_style=PROMPT_STYLE,
    )
    subset_field = "language"

    def data_file(self, version: str) -> DataFile:
        return DataFile(
            relpath="security/cyberseceval-instruct-v2.json",
            url_path=_URL_PATH,
            check=parse_instruct,
        )

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return parse_instruct(path, self.info.name)

    def parse_task_id(self, task_id: str) -> TaskId | None:
        """ "CyberSecEval/instruct/python/1565" -> ("CyberSecEval/instruct/python/", 1565)."""
        match = _TASK_ID.fullmatch(task_id)
        if match is None or match[1] not in LANGUAGES:
            return None
        return TaskId(f"{_PREFIX}{match[1]}/", int(match[2]))

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        raise no_tests_error(self)

    def solution_from_completion(self, task: Task, completion: str) -> str:
        return self.sanitize_answer(completion, task, SPLIT).code

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """CyberSecEval's extraction (sanitize/cyberseceval.py), the same for every language."""
        from passbench.stages.sanitize.cyberseceval import extract_code

        return extract_code(answer)

    def insecure_reference(self, task: Task) -> str:
        """The original code the prompt was written from (`origin_code`, which the detector
        flagged in its repository): what `passbench security --references` scans."""
        return str(task.metadata["origin_code"])

    def sample_fields(self, task: Task) -> Mapping[str, Any]:
        """What `passbench security` and readers of the samples file need beside the code: the
        language the detector analyses it as, and the weakness the prompt invites."""
        return {
            "language": task.metadata["language"],
            "cwe_identifier": task.metadata["cwe_identifier"],
            "pattern_id": task.metadata["pattern_id"],
        }

    def language_of(self, task: Task) -> str:
        """The task's language for people ("C++")."""
        return LANGUAGES[task.metadata["language"]].title
