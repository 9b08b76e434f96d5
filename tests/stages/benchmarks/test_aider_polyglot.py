"""Aider's polyglot benchmark: the chat Aider sends (tests, reference solutions and write-ups
never shown), both edit formats applied as Aider applies them (malformed answers recorded),
the exercise folder the tests run in (tests restored and all enabled), Aider's scores, and per
language real exercises in the bubblewrap sandbox: the reference passes, the stub fails. The
whole ground truth is `perf/aider_polyglot_ground_truth.py` (docs/benchmarks.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.datasets import DATA_DIR
from tests.stages.sandbox.helpers import bwrap_usable

from passbench.core.records import ErrorCategory, ExecResult, Isolation, Task
from passbench.stages.benchmarks import DataSettings
from passbench.stages.benchmarks.aider_polyglot.benchmark import (
    AiderPolyglot,
    clean_test_output,
    exercise_files,
)
from passbench.stages.benchmarks.aider_polyglot.edits import apply_blocks, apply_whole
from passbench.stages.prompts import build_prompt
from passbench.stages.sandbox import Limits, Sandbox, SandboxConfig, open_sandbox


@pytest.fixture(scope="module")
def tasks(polyglot: AiderPolyglot) -> dict[str, Task]:
    if not (DATA_DIR / "aider-polyglot").is_dir():
        pytest.fail(f"aider-polyglot data not found in {DATA_DIR}; set PASSBENCH_DATA_DIR")
    loaded = polyglot.load(data=DataSettings(data_dir=DATA_DIR, download=False))
    return {
        str(task.metadata["exercise"]) + "/" + task.metadata["language"]: task for task in loaded
    }


def _raw_rows(language: str) -> list[dict[str, object]]:
    import gzip

    with gzip.open(DATA_DIR / "aider-polyglot" / f"{language}.jsonl.gz", "rt") as stream:
        return [json.loads(line) for line in stream]


# ---- data and prompts ---------------------------------------------------------------------------


def test_subsets_are_the_languages_with_their_published_sizes(polyglot: AiderPolyglot) -> None:
    data = DataSettings(data_dir=DATA_DIR, download=False)
    for subset, size in polyglot.info.subset_sizes.items():
        loaded = polyglot.load(subset=subset, data=data)
        assert len(loaded) == size, subset
        if subset != "full":
            assert {t.metadata["language"] for t in loaded} == {subset}
            # the same six files whatever the subset: a subset's tasks are the full set's
            assert len(loaded.files) == 6 and loaded.source.path.name == "cpp.jsonl.gz"


def test_prompt_is_aiders_chat_and_never_shows_tests_or_solutions(
    tasks: dict[str, Task],
) -> None:
    task = tasks["bowling/python"]
    prompt = build_prompt(task, "diff", chat=True)
    roles = [m["role"] for m in prompt.messages]
    # the system prompt, two example exchanges, "I switched to a new code base", the files
    assert roles == ["system", *["user", "assistant"] * 4, "user"]
    assert "*SEARCH/REPLACE block* Rules" in prompt.messages[0]["content"]
    files = prompt.messages[-3]["content"]
    assert files.startswith("I have *added these files to the chat*")
    assert "\nbowling.py\n```\n" + task.metadata["stubs"]["bowling.py"] + "```\n" in files
    request = prompt.messages[-1]["content"]
    assert request.startswith("# Instructions")
    assert "Use the above instructions to modify the supplied files: bowling.py\n" in request
    assert request.endswith("ONLY EVER RETURN CODE IN A *SEARCH/REPLACE BLOCK*!\n\n")
    whole = build_prompt(task, "whole", chat=True)
    assert "*file listing* format" in whole.messages[0]["content"]
    assert len(whole.messages) == 8  # one example exchange
    # the introduction comes first where an exercise has one (Aider's order)
    intro = next(
        t
        for t in tasks.values()
        if t.metadata["language"] == "go" and "# Intro" in t.prompts["whole"]
    )
    assert intro.prompts["whole"].startswith("# Intro")
    # nothing of the tests, the reference solutions, the write-ups or .meta reaches the model
    for language in ("cpp", "go", "java", "javascript", "python", "rust"):
        for row in _raw_rows(language):
            task = tasks[f"{row['exercise']}/{language}"]
            shown = "".join(
                m["content"]
                for s in ("whole", "diff")
                for m in build_prompt(task, s, chat=True).messages
            )
            hidden = {**row["test_files"], **row["example_files"]}  # type: ignore[dict-item]
            hidden.update(
                {
                    p: t
                    for p, t in row["other_files"].items()
                    if p.startswith((".approaches/", ".articles/", ".meta/"))
                }  # type: ignore[union-attr]
            )
            # lines the stubs or the instructions share with them are no leak (header guards)
            public = str(row["instructions"]) + "".join(task.metadata["stubs"].values())
            for path, text in hidden.items():
                body = [line for line in str(text).splitlines() if len(line.strip()) > 40]
                leaked = [line for line in body if line in shown and line not in public]
                assert not leaked, (language, row["exercise"], path, leaked[:1])


def test_cpp_shows_header_and_source_but_not_the_build_file(tasks: dict[str, Task]) -> None:
    task = tasks["all-your-base/cpp"]
    assert sorted(task.metadata["shown"]) == ["all_your_base.cpp", "all_your_base.h"]
    rust = tasks["accumulate/rust"]
    assert list(rust.metadata["shown"]) == ["lib.rs"]  # Cargo.toml is Aider's ignored file
    java = tasks["affine-cipher/java"]
    assert list(java.metadata["shown"]) == ["AffineCipher.java"]  # relative to its folder
    assert java.prompts["whole"].split("supplied files: ")[1].startswith("AffineCipher.java\n")


# ---- the edit formats ---------------------------------------------------------------------------

STUB = "def add(a, b):\n    pass\n\n\ndef sub(a, b):\n    pass\n"


def test_whole_file_listings() -> None:
    answer = "Here it is:\n\npath/to/calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
    applied = apply_whole(answer, {"calc.py": STUB})
    assert (
        not applied.malformed and applied.files["calc.py"] == "def add(a, b):\n    return a + b\n"
    )
    # no name before the fence: the only file in the chat
    unnamed = apply_whole("```\nx = 1\n```\n", {"calc.py": STUB})
    assert unnamed.files["calc.py"] == "x = 1\n"
    # several files and a listing without a name: Aider's malformed answer
    broken = apply_whole("```\nx = 1\n```\n", {"a.h": "", "a.cpp": ""})
    assert broken.malformed.startswith("No filename provided before ```")
    assert broken.files == {"a.h": "", "a.cpp": ""}
    # the name mentioned in backquotes before an unnamed listing
    mentioned = apply_whole("I will edit `a.h`:\n\n```\nint x;\n```\n", {"a.h": "", "a.cpp": ""})
    assert mentioned.files["a.h"] == "int x;\n" and mentioned.files["a.cpp"] == ""
    # an answer without any listing changes nothing and is well formed
    assert apply_whole("I need more information.", {"calc.py": STUB}).files["calc.py"] == STUB


def test_search_replace_blocks() -> None:
    block = "calc.py\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"
    exact = block.format(
        search="def add(a, b):\n    pass\n", replace="def add(a, b):\n    return a + b\n"
    )
    applied = apply_blocks(exact, {"calc.py": STUB})
    assert not applied.malformed
    assert applied.files["calc.py"].startswith("def add(a, b):\n    return a + b\n\n\ndef sub")
    # leading whitespace off by a uniform amount is matched, and re-indented
    dedented = block.format(search="pass\n", replace="return a + b\n")
    assert "    return a + b\n" in apply_blocks(dedented, {"calc.py": STUB}).files["calc.py"]
    # a block that matches nothing: malformed, and the blocks that matched stay applied
    missing = block.format(search="def mul(a, b):\n", replace="x\n")
    both = apply_blocks(exact + "\n" + missing, {"calc.py": STUB})
    assert both.malformed.startswith("# 1 SEARCH/REPLACE block failed to match!")
    assert "return a + b" in both.files["calc.py"]
    # no file name before the first block
    nameless = apply_blocks(
        "<<<<<<< SEARCH\npass\n=======\nx\n>>>>>>> REPLACE\n", {"calc.py": STUB}
    )
    assert "Bad/missing filename" in nameless.malformed
    # a block cut short
    cut = apply_blocks("calc.py\n```\n<<<<<<< SEARCH\npass\n=======\nx\n", {"calc.py": STUB})
    assert "Expected `>>>>>>> REPLACE` or `=======`" in cut.malformed
    # an empty SEARCH makes a new file; shell fences are not edits
    new = "helper.py\n```python\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\n```\n"
    made = apply_blocks(new + "```bash\nrm -rf /\n```\n", {"calc.py": STUB})
    assert made.files["helper.py"] == "X = 1\n" and not made.malformed
    # `...` elisions match piece by piece
    dots = block.format(
        search="def add(a, b):\n    pass\n...\ndef sub(a, b):\n    pass\n",
        replace="def add(a, b):\n    return 1\n...\ndef sub(a, b):\n    return 2\n",
    )
    elided = apply_blocks(dots, {"calc.py": STUB}).files["calc.py"]
    assert "return 1" in elided and "return 2" in elided


def test_answers_become_solutions_with_malformed_ones_recorded(
    polyglot: AiderPolyglot, tasks: dict[str, Task]
) -> None:
    task = tasks["all-your-base/cpp"]
    answer = "all_your_base.h\n```\n#pragma once\n```\n"
    result = polyglot.sanitize_answer(answer, task, "whole")
    solution = json.loads(result.code)
    assert result.ok and solution["edit_format"] == "whole" and not solution["malformed"]
    assert solution["files"]["all_your_base.h"] == "#pragma once\n"
    assert solution["files"]["all_your_base.cpp"] == task.metadata["stubs"]["all_your_base.cpp"]
    bad = polyglot.sanitize_answer("```\nint x;\n```\n", task, "whole")
    assert not bad.ok and bad.reason.startswith("malformed edit: No filename provided")
    assert json.loads(bad.code)["malformed"]
    java = tasks["affine-cipher/java"]
    diff = (
        "AffineCipher.java\n```java\n<<<<<<< SEARCH\npublic class AffineCipher {\n=======\n"
        "public class AffineCipher { // edited\n>>>>>>> REPLACE\n```\n"
    )
    edited = json.loads(polyglot.sanitize_answer(diff, java, "diff").code)
    assert "// edited" in edited["files"]["src/main/java/AffineCipher.java"]


def test_aiders_error_text_for_blocks_that_match_nothing() -> None:
    """Word for word what Aider sends back (editblock_coder.py `apply_edits`): the block, the
    closest lines it might have meant, and what was applied of the rest."""
    block = "calc.py\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"
    good = block.format(
        search="def add(a, b):\n    pass\n", replace="def add(a, b):\n    return 1\n"
    )
    # two of its three lines are in the file (Aider's 0.6 line ratio): the closest lines and
    # five either side are shown
    near = block.format(
        search="\ndef sub(a, b):\n    pas\n", replace="def sub(a, b):\n    return 2\n"
    )
    applied = apply_blocks(good + near, {"calc.py": STUB})
    assert applied.malformed == (
        "# 1 SEARCH/REPLACE block failed to match!\n\n"
        "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in calc.py\n"
        "<<<<<<< SEARCH\n\ndef sub(a, b):\n    pas\n=======\ndef sub(a, b):\n    return 2\n"
        ">>>>>>> REPLACE\n\n"
        "Did you mean to match some of these actual lines from calc.py?\n\n"
        "```\ndef add(a, b):\n    return 1\n\n\ndef sub(a, b):\n    pass\n```\n\n"
        "The SEARCH section must exactly match an existing block of lines including all white "
        "space, comments, indentation, docstrings, etc\n\n"
        "# The other 1 SEARCH/REPLACE block were applied successfully.\n"
        "Don't re-send them.\n"
        "Just reply with fixed versions of the block above that failed to match.\n"
    )


def test_a_conversations_answers_apply_in_turn(
    polyglot: AiderPolyglot, tasks: dict[str, Task]
) -> None:
    """Each answer edits what the ones before left (Aider's files keep every edit), and the
    solution counts the malformed answers; the last answer's error is the reflection."""
    task = tasks["bowling/python"]
    (name, path), *_ = task.metadata["shown"].items()
    stub = task.metadata["stubs"][path]
    first_line = stub.splitlines(keepends=True)[0]
    edit = (
        f"{name}\n```python\n<<<<<<< SEARCH\n{{search}}=======\n{{replace}}>>>>>>> REPLACE\n```\n"
    )
    marked = edit.format(search=first_line, replace="# marked\n" + first_line)
    missing = edit.format(search="no such line\n", replace="x\n")
    on_marked = edit.format(search="# marked\n", replace="# marked twice\n")
    result = polyglot.sanitize_answers([marked, missing, on_marked], task, "diff")
    solution = json.loads(result.code)
    assert result.ok and not result.reflection and solution["malformed"] == ""
    assert solution["malformed_responses"] == 1
    assert solution["files"][path].startswith("# marked twice\n" + first_line)
    # alone, the last edit matches nothing in the stub: malformed, and sent back as it reads
    alone = polyglot.sanitize_answers([on_marked], task, "diff")
    assert not alone.ok and alone.reflection.startswith("# 1 SEARCH/REPLACE block failed")
    assert alone.reason == "malformed edit: " + alone.reflection
    assert polyglot.info.max_reflections == 3
    scores = polyglot.extra_scores(
        [{"task_id": task.task_id, "status": "pass", "solution": result.code}], [1]
    )
    assert scores["percent_cases_well_formed"] == 0.0 and scores["num_malformed_responses"] == 1


def test_the_exercise_folder_restores_tests_and_enables_them(
    polyglot: AiderPolyglot, tasks: dict[str, Task]
) -> None:
    java = tasks["affine-cipher/java"]
    test_path = "src/test/java/AffineCipherTest.java"
    forged = {
        "files": {
            test_path: "class Forged {}",
            "build.gradle": "",
            "src/main/java/X.java": "class X {}",
        }
    }
    files = exercise_files(java, json.dumps(forged))
    assert "@Disabled" in java.metadata["support"][test_path]
    assert "@Disabled" not in files[test_path] and "AffineCipherTest" in files[test_path]
    assert files["build.gradle"] == java.metadata["support"]["build.gradle"]
    assert files["src/main/java/X.java"] == "class X {}"  # a new file of the model's is kept
    assert not any(path.startswith((".meta/", ".docs/", "../")) for path in files)
    js = exercise_files(tasks["affine-cipher/javascript"], "x")
    assert "xtest(" not in js["affine-cipher.spec.js"] and "test(" in js["affine-cipher.spec.js"]
    assert js["affine-cipher.js"] == "x"  # plain text: the file to edit
    escape = exercise_files(java, json.dumps({"files": {"../../etc/x": "y", "/abs": "z"}}))
    assert "../../etc/x" not in escape and "/abs" not in escape
    program = polyglot.program(java, polyglot.canonical_code(java), key="k", timeout_s=180.0)
    assert program.process is not None and program.process.run_timeout_s == 180.0
    # the exercise in its own folder (CMake names the program after it), the test script beside
    paths = [path for path, _ in program.process.files]
    assert ".passbench-test.sh" in paths
    assert all(p.startswith("affine-cipher/") for p in paths if p != ".passbench-test.sh")
    assert program.source == polyglot.canonical_code(java)  # the solution, for the record


def test_scores_and_test_output_as_aider_reports_them(
    polyglot: AiderPolyglot, tasks: dict[str, Task]
) -> None:
    output = "/tmp/tmpab12/bowling/bowling_test.py F\nFAILED in 0.52s\nSyntaxError: bad\n"
    assert (
        clean_test_output(output, "bowling")
        == "bowling/bowling_test.py F\nFAILED \nSyntaxError: bad\n"
    )
    task = tasks["bowling/python"]
    failed = ExecResult(
        key="k",
        task_id=task.task_id,
        status="fail",
        category=ErrorCategory.ASSERTION_FAILED,
        details={"ALL": output},
        duration_s=1.0,
        wall_s=1.0,
        isolation=Isolation.BUBBLEWRAP,
    )
    fields = polyglot.verdict_fields(task, failed)
    assert fields["syntax_errors"] == 1 and fields["test_output"].startswith("bowling/")
    well = json.dumps({"edit_format": "diff", "malformed": "", "files": {}})
    bad = json.dumps({"edit_format": "diff", "malformed": "no match", "files": {}})
    entries = [
        {"task_id": task.task_id, "status": "pass", "solution": well, "raw_solution": "ok"},
        {
            "task_id": task.task_id,
            "status": "fail",
            "solution": bad,
            "syntax_errors": 1,
            "raw_solution": "    # ... rest of code ... here\n",
            "test_timeout": True,
        },
    ]
    scores = polyglot.extra_scores(entries, [1])
    assert scores["pass_rate_1"] == 0.5 and scores["pass_rate_1_python"] == 0.5
    assert scores["percent_cases_well_formed"] == 0.5 and scores["num_malformed_responses"] == 1
    assert scores["syntax_errors"] == 1 and scores["test_timeouts"] == 1
    assert scores["lazy_comments"] == 1


# ---- real exercises in the sandbox ------------------------------------------------------------

#: per language, exercises whose reference must pass and whose stub must fail: gigasecond needs
#: the crate time 0.3 (Debian's), simple-cipher rand 0.8
REAL = {
    "python": ("bowling", "zipper"),
    "go": ("alphametics", "bowling"),
    "javascript": ("bowling", "zipper"),
    "rust": ("gigasecond", "simple-cipher"),
    "java": ("bowling", "zipper"),
    "cpp": ("all-your-base",),
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    if not bwrap_usable():
        pytest.skip("bubblewrap cannot run here")
    config = SandboxConfig(python=Path(sys.executable), workers=2, limits=Limits())
    with open_sandbox(config) as opened:
        yield opened


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.parametrize("language", sorted(REAL))
def test_references_pass_and_stubs_fail_in_the_sandbox(
    language: str, polyglot: AiderPolyglot, tasks: dict[str, Task], sandbox: Sandbox
) -> None:
    programs = []
    for exercise in REAL[language]:
        task = tasks[f"{exercise}/{language}"]
        stub = json.dumps({"files": task.metadata["stubs"]})
        for kind, code in (("ref", polyglot.canonical_code(task)), ("stub", stub)):
            programs.append(polyglot.program(task, code, key=f"{kind}:{exercise}", timeout_s=180.0))
    results = {r.key: r for r in sandbox.run(programs)}
    for exercise in REAL[language]:
        ref, stub = results[f"ref:{exercise}"], results[f"stub:{exercise}"]
        assert ref.status == "pass", (exercise, ref.reason, ref.details)
        assert stub.status == "fail", (exercise, stub.reason)
        output = polyglot.verdict_fields(tasks[f"{exercise}/{language}"], stub)["test_output"]
        assert output.strip(), exercise  # what Aider would send back for a second try


def test_programs_cross_the_wire_with_their_files(
    polyglot: AiderPolyglot, tasks: dict[str, Task]
) -> None:
    """Remote, container and Ray backends get the same exercise folder (the wire format)."""
    import json as _json

    from passbench.core.errors import WireError
    from passbench.stages.sandbox.remote.wire import program_from_json, program_to_json

    task = tasks["bowling/python"]
    program = polyglot.program(task, polyglot.canonical_code(task), key="k", timeout_s=180.0)
    sent = _json.loads(_json.dumps(program_to_json(program)))
    assert program_from_json(sent) == program
    sent["process"]["files"].append(["../escape", "x"])
    with pytest.raises(WireError, match="files"):
        program_from_json(sent)


def test_env_check_names_tools_per_language_and_the_exercises_that_cannot_run() -> None:
    from click.testing import CliRunner

    from passbench.apps.cli import cli
    from passbench.stages.benchmarks.aider_polyglot.lint import LINTERS
    from passbench.stages.benchmarks.aider_polyglot.toolchains import JS_PACKAGES

    result = CliRunner().invoke(
        cli,
        ["env", "check", "aider-polyglot", "--json"],
        env={"PASSBENCH_DATA_DIR": str(DATA_DIR)},
    )
    items = {item["name"]: item for item in json.loads(result.output)["items"]}
    for language in ("cpp", "go", "java", "javascript", "python", "rust"):
        assert any(name.startswith(f"{language}: ") for name in items), language
    assert "Maven Central" in items["java: hangman"]["detail"] and not items["java: hangman"]["ok"]
    assert "slices" in items["go: dnd-character"]["detail"]
    assert "Cargo-example.toml" in items["rust: poker"]["detail"]
    assert items[f"lint: {LINTERS}"]["ok"]  # Aider's linters, for its lint reflections
    # scripts/setup.sh installs exactly the npm packages the JavaScript track names
    setup = (Path(__file__).parents[3] / "scripts" / "setup.sh").read_text()
    assert f'js_wanted="{" ".join(JS_PACKAGES)}"' in setup


def test_env_check_names_exercises_this_machine_or_the_sandboxs_limits_keep_from_passing(
    tasks: dict[str, Task], tmp_path: Path
) -> None:
    """The facts behind the known failures: an AssertJ without 2D-array assertions (its jar's
    classes), 1,000 threads against 512 processes, 50 node workers against 4 GiB (a probe)."""
    import zipfile

    from passbench.stages.benchmarks.aider_polyglot.toolchains import (
        cpp_threads_at_once,
        js_workers_at_once,
        missing_assertj,
        node_workers_fit,
    )

    def tests_of(key: str) -> dict[str, str]:
        return dict(json.loads(tasks[key].test))

    old, new = tmp_path / "old.jar", tmp_path / "new.jar"
    for jar, classes in ((old, []), (new, ["org/assertj/core/api/Abstract2DArrayAssert.class"])):
        with zipfile.ZipFile(jar, "w") as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Bundle-Version: 3.14.0\n")
            for name in classes:
                archive.writestr(name, b"")
    maze = tests_of("mazy-mice/java")
    assert "hasDimensions" in str(missing_assertj(maze, str(old)))
    assert "3.14.0" in str(missing_assertj(maze, str(old)))
    assert missing_assertj(maze, str(new)) is None
    assert missing_assertj(tests_of("bowling/java"), str(old)) is None

    assert cpp_threads_at_once(tests_of("bank-account/cpp")) == 1000
    assert cpp_threads_at_once(tests_of("all-your-base/cpp")) == 0

    letters = tasks["parallel-letter-frequency/javascript"]
    reference = json.loads(letters.canonical_solution)["files"]
    assert js_workers_at_once(reference, tests_of("parallel-letter-frequency/javascript")) == 50
    assert (
        js_workers_at_once({"x.js": "module.exports = 1;"}, {"x.spec.js": "Array(9).fill(1)"}) == 0
    )
    assert node_workers_fit(2, 4096) is True and node_workers_fit(2, 64) is False

    from click.testing import CliRunner

    from passbench.apps.cli import cli

    result = CliRunner().invoke(
        cli, ["env", "check", "aider-polyglot", "--json"], env={"PASSBENCH_DATA_DIR": str(DATA_DIR)}
    )
    items = {item["name"]: item for item in json.loads(result.output)["items"]}
    assert "1000 threads" in items["cpp: bank-account"]["detail"]
    if missing_assertj(maze) is not None:
        assert "hasDimensions" in items["java: mazy-mice"]["detail"]
    if node_workers_fit(50, 4096) is False:
        assert "worker" in items["javascript: parallel-letter-frequency"]["detail"]
    assert "cpp: zebra-puzzle" not in items and "javascript: binary" not in items
