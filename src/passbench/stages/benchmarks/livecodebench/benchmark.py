"""LiveCodeBench's code-generation scenario, as its official runner loads, prompts and grades it.

From LiveCodeBench (github.com/LiveCodeBench/LiveCodeBench, MIT): `lcb_runner/benchmarks/
code_generation.py` (the hub's rows; release versions; public tests as JSON, private tests as
base64 -> zlib -> pickle -> JSON text), `lcb_runner/prompts/code_generation.py` (the generic
chat prompt), `lcb_runner/utils/extraction_utils.py` (the code is the last fenced block) and
`lcb_runner/evaluation/testing_util.py` (grading; see grade.py).

The tests live on the Hugging Face hub (`livecodebench/code_generation_lite`), one jsonl file per
release increment; a release version is a set of those files. They are found like every
benchmark's data (benchmarks/data.py: --dataset-path for one file, the data folder, the cache,
then a download from the hub or the mirror), under `livecodebench/code_generation_lite/`.

Private tests are a pickle of a JSON string. They are unpickled by an Unpickler that refuses
every global, so a hostile file cannot run code: a string needs none.

Task ids are LiveCodeBench's question ids (`abc306_e`, `2730`, `1873_A`). The tests stay on the
trusted side (`Task.metadata["tests"]`); a candidate's program gets the inputs only.
"""

from __future__ import annotations

import ast
import base64
import datetime as _dt
import hashlib
import io
import json
import pickle
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passbench.core.errors import DatasetError, InputError
from passbench.core.progress import Progress
from passbench.core.records import ExecResult, IOSpec, Program, Prompt, Sample, Task
from passbench.core.runs import RunResults
from passbench.stages.benchmarks._fields import RecordReader
from passbench.stages.benchmarks.base import (
    BenchmarkBase,
    BenchmarkInfo,
    LoadedBenchmark,
    TaskId,
    check_subset,
    check_version,
)
from passbench.stages.benchmarks.data import DataFile, DataSettings, read_jsonl, resolve
from passbench.stages.benchmarks.prompting import PromptStyle, identity
from passbench.stages.sandbox.inside import _values

if TYPE_CHECKING:
    from passbench.stages.sanitize import SanitizeResult

#: The hub's public home and the dataset's folder under it (and under a data folder).
HUB = "https://huggingface.co"
_HUB_PATH = "datasets/livecodebench/code_generation_lite/resolve/main"
_LAYOUT = "livecodebench/code_generation_lite"

_INCREMENTS: tuple[str, ...] = ("test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl")
_INCREMENTS += ("test5.jsonl", "test6.jsonl")


def _release_files() -> dict[str, tuple[str, ...]]:
    """code_generation_lite.py's ALLOWED_FILES: release_vN is the first N increments,
    release_latest all of them, vN the Nth alone and vA_vB the Ath to the Bth."""
    files: dict[str, tuple[str, ...]] = {}
    for n in range(1, len(_INCREMENTS) + 1):
        files[f"release_v{n}"] = _INCREMENTS[:n]
    files["release_latest"] = _INCREMENTS
    for n in range(1, len(_INCREMENTS) + 1):
        files[f"v{n}"] = (_INCREMENTS[n - 1],)
    for a in range(1, len(_INCREMENTS) + 1):
        for b in range(a + 1, len(_INCREMENTS) + 1):
            files[f"v{a}_v{b}"] = _INCREMENTS[a - 1 : b]
    return files


RELEASE_FILES: dict[str, tuple[str, ...]] = _release_files()

#: LiveCodeBench's per-test time limit (lcb_runner/runner/parser.py `--timeout`, seconds).
DEFAULT_TIMEOUT_S = 6.0
#: Decompressed private tests larger than this are refused (a zlib bomb is not a test set).
MAX_PRIVATE_TESTS_BYTES = 1 << 30

# -- prompts: lcb_runner/prompts/code_generation.py ----------------------------------------

SYSTEM_MESSAGE = (
    "You are an expert Python programmer. You will be given a question (problem specification) "
    "and will generate a correct Python program that matches the specification and passes all "
    "tests."
)
FORMAT_WITH_STARTER_CODE = (
    "You will use the following starter code to write the solution to the problem and enclose "
    "your code within delimiters."
)
FORMAT_WITHOUT_STARTER_CODE = (
    "Read the inputs from stdin solve the problem and write the answer to stdout (do not "
    "directly test on the sample inputs). Enclose your code within delimiters as follows. "
    "Ensure that when the python program runs, it reads the inputs, runs the algorithm and "
    "writes output to STDOUT."
)


