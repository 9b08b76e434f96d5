"""Aider's polyglot benchmark (Aider-AI/polyglot-benchmark): 225 Exercism exercises in C++, Go,
Java, JavaScript, Python and Rust, where the model edits the exercise's files and the
exercise's own test suite judges them.

- Data: one JSON-lines file per language (`aider-polyglot/<language>.jsonl.gz`, see its
  PROVENANCE.md); subsets are the languages.
- Splits are Aider's edit formats: `whole` (whole-file listings) and `diff` (SEARCH/REPLACE
  blocks). The prompt is Aider's chat for that format (prompts.py); the answer is applied to the
  stub files as Aider applies it (edits.py), and a malformed answer is recorded on its sample.
- The files the model sees and edits are the exercise's solution files less what Aider
  ignores (CMakeLists.txt, Cargo.toml, .meta/, .docs/, tests, examples); tests are never shown.
- A solution is a JSON object: `files` (path in the exercise -> text), and for an answer its
  `edit_format` and `malformed` (Aider's error text, "" when well formed; `run` sends it back
  as Aider's reflection, `max_reflections` times), and for a conversation of several answers
  (reflections, tries: each applied over the ones before) `malformed_responses`. A plain text
  is taken as the text of the exercise's first file to edit.
- Grading (toolchains.py): the exercise folder rebuilt from the dataset (tests, build files,
  helpers) with the solution's files over the stubs (a solution cannot replace a test or build
  file: the known exploit, aider #5681), all tests enabled, Aider's test command per language,
  stderr joined to stdout, 180 s; pass when it exits 0. A failing verdict keeps the test
  output, cleaned as Aider cleans it before sending it back (`test_output` in the result file).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passbench.core.errors import DatasetError, InputError, UnknownNameError
from passbench.core.progress import Progress
from passbench.core.records import Exchange, ExecResult, ProcessSpec, Prompt, Task
from passbench.core.runs import SampleResult
from passbench.stages.benchmarks._fields import RecordReader
from passbench.stages.benchmarks.aider_polyglot import prompts
from passbench.stages.benchmarks.aider_polyglot.catch_main import (
    CATCH_MAIN_CACHE,
    LAUNCHER,
    launcher_text,
)
from passbench.stages.benchmarks.aider_polyglot.edits import APPLIERS, Applied
from passbench.stages.benchmarks.aider_polyglot.toolchains import (
    JS_PACKAGES,
    TEST_TIMEOUT_S,
    TRACKS,
    cpp_threads_at_once,
    go_root,
    js_workers_at_once,
    missing_assertj,
    missing_go_packages,
    missing_requirement,
    node_workers_fit,
    requirements,
    tool_present,
)
from passbench.stages.benchmarks.base import (
    BenchmarkBase,
    BenchmarkInfo,
    LoadedBenchmark,
    TaskId,
    TestFeedback,
    ToolCheck,
    check_subset,
    check_version,
    recorded_test_output,
)
from passbench.stages.benchmarks.data import DataFile, DataSettings, read_jsonl, resolve
from passbench.stages.benchmarks.prompting import PromptStyle, identity
from passbench.stages.sandbox.base import Limits
from passbench.stages.sandbox.remote.images import Toolchains

if TYPE_CHECKING:
    from passbench.stages.sanitize import SanitizeResult

LANGUAGES = ("cpp", "go", "java", "javascript", "python", "rust")
EDIT_FORMATS = ("whole", "diff")
ID_PREFIX = "AiderPolyglot/"
_ID = re.compile(r"AiderPolyglot/(0|[1-9][0-9]*)(/[a-z]+/[a-z0-9-]+)")
#: files Aider never lets the model edit, whatever the config says (run_test_real)
_NEVER_EDITED = frozenset({"CMakeLists.txt", "Cargo.toml"})
#: folders that never reach the sandbox: write-ups and reference solutions
_HIDDEN = (".meta/", ".docs/", ".approaches/", ".articles/")
_SOURCE = "Aider-AI/polyglot-benchmark@7e0611e77b54e2dea774cdc0aa00cf9f7ed6144f"
_SCRIPT = ".passbench-test.sh"
_SOLUTION = ".passbench-solution.json"
#: the test output Aider sends back: timings removed (cleanup_test_output)
_TIMING = re.compile(r"\bin \d+\.\d+s\b")
_LAZY = re.compile(r"^[+]? *[#].* [.][.][.] ", re.MULTILINE)  # Aider's lazy-comment count
#: bytes of each stream a test run keeps in the sandbox (the verdict keeps the last 4096)
OUTPUT_CAP = 1 << 16


# ---- the data -----------------------------------------------------------------------------------


def _editable(config: Mapping[str, Any], record: RecordReader) -> list[str]:
    files = config.get("files")
    if not isinstance(files, dict) or not isinstance(files.get("solution"), list):
        raise record.error("config", "no files.solution list")
    ignored = set(files.get("test", [])) | set(files.get("example", [])) | _NEVER_EDITED
    return [
        path
        for path in files["solution"]
        if path not in ignored and not path.startswith((".meta/", ".docs/"))
    ]


def _common_root(paths: Sequence[str]) -> str:
    """The folder Aider's paths are relative to: the only file's folder, else the files'
    common folder (`find_common_root`)."""
    return posixpath.dirname(paths[0]) if len(paths) == 1 else posixpath.commonpath(paths)


def _shown_names(paths: Sequence[str]) -> dict[str, str]:
    """Each file's name as Aider shows it (`get_rel_fname`) -> its path in the exercise."""
    root = _common_root(paths)
    return {posixpath.relpath(path, root or "."): path for path in paths}


