"""SWE-bench task instances as the dataset rows give them, and the pieces of each row's official
evaluation script that passbench needs to run it without Docker.

A row of SWE-bench 5.0 (Verified, Lite test, Lite dev: `shared/datasets/swebench/*.jsonl.gz`)
carries, besides the task (repository, base commit, problem statement, gold and test patches),
the whole bash script the official harness runs in the instance's container (`eval_script`), the
name of its log parser (`log_parser`) and the FAIL_TO_PASS / PASS_TO_PASS test lists, which the
files hold JSON-encoded as on Hugging Face and `Instance` holds decoded.
"""

from __future__ import annotations

import gzip
import json
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from passbench.core.errors import DatasetError, InputError
from passbench.stages.benchmarks.swebench.patching import diff_path

#: The markers the official eval script prints around the test command's output (`: '...'` is a
#: no-op that `set -x` echoes); the log parsers read only what lies between them.
START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"

_TEXT_FIELDS = (
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "environment_setup_commit",
    "eval_script",
    "log_parser",
    "eval_type",
    "image",
)
_TEST_LISTS = {"FAIL_TO_PASS": "fail_to_pass", "PASS_TO_PASS": "pass_to_pass"}
_COMMIT = re.compile(r"[0-9a-f]{40}")
# GitHub's alphabet for owners and repository names; also what makes `<owner>__<name>.git` safe
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Instance:
    """One SWE-bench task: every column of the dataset row, FAIL_TO_PASS and PASS_TO_PASS decoded
    into `fail_to_pass` / `pass_to_pass`, and `difficulty` '' where the split has none (Lite)."""

    repo: str  # "owner/name" on GitHub
    instance_id: str  # "<owner>__<name>-<pull number>"
    base_commit: str  # the commit the patches apply to (40 hex digits)
    patch: str  # the gold patch (the pull request's non-test changes)
    test_patch: str  # the pull request's test changes, applied before the tests run
    problem_statement: str
    hints_text: str
    created_at: str
    version: str  # the repository version that selects the environment ("0.13")
    fail_to_pass: tuple[str, ...]  # tests the gold patch makes pass
    pass_to_pass: tuple[str, ...]  # tests that pass before and after it
    environment_setup_commit: str
    eval_script: str  # the official bash script run in the instance's container
    log_parser: str  # the official parser for the test output ("parse_log_pytest")
    eval_type: str  # "pass_and_fail"
    image: str  # the official instance image, for the record
    difficulty: str = ""  # Verified's annotation ("<15 min fix"); '' elsewhere


@dataclass(frozen=True)
class EvalScript:
    """An official eval script taken apart. In order, the script runs:

    `activation`, `cd workdir`  the conda environment and the repository folder (`/testbed`);
    `pre_install`               the repository spec's own setup commands: locale exports, and
                                `locale-gen` for django (empty for most repositories);
    `git_setup`                 `git config --global --add safe.directory /testbed`, `cd`, and the
                                informational `git status`, `git show`,
                                `git -c core.fileMode=false diff <base>`;
    `activation` again, then
    `install`                   the re-install of the repository after the model patch
                                (`python -m pip install -e .`, `python setup.py install`, ...);
    `reset_tests`               `git checkout <base> <test files>`: the test files back to the base
                                commit, undoing whatever the model patch did to them;
    `apply_test_patch`          `git apply -v -` of the test patch from a heredoc
                                (`test_patch`, `delimiter`);
    `pre_test`                  commands between the test patch and the tests (a pytest pin, an
                                export: two astropy rows);
    `test_command`              the tests, between the START_TEST_OUTPUT and END_TEST_OUTPUT
                                markers;
    `post_test_reset`           the same reset again, leaving the test files at the base commit.

    The script runs under `set -uxo pipefail` (`shell_options`) without `-e`: a failing step,
    a test patch that does not apply included, does not stop it; only the parsed output counts.
    """

    shell_options: str
    activation: tuple[str, ...]
    conda_env: str
    workdir: str
    pre_install: tuple[str, ...]
    git_setup: tuple[str, ...]
    install: tuple[str, ...]
    reset_tests: str
    delimiter: str
    test_patch: str
    pre_test: tuple[str, ...]
    test_command: str
    post_test_reset: str

    @property
    def setup(self) -> tuple[str, ...]:
        """Every line before `reset_tests`, in the script's order."""
        return (
            *self.activation,
            f"cd {self.workdir}",
            *self.pre_install,
            *self.git_setup,
            *self.activation,
            *self.install,
        )

    @property
    def apply_test_patch(self) -> str:
        """The test-patch command with its heredoc, as the script has it."""
        return f"git apply -v - <<'{self.delimiter}'\n{self.test_patch}\n{self.delimiter}"

    def exports(self) -> tuple[tuple[str, str], ...]:
        """(name, value) of every `export NAME=value` the script runs before the tests."""
        found = []
        for line in (*self.pre_install, *self.pre_test):
            words = shlex.split(line)
            if len(words) == 2 and words[0] == "export" and "=" in words[1]:
                name, value = words[1].split("=", 1)
                found.append((name, value))
        return tuple(found)

    def to_script(self) -> str:
        """The script again, byte for byte (what the tests check against every row)."""
        return "\n".join(
            [
                "#!/bin/bash",
                self.shell_options,
                *self.setup,
                self.reset_tests,
                self.apply_test_patch,
                *self.pre_test,
                f": '{START_TEST_OUTPUT}'",
                self.test_command,
                f": '{END_TEST_OUTPUT}'",
                self.post_test_reset,
                "",
            ]
        )