@dataclass(frozen=True)
class LcbTest:
    """One test case as the hub stores it: `input` and `output` are text (JSON lines of the
    arguments and the JSON of the return value for functional tests)."""

    input: str
    output: str
    testtype: str  # "stdin" or "functional"


# -- the hub's rows ------------------------------------------------------------------------


class _NoGlobals(pickle.Unpickler):
    """An Unpickler that refuses every global: what it can build is plain data, never a call."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load the global {module}.{name}")


def decode_private_tests(text: str) -> list[Any]:
    """The private tests' JSON: the text itself when it is JSON (older rows), else base64 ->
    zlib -> a pickled str -> JSON, as LiveCodeBench decodes it but with a restricted pickle.

    ValueError (with the reason) when the text is neither, or the pickle holds anything but a
    string (a pickle that names a global, as os.system, is refused before anything runs)."""
    try:
        value = json.loads(text)
    except ValueError:
        pass
    else:
        if not isinstance(value, list):
            raise ValueError("expected a JSON list of tests")
        return value
    try:
        packed = base64.b64decode(text.encode("utf-8"), validate=True)
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_PRIVATE_TESTS_BYTES)
    except (ValueError, zlib.error) as error:
        raise ValueError(f"neither JSON nor base64-zlib data: {error}") from error
    if inflater.unconsumed_tail:
        raise ValueError(f"decompresses to more than {MAX_PRIVATE_TESTS_BYTES} bytes")
    try:
        decoded = _NoGlobals(io.BytesIO(raw)).load()
    except Exception as error:  # UnpicklingError, EOFError, ... from hostile or damaged bytes
        raise ValueError(f"unsafe or damaged pickle: {error}") from error
    if not isinstance(decoded, str):
        raise ValueError(f"the pickle holds a {type(decoded).__name__}, not a JSON string")
    value = json.loads(decoded)
    if not isinstance(value, list):
        raise ValueError("expected a JSON list of tests")
    return value


def encode_private_tests(tests: Sequence[Mapping[str, str]]) -> str:
    """The hub's encoding of private tests (tests and fixtures write rows with it)."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(list(tests))))).decode()


def _tests(
    reader: RecordReader, field: str, raw: list[Any], func_name: str | None
) -> tuple[LcbTest, ...]:
    tests = []
    for number, item in enumerate(raw):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(key), str) for key in ("input", "output", "testtype")
        ):
            raise reader.error(field, f"test {number}: expected input, output and testtype text")
        if item["testtype"] not in ("stdin", "functional"):
            raise reader.error(field, f"test {number}: unknown testtype {item['testtype']!r}")
        if func_name is not None:  # grade_call_based's parsing, checked once here
            try:
                [json.loads(line) for line in item["input"].split("\n")]
                json.loads(item["output"])
            except ValueError as error:
                raise reader.error(field, f"test {number}: not JSON lines: {error}") from error
        tests.append(LcbTest(item["input"], item["output"], item["testtype"]))
    return tuple(tests)


def contest_date(text: str) -> _dt.datetime:
    """A row's `contest_date` ("2023-08-21T00:00:00"), as datetime.fromisoformat reads it."""
    return _dt.datetime.fromisoformat(text)


def task_from_row(record: dict[str, Any], path: Path, line: int) -> Task:
    """One hub row as a Task (CodeGenerationProblem's fields and checks)."""
    reader = RecordReader(record, path, line)
    metadata_text = reader.text("metadata")
    try:
        meta = json.loads(metadata_text)
    except ValueError as error:
        raise reader.error("metadata", f"not JSON: {error}") from error
    if not isinstance(meta, dict):
        raise reader.error("metadata", "expected a JSON object")
    func_name = meta.get("func_name")
    if func_name is not None and not isinstance(func_name, str):
        raise reader.error("metadata", "func_name is not text")
    try:
        date = contest_date(reader.text("contest_date"))
    except ValueError as error:
        raise reader.error("contest_date", str(error)) from error
    for field, valid in (
        ("platform", ("leetcode", "codeforces", "atcoder")),
        ("difficulty", ("easy", "medium", "hard")),
    ):
        if reader.text(field) not in valid:
            raise reader.error(field, f"expected one of {', '.join(valid)}")
    try:
        public = json.loads(reader.text("public_test_cases"))
    except ValueError as error:
        raise reader.error("public_test_cases", f"not JSON: {error}") from error
    if not isinstance(public, list):
        raise reader.error("public_test_cases", "expected a JSON list")
    try:
        private = decode_private_tests(reader.text("private_test_cases"))
    except ValueError as error:
        raise reader.error("private_test_cases", str(error)) from error
    tests = _tests(reader, "public_test_cases", public, func_name) + _tests(
        reader, "private_test_cases", private, func_name
    )
    question_id = reader.text("question_id")
    starter_code = reader.text("starter_code")
    return Task(
        benchmark="livecodebench",
        task_id=question_id,
        entry_point=func_name or "",
        prompts={"complete": reader.text("question_content")},
        code_prompt=starter_code,
        test="",
        canonical_solution="",
        metadata={
            "question_title": reader.text("question_title"),
            "question_id": question_id,
            "contest_id": reader.text("contest_id"),
            "contest_date": date.isoformat(),
            "platform": reader.text("platform"),
            "difficulty": reader.text("difficulty"),
            "starter_code": starter_code,
            "func_name": func_name,
            "testtype": "functional" if func_name is not None else "stdin",
            "public_tests": len(public),
            "tests": tests,  # public then private, as get_evaluation_sample joins them
        },
    )


