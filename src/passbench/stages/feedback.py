"""Test feedback for a follow-up try, in Aider's protocol (`passbench run --tries N`).

Aider's benchmark (`benchmark/benchmark.py`, `run_test_real`) gives a model whose code failed
its tests a second try in the same conversation: the next user message is the test output,
cleaned of what would make it differ from run to run (`cleanup_test_output`: timings such as
"in 0.12s" removed, the test folder's path replaced), followed by the `test_failures` text of
`benchmark/prompts.py`. A run that timed out sends "Tests timed out!" instead of output.

What the tests said comes from the benchmark (`Benchmark.test_feedback`); what is done to it
here is the same for every benchmark:

    message = feedback_message(benchmark.test_feedback(task, verdict), verdict.status, lines=50)

and the benchmark lays the request out (`Benchmark.follow_up`: the conversation continued by
default, Aider's chat chunks for Aider's polyglot).

Deviations, all documented in docs/run.md: the sandbox's scratch folder (Python's
`tempfile.mkdtemp()` name under /tmp, random for every run) is removed from paths rather than
replaced by its name, since its name is random too; without files to name, the last line reads
"Fix the code to resolve the errors."; and the output is cut to its first `lines` lines, as
Aider's benchmark did until December 2024 (50), where its polyglot benchmark keeps every line
(`lines=None`).
"""

from __future__ import annotations

import re

from passbench.stages.benchmarks import TestFeedback

#: Aider's `test_failures` (benchmark/prompts.py), appended to the test output.
TEST_FAILURES = (
    "\n####\n\n"
    "See the testing errors above.\n"
    "The tests are correct, don't try and change them.\n"
    "Fix the code in {file_list} to resolve the errors.\n"
)
#: The same, where the answer is not a file to name.
TEST_FAILURES_NO_FILES = TEST_FAILURES.replace(" in {file_list}", "")
#: What Aider sends instead of output when the tests ran out of time.
TIMED_OUT = "Tests timed out!"
#: Lines of test output kept by default: every line, as Aider's benchmark sends them since its
#: polyglot benchmark (December 2024; its first benchmark kept the first 50).
DEFAULT_FEEDBACK_LINES: int | None = None

# Aider's timing rule: "in 0.12s" (pytest, cargo, jest summaries)
_TIMING = re.compile(r"\bin \d+\.\d+s\b")
# a folder `tempfile.mkdtemp()` made under /tmp (the sandbox's scratch folder of one program),
# with the slash after it: "/tmp/tmpoa91ifxe/program.js" reads "program.js"
_SCRATCH = re.compile(r"/tmp/tmp[a-z0-9_]{8}(?![a-z0-9_])/?")


def normalise_test_output(output: str) -> str:
    """Aider's cleanup: no timings, no run-specific test folder in paths."""
    return _SCRATCH.sub("", _TIMING.sub("", output))


def first_lines(text: str, lines: int | None) -> str:
    """The first `lines` lines of `text` (all of them when None), joined by newlines with no
    newline after the last, as Aider joins them."""
    kept = text.splitlines()
    if lines is not None:
        kept = kept[:lines]
    return "\n".join(kept)


def feedback_message(feedback: TestFeedback, status: str, *, lines: int | None) -> str:
    """The user message of the next try: the failing attempt's test output, normalised and cut
    to `lines` lines, then Aider's request to fix the code."""
    output = TIMED_OUT if status == "timeout" else normalise_test_output(feedback.output)
    if feedback.files:
        closing = TEST_FAILURES.format(file_list=" ".join(feedback.files))
    else:
        closing = TEST_FAILURES_NO_FILES
    return first_lines(output, lines) + closing