def read_instances(path: Path) -> list[Instance]:
    """The instances of a SWE-bench JSONL file (gzip-compressed or plain), in file order. A row
    that is not what SWE-bench 5.0 writes raises InputError naming the file, line and field."""
    instances: list[Instance] = []
    seen: dict[str, int] = {}
    for number, row in _rows(path):
        instance = _instance(row, path, number)
        if instance.instance_id in seen:
            raise InputError(
                f"instance id {instance.instance_id} repeats line {seen[instance.instance_id]}",
                path=path,
                line=number,
                field="instance_id",
            )
        seen[instance.instance_id] = number
        instances.append(instance)
    return instances


def test_files(instance: Instance) -> tuple[str, ...]:
    """The files the official eval script resets before and after the tests: every file the test
    patch touches, in the patch's order, new files and the new name of a renamed file included
    (the rows' `git checkout <base> <files>` lines list exactly these, checked on every row).

    This is not `swebench.utils.get_modified_files`, which drops the files a patch creates and
    names a renamed file by its old name (the 4.x scripts reset that list). Listing a created
    file has an effect the official harness lives with: `git checkout <base> <paths>` fails as a
    whole when one path is unknown at the base commit, so for those rows (18 of Verified, 8 of
    Lite, 3 of Lite dev) neither reset restores anything, and a model patch that edited the test
    files keeps its edits under the test patch (whose `git apply` then usually fails)."""
    try:
        patch_set = PatchSet(instance.test_patch)
    except UnidiffParseError as error:
        raise DatasetError(f"{instance.instance_id}: test_patch is not a diff: {error}") from error
    files = []
    for patched in patch_set:
        name = patched.target_file if patched.target_file != "/dev/null" else patched.source_file
        path = diff_path(name)
        if path is not None and path not in files:
            files.append(path)
    return tuple(files)


def parse_eval_script(instance: Instance) -> EvalScript:
    """The pieces of the instance's official eval script (see EvalScript). The script must have
    the shape every SWE-bench 5.0 Python row has; anything else raises DatasetError naming the
    instance and the script line, rather than running half-understood commands."""
    reader = _Reader(instance.instance_id, instance.eval_script.split("\n"))
    reader.expect(lambda line: line == "#!/bin/bash", "#!/bin/bash")
    shell_options = reader.expect(lambda line: line.startswith("set "), "set <options>")
    activation = _activation(reader)
    workdir = reader.expect(lambda line: _word_after(line, "cd") is not None, "cd <folder>")[3:]
    pre_install = reader.take_until(lambda line: line.startswith("git config "))
    git_setup = reader.take_while(lambda line: line.startswith(("git ", "cd ")))
    if _activation(reader) != activation:
        reader.fail("the second environment activation differs from the first")
    install_and_reset = reader.take_until(lambda line: _delimiter(line) is not None)
    if not install_and_reset or not install_and_reset[-1].startswith("git checkout "):
        reader.fail("no `git checkout <base> <files>` right before the test patch")
    delimiter = _delimiter(reader.expect(lambda line: True, "the test patch")) or ""
    body = reader.take_until(lambda line: line == delimiter)
    reader.expect(lambda line: line == delimiter, f"the heredoc's end {delimiter}")
    pre_test = reader.take_until(lambda line: line == f": '{START_TEST_OUTPUT}'")
    reader.expect(lambda line: True, START_TEST_OUTPUT)
    test_lines = reader.take_until(lambda line: line == f": '{END_TEST_OUTPUT}'")
    reader.expect(lambda line: True, END_TEST_OUTPUT)
    if len(test_lines) != 1 or not test_lines[0].strip():
        reader.fail(f"expected one test command between the markers, found {len(test_lines)}")
    post = reader.take_until(lambda line: False)
    while post and post[-1] == "":
        post.pop()
    if len(post) != 1:
        reader.fail(f"expected one reset after the tests, found {len(post)} lines")
    return EvalScript(
        shell_options=shell_options,
        activation=activation,
        conda_env=activation[1].split()[-1],
        workdir=workdir,
        pre_install=tuple(pre_install),
        git_setup=tuple(git_setup),
        install=tuple(install_and_reset[:-1]),
        reset_tests=install_and_reset[-1],
        delimiter=delimiter,
        test_patch="\n".join(body),
        pre_test=tuple(pre_test),
        test_command=test_lines[0],
        post_test_reset=post[0],
    )