def parse_rows(path: Path) -> tuple[Task, ...]:
    """Every row of one hub jsonl file; DatasetError naming file, line and field otherwise."""
    tasks = tuple(task_from_row(record, path, line) for line, record in read_jsonl(path))
    if not tasks:
        raise DatasetError(f"{path}: no problems")
    return tasks


def _file(name: str) -> DataFile:
    return DataFile(
        relpath=f"{_LAYOUT}/{name}",
        url_path=f"{_HUB_PATH}/{name}",
        check=parse_rows,
        home=HUB,
    )


# -- the Benchmark -------------------------------------------------------------------------


_QUESTION_ID = re.compile(r"([a-z]*)(\d+)(_[A-Za-z0-9]+)?")


def _build_prompt(task: Task, split: str, chat: bool) -> Prompt:
    return build_prompt(task, split, chat=chat)


#: LiveCodeBench builds its own messages and sends no stop sequences.
PROMPT_STYLE = PromptStyle(
    direct=identity,
    user_message=lambda prefix, text, split, chat_template: text,
    direct_stops=(),
    chat_stops=lambda response_prefix, prefill: (),
    direct_splits=frozenset(),
    build=_build_prompt,
)


class LiveCodeBench(BenchmarkBase):
    """LiveCodeBench code generation: stdin/stdout and LeetCode (functional) problems."""

    info = BenchmarkInfo(
        name="livecodebench",
        title="LiveCodeBench",
        id_prefix="",
        # one prompt; named as every benchmark's default split (chat models only, see
        # build_prompt)
        splits=("complete",),
        versions=tuple(RELEASE_FILES),
        default_version="release_v5",
        default_timeout_s=DEFAULT_TIMEOUT_S,  # per test, as LiveCodeBench's --timeout
        has_reference=False,  # the hub has tests, no solutions: no ground truth to check
        guess_from_ids=False,  # bare question ids ("2730") say nothing about the benchmark
        prompt_style=PROMPT_STYLE,
    )

    def parse_task_id(self, task_id: str) -> TaskId | None:
        """The platforms' question ids: LeetCode's "2730", AtCoder's "abc306_e", Codeforces'
        "1873_A" -> (letters, number, "_suffix")."""
        match = _QUESTION_ID.fullmatch(task_id)
        if match is None:
            return None
        letters, number, suffix = match.groups()
        if str(int(number)) != number:
            return None
        return TaskId(letters, int(number), suffix or "")

    def load(
        self,
        version: str | None = None,
        subset: str = "full",
        *,
        data: DataSettings | None = None,
        progress: Progress | None = None,
    ) -> LoadedBenchmark:
        """The problems of a release version, sorted by question id as the runner sorts them.
        --dataset-path names one jsonl file of rows, used alone."""
        version = check_version(self, version)
        subset = check_subset(self, subset)
        data = data or DataSettings()
        if data.dataset_path is not None:
            names: tuple[str, ...] = (data.dataset_path.name,)
            files = [resolve(_file(names[0]), data, explicit=data.dataset_path)]
        else:
            names = RELEASE_FILES[version]
            files = [resolve(_file(name), data, progress=progress) for name in names]
        tasks: dict[str, Task] = {}
        for resolved in files:
            for task in parse_rows(resolved.path):
                if task.task_id in tasks:
                    raise DatasetError(f"{resolved.path}: question_id {task.task_id} repeated")
                tasks[task.task_id] = task
        ordered = tuple(sorted(tasks.values(), key=lambda task: task.task_id))
        return LoadedBenchmark(self.info.name, version, subset, ordered, tuple(files))

    def program(
        self,
        task: Task,
        code: str,
        *,
        key: str,
        timeout_s: float,
        expected_duration_s: float | None = None,
    ) -> Program:
        """The io program LiveCodeBench's grader amounts to: the harness, the prepared code,
        the test inputs; `timeout_s` is the per-test limit. The whole program gets
        check_correctness's global limit, (timeout + 1) * tests + 5 seconds."""
        tests: tuple[LcbTest, ...] = task.metadata["tests"]
        func_name = task.metadata["func_name"]
        return Program(
            key=key,
            task_id=task.task_id,
            source=program_source(code, func_name),
            style="io",
            timeout_s=global_timeout_s(timeout_s, len(tests)),
            expected_duration_s=expected_duration_s,
            preload=("unittest.mock",),
            io=IOSpec(
                entry_point="_lcb_run",
                inputs_json=_values.dumps([[test_argument(test, func_name)] for test in tests]),
                time_limits=(timeout_s,) * len(tests),
                want_values=tuple(range(len(tests))),
                guard="lcb",
            ),
        )

    def canonical_code(self, task: Task) -> str:
        raise InputError(
            f"{self.info.name} has no reference solutions ({task.task_id}): there is no ground "
            "truth to run"
        )

    def calibrated_code(self, task: Task, solution: str) -> str:
        return solution

    def solution_from_completion(self, task: Task, completion: str) -> str:
        return extract_code(completion)

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """The program in a chat answer by LiveCodeBench's rule (the last fenced block), in
        place of passbench's Python sanitizer; empty, with the reason, when there is none."""
        from passbench.stages.sanitize import SanitizeResult

        code = extract_code(answer)
        if code:
            return SanitizeResult(code, True, "")
        return SanitizeResult(code, False, "no code block: LiveCodeBench grades the empty program")

    def write_official_results(
        self,
        eval_path: Path,
        samples: Sequence[Sample],
        codes: Sequence[str],
        results: Sequence[ExecResult],
        tasks: Mapping[str, Task],
    ) -> None:
        """`<stem>_codegeneration_output_eval_all.json`, as LiveCodeBench's runner writes it:
        one row per task, its samples in sample-index order."""
        from passbench.stages.benchmarks.livecodebench.eval_all import (
            eval_all_path,
            eval_all_row,
            write_eval_all,
        )
        from passbench.stages.benchmarks.livecodebench.grade import lcb_metadata

        grouped: dict[str, list[tuple[int, Sample, str, ExecResult]]] = {}
        for sample, code, result in zip(samples, codes, results, strict=True):
            grouped.setdefault(sample.task_id, []).append(
                (sample.sample_index, sample, code, result)
            )
        rows = []
        for task_id, items in grouped.items():
            items.sort(key=lambda item: item[0])
            rows.append(
                eval_all_row(
                    tasks[task_id],
                    [s.raw_solution if s.raw_solution is not None else c for _, s, c, _ in items],
                    [code for _, _, code, _ in items],
                    [result.status == "pass" for _, _, _, result in items],
                    [lcb_metadata(result.details) or {} for _, _, _, result in items],
                )
            )
        write_eval_all(eval_all_path(eval_path), rows)

    def read_official_results(self, path: Path) -> RunResults | None:
        """A `*_codegeneration_output_eval_all.json` as a run of this benchmark."""
        from passbench.stages.benchmarks.livecodebench import eval_all

        if not eval_all.looks_like_eval_all(path):
            return None
        return eval_all.run_from_eval_all(path, self.info.name)

    def attach_official_results(self, run: RunResults) -> RunResults:
        """The contest dates, difficulties and platforms of the eval_all file beside the run."""
        from passbench.stages.benchmarks.livecodebench import eval_all

        return eval_all.with_task_info(run)

    def judging(
        self, tasks: Mapping[str, Task]
    ) -> tuple[Callable[[Program], str], Callable[[Program, ExecResult], ExecResult]]:
        """How the evaluator journals and decides this benchmark's programs: a verdict is
        stored under the source, the inputs, the limits and the expected outputs; the sandbox's
        report is graded on the host (grade.judge)."""
        from passbench.stages.benchmarks.livecodebench.grade import judge

        def identity(program: Program) -> str:
            assert program.io is not None
            tests = tasks[program.task_id].metadata["tests"]
            spec = json.dumps([asdict(program.io), program.timeout_s], sort_keys=True)
            digest = hashlib.sha256(program.source.encode("utf-8"))
            for part in (spec, *(test.output for test in tests)):
                digest.update(b"\0" + part.encode("utf-8"))
            return digest.hexdigest()

        def finalize(program: Program, result: ExecResult) -> ExecResult:
            return judge(result, tasks[program.task_id])

        return identity, finalize