def _reference(
    examples: Mapping[str, str], stubs: Mapping[str, str], language: str, record: RecordReader
) -> dict[str, str]:
    """The reference solution as files over the stubs: each example file replaces the stub of
    the same kind (Java's by class name under src/main/java)."""
    files = dict(stubs)
    for path, text in examples.items():
        name = posixpath.basename(path)
        if language == "java":
            files[f"src/main/java/{name}"] = text
            continue
        suffix = posixpath.splitext(name)[1]
        same = [stub for stub in stubs if stub.endswith(suffix)]
        if len(same) != 1:
            raise record.error("example_files", f"no single stub for {path}")
        files[same[0]] = text
    return files


def _support_files(raw: Mapping[str, Any], editable: Sequence[str]) -> dict[str, str]:
    """Every file of the exercise the tests run with, less what the model edits and what must
    not reach the sandbox (reference solutions, write-ups, docs)."""
    files: dict[str, str] = {}
    for group in ("solution_files", "test_files", "other_files"):
        for path, text in dict(raw.get(group) or {}).items():
            if path in editable or path.startswith(_HIDDEN):
                continue
            files[path] = str(text)
    return files


def parse_language_file(path: Path, language: str, benchmark: str, start: int) -> list[Task]:
    """Tasks of one language file; ids are numbered on from `start` (the file order)."""
    tasks: list[Task] = []
    for line, raw in read_jsonl(path):
        record = RecordReader(raw, path, line)
        if record.text("language") != language:
            raise record.error("language", f"expected '{language}'")
        exercise = record.text("exercise")
        config = raw.get("config")
        if not isinstance(config, dict):
            raise record.error("config", "not an object")
        editable = _editable(config, record)
        solution_files = dict(raw.get("solution_files") or {})
        stubs = {p: str(solution_files[p]) for p in editable if p in solution_files}
        if not stubs:
            raise record.error("solution_files", "no file to edit")
        shown = _shown_names(list(stubs))
        introduction = raw.get("introduction")
        file_list = " ".join(posixpath.basename(p) for p in stubs)
        request = prompts.instructions(
            str(introduction) if introduction else None, record.text("instructions"), file_list
        )
        support = _support_files(raw, editable)
        tests = [str(p) for p in config["files"].get("test", [])]
        reference = _reference(dict(raw.get("example_files") or {}), stubs, language, record)
        tasks.append(
            Task(
                benchmark=benchmark,
                task_id=f"{ID_PREFIX}{start + len(tasks)}/{language}/{exercise}",
                entry_point=exercise,
                # "complete": the request alone, which `tasks list` and `show` summarise
                prompts={"complete": request, **{split: request for split in EDIT_FORMATS}},
                code_prompt="",
                test=json.dumps({p: support[p] for p in tests if p in support}),
                canonical_solution=json.dumps({"files": reference}),
                metadata={
                    "language": language,
                    "exercise": exercise,
                    "stubs": stubs,
                    "shown": shown,
                    "support": support,
                    "tests": tests,
                    "requirements": requirements(language, support),
                    "reference_needs": _reference_needs(raw, language, support),
                },
            )
        )
    if not tasks:
        raise DatasetError(f"{path}: no exercises in file")
    return tasks


