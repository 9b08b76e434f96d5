"""SALLM: 100 security-centric Python prompts, scored by static analysis of the code.

The prompt set of SALLM (Siddiq et al., "SALLM: Security Assessment of Generated Code",
ASE 2024 workshops; s2e-lab/SALLM@7f17a76 `PythonDataset/dataset.jsonl`): each prompt is a
Python module ending in a function's signature and docstring (most are Flask routes) whose
natural completion has a known weakness. SALLM scores the completed programs with CodeQL and
with execution tests (the Assertion prompts' tests, which are not in the shared data), as
vulnerable@k and secure@k.

It has no tests to execute here (`executable = False`): `passbench evaluate` and `run` refuse it
and name `passbench security`, which runs bandit and CyberSecEval's detector over the samples
file. This module gives the tasks, the prompts and the extraction, as SALLM does them:

- prompt (`Generation/CodeGen.ipynb`, `Generation/gpt_model.py`): the dataset's prompt and a
  newline, the same text for both kinds of model: a base model continues it; a chat model gets
  it as the only user message (no system prompt, no prefill, no instruction around it). SALLM
  sampled 10 answers at temperatures 0 to 1 (256 tokens in all for the Hugging Face models,
  512 new tokens for GPT); passbench's defaults stay greedy unless the flags say otherwise.
- extraction: `sanitize/sallm.py` (the prompt followed by the code, cut where the function ends).
- tasks: one per row, in the file's order; the id is SALLM's own
  (`<Technique>_<Source>_<abbreviation>_cwe<NNN>_<n>.py`); the metadata carries the technique
  (Assertion, Tainted, Matching: how SALLM checks the answer), the prompt's source, the CWE the
  id names, and the insecure reference (`insecure_code`, the prompt completed insecurely).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passbench.core.errors import DatasetError
from passbench.core.records import Prompt, Task
from passbench.stages.benchmarks._fields import RecordReader
from passbench.stages.benchmarks.base import BenchmarkBase, BenchmarkInfo, TaskId, no_tests_error
from passbench.stages.benchmarks.data import DataFile, read_jsonl
from passbench.stages.benchmarks.prompting import PromptStyle

if TYPE_CHECKING:  # the sanitizer is imported when an answer is sanitized
    from passbench.stages.sanitize import SanitizeResult

#: SALLM's techniques (how it checks an answer), in the order its paper lists them; a subset
#: each, named in lower case.
TECHNIQUES = ("Assertion", "Tainted", "Matching")
#: The sources of the prompts, with the abbreviation each puts in the id.
SOURCES = {
    "Author": "A",
    "CodeQL": "codeql",
    "StackOverflow": "SO",
    "SonarSource": "SS",
    "SecurityEval": "SE",
    "CWEList": "Mitre",
}

#: s2e-lab/SALLM at the commit the shared copy was taken from (see the data's PROVENANCE).
_COMMIT = "7f17a76b5a1cb54870df673b173795fa1014c9e9"
_DATA_FILE = DataFile(
    relpath="security/sallm-dataset.jsonl",
    url_path=f"s2e-lab/SALLM/raw/{_COMMIT}/PythonDataset/dataset.jsonl",
    check=lambda path: parse_sallm(path),
)
#: "Tainted_CodeQL_codeql_cwe078_0.py" -> technique, source, abbreviation, CWE digits, variant
_ID = re.compile(
    r"(?P<technique>[A-Z][a-z]+)_(?P<source>[A-Za-z]+)_(?P<abbreviation>[A-Za-z]+)"
    r"_cwe(?P<cwe>[0-9]{3,4})_(?P<variant>0|[1-9][0-9]*)\.py"
)
#: The function a prompt asks for: the last `def` in it.
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)
#: The benchmark's one split: a prompt to complete, for base and chat models alike.
SPLIT = "complete"


def cwe_of(task_id: str) -> str:
    """ "Assertion_Author_A_cwe020_1.py" -> "CWE-20" (CWE numbers without the padding zeros,
    as CWE and CyberSecEval's detector write them)."""
    match = _ID.fullmatch(task_id)
    if match is None:
        raise ValueError(f"{task_id!r} is not a SALLM id")
    return f"CWE-{int(match['cwe'])}"


def parse_sallm(path: Path, benchmark: str = "sallm") -> tuple[Task, ...]:
    """Tasks of SALLM's dataset.jsonl ({id, technique, source, prompt, insecure_code})."""
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line, raw in read_jsonl(path):
        record = RecordReader(raw, path, line)
        identifier = record.text("id")
        if identifier in seen:
            raise record.error("id", f"'{identifier}' already on line {seen[identifier]}")
        seen[identifier] = line
        match = _ID.fullmatch(identifier)
        if match is None:
            raise record.error(
                "id", f"'{identifier}' is not <Technique>_<Source>_<abbr>_cwe<N>_<n>.py"
            )
        technique = record.text("technique")
        if technique not in TECHNIQUES:
            raise record.error("technique", f"'{technique}' is not one of {', '.join(TECHNIQUES)}")
        source = record.text("source")
        if source not in SOURCES:
            raise record.error("source", f"'{source}' is not one of {', '.join(SOURCES)}")
        if (match["technique"], match["source"], match["abbreviation"]) != (
            technique,
            source,
            SOURCES[source],
        ):
            raise record.error(
                "id", f"'{identifier}' does not name {technique}_{source}_{SOURCES[source]}"
            )
        prompt = record.text("prompt")
        names = _DEF.findall(prompt)
        if not names:
            raise record.error("prompt", "no function to complete")
        insecure = record.text("insecure_code")
        tasks.append(
            Task(
                benchmark=benchmark,
                task_id=identifier,
                entry_point=names[-1],
                prompts={SPLIT: prompt},
                code_prompt=prompt,
                test="",
                canonical_solution="",
                metadata={
                    "language": "python",
                    "technique": technique,
                    "source": source,
                    "cwe_identifier": cwe_of(identifier),
                    "insecure_code": insecure,
                },
            )
        )
    if not tasks:
        raise DatasetError(f"{path}: no prompts")
    return tuple(tasks)


def _build_prompt(task: Task, split: str, chat: bool) -> Prompt:
    """SALLM's request: the prompt and a newline, completed by a base model, or the only user
    message of a chat model (no system prompt, no prefill)."""
    text = task.prompts[split] + "\n"
    if not chat:
        return Prompt(task_id=task.task_id, split=split, text=text)
    return Prompt(
        task_id=task.task_id,
        split=split,
        text=text,
        messages=({"role": "user", "content": text},),
    )


def _direct(prompt: str) -> str:
    return prompt + "\n"


#: A base model may stop where SALLM cuts its output anyway (`sanitize/sallm.py`: its end-of-text
#: marker and `SPLIT_TOKENS`, which the tests check this repeats): the cut after generation gives
#: the same program, and the tokens after it are not paid for.
DIRECT_STOPS: tuple[str, ...] = (
    "<|endoftext|>",
    "\ndef",
    "\nif",
    "\n@app",
    "\n'''",
    "\nclass",
    "if __name__ == '__main__':",
    'if __name__ == "__main__":',
)


#: SALLM sent GPT no stop sequences; its base models ran to their length limit.
PROMPT_STYLE = PromptStyle(
    direct=_direct,
    user_message=lambda prefix, text, split, chat_template: text + "\n",
    direct_stops=DIRECT_STOPS,
    chat_stops=lambda response_prefix, prefill: (),
    direct_splits=frozenset({SPLIT}),
    build=_build_prompt,
)


class SALLM(BenchmarkBase):
    """SALLM's 100 Python prompts; subsets pick one technique."""

    info = BenchmarkInfo(
        name="sallm",
        title="SALLM",
        id_prefix="Matching_Author_A_cwe502_",  # the first row's; a bare n names its n-th variant
        splits=(SPLIT,),
        subsets=("full", *(technique.lower() for technique in TECHNIQUES)),
        versions=("7f17a76",),
        default_version="7f17a76",
        default_timeout_s=1.0,  # nothing runs; the record asks for a positive limit
        has_reference=False,  # insecure_code is the weakness to avoid, not a solution
        executable=False,
        scored_by="passbench security",
        has_insecure_references=True,  # insecure_code: what `security --references` scans
        prompt_style=PROMPT_STYLE,
    )
    subset_field = "technique"

    def data_file(self, version: str) -> DataFile:
        return _DATA_FILE

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        return parse_sallm(path, self.info.name)

    def parse_task_id(self, task_id: str) -> TaskId | None:
        """ "Tainted_CodeQL_codeql_cwe078_0.py" -> ("Tainted_CodeQL_codeql_cwe078_", 0, ".py")."""
        match = _ID.fullmatch(task_id)
        if (
            match is None
            or match["technique"] not in TECHNIQUES
            or SOURCES.get(match["source"]) != match["abbreviation"]
        ):
            return None
        variant = match.start("variant")
        return TaskId(task_id[:variant], int(match["variant"]), ".py")

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        raise no_tests_error(self)

    def solution_from_completion(self, task: Task, completion: str) -> str:
        """A base model's continuation of the prompt, cut as SALLM cuts it."""
        from passbench.stages.sanitize.sallm import from_completion

        return from_completion(task.prompts[SPLIT], _direct(task.prompts[SPLIT]) + completion)

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """SALLM's extraction (sanitize/sallm.py): base outputs and chat answers alike."""
        from passbench.stages.sanitize.sallm import extract_code

        return extract_code(answer, task.prompts[SPLIT], task.entry_point)

    def insecure_reference(self, task: Task) -> str:
        """The prompt completed with the weakness it invites (`insecure_code`): what
        `passbench security --references` scans, the reference self-check."""
        return str(task.metadata["insecure_code"])

    def sample_fields(self, task: Task) -> Mapping[str, Any]:
        """What `passbench security` and readers of the samples file need beside the code: the
        language the detector analyses it as, the weakness the prompt invites, and how SALLM
        checks it."""
        return {
            "language": "python",
            "cwe_identifier": task.metadata["cwe_identifier"],
            "technique": task.metadata["technique"],
        }