class _Reader:
    """The script's lines with a cursor; errors name the instance and the 1-based line."""

    def __init__(self, instance_id: str, lines: list[str]) -> None:
        self.instance_id = instance_id
        self.lines = lines
        self.index = 0

    def fail(self, message: str) -> None:
        raise DatasetError(
            f"{self.instance_id}: eval_script line {self.index + 1}: {message}; passbench reads "
            "only the shape of the SWE-bench 5.0 Python scripts"
        )

    def expect(self, accept: Callable[[str], bool], what: str) -> str:
        if self.index >= len(self.lines):
            self.fail(f"ends where {what} was expected")
        line = self.lines[self.index]
        if not accept(line):
            self.fail(f"expected {what}, found {line[:120]!r}")
        self.index += 1
        return line

    def take_while(self, accept: Callable[[str], bool]) -> list[str]:
        taken = []
        while self.index < len(self.lines) and accept(self.lines[self.index]):
            taken.append(self.lines[self.index])
            self.index += 1
        return taken

    def take_until(self, stop: Callable[[str], bool]) -> list[str]:
        return self.take_while(lambda line: not stop(line))


def _activation(reader: _Reader) -> tuple[str, ...]:
    source = reader.expect(
        lambda line: re.fullmatch(r"source \S+/bin/activate", line) is not None,
        "source <conda>/bin/activate",
    )
    env = reader.expect(lambda line: _word_after(line, "conda activate") is not None, "conda env")
    return (source, env)


def _word_after(line: str, prefix: str) -> str | None:
    match = re.fullmatch(re.escape(prefix) + r" (\S+)", line)
    return match.group(1) if match else None


def _delimiter(line: str) -> str | None:
    match = re.fullmatch(r"git apply -v - <<'([^']+)'", line)
    return match.group(1) if match else None


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        with path.open("rb") as raw:
            gzipped = raw.read(2) == _GZIP_MAGIC
        with (
            gzip.open(path, "rt", encoding="utf-8") if gzipped else path.open(encoding="utf-8")
        ) as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as error:
                    raise InputError(f"not JSON: {error.msg}", path=path, line=number) from error
    except (OSError, UnicodeDecodeError, EOFError) as error:  # OSError: gzip's BadGzipFile too
        raise InputError(f"cannot read instances: {error}", path=path) from error


def _instance(row: Any, path: Path, line: int) -> Instance:
    if not isinstance(row, dict):
        raise InputError("a row must be a JSON object", path=path, line=line)

    def bad(field: str, message: str) -> InputError:
        return InputError(message, path=path, line=line, field=field)

    values: dict[str, Any] = {}
    for field in (*_TEXT_FIELDS, "difficulty"):
        value = row.get(field, "" if field == "difficulty" else None)
        if value is None:
            raise bad(field, "missing")
        if not isinstance(value, str):
            raise bad(field, f"expected a string, got {type(value).__name__}")
        values[field] = value
    for field, name in _TEST_LISTS.items():
        values[name] = _test_list(row.get(field), field, bad)
    if not _REPO.fullmatch(values["repo"]) or values["repo"].split("/")[1] in {".", ".."}:
        raise bad("repo", f"expected 'owner/name', got {values['repo']!r}")
    for field in ("base_commit", "environment_setup_commit"):
        if not _COMMIT.fullmatch(values[field]):
            raise bad(field, f"expected a 40-digit commit id, got {values[field][:60]!r}")
    if not values["instance_id"]:
        raise bad("instance_id", "empty")
    return Instance(**values)


def _test_list(value: Any, field: str, bad: Callable[[str, str], InputError]) -> tuple[str, ...]:
    if value is None:
        raise bad(field, "missing")
    if isinstance(value, str):  # JSON-encoded, as on Hugging Face and in the shipped files
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise bad(field, f"not a JSON-encoded list: {error.msg}") from error
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise bad(field, "expected a list of test names")
    return tuple(value)
