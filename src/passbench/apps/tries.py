"""Multi-turn runs: `passbench run --tries N`, Aider's second try for any benchmark with tests.

Try 1 is an ordinary run. After try t is evaluated, every sample that failed gets one follow-up
request: its own conversation so far (the prompt, the model's answers) continued with a user
message holding the failing attempt's test output in Aider's protocol (`stages/feedback.py`,
from the benchmark's `test_feedback`), laid out by the benchmark (`follow_up`). Samples that
passed are carried to try t+1 as they are, with no request, and their verdicts with them (the
journal's), so they are not run again. A sample keeps its index across tries: sample i of try
t+1 continues sample i of try t.

Each try has its own files, named after the run's: `STEM.jsonl` for try 1, then
`STEM_try2.jsonl` (`try_files`), with the sanitized file, the journal and the result files
beside each as for any run. So each try resumes like every run: an interrupted try 2 keeps
try 1's files and its own samples, and asks only for the follow-ups it lacks. Every row of a
later try records `try` (the try whose request produced the answer; carried rows keep theirs)
and, for a follow-up, the conversation it was given (`messages`) and what the next try
rebuilds it from (`earlier_answers`, `follow_ups`).

pass@1 after each try is reported as Aider names it: `pass_rate_1`, `pass_rate_2`, ... (here
fractions, as every score in a pass@k file; Aider prints percentages), written into each try's
`_pass_at_k.json` (the rates up to that try).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from passbench.apps.pipeline import (
    GenerationOutcome,
    GenerationSettings,
    RunOutcome,
    SampleFiles,
    generate_samples,
    plan_prompts,
    request_config,
    summarize,
)
from passbench.apps.reflections import Reflections, reflecting_file
from passbench.apps.samplerows import (
    Appender,
    continued,
    follow_up_request,
    read_rows,
    row_key,
    sample_row,
    sanitized_row,
    task_fields,
)
from passbench.core.errors import InputError, SampleFileError
from passbench.core.journal import Journal
from passbench.core.progress import NullProgress, Progress
from passbench.core.records import Prompt, Task
from passbench.core.runs import SampleResult
from passbench.core.samplefile import sample_file_stem, write_json_atomic
from passbench.core.settings import Paths
from passbench.stages.benchmarks import get_benchmark
from passbench.stages.evaluate import EvaluateSettings, EvaluationOutcome, Evaluator
from passbench.stages.evaluate.evaluator import journal_path
from passbench.stages.feedback import DEFAULT_FEEDBACK_LINES, feedback_message
from passbench.stages.providers import ModelRunner, ResponseCache, create_provider
from passbench.stages.results import load_results

#: The refusal for a model that has no conversation to continue.
NO_CONVERSATION = (
    "--tries above 1 needs a chat model: a follow-up continues the conversation, and direct "
    "completion has none"
)


@dataclass(frozen=True)
class TriesSettings:
    """How many tries a run makes, and how much test output a follow-up shows."""

    tries: int = 1
    feedback_lines: int | None = DEFAULT_FEEDBACK_LINES  # None: every line


@dataclass(frozen=True)
class TryOutcome:
    """One try: its files' generation, evaluation and summary, and how its samples came."""

    attempt: int
    run: RunOutcome
    carried: int  # passed at the try before: written with no request
    pass_rate: float | None  # pass@1 after this try (None: no task was scored)


@dataclass(frozen=True)
class TriesOutcome:
    tries: tuple[TryOutcome, ...]

    @property
    def pass_rates(self) -> dict[str, float]:
        """`{"pass_rate_1": pass@1 after try 1, ...}`."""
        return {
            f"pass_rate_{outcome.attempt}": outcome.pass_rate
            for outcome in self.tries
            if outcome.pass_rate is not None
        }


def try_files(files: SampleFiles, attempt: int) -> SampleFiles:
    """Try `attempt`'s sample files: the run's own for try 1, `<stem>_try<N>.jsonl` (and its
    sanitized twin) for the later ones."""
    if attempt == 1:
        return files
    return SampleFiles.beside(
        files.raw.with_name(f"{sample_file_stem(files.raw)}_try{attempt}.jsonl")
    )


def check_conversation(generation: GenerationSettings, tries: int) -> None:
    """Refuse, before anything runs, more than one try for a model asked to complete text."""
    if tries > 1 and generation.chat is False:
        raise InputError(NO_CONVERSATION, field="tries")