def global_timeout_s(timeout_s: float, n_tests: int) -> float:
    """compute_code_generation_metrics.check_correctness's join timeout."""
    return (timeout_s + 1) * n_tests + 5


def test_argument(test: LcbTest, func_name: str | None) -> Any:
    """What `_lcb_run` receives for one test: the stdin text, or the argument list (one JSON
    value per input line, as grade_call_based parses them)."""
    if func_name is None:
        return test.input
    return [json.loads(line) for line in test.input.split("\n")]


# -- preparing the code: testing_util.py -------------------------------------------------

IMPORT_PREFIX = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\n"
    "from random import *\nfrom statistics import *\nfrom itertools import *\n"
    "from functools import *\nfrom operator import *\nfrom io import *\nfrom sys import *\n"
    "from json import *\nfrom builtins import *\nfrom typing import *\nimport string\nimport re\n"
    "import datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\nimport math\n"
    "import random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)


def clean_if_name(code: str) -> str:
    """A final `if __name__ == '__main__':` block replaced by its body."""
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            code = ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)  # type: ignore[arg-type]
    except Exception:  # as LiveCodeBench: code it cannot parse is left as it is
        pass
    return code


def make_function(code: str) -> str:
    """The import prefix, the code's imports, then every other statement inside
    `def wrapped_function():`; the code unchanged when it does not parse."""
    try:
        tree = ast.parse(code)
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        others = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        function = ast.FunctionDef(
            name="wrapped_function",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=others,
            decorator_list=[],
            lineno=-1,
        )
        return (
            IMPORT_PREFIX
            + "\n"
            + ast.unparse(imports)  # type: ignore[arg-type]
            + "\n"
            + ast.unparse(function)
        )
    except Exception:
        return code


