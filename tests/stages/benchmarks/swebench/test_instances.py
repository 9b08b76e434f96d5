"""SWE-bench rows: every row of Verified, Lite and Lite dev read, every eval script taken apart
and put back byte for byte, and every way a row can be wrong."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from tests.gitrepo import git, run_git

from passbench.core.errors import DatasetError, InputError
from passbench.stages.benchmarks.swebench.instances import (
    END_TEST_OUTPUT,
    START_TEST_OUTPUT,
    Instance,
    parse_eval_script,
    read_instances,
)
from passbench.stages.benchmarks.swebench.instances import (
    test_files as files_of_tests,  # renamed: pytest would collect test_files as a test
)

FILES = {
    "swebench-verified.jsonl.gz": 500,
    "swebench-lite.jsonl.gz": 300,
    "swebench-lite-dev.jsonl.gz": 23,
}
# The official get_test_directives (swebench 4.x test_spec/python.py): the test patch's files,
# less non-test extensions, as django module names for django.
NON_TEST_EXTS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml")
NON_TEST_EXTS += (".yaml", ".toml")
RUNNERS = {"pytest", "./tests/runtests.py", "bin/test", "tox"}


def raw_rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def swebench_dir(data_dir: Path) -> Path:
    return data_dir / "swebench"


@pytest.fixture(scope="module")
def every_instance(swebench_dir: Path) -> dict[str, list[Instance]]:
    return {name: read_instances(swebench_dir / name) for name in FILES}


@pytest.fixture(scope="module")
def by_id(every_instance: dict[str, list[Instance]]) -> dict[str, Instance]:
    return {item.instance_id: item for rows in every_instance.values() for item in rows}


def test_every_row_is_read_with_every_column(
    swebench_dir: Path, every_instance: dict[str, list[Instance]]
) -> None:
    for name, count in FILES.items():
        instances = every_instance[name]
        assert len(instances) == count
        for raw, instance in zip(raw_rows(swebench_dir / name), instances, strict=True):
            fields = dataclasses.asdict(instance)
            assert fields.pop("fail_to_pass") == tuple(json.loads(raw.pop("FAIL_TO_PASS")))
            assert fields.pop("pass_to_pass") == tuple(json.loads(raw.pop("PASS_TO_PASS")))
            raw.setdefault("difficulty", "")
            assert fields == raw
    assert {item.difficulty for item in every_instance["swebench-lite.jsonl.gz"]} == {""}
    verified = every_instance["swebench-verified.jsonl.gz"]
    assert sum(item.difficulty == "<15 min fix" for item in verified) == 194


def test_every_eval_script_parses_back_to_itself(
    every_instance: dict[str, list[Instance]],
) -> None:
    for instances in every_instance.values():
        for instance in instances:
            script = parse_eval_script(instance)
            assert script.to_script() == instance.eval_script, instance.instance_id
            assert script.test_patch == instance.test_patch
            assert (script.workdir, script.conda_env) == ("/testbed", "testbed")
            assert script.shell_options == "set -uxo pipefail"
            assert script.git_setup[0] == "git config --global --add safe.directory /testbed"
            assert script.install  # the repository is always re-installed
            files = " ".join(files_of_tests(instance))
            assert script.reset_tests == f"git checkout {instance.base_commit} {files}"
            assert script.post_test_reset == script.reset_tests


def official_directives(instance: Instance) -> list[str]:
    found = [
        path
        for path in files_of_tests(instance)
        if not any(path.endswith(ext) for ext in NON_TEST_EXTS)
    ]
    if instance.repo != "django/django":
        return found
    modules = []
    for path in found:
        path = path.removesuffix(".py")
        path = path.removeprefix("tests/")
        modules.append(path.replace("/", "."))
    return modules


def test_every_test_command_runs_the_test_files_with_the_repository_runner(
    every_instance: dict[str, list[Instance]],
) -> None:
    without_directives = []
    for instances in every_instance.values():
        for instance in instances:
            words = shlex.split(parse_eval_script(instance).test_command)
            directives = official_directives(instance)
            runner = words[: len(words) - len(directives)]
            assert words[len(runner) :] == directives, instance.instance_id
            assert RUNNERS & set(runner), instance.instance_id
            if not directives:
                without_directives.append(instance.instance_id)
    # only .txt test files: django runs its whole suite
    assert without_directives == ["django__django-10097"]


def test_the_pieces_of_unusual_scripts(by_id: dict[str, Instance]) -> None:
    django = parse_eval_script(by_id["django__django-11141"])
    assert django.pre_install[0] == "sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen"
    assert ("LANG", "en_US.UTF-8") in django.exports()
    assert parse_eval_script(by_id["django__django-10097"]).install == ("python setup.py install",)
    pinned = parse_eval_script(by_id["astropy__astropy-8707"])
    assert pinned.pre_test == ("python -m pip install -q 'pytest<7.2'",)
    exported = parse_eval_script(by_id["astropy__astropy-8872"])
    assert exported.exports() == (("SETUPTOOLS_USE_DISTUTILS", "stdlib"),)
    sympy = parse_eval_script(by_id["sympy__sympy-20590"])
    assert sympy.test_command.endswith("bin/test -C --verbose sympy/core/tests/test_basic.py")
    assert sympy.pre_install == () and sympy.pre_test == ()
    assert sympy.setup[:3] == (
        "source /opt/miniconda3/bin/activate",
        "conda activate testbed",
        "cd /testbed",
    )
    assert sympy.apply_test_patch.startswith("git apply -v - <<'EOF_114329324912'\ndiff --git")


def test_test_files_keep_created_files_and_new_names(by_id: dict[str, Instance]) -> None:
    """Unlike swebench.utils.get_modified_files (files with a source, old names)."""
    assert files_of_tests(by_id["django__django-16877"]) == (
        "tests/template_tests/filter_tests/test_escapeseq.py",  # created by the test patch
    )
    assert files_of_tests(by_id["astropy__astropy-7336"]) == (
        "astropy/units/tests/test_quantity_annotations.py",  # renamed from py3_test_...
        "astropy/units/tests/test_quantity_decorator.py",
    )


def test_a_reset_naming_a_created_file_resets_nothing(tmp_path: Path) -> None:
    """What the rows whose test patch creates a file live with (documented on test_files)."""
    git(tmp_path, "init", "-q")
    (tmp_path / "test_old.py").write_text("base\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "test_old.py").write_text("edited by the model patch\n")
    reset = run_git(tmp_path, "checkout", "HEAD", "test_old.py", "test_new.py", check=False)
    assert reset.returncode != 0 and b"test_new.py" in reset.stderr
    assert (tmp_path / "test_old.py").read_text() == "edited by the model patch\n"


def _script(by_id: dict[str, Instance], edit: Any) -> Instance:
    instance = by_id["psf__requests-1142"]
    return dataclasses.replace(instance, eval_script=edit(instance.eval_script))


@pytest.mark.parametrize(
    ("edit", "complaint"),
    [
        (lambda s: s.replace("#!/bin/bash\n", ""), "line 1: expected #!/bin/bash"),
        (lambda s: s.replace(f": '{END_TEST_OUTPUT}'", ": 'end'"), "ends where"),
        (lambda s: s.replace(f": '{START_TEST_OUTPUT}'\n", ""), "ends where"),
        (lambda s: s.replace("pytest -rA", "pytest -rA x\npytest -rA"), "one test command"),
        (lambda s: s.replace("python -m pip install .\ngit checkout", "python"), "git checkout"),
        (
            lambda s: s.replace("conda activate testbed\npython", "conda activate other\npy"),
            "second",
        ),
        (lambda s: s + "echo forged\n", "one reset after the tests"),
        (lambda s: s.replace("\nEOF_114329324912\n: '", "\n: '"), "heredoc's end"),
    ],
)
def test_a_script_of_another_shape_is_refused(
    by_id: dict[str, Instance], edit: Any, complaint: str
) -> None:
    with pytest.raises(DatasetError, match="psf__requests-1142: eval_script line") as caught:
        parse_eval_script(_script(by_id, edit))
    assert complaint in str(caught.value)


def test_a_malformed_test_patch_is_a_dataset_error(by_id: dict[str, Instance]) -> None:
    instance = dataclasses.replace(
        by_id["psf__requests-1142"], test_patch="--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-x\n"
    )
    with pytest.raises(DatasetError, match="psf__requests-1142: test_patch"):
        files_of_tests(instance)


# --- reading files ------------------------------------------------------------------------


def a_row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "repo": "owner/name",
        "instance_id": "owner__name-1",
        "base_commit": "a" * 40,
        "patch": "diff\n",
        "test_patch": "diff\n",
        "problem_statement": "it breaks",
        "hints_text": "",
        "created_at": "2020-01-01T00:00:00Z",
        "version": "1.0",
        "FAIL_TO_PASS": '["test_a"]',
        "PASS_TO_PASS": "[]",
        "environment_setup_commit": "b" * 40,
        "eval_script": "#!/bin/bash\n",
        "log_parser": "parse_log_pytest",
        "eval_type": "pass_and_fail",
        "image": "img",
        "unknown_column": 1,
    }
    row.update(changes)
    return {key: value for key, value in row.items() if value is not ...}


def write(path: Path, rows: list[Any], *, gz: bool = False) -> Path:
    text = "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_plain_and_gzip_files_read_alike(tmp_path: Path) -> None:
    rows = [a_row(), "", a_row(instance_id="owner__name-2", FAIL_TO_PASS=["t1", "t2"])]
    plain = read_instances(write(tmp_path / "rows.jsonl", rows))
    zipped = read_instances(write(tmp_path / "rows.data", rows, gz=True))
    assert plain == zipped
    assert [item.fail_to_pass for item in plain] == [("test_a",), ("t1", "t2")]
    assert plain[0].difficulty == "" and plain[0].pass_to_pass == ()


@pytest.mark.parametrize(
    ("row", "line", "field", "message"),
    [
        (a_row(repo=...), 2, "repo", "missing"),
        (a_row(patch=3), 2, "patch", "expected a string, got int"),
        (a_row(difficulty=None), 2, "difficulty", "missing"),
        (a_row(FAIL_TO_PASS="[oops"), 2, "FAIL_TO_PASS", "not a JSON-encoded list"),
        (a_row(PASS_TO_PASS='["a", 1]'), 2, "PASS_TO_PASS", "list of test names"),
        (a_row(PASS_TO_PASS=...), 2, "PASS_TO_PASS", "missing"),
        (a_row(repo="requests"), 2, "repo", "owner/name"),
        (a_row(repo="owner/.."), 2, "repo", "owner/name"),
        (a_row(base_commit="--upload-pack=x"), 2, "base_commit", "40-digit"),
        (a_row(environment_setup_commit="abc"), 2, "environment_setup_commit", "40-digit"),
        (a_row(instance_id=""), 2, "instance_id", "empty"),
        (a_row(instance_id="owner__name-0"), 2, "instance_id", "repeats line 1"),
        ("[1, 2]", 2, None, "a row must be a JSON object"),
        ('{"repo": ', 2, None, "not JSON"),
    ],
)
def test_a_bad_row_names_file_line_and_field(
    tmp_path: Path, row: Any, line: int, field: str | None, message: str
) -> None:
    path = write(tmp_path / "rows.jsonl", [a_row(instance_id="owner__name-0"), row])
    with pytest.raises(InputError, match=message) as caught:
        read_instances(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), line, field)
    assert str(caught.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(
    "content",
    [None, gzip.compress(b'{"a": 1}\n', mtime=0)[:15], b"\x1f\x8bnot gzip at all", b"\xff\xfe\n"],
    ids=["missing", "truncated-gzip", "not-gzip", "not-utf8"],
)
def test_an_unreadable_file_is_an_input_error(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "rows.jsonl.gz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match="cannot read instances") as caught:
        read_instances(path)
    assert caught.value.path == str(path)