async def run_tries(
    generation: GenerationSettings,
    evaluation: EvaluateSettings,
    paths: Paths,
    files: SampleFiles,
    tries: TriesSettings,
    *,
    output_dir: Path,
    cache: ResponseCache | None = None,
    progress: Progress | None = None,
) -> TriesOutcome:
    """Run try 1 into `files` and each later try into `try_files(files, t)`, resuming each."""
    check_conversation(generation, tries.tries)
    progress = progress or NullProgress()
    evaluator = Evaluator(replace(evaluation, samples=files.sanitized), paths, progress)
    tasks = evaluator.tasks
    # one provider for every try: a local model loads once
    provider = create_provider(generation.config)
    try:
        capabilities = generation.config.apply_capabilities(provider.capabilities)
        prompts, use_chat, use_prefill = plan_prompts(
            tasks, generation.split, capabilities, chat=generation.chat, prefill=generation.prefill
        )
        if tries.tries > 1 and not use_chat:  # a local model without a chat template
            raise InputError(NO_CONVERSATION, field="tries")
        if not capabilities.prefill:  # the runner sends no prefix: the answer had none
            prompts = [replace(prompt, response_prefix="") for prompt in prompts]
        config = request_config(
            generation, capabilities, use_chat, use_prefill, benchmark=tasks[0].benchmark
        )
        generated = await generate_samples(
            generation, tasks, files, cache=cache, progress=progress, provider=provider
        )
        outcomes = [_evaluate(evaluator, generated, output_dir, attempt=1, carried=0)]
        _record_pass_rates(outcomes)
        followups = _FollowUps(
            generation.split, tasks, {p.task_id: p for p in prompts}, tries.feedback_lines
        )
        for attempt in range(2, tries.tries + 1):
            runner = ModelRunner(provider, config, cache=cache, progress=progress)
            before = outcomes[-1]
            current = try_files(files, attempt)
            if not generation.resume:
                for path in (current.raw, current.sanitized, reflecting_file(current.raw)):
                    path.unlink(missing_ok=True)
            written, carried = await followups.write(attempt, before.run, current, runner)
            with Journal(journal_path(current.sanitized, output_dir), fingerprint="") as journal:
                journal.adopt(journal_path(before.run.generation.files.sanitized, output_dir))
            generated = GenerationOutcome(
                files=current,
                usage=runner.usage,
                chat=True,
                prefill=use_prefill,
                new_samples=written,
                kept_samples=len(read_rows(current.raw)) - written - carried,
            )
            outcomes.append(_evaluate(evaluator, generated, output_dir, attempt, carried))
            _record_pass_rates(outcomes)
    finally:
        await provider.aclose()
    return TriesOutcome(tuple(outcomes))


def _evaluate(
    evaluator: Evaluator,
    generated: GenerationOutcome,
    output_dir: Path,
    attempt: int,
    carried: int,
) -> TryOutcome:
    sanitized = generated.files.sanitized
    evaluated = evaluator.evaluate_samples(sanitized, output_dir)
    summary = summarize(sanitized, evaluated, (task.task_id for task in evaluator.tasks))
    run = RunOutcome(generation=generated, evaluation=evaluated, summary=summary)
    return TryOutcome(attempt, run, carried, pass_rate(evaluated))


def pass_rate(evaluation: EvaluationOutcome) -> float | None:
    """pass@1 of an evaluation whatever k values it was asked for: over its scored tasks, the
    mean share of their samples that passed (None: no task was scored)."""
    counts = [
        (n, c)
        for task_id, (n, c) in load_results(evaluation.eval_results_path).counts().items()
        if task_id not in evaluation.quarantined
    ]
    if not counts:
        return None
    return sum(c / n for n, c in counts) / len(counts)


def _record_pass_rates(outcomes: Sequence[TryOutcome]) -> None:
    """The last try's pass@k file gains the pass rates up to that try, after its pass@k
    scores (written as each try ends: an interrupted run's finished tries have theirs)."""
    rates = TriesOutcome(tuple(outcomes)).pass_rates
    path = outcomes[-1].run.evaluation.pass_at_k_path
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    scores = {key: value for key, value in document.items() if key.startswith("pass@")}
    rest = {
        key: value
        for key, value in document.items()
        if key not in scores and not key.startswith("pass_rate_")
    }
    write_json_atomic(path, {**scores, **rates, **rest})