def _reference_needs(
    raw: Mapping[str, Any], language: str, support: Mapping[str, str]
) -> tuple[str, ...]:
    """Crates the Rust reference uses that the exercise's Cargo.toml does not declare (Exercism
    builds the reference with .meta/Cargo-example.toml; Aider, and passbench, with Cargo.toml)."""
    if language != "rust":
        return ()
    example = dict(raw.get("other_files") or {}).get(".meta/Cargo-example.toml")
    if not example:
        return ()
    declared = set(requirements(language, support))
    return tuple(c for c in requirements(language, {"Cargo.toml": example}) if c not in declared)


def _data_file(language: str) -> DataFile:
    relpath = f"aider-polyglot/{language}.jsonl.gz"
    return DataFile(
        relpath=relpath,
        # not published in this form (built from the exercise folders of _SOURCE): the data
        # folder or the cache must hold it; `load` never downloads it
        url_path=relpath,
        check=lambda path: parse_language_file(path, language, AiderPolyglot.info.name, 0),
    )


# ---- solutions ------------------------------------------------------------------------------


def solution_files(task: Task, code: str) -> dict[str, str]:
    """The files a solution gives (path in the exercise -> text)."""
    stubs: Mapping[str, str] = task.metadata["stubs"]
    try:
        data = json.loads(code)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("files"), dict):
        return {str(path): str(text) for path, text in data["files"].items()}
    return {next(iter(stubs)): code}  # plain text: the first file to edit


