"""MultiPL-E: per language, known-good and known-bad completions built and run in the real
bubblewrap sandbox, with MultiPL-E's statuses (OK / SyntaxError / Exception / Timeout)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.datasets import DATA_DIR
from tests.stages.sandbox.helpers import PYTHON, bwrap_usable

from passbench.core.records import ErrorCategory, ExecResult, Program
from passbench.stages.benchmarks import DataSettings, get_benchmark
from passbench.stages.benchmarks.multiple import (
    LANGUAGES,
    MultiPLE,
    missing_tools,
    truncate_at_stop,
)
from passbench.stages.sandbox import Limits, Sandbox, SandboxConfig, open_sandbox

HAVE_DATA = (DATA_DIR / "multipl-e").is_dir()

# Completions of HumanEval_53_add ("add two numbers"), appended to the language's prompt. In
# C++, Java and Rust the tests close the function; in JavaScript and Lua the completion does.
GOOD = {
    "js": "  return x + y;\n}\n",
    "go": "    return x + y\n}\n",
    "ts": "  return x + y;\n}\n",
    "cpp": "    return x + y;\n",
    "java": "        return x + y;\n",
    "rs": "    x + y\n",
    "lua": "    return x + y\nend\n",
}
WRONG = {
    "js": "  return x - y;\n}\n",
    "go": "    return x - y\n}\n",
    "ts": "  return x - y;\n}\n",
    "cpp": "    return x - y;\n",
    "java": "        return x - y;\n",
    "rs": "    x - y\n",
    "lua": "    return x - y\nend\n",
}
SYNTAX = {
    "js": "  return x + ;\n}\n",
    "go": "    return x + \n}\n",
    # a type error: tsc fails, which MultiPL-E counts as a SyntaxError
    "ts": '  return x + y + "";\n}\n',
    "cpp": "    return x + ;\n",
    "java": "        return x + ;\n",
    "rs": "    x + \n",
    "lua": "    return x + \nend\n",
}
LOOP = {
    "js": "  while (true) {}\n}\n",
    "go": "    for {\n    }\n}\n",
    "ts": "  while (true) {}\n}\n",
    "cpp": "    volatile long n = 0;\n    while (true) { n++; }\n",
    "java": "        while (true) {}\n",
    "rs": "    loop {}\n",
    "lua": "    while true do end\nend\n",
}

# More tasks, (task id, known-good completion, known-bad completion); MBPP too where the
# language has it (Lua, Rust)
MORE = {
    "js": [("HumanEval_23_strlen", "  return string.length;\n}\n", "  return 1;\n}\n")],
    "cpp": [("HumanEval_23_strlen", "    return string.size();\n", "    return 1;\n")],
    "java": [("HumanEval_23_strlen", "        return string.length();\n", "        return 1l;\n")],
    "rs": [
        ("HumanEval_23_strlen", "    string.len() as isize\n", "    1\n"),
        (
            "mbpp_3_is_not_prime",
            "    if n < 2 { return true; }\n    (2..n).any(|d| n % d == 0)\n",
            "    n % 2 == 0\n",
        ),
    ],
    "go": [
        ("HumanEval_23_strlen", "    return len(myString)\n}\n", "    return 1\n}\n"),
        (
            "mbpp_3_is_not_prime",
            "    if n < 2 {\n        return true\n    }\n    for d := 2; d < n; d++ {\n"
            "        if n%d == 0 {\n            return true\n        }\n    }\n"
            "    return false\n}\n",
            "    return n%2 == 0\n}\n",
        ),
    ],
    "ts": [("HumanEval_23_strlen", "  return string.length;\n}\n", "  return 1;\n}\n")],
    "lua": [
        ("HumanEval_23_strlen", "    return #string\nend\n", "    return 1\nend\n"),
        (
            "mbpp_3_is_not_prime",
            "    if n < 2 then return true end\n    for d = 2, n - 1 do\n"
            "        if n % d == 0 then return true end\n    end\n    return false\nend\n",
            "    return n % 2 == 0\nend\n",
        ),
    ],
}


@pytest.fixture(autouse=True)
def _multiple_data() -> None:
    """Missing data fails the run (as tests/conftest.py's data_dir does), never skips it."""
    if not HAVE_DATA:
        pytest.fail(f"MultiPL-E data not found in {DATA_DIR}; set PASSBENCH_DATA_DIR")


def _benchmark(key: str) -> MultiPLE:
    benchmark = get_benchmark(f"multipl-e-{key}")
    assert isinstance(benchmark, MultiPLE)
    return benchmark


def _task(key: str, task_id: str = "HumanEval_53_add"):  # type: ignore[no-untyped-def]
    loaded = _benchmark(key).load(data=DataSettings(data_dir=DATA_DIR, download=False))
    return loaded.get(task_id)


def _program(
    key: str,
    completion: str,
    name: str,
    run_timeout_s: float | None = None,
    task_id: str = "HumanEval_53_add",
) -> Program:
    benchmark = _benchmark(key)
    task = _task(key, task_id)
    code = benchmark.solution_from_completion(task, completion)
    limit = run_timeout_s or benchmark.info.default_timeout_s
    return benchmark.program(task, code, key=f"{key}-{name}", timeout_s=limit)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    if not bwrap_usable():
        pytest.skip("bubblewrap cannot run here")
    # the default limits: the JVM needs its 1 GiB heap inside the 4 GiB address space
    config = SandboxConfig(python=PYTHON, workers=2, limits=Limits())
    with open_sandbox(config) as opened:
        yield opened


def _run(sandbox: Sandbox, programs: list[Program]) -> dict[str, ExecResult]:
    return {result.key: result for result in sandbox.run(programs)}


def test_every_language_is_registered_and_loads() -> None:
    counts = {"js": 161, "cpp": 161, "java": 158, "rs": 510, "lua": 558, "go": 528, "ts": 159}
    for key, count in counts.items():
        loaded = _benchmark(key).load(data=DataSettings(data_dir=DATA_DIR, download=False))
        assert len(loaded) == count
    mbpp = _benchmark("lua").load("v3", "mbpp", data=DataSettings(data_dir=DATA_DIR))
    assert len(mbpp) == 397 and all(t.task_id.startswith("mbpp_") for t in mbpp)
    go = _benchmark("go").load("v3", "humaneval", data=DataSettings(data_dir=DATA_DIR))
    assert len(go) == 154 and all(t.task_id.startswith("HumanEval_") for t in go)


def test_completion_is_cut_at_the_first_stop_token() -> None:
    js = LANGUAGES["js"]
    completion = "  return x + y;\n}\n// trailing chatter\nfunction other() {}\n"
    assert truncate_at_stop(completion, js.stop_tokens) == "  return x + y;\n}"
    task = _task("cpp")
    code = _benchmark("cpp").solution_from_completion(task, "    return x + y;\n}\nint junk;\n")
    assert code == task.prompts["complete"] + "    return x + y;"


def test_toolchains_are_installed() -> None:
    for language in LANGUAGES.values():
        assert missing_tools(language) == [], language.key


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_verdicts_in_the_sandbox(sandbox: Sandbox, key: str) -> None:
    programs = [
        _program(key, GOOD[key], "good"),
        _program(key, WRONG[key], "wrong"),
        _program(key, SYNTAX[key], "syntax"),
        _program(key, LOOP[key], "loop", run_timeout_s=2.0),
    ]
    started = time.perf_counter()
    results = _run(sandbox, programs)
    wall = time.perf_counter() - started
    good, wrong = results[f"{key}-good"], results[f"{key}-wrong"]
    syntax, loop = results[f"{key}-syntax"], results[f"{key}-loop"]
    assert good.status == "pass", good.reason
    assert good.outputs is not None and good.outputs["multipl_e_status"] == "OK"
    assert wrong.status == "fail" and wrong.outputs is not None
    assert wrong.outputs["multipl_e_status"] == "Exception", wrong.reason
    assert wrong.category == ErrorCategory.ASSERTION_FAILED, wrong.reason
    assert syntax.status == "fail" and syntax.category == ErrorCategory.SYNTAX_ERROR, syntax
    assert loop.status == "timeout" and loop.category == ErrorCategory.TIMEOUT, loop.reason
    assert loop.outputs is not None and loop.outputs["multipl_e_status"] == "Timeout"
    assert good.isolation.value == "bubblewrap"
    print(
        f"\n{key}: build {good.outputs['build_s']:.2f}s run {good.outputs['run_s']:.2f}s "
        f"(4 programs, 2 workers: {wall:.1f}s wall)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_more_tasks_known_good_pass_known_bad_fail(sandbox: Sandbox, key: str) -> None:
    programs = []
    for task_id, good, bad in MORE[key]:
        programs.append(_program(key, good, f"{task_id}-good", task_id=task_id))
        programs.append(_program(key, bad, f"{task_id}-bad", task_id=task_id))
    results = _run(sandbox, programs)
    for task_id, _, _ in MORE[key]:
        good, bad = results[f"{key}-{task_id}-good"], results[f"{key}-{task_id}-bad"]
        assert good.status == "pass", (task_id, good.reason)
        assert bad.status == "fail", (task_id, bad.reason)
        assert bad.category == ErrorCategory.ASSERTION_FAILED, (task_id, bad.reason)


@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_every_task_round_trips_through_the_chat_sanitizer(key: str) -> None:
    """On every task: the entry point is the function the prompt opens (Java's camelCase
    name), and a chat answer repeating the prompt's whole function gives back the program a
    completion gives (prompt + body, shaped for the tests)."""
    from passbench.apps.samplerows import sanitize_task_answer

    benchmark = _benchmark(key)
    closing = {
        "js": "",
        "cpp": "\n}",
        "java": "\n    }\n}",
        "rs": "\n}",
        "lua": "",
        "go": "",
        "ts": "",
    }
    closing = closing[key]
    fence = LANGUAGES[key].fence_names[0]
    tasks = benchmark.load(data=DataSettings(data_dir=DATA_DIR, download=False))
    for task in tasks:
        prompt = task.prompts["complete"]
        assert prompt.rstrip().split("\n")[-1].count(task.entry_point + "(") == 1, task.task_id
        program = benchmark.solution_from_completion(task, GOOD[key])
        answer = f"Sure:\n```{fence}\n{program}{closing}\n```\nDone."
        chat = sanitize_task_answer(answer, task, "complete")
        assert chat.ok and chat.code.rstrip() == program.rstrip(), task.task_id
        completion = sanitize_task_answer(program, task, "complete")
        assert completion.code.rstrip() == program.rstrip(), task.task_id
    assert _task("java", "HumanEval_0_has_close_elements").entry_point == "hasCloseElements"


@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_a_base_models_answer_is_cut_at_the_stop_tokens(key: str) -> None:
    """A direct completion that ran past the function (a provider that ignored the stops) is
    cut where MultiPL-E's generation stops, not reshaped by the chat sanitizer."""
    from passbench.apps.samplerows import sanitize_task_answer

    benchmark = _benchmark(key)
    task = benchmark.load(data=DataSettings(data_dir=DATA_DIR, download=False)).tasks[0]
    stop = LANGUAGES[key].stop_tokens[0]
    rambling = GOOD[key] + stop + " more text the model went on with"
    result = sanitize_task_answer(task.prompts["complete"] + rambling, task, "complete")
    assert result.ok and "more text" not in result.code
    assert result.code == benchmark.solution_from_completion(task, rambling)
    assert result.code.startswith(task.prompts["complete"] + GOOD[key].rstrip("\n"))


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_chat_answers_pass_in_the_sandbox(sandbox: Sandbox, key: str) -> None:
    """Chat answers, sanitized as `passbench sanitize` does, become programs with one
    definition of the function that build and pass; a wrong one fails on its assertions."""
    from tests.stages.sanitize import chat_answers

    from passbench.apps.samplerows import sanitize_task_answer

    benchmark, task = _benchmark(key), _task(key)
    answers = {
        "full": chat_answers.FULL[key],
        "body": chat_answers.BODY[key],
        "several": chat_answers.SEVERAL[key],
        "unfenced": chat_answers.UNFENCED[key],
        "wrong": chat_answers.WRONG_FULL[key],
    }
    programs = []
    for name, answer in answers.items():
        sanitized = sanitize_task_answer(answer, task, "complete")
        assert sanitized.ok, (name, sanitized.reason)
        limit = benchmark.info.default_timeout_s
        programs.append(benchmark.program(task, sanitized.code, key=name, timeout_s=limit))
    results = _run(sandbox, programs)
    for name in ("full", "body", "several", "unfenced"):
        assert results[name].status == "pass", (name, results[name].reason)
    assert results["wrong"].status == "fail"
    assert results["wrong"].category == ErrorCategory.ASSERTION_FAILED, results["wrong"].reason


def test_env_check_reports_a_missing_toolchain(monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    from dataclasses import replace

    from click.testing import CliRunner

    from passbench.apps.cli import cli
    from passbench.stages.benchmarks import multiple

    ok = CliRunner().invoke(cli, ["env", "check", "multipl-e", "--json"])
    assert ok.exit_code == 0, ok.output
    found = {item["name"]: item["detail"] for item in json.loads(ok.output)["items"]}
    assert found["go: go"].endswith("/bin/go") and found["ts: tsc"].endswith("/bin/tsc")
    broken = replace(LANGUAGES["lua"], tools=("lua-that-is-not-installed",))
    monkeypatch.setitem(multiple.LANGUAGES, "lua", broken)
    missing = CliRunner().invoke(cli, ["env", "check", "multipl-e"])
    assert missing.exit_code == 1
    assert "lua-that-is-not-installed" in missing.output and "lua-unit" in missing.output
    # TypeScript's compiler comes from npm: the fix says so
    no_tsc = replace(LANGUAGES["ts"], npm_tools=("tsc-that-is-not-installed",))
    monkeypatch.setitem(multiple.LANGUAGES, "ts", no_tsc)
    report = CliRunner().invoke(cli, ["env", "check", "multipl-e", "--json"])
    items = {item["name"]: item for item in json.loads(report.output)["items"]}
    item = items["ts: tsc-that-is-not-installed"]
    assert not item["ok"] and "npm install -g typescript@5.9.3" in item["detail"]


@pytest.mark.slow
def test_evaluate_samples_end_to_end(tmp_path: Path) -> None:
    """`passbench evaluate --samples` on raw completions: cut at the stop tokens, run in the
    sandbox (identical programs once), scored."""
    import json

    from click.testing import CliRunner

    from passbench.apps.cli import cli

    if not bwrap_usable():
        pytest.skip("bubblewrap cannot run here")
    rows = [
        # what follows the function (a stop token, then chatter) must be cut away
        {"task_id": "HumanEval_53_add", "completion": GOOD["js"] + "// done\nadd(1, 2);\n"},
        {"task_id": "HumanEval_53_add", "completion": WRONG["js"]},
        {"task_id": "HumanEval_53_add", "completion": WRONG["js"]},  # the same program again
        {"task_id": "HumanEval_53_add", "completion": LOOP["js"]},
    ]
    samples = tmp_path / "js.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    arguments = ["evaluate", "-b", "multipl-e-js", "--samples", str(samples), "--pass-k", "1"]
    result = CliRunner().invoke(
        cli,
        [*arguments, "--timeout-per-task", "1.5"],
        env={"PASSBENCH_DATA_DIR": str(DATA_DIR)},
    )
    assert result.exit_code == 0, result.output
    verdicts = json.loads((tmp_path / "js_eval_results.json").read_text())["eval"]
    statuses = [entry["status"] for entry in verdicts["HumanEval_53_add"]]
    assert statuses == ["pass", "fail", "fail", "timeout"]
    # MultiPL-E's own status is kept beside ours (inspect counts it per language)
    kept = [entry["multipl_e_status"] for entry in verdicts["HumanEval_53_add"]]
    assert kept == ["OK", "Exception", "Exception", "Timeout"]
    # deduplicated by content: the repeated program ran once, its verdict copied
    first, again = verdicts["HumanEval_53_add"][1:3]
    assert first["duration_s"] == again["duration_s"] and first["wall_s"] == again["wall_s"]
    assert not verdicts["HumanEval_53_add"][0]["solution"].endswith("add(1, 2);\n")
    score = json.loads((tmp_path / "js_pass_at_k.json").read_text())
    assert score["pass@1"] == pytest.approx(1 / 4)
    # the run's limit is --timeout-per-task (MultiPL-E's 15 s by default), not BigCodeBench's
    # max(limit, 20 s) + 1
    assert verdicts["HumanEval_53_add"][3]["wall_s"] < 5


def test_process_programs_cross_the_wire_to_remote_backends() -> None:
    """docker, podman, ray, e2b and remote ship programs as JSON to the runner agent."""
    import json

    from passbench.core.errors import PassbenchError
    from passbench.stages.sandbox.remote import wire

    program = _program("java", GOOD["java"], "wire")
    data = json.loads(json.dumps(wire.program_to_json(program)))
    assert wire.program_from_json(data) == program
    data["process"]["filename"] = "../escape.java"
    with pytest.raises(PassbenchError, match="plain file name"):
        wire.program_from_json(data)


def test_cli_shows_prompts_and_refuses_a_ground_truth_run(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from passbench.apps.cli import cli

    env = {"PASSBENCH_DATA_DIR": str(DATA_DIR)}
    shown = CliRunner().invoke(
        cli,
        ["tasks", "show", "HumanEval_53_add", "-b", "multipl-e-rs", "--field", "prompt"],
        env=env,
    )
    assert shown.exit_code == 0, shown.output
    assert shown.output.rstrip().endswith("fn add(x: isize, y: isize) -> isize {")
    refused = CliRunner().invoke(
        cli,
        ["evaluate", "-b", "multipl-e-rs", "--ground-truth", "--output-dir", str(tmp_path)],
        env=env,
    )
    from passbench.core.errors import InputError

    assert isinstance(refused.exception, InputError)  # exit code 2 from `passbench`
    assert "has no reference solutions" in str(refused.exception)


# Passes only when the program can open its parent's /proc entries: the parent (the sandbox's
# child process) holds the verdict pipe and its nonce, so reaching them would let a program
# forge a verdict.
PEEK_AT_PARENT = """    local f = io.open("/proc/self/stat"); local stat = f:read("a"); f:close()
    local ppid = stat:match("%) %a (%d+)")
    for _, what in ipairs({"environ", "mem", "fd/3", "fd/4", "fd/5", "fd/6"}) do
        local h = io.open("/proc/" .. ppid .. "/" .. what, "rb")
        if h then h:close(); return x + y end
    end
    return 0
end
"""


@pytest.mark.slow
def test_a_program_cannot_reach_the_process_that_reports_its_verdict(sandbox: Sandbox) -> None:
    results = _run(sandbox, [_program("lua", PEEK_AT_PARENT, "peek")])
    result = results["lua-peek"]
    assert result.status == "fail", result.reason
    assert result.category == ErrorCategory.ASSERTION_FAILED, result.reason