def prepared_code(code: str, func_name: str | None) -> str:
    """The code LiveCodeBench executes: grade_call_based's prefix, or grade_stdio's wrapping."""
    if func_name is not None:
        return IMPORT_PREFIX + "\n\n" + code
    return make_function(clean_if_name(code))


_HARNESS = Path(__file__).with_name("_lcb_harness.py")


def program_source(code: str, func_name: str | None) -> str:
    """The io program's source: the harness, the prepared code, and the loading line."""
    return (
        _HARNESS.read_text(encoding="utf-8")
        + f"\n_LCB_CODE = {prepared_code(code, func_name)!r}\n"
        + f"_LCB_FUNC = {func_name!r}\n"
        + "_lcb_method = _lcb_load()\n"
    )


# -- prompts and extraction ----------------------------------------------------------------


def question_prompt(question_content: str, starter_code: str) -> str:
    """get_generic_question_template_answer."""
    prompt = f"### Question:\n{question_content}\n\n"
    if starter_code:
        prompt += f"### Format: {FORMAT_WITH_STARTER_CODE}\n"
        prompt += f"```python\n{starter_code}\n```\n\n"
    else:
        prompt += f"### Format: {FORMAT_WITHOUT_STARTER_CODE}\n"
        prompt += "```python\n# YOUR CODE HERE\n```\n\n"
    prompt += "### Answer: (use the provided format with backticks)\n\n"
    return prompt


def build_prompt(task: Task, split: str, *, chat: bool) -> Prompt:
    """format_prompt_generation for chat models (LMStyle.OpenAIChat and the others that send
    the generic system message and question). LiveCodeBench has no base-model prompt for code
    generation, so neither has passbench."""
    if not chat:
        raise InputError(
            "a base model cannot be asked LiveCodeBench's code-generation prompt (the "
            "official runner has chat prompts only); use a chat model",
            field="chat",
        )
    if split not in task.prompts:
        raise InputError(f"livecodebench has no {split!r} split (it has: complete)", field="split")
    text = question_prompt(task.prompts[split], task.code_prompt)
    return Prompt(
        task_id=task.task_id,
        split=split,
        text=text,
        messages=({"role": "system", "content": SYSTEM_MESSAGE}, {"role": "user", "content": text}),
    )


def extract_code(model_output: str) -> str:
    """extract_code for chat models: the lines between the last two lines holding ```, or ""
    when there are fewer than two."""
    lines = model_output.split("\n")
    fences = [number for number, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])