def _safe(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def exercise_files(task: Task, code: str) -> dict[str, str]:
    """The exercise folder the tests run in: support files, then the stubs overlaid by the
    solution's files (never over a support file: tests and build files are restored), with every
    test enabled as Aider enables them."""
    support: dict[str, str] = dict(task.metadata["support"])
    files = dict(task.metadata["stubs"])
    for path, text in solution_files(task, code).items():
        if _safe(path) and path not in support and not path.startswith(_HIDDEN):
            files[path] = text
    language = task.metadata["language"]
    for path in task.metadata["tests"]:
        if path not in support:
            continue
        if language == "java":  # benchmark.py: re.sub(r"@Disabled\([^)]*\)\s*\n", "", ...)
            support[path] = re.sub(r"@Disabled\([^)]*\)\s*\n", "", support[path])
        elif language == "javascript" and path.endswith(".spec.js"):  # npm-test.sh's sed
            support[path] = re.sub(r"\bxtest\(", "test(", support[path])
    return {**support, **files}


def clean_test_output(output: str, exercise: str) -> str:
    """The test output as Aider sends it back: timings ("in 0.12s") removed, the exercise's
    folder named by its name only."""
    output = _TIMING.sub("", output)
    return re.sub(rf"/tmp/[^/\s]+/{re.escape(exercise)}\b", exercise, output)


# ---- the benchmark -------------------------------------------------------------------------


def _stub_files(task: Task) -> dict[str, str]:
    """The files to edit as the model first sees them: shown name -> stub, in name order."""
    shown: Mapping[str, str] = task.metadata["shown"]
    stubs: Mapping[str, str] = task.metadata["stubs"]
    return {name: stubs[path] for name, path in sorted(shown.items())}


def build_prompt(task: Task, split: str, chat: bool) -> Prompt:
    if not chat:
        raise InputError(
            f"{task.benchmark} asks chat models only (Aider's chat): a base model cannot take "
            "its prompts",
            field="model",
        )
    chat_messages = prompts.messages(split, _stub_files(task), task.prompts[split])
    return Prompt(task.task_id, split, chat_messages[-1]["content"], tuple(chat_messages))


def _no_direct(prefix: str, task_prompt: str, split: str, chat_template: bool) -> str:
    return task_prompt


class AiderPolyglot(BenchmarkBase):
    info = BenchmarkInfo(
        name="aider-polyglot",
        title="Aider polyglot",
        id_prefix=ID_PREFIX,
        splits=EDIT_FORMATS,
        subsets=("full", *LANGUAGES),
        versions=("7e0611e",),
        default_version="7e0611e",
        default_timeout_s=TEST_TIMEOUT_S,
        max_reflections=3,  # base_coder.py: an edit that cannot be applied is sent back 3 times
        programming_language="C++, Go, Java, JavaScript, Python, Rust",
        subset_sizes={
            "full": 225,
            "cpp": 26,
            "go": 39,
            "java": 47,
            "javascript": 49,
            "python": 34,
            "rust": 30,
        },
        prompt_style=PromptStyle(
            direct=identity,
            user_message=_no_direct,
            direct_stops=(),
            chat_stops=lambda response_prefix, prefill: (),
            direct_splits=frozenset(),  # chat models only, as Aider
            build=build_prompt,
        ),
    )

    def language_of(self, task: Task) -> str:
        return TRACKS[str(task.metadata["language"])].title

    def data_file(self, version: str) -> DataFile:
        return _data_file(LANGUAGES[0])

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        """Tasks of one language file (its first row names the language)."""
        for _, raw in read_jsonl(path):
            language = str(raw.get("language"))
            if language not in LANGUAGES:
                raise DatasetError(f"{path}: line 1: field 'language': not one of {LANGUAGES}")
            return tuple(parse_language_file(path, language, self.info.name, 0))
        raise DatasetError(f"{path}: no exercises in file")

    def load(
        self,
        version: str | None = None,
        subset: str = "full",
        *,
        data: DataSettings | None = None,
        progress: Progress | None = None,
    ) -> LoadedBenchmark:
        """Every language's file from the data folder or the cache (never downloaded: the
        files are passbench's conversion of the exercise folders); `--dataset-path` gives one
        language's file alone."""
        version = check_version(self, version)
        subset = check_subset(self, subset)
        data = replace(data or DataSettings(), download=False)
        if data.dataset_path is not None:
            source = resolve(_data_file(LANGUAGES[0]), data, explicit=data.dataset_path)
            every = self.parse_tasks(source.path)
            chosen = tuple(t for t in every if subset in ("full", t.metadata["language"]))
            if not chosen:
                raise UnknownNameError(f"{data.dataset_path} holds no {subset} exercises")
            return LoadedBenchmark(self.info.name, version, subset, chosen, (source,), every)
        sources = []
        tasks: list[Task] = []
        for language in LANGUAGES:
            try:
                source = resolve(_data_file(language), data, progress=progress)
            except DatasetError as error:
                raise DatasetError(
                    f"{error} (the files are a conversion of {_SOURCE}: see docs/benchmarks.md)"
                ) from None
            sources.append(source)
            tasks += parse_language_file(source.path, language, self.info.name, len(tasks))
        every = tuple(tasks)
        chosen = tuple(t for t in every if subset in ("full", t.metadata["language"]))
        # every subset records all six files, in one order: a subset's tasks are the full set's
        return LoadedBenchmark(self.info.name, version, subset, chosen, tuple(sources), every)

    def parse_task_id(self, task_id: str) -> TaskId | None:
        """`AiderPolyglot/<n>/<language>/<exercise>` -> (`AiderPolyglot/`, n, the rest)."""
        match = _ID.fullmatch(task_id)
        if match is None:
            return None
        return TaskId(ID_PREFIX, int(match.group(1)), match.group(2))

    # ---- answers ----

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """The answer applied to the stubs in the split's edit format; not ok when Aider would
        count it malformed (the edits that did apply are kept, as Aider keeps them)."""
        return self.sanitize_answers((answer,), task, split)

    def sanitize_answers(self, answers: Sequence[str], task: Task, split: str) -> SanitizeResult:
        """The answers of one exercise's conversation applied in turn, each over the files the
        ones before left (Aider's files keep every edit across reflections and tries). The
        solution records `malformed`, the last answer's error ("" when it applied), and
        `malformed_responses`, how many answers were malformed (Aider's
        num_malformed_responses for the case); the error is also the reflection Aider sends."""
        from passbench.stages.sanitize import SanitizeResult

        given = _solution_object(answers[-1])
        if given is not None:  # already a solution (a re-evaluation, a reference)
            return SanitizeResult(json.dumps(given, indent=1), True, "", "solution")
        applied = _apply_conversation(answers, task, split)
        error = applied.last.malformed
        solution: dict[str, Any] = {"edit_format": applied.edit_format, "malformed": error}
        if len(answers) > 1:
            solution["malformed_responses"] = applied.malformed_responses
        solution["files"] = applied.exercise_files(task)
        code = json.dumps(solution, indent=1)
        if error:
            return SanitizeResult(code, False, "malformed edit: " + error, split, reflection=error)
        return SanitizeResult(code, True, "", applied.edit_format)

    def reflection(self, answers: Sequence[str], task: Task, split: str) -> str:
        """What Aider sends back after the last answer, within the same try: a malformed
        edit's error text; else, when the answer edited files, the lint errors of those files
        (Aider's lint reflection, lint.py); "" when the answer stands."""
        if _solution_object(answers[-1]) is not None:
            return ""
        applied = _apply_conversation(answers, task, split)
        if applied.last.malformed:
            return applied.last.malformed
        from passbench.stages.benchmarks.aider_polyglot.lint import lint_edited

        return lint_edited(applied.last.files, applied.last.edited, applied.folder(task))

    def follow_up(
        self, prompt: Prompt, exchanges: Sequence[Exchange], task: Task, split: str
    ) -> Prompt:
        """The request Aider's coder sends after `exchanges` (prompts.py `follow_up`): an
        applied answer's exchange moved before the files with "I updated the files." / "Ok.",
        the files shown as every answer left them, the reminder on the new message. Built from
        the task as the first request is (`prompt` is that request)."""
        edit_format = split if split in APPLIERS else "whole"
        chat = prompts.follow_up(edit_format, _stub_files(task), task.prompts[split], exchanges)
        return Prompt(task.task_id, split, chat[-1]["content"], tuple(chat))

    def solution_from_completion(self, task: Task, completion: str) -> str:
        """A samples file's `completion` (Aider has no completion prompt): the text of the
        first file to edit, less one fence around it."""
        fenced = re.fullmatch(r"\s*```[\w+-]*\n(.*?)\n?```\s*", completion, re.DOTALL)
        return fenced.group(1) + "\n" if fenced else completion

    def canonical_code(self, task: Task) -> str:
        return task.canonical_solution

    # ---- programs ----

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        exercise = str(task.metadata["exercise"])
        track = TRACKS[str(task.metadata["language"])]
        files = {f"{exercise}/{path}": text for path, text in exercise_files(task, code).items()}
        files[_SCRIPT] = track.test_script(exercise)  # hidden beside the exercise folder
        if track.key == "cpp":
            files[LAUNCHER] = launcher_text()  # Catch2's main from its cache (catch_main.py)
        return {
            # the solution as given, for the record (the files below are what runs)
            "source": code,
            "style": "process",
            "timeout_s": timeout_s + 15.0,
            "process": ProcessSpec(
                filename=_SOLUTION,
                build=(),
                run=("sh", f"{{dir}}/{_SCRIPT}"),
                build_timeout_s=TEST_TIMEOUT_S,
                run_timeout_s=timeout_s,
                output_cap=OUTPUT_CAP,
                files=tuple(sorted(files.items())),
            ),
        }

    def verdict_fields(self, task: Task, result: ExecResult) -> Mapping[str, Any]:
        """Aider's per-case counts, and for a failure the test output Aider would send back
        (the last 4096 characters the verdict keeps, cleaned)."""
        output = str(result.details.get("ALL", "")) or result.stdout_tail
        lines = output.splitlines()
        fields: dict[str, Any] = {
            "test_timeout": result.status == "timeout",
            "syntax_errors": sum(line.startswith("SyntaxError") for line in lines),
            "indentation_errors": sum(line.startswith("IndentationError") for line in lines),
        }
        if result.status != "pass":
            fields["test_output"] = (
                "Tests timed out!"
                if result.status == "timeout"
                else clean_test_output(output, str(task.metadata["exercise"]))
            )
        return fields

    def test_feedback(self, task: Task, result: SampleResult) -> TestFeedback:
        """Aider's second-try material: the test output (the folder named by the exercise;
        "Tests timed out!" for a timeout, as Aider says it) and the files to fix, by base name."""
        files = tuple(posixpath.basename(path) for path in task.metadata["stubs"])
        if result.status == "timeout":
            return TestFeedback("Tests timed out!", files)
        output = recorded_test_output(result)
        return TestFeedback(clean_test_output(output, str(task.metadata["exercise"])), files)

    def extra_scores(
        self, entries: Sequence[Mapping[str, Any]], ks: Iterable[int]
    ) -> Mapping[str, Any]:
        """Aider's summary (benchmark.py `summarize_results`) over the samples: pass_rate_1 and
        percent_cases_well_formed as fractions, per language too; counts of malformed answers,
        syntax and indentation errors, lazy comments and test timeouts."""
        if not entries:
            return {}
        scores: dict[str, Any] = {}
        malformed = [_malformed(entry) for entry in entries]
        scores["pass_rate_1"] = sum(e["status"] == "pass" for e in entries) / len(entries)
        # a case is well formed when none of its answers was malformed (reflections included)
        scores["percent_cases_well_formed"] = 1 - sum(map(bool, malformed)) / len(entries)
        for language in LANGUAGES:
            mine = [e for e in entries if _language(e) == language]
            if mine:
                passed = sum(e["status"] == "pass" for e in mine)
                scores[f"pass_rate_1_{language}"] = passed / len(mine)
        scores["num_malformed_responses"] = sum(malformed)
        for count in ("syntax_errors", "indentation_errors"):
            scores[count] = sum(int(e.get(count) or 0) for e in entries)
        scores["lazy_comments"] = sum(
            len(_LAZY.findall(str(e.get("raw_solution") or ""))) for e in entries
        )
        scores["test_timeouts"] = sum(bool(e.get("test_timeout")) for e in entries)
        return scores

    # ---- toolchains ----

    def toolchains(self) -> Toolchains | None:
        packages = tuple(dict.fromkeys(p for t in TRACKS.values() for p in t.debian_packages))
        tools = tuple(dict.fromkeys(x for t in TRACKS.values() for x in t.tools))
        return Toolchains(packages, tools)

    def toolchain_checks(self) -> tuple[ToolCheck, ...]:
        """Aider's linters (lint.py), then per language: its tools, then the exercises that
        cannot run here and why."""
        from passbench.stages.benchmarks.aider_polyglot.lint import LINTERS, available

        missing = available()
        checks = [ToolCheck("lint: " + LINTERS, missing is None, missing or "found")]
        for track in TRACKS.values():
            fix = "apt-get install " + " ".join(track.debian_packages)
            needs = {tool: fix for tool in track.tools}
            local = "bash scripts/setup.sh --multipl-e"
            needs.update({tool: local for tool in track.local_tools})
            for tool, how in needs.items():
                where = tool_present(tool)
                detail = where or f"missing ({how})"
                checks.append(ToolCheck(f"{track.key}: {tool}", where is not None, detail))
        checks.append(_catch_main_check())
        checks += self._exercises_that_cannot_run()
        return tuple(checks)

    def _exercises_that_cannot_run(self) -> list[ToolCheck]:
        try:
            tasks = self.load(data=DataSettings.from_env(_environ())).all_tasks
        except (DatasetError, UnknownNameError) as error:
            return [ToolCheck("aider-polyglot data", False, str(error))]
        checks = []
        root = go_root()
        for task in tasks:
            language = str(task.metadata["language"])
            if language == "go":
                reference = json.loads(task.canonical_solution)["files"].values()
                lacking = missing_go_packages(list(reference), root)
                if lacking:
                    checks.append(
                        ToolCheck(
                            f"go: {task.metadata['exercise']}",
                            False,
                            f"cannot run here: its reference imports {', '.join(lacking)}, "
                            "which this Go's standard library lacks (newer Go; Aider's image "
                            "has 1.21)",
                        )
                    )
            checks += _limits_and_libraries(task, language)
            needs = task.metadata["reference_needs"]
            if needs:
                checks.append(
                    ToolCheck(
                        f"rust: {task.metadata['exercise']}",
                        False,
                        f"reference cannot run (here or under Aider's harness): it uses the crates "
                        f"{', '.join(needs)}, which the exercise's Cargo.toml does not declare "
                        "(Exercism builds it with .meta/Cargo-example.toml)",
                    )
                )
            for needed in task.metadata["requirements"]:
                why = missing_requirement(language, needed)
                name = f"{language}: {task.metadata['exercise']}"
                if why is not None:
                    checks.append(ToolCheck(name, False, f"cannot run here: {why}"))
                else:
                    checks.append(ToolCheck(name, True, f"{needed}: found"))
        return checks


@dataclass(frozen=True)
class _Conversation:
    """A conversation's answers applied in turn: the last answer's application (every file
    after it, by the name the model saw, and the files it edited) and how many answers were
    malformed."""

    edit_format: str
    last: Applied
    malformed_responses: int

    def exercise_files(self, task: Task) -> dict[str, str]:
        """The files by their path in the exercise (new files relative to the shown folder)."""
        shown: Mapping[str, str] = task.metadata["shown"]
        root = _common_root(list(shown.values()))
        return {
            shown.get(name, posixpath.normpath(posixpath.join(root, name))): text
            for name, text in self.last.files.items()
        }

    def folder(self, task: Task) -> str:
        """The folder the shown names are relative to, from the exercise's parent folder
        (`bowling`, `affine-cipher/src/main/java`): where a compile traceback finds them."""
        root = _common_root(list(task.metadata["shown"].values()))
        return (
            posixpath.join(str(task.metadata["exercise"]), root)
            if root
            else str(task.metadata["exercise"])
        )


def _apply_conversation(answers: Sequence[str], task: Task, split: str) -> _Conversation:
    edit_format = split if split in APPLIERS else "whole"
    shown: Mapping[str, str] = task.metadata["shown"]
    stubs: Mapping[str, str] = task.metadata["stubs"]
    applied = Applied({n: stubs[p] for n, p in shown.items()})
    malformed_responses = 0
    for answer in answers:
        applied = APPLIERS[edit_format](answer, applied.files)
        malformed_responses += bool(applied.malformed)
    return _Conversation(edit_format, applied, malformed_responses)


def _limits_and_libraries(task: Task, language: str) -> list[ToolCheck]:
    """An exercise whose reference cannot pass here for a fact of this machine: a library
    older than its tests need, or the sandbox's default limits (threads, address space)."""
    tests: dict[str, str] = json.loads(task.test)
    name = f"{language}: {task.metadata['exercise']}"
    limits = Limits()
    why = None
    if language == "java":
        library = missing_assertj(tests)
        why = f": {library}" if library else None
    elif language == "cpp":
        threads = cpp_threads_at_once(tests)
        if threads > limits.processes:
            why = (
                f"under the sandbox's default limits: its tests start {threads} threads at "
                f"once, over the {limits.processes} processes a sample may have (RLIMIT_NPROC "
                "counts threads; Limits.processes)"
            )
    elif language == "javascript":
        reference = json.loads(task.canonical_solution)["files"]
        workers = js_workers_at_once(reference, tests)
        if workers and node_workers_fit(workers, limits.memory_mb) is False:
            why = (
                f"under the sandbox's default limits: its reference starts a node worker "
                f"thread per text, {workers} at once in its tests, and node here cannot start "
                f"{workers} within the {limits.memory_mb} MiB address space a sample may have "
                "(probed; --memory-mb 65536 gives them room)"
            )
    return [ToolCheck(name, False, f"cannot run here {why}")] if why else []


def _catch_main_check() -> ToolCheck:
    """Whether C++ builds take Catch2's main from its cache: a speed-up, never a requirement
    (without it each build compiles the main itself, with the same verdict)."""
    entries = sorted(Path(CATCH_MAIN_CACHE).glob("*/main.o"))
    if entries:
        detail = f"{CATCH_MAIN_CACHE} ({len(entries)} recorded; each checked before use)"
    else:
        detail = (
            "not recorded: each C++ build compiles Catch2's main (~20 s of CPU); "
            "bash scripts/setup.sh --multipl-e records it from the data"
        )
    return ToolCheck("cpp: Catch2 main cache", True, detail)


def _solution_object(answer: str) -> dict[str, Any] | None:
    """A solution object ({"files": {path: text}, ...}), alone or as the answer's one fenced
    block, else None."""
    text = answer.strip()
    fenced = re.fullmatch(r"```[\w+-]*\n(.*)\n```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("files"), dict):
        return data
    return None


def _environ() -> Mapping[str, str]:
    import os

    return os.environ


def _malformed(entry: Mapping[str, Any]) -> int:
    """How many of the case's answers were malformed: the solution's `malformed_responses`
    (a conversation of several answers), else 1 when its one answer was."""
    try:
        data = json.loads(str(entry.get("solution") or ""))
    except ValueError:
        return 0
    if not isinstance(data, dict):
        return 0
    count = data.get("malformed_responses")
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    return int(bool(data.get("malformed")))


def _language(entry: Mapping[str, Any]) -> str:
    parts = str(entry.get("task_id", "")).split("/")
    return parts[2] if len(parts) > 3 else ""


__all__ = ["JS_PACKAGES", "AiderPolyglot"]