class _FollowUps:
    """Writes one try's samples from the try before: carried or asked again."""

    def __init__(
        self,
        split: str,
        tasks: Sequence[Task],
        prompts: Mapping[str, Prompt],
        lines: int | None,
    ) -> None:
        self.split = split
        self.tasks = {task.task_id: task for task in tasks}
        self.prompts = prompts
        self.lines = lines

    async def write(
        self,
        attempt: int,
        before: RunOutcome,
        current: SampleFiles,
        runner: ModelRunner,
    ) -> tuple[int, int]:
        """Append what `current` lacks; returns (follow-ups written, samples carried)."""
        previous = before.generation.files
        earlier = {row_key(row): row for row in read_rows(previous.raw)}
        verdicts = load_results(before.evaluation.eval_results_path)
        rows = [row for row in read_rows(current.raw) if row["task_id"] in self.tasks]
        done = {row_key(row) for row in rows}
        sanitized_done = {row_key(row) for row in read_rows(current.sanitized)}
        raw_out, sanitized_out = Appender(current.raw), Appender(current.sanitized)
        carried = 0
        asked: dict[int, list[Prompt]] = {}
        answered: dict[tuple[str, int], dict[str, Any]] = {}  # what each follow-up continues
        # a follow-up's answer whose edits cannot be applied is asked again (reflections.py)
        reflections = Reflections(
            current.raw, self.tasks, self.prompts, self.split, chat=True, done=done
        )
        written = 0

        def write(row: dict[str, Any]) -> None:
            nonlocal written
            raw_out.write(row)
            sanitized_out.write(self._sanitized(row))
            written += 1

        try:
            for row in rows:  # a crash between the two appends left this one without its twin
                if row_key(row) not in sanitized_done:
                    sanitized_out.write(self._sanitized(row))
            for task_id, samples in verdicts.tasks.items():
                if task_id not in self.tasks:
                    continue
                for verdict in samples:
                    key = (task_id, verdict.sample_index)
                    if key in done or key in reflections.held:
                        continue
                    answer = earlier.get(key)
                    if answer is None:
                        raise SampleFileError(
                            f"no sample {verdict.sample_index} of {task_id}, which "
                            f"{before.evaluation.eval_results_path.name} has a verdict on",
                            path=previous.raw,
                        )
                    if verdict.passed:
                        carried += 1
                        kept = {**answer, "try": answer.get("try", attempt - 1)}
                        raw_out.write(kept)
                        sanitized_out.write(self._sanitized(kept))
                    else:
                        message = self._message(verdict)
                        first = self.prompts[task_id]
                        task = self.tasks[task_id]
                        prompt = follow_up_request(answer, first, task, self.split, message)
                        asked.setdefault(verdict.sample_index, []).append(prompt)
                        answered[key] = continued(answer, first, message)
            for index in sorted(asked):
                await self._ask(attempt, asked[index], index, runner, reflections, write, answered)
            await reflections.settle(runner, write)
        finally:
            reflections.close()
            raw_out.close()
            sanitized_out.close()
        return written, carried

    def _sanitized(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return sanitized_row(row, self.tasks[str(row["task_id"])], self.split)

    def _message(self, verdict: SampleResult) -> str:
        """The user message of a failed sample's next try: its test feedback."""
        task = self.tasks[verdict.task_id]
        feedback = get_benchmark(task.benchmark).test_feedback(task, verdict)
        return feedback_message(feedback, verdict.status, lines=self.lines)

    async def _ask(
        self,
        attempt: int,
        prompts: Sequence[Prompt],
        index: int,
        runner: ModelRunner,
        reflections: Reflections,
        write: Callable[[dict[str, Any]], None],
        earlier: Mapping[tuple[str, int], Mapping[str, Any]],
    ) -> None:
        by_id = {prompt.task_id: prompt for prompt in prompts}
        async for completion in runner.iter_completions(prompts, 1, first_index=index):
            prompt = by_id[completion.task_id]
            row = sample_row(completion, prompt, chat=True)
            row.update(task_fields(self.tasks[completion.task_id]))
            row["try"] = attempt
            row["messages"] = [dict(turn) for turn in prompt.messages]
            row.update(earlier[(completion.task_id, index)])
            if not reflections.hold(row):
                write(row)
