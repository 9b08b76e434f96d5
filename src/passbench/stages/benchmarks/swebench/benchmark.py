"""The `swebench-verified` and `swebench-lite` benchmarks: a task is a SWE-bench instance, a
sample is a patch, and a sample passes when the official grading says the instance is resolved.

What one sample's program is ("repository" programs, `RepositorySpec`): the sandbox makes a
working copy of the instance's base commit (nothing later) at /testbed and runs, without network,
one bash script built here from the official pieces:

0. the spec's working-copy edits (`specs.working_copy_edits`: Sphinx's `-rA` in tox.ini, ...)
   run and committed, as the official image build commits them;
1. the model patch through the official fallback chain (`patching.APPLY_COMMANDS`, the tree
   reset between attempts, the `--check --reverse` test last), printing the official
   `>>>>> Applied Patch` / `>>>>> Patch Apply Failed` lines; a patch that does not apply ends the
   run there (officially: no report, an error, unresolved);
2. the test machinery the patch touched (`machinery.is_test_machinery`: conftest.py, pytest
   configuration, sitecustomize, `.pth` files, a repository's own test runner) put back as the
   working copy had it before the patch (step 0's commit), and named in the verdict: a patch
   cannot change how the tests are run;
3. the instance's official eval script (`instances.parse_eval_script`) with the conda
   activation replaced by the test environment's, and the test patch read from a file: the
   test files reset to the base commit, the test patch, the test command between the official
   markers, the reset again.

The verdict is decided on the host (`judging`): the test output after the patch step is what the
official harness calls test_output.txt, graded by the instance's official log parser; where the
run's pytest loaded passbench's channel plugin, the statuses come from the channel instead (a
patch can print fake PASSED lines or end markers into the log, it cannot print into the
channel), and every test on which the two sources disagree is named in the verdict.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from passbench.core.errors import DatasetError, InputError
from passbench.core.journal import program_sha
from passbench.core.records import (
    ErrorCategory,
    ExecResult,
    Program,
    Prompt,
    RepositorySpec,
    RepositorySubmodule,
    Sample,
    Task,
)
from passbench.core.runs import RunResults, SampleResult
from passbench.stages.benchmarks.base import BenchmarkBase, BenchmarkInfo, Judging, TaskId
from passbench.stages.benchmarks.data import DataFile, DataSettings
from passbench.stages.benchmarks.prompting import PromptStyle
from passbench.stages.benchmarks.swebench import grading, prompting
from passbench.stages.benchmarks.swebench.environments import instance_environment
from passbench.stages.benchmarks.swebench.instances import (
    END_TEST_OUTPUT,
    START_TEST_OUTPUT,
    Instance,
    parse_eval_script,
    read_instances,
)
from passbench.stages.benchmarks.swebench.logparsers import OfficialParserCrash, parse_log
from passbench.stages.benchmarks.swebench.patching import (
    ALREADY_APPLIED_CHECK,
    APPLY_COMMANDS,
    APPLY_PATCH_FAIL,
    APPLY_PATCH_PASS,
    RESET_COMMANDS,
    touched_files,
)
from passbench.stages.benchmarks.swebench.predictions import read_predictions
from passbench.stages.benchmarks.swebench.repos import RepositorySource, bootstrapped_submodules
from passbench.stages.benchmarks.swebench.services import run_stand_ins
from passbench.stages.benchmarks.swebench.specs import spec_for, working_copy_edits
from passbench.stages.benchmarks.swebench.testenvs import (
    NO_ENVIRONMENT,
    InstanceEnvironment,
    SWEBenchEnvironments,
    environments_folder,
)
from passbench.stages.sandbox.host.machinery import is_test_machinery
from passbench.stages.sanitize import SanitizeResult

#: The official per-instance limit (`run_evaluation.py --timeout`, 1,800 s).
OFFICIAL_TIMEOUT_S = 1800.0
#: Where the sandbox shows the program's files (the patches).
FILES = "/run/passbench/files"
MODEL_PATCH = "model.patch"
TEST_PATCH = "test.patch"
#: The environment record (testenvs.InstanceEnvironment.record) among the program's files.
ENVIRONMENT_FILE = "environment.json"
#: Test output kept in a verdict for the official test_output.txt (head and tail beyond it).
_LOG_KEEP = 1024 * 1024
_HF = "https://huggingface.co"

_REPOSITORIES = (
    "astropy",
    "django",
    "flask",
    "matplotlib",
    "pylint",
    "pytest",
    "requests",
    "scikit-learn",
    "seaborn",
    "sphinx",
    "sympy",
    "xarray",
)
_LITE_DEV_REPOSITORIES = (
    "astroid",
    "marshmallow",
    "pvlib-python",
    "pydicom",
    "pyvista",
    "sqlfluff",
)


def _check_rows(path: Path) -> object:
    return read_instances(path)


def _data_file(relpath: str, hub_path: str) -> DataFile:
    return DataFile(
        relpath=relpath, url_path=hub_path, check=_check_rows, convert=_from_parquet, home=_HF
    )


def _from_parquet(data: bytes) -> bytes:
    """The Hugging Face parquet as the JSON lines the data folder holds (../shared/datasets's
    PROVENANCE: one `json.dumps(row, ensure_ascii=False)` per row, in the parquet's order)."""
    try:
        import io

        import pyarrow.parquet as parquet  # type: ignore[import-untyped]
    except ImportError:
        raise DatasetError(
            "SWE-bench is published as parquet: reading it needs pyarrow (pip install pyarrow), "
            "or put the .jsonl.gz in the data folder (see docs/swebench.md)"
        ) from None
    import gzip

    rows = parquet.read_table(io.BytesIO(data)).to_pylist()
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return gzip.compress(text.encode("utf-8"), mtime=0)


@dataclass(frozen=True)
class _Resolved:
    """What a task carries besides the dataset row: where its repository is found."""

    source: RepositorySource
    data_dir: Path | None  # the data folder (the Verified environment exports are read there)


def _instance(task: Task) -> Instance:
    instance = task.metadata["instance"]
    assert isinstance(instance, Instance)
    return instance


def _data_dir(task: Task) -> Path | None:
    resolved = task.metadata["repositories"]
    assert isinstance(resolved, _Resolved)
    return resolved.data_dir


def _source(task: Task) -> RepositorySource:
    resolved = task.metadata["repositories"]
    assert isinstance(resolved, _Resolved)
    return resolved.source


# -- the prompt ----------------------------------------------------------------------------


def _build_prompt(task: Task, split: str, chat: bool) -> Prompt:
    """The official text prompt (`create_text_dataset`, style-3, oracle file source): the issue,
    the repository's readmes and the files the gold patch edits, read from the base commit."""
    instance = _instance(task)
    git_dir = _source(task).mirror(instance.repo, instance.base_commit)
    readmes = prompting.read_readmes(git_dir, instance.base_commit)
    files = prompting.read_oracle_files(git_dir, instance.base_commit, instance.patch)
    text = prompting.dataset_text(
        prompting.text_prompt(instance.problem_statement, readmes, files, style="style-3")
    )
    if not chat:
        return Prompt(task_id=task.task_id, split=split, text=text)
    system, user = prompting.chat_messages(text)
    return Prompt(
        task_id=task.task_id,
        split=split,
        text=user,
        messages=({"role": "system", "content": system}, {"role": "user", "content": user}),
    )


SWEBENCH_STYLE = PromptStyle(
    direct=lambda prompt: prompt,
    user_message=lambda prefix, prompt, split, template: prompt,
    direct_stops=(),
    chat_stops=lambda prefix, prefill: (),
    direct_splits=frozenset({"complete"}),
    fence="diff",
    build=_build_prompt,
)


# -- the program ---------------------------------------------------------------------------


def _apply_chain() -> list[str]:
    """The official fallback chain as shell: the first command that exits 0 wins."""
    patch = shlex.quote(f"{FILES}/{MODEL_PATCH}")
    lines = ["applied=''"]
    for attempt, command in enumerate(APPLY_COMMANDS):
        resets = "; ".join(RESET_COMMANDS) + "; " if attempt else ""
        lines.append(
            f'if [ -z "$applied" ]; then {resets}if {command} {patch}; then '
            f"applied={shlex.quote(command)}; fi; fi"
        )
    lines.append(
        f'if [ -z "$applied" ] && {ALREADY_APPLIED_CHECK} {patch}; then applied=reverse; fi'
    )
    lines.append(f"if [ -z \"$applied\" ]; then echo '{APPLY_PATCH_FAIL}'; exit 97; fi")
    lines.append(f"echo '{APPLY_PATCH_PASS}'")
    return lines


#: The shell variable holding the commit the patch is applied to (the base commit, plus the
#: spec's working-copy edits when it has some).
_SETUP_COMMIT = "passbench_setup_commit"


def _repository_setup(instance: Instance) -> list[str]:
    """Shell lines that make the working copy what the official image holds at /testbed: the
    spec's working-copy edits run and committed, as the image build commits them
    (`specs.working_copy_edits`), then the commit the rest of the run starts from."""
    spec = spec_for(instance.repo, instance.version)
    edits = working_copy_edits(spec) if spec is not None else ()
    lines = list(edits)
    if edits:
        lines.append(
            "git -c user.email=setup@swebench.config -c user.name=SWE-bench "
            "commit --allow-empty -q -am SWE-bench"
        )
    lines.append(f"{_SETUP_COMMIT}=$(git rev-parse HEAD)")
    return lines


def _restore_machinery(instance: Instance, patch: str) -> tuple[list[str], tuple[str, ...]]:
    """Shell lines that put back every test-machinery file the patch touched (as the working
    copy had it before the patch: the base commit plus the spec's working-copy edits; removed
    when it had none), and those files."""
    try:
        touched = touched_files(patch)
    except Exception:  # an unparsable patch: the chain decides whether it applies at all
        touched = ()
    machinery = tuple(path for path in touched if is_test_machinery(path))
    lines = []
    base = f'"${_SETUP_COMMIT}"'
    for path in machinery:
        quoted = shlex.quote(path)
        lines.append(
            f"if git cat-file -e {base}:{quoted} 2>/dev/null; "
            f"then git checkout {base} -- {quoted}; else rm -f -- {quoted}; fi"
        )
    return lines, machinery


def _install_lines(install: str | None, environment: InstanceEnvironment) -> list[str]:
    """The spec's install, offline into the instance's own prefix, with the build backends on
    PYTHONPATH for this step only (environments.py, "Installing the repository offline")."""
    if install is None:
        return []
    variables = instance_environment(environment.built, step="install", home="/tmp")
    exports = [
        f'export PYTHONPATH={shlex.quote(variables["PYTHONPATH"])}"${{PYTHONPATH:+:$PYTHONPATH}}"',
        f"export PIP_CONFIG_FILE={shlex.quote(variables['PIP_CONFIG_FILE'])} PIP_NO_INDEX=1",
    ]
    return [f"( {'; '.join(exports)}; {install} )"]


def eval_script(instance: Instance, environment: InstanceEnvironment | None = None) -> str:
    """The official eval script as passbench runs it: the conda activation replaced by the
    environment's (its variables are the run's own; none under the evaluation interpreter,
    which is first on PATH), the spec's install rewritten to run offline into the instance's
    prefix (kept as it is without an environment), the test patch read from its file (the same
    bytes as the heredoc)."""
    script = parse_eval_script(instance)
    install = (
        list(script.install)
        if environment is None
        else _install_lines(environment.install, environment)
    )
    setup = [f"cd {script.workdir}", *script.pre_install, *script.git_setup, *install]
    return "\n".join(
        [
            script.shell_options,
            *setup,
            script.reset_tests,
            f"git apply -v {shlex.quote(f'{FILES}/{TEST_PATCH}')}",
            *script.pre_test,
            f": '{START_TEST_OUTPUT}'",
            script.test_command,
            f": '{END_TEST_OUTPUT}'",
            script.post_test_reset,
            "",
        ]
    )


def _uses_pytest(instance: Instance) -> bool:
    command = parse_eval_script(instance).test_command
    return re.search(r"(^|\s|/)(py\.test|pytest)(\s|$)", command) is not None


# -- the verdict ---------------------------------------------------------------------------


def _keep(text: str) -> str:
    if len(text) <= _LOG_KEEP:
        return text
    half = _LOG_KEEP // 2
    return f"{text[:half]}\n[... {len(text) - _LOG_KEEP} characters left out ...]\n{text[-half:]}"


def _judge(program: Program, result: ExecResult, instance: Instance) -> ExecResult:
    outputs = result.outputs or {}
    output = str(outputs.get("output", ""))
    patch = program.source
    details: dict[str, str] = {}
    if result.status == "timeout" or outputs.get("timed_out"):
        return _verdict(result, "timeout", ErrorCategory.TIMEOUT, "tests timed out", details)
    if not patch.strip():
        return _verdict(result, "fail", ErrorCategory.EXCEPTION, "empty patch", details)
    if "output" not in outputs:
        # the script never ran (no working copy: a mirror missing objects...), so the patch was
        # never tried: the harness's own reason stands, and no report is written (an error)
        reason = result.reason or "the instance did not run"
        details["harness"] = reason
        return _verdict(result, "fail", result.category or ErrorCategory.KILLED, reason, details)
    before, marker, test_output = output.partition(f"\n{APPLY_PATCH_PASS}\n")
    if not marker:
        details["patch"] = _keep(before)
        return _verdict(
            result, "fail", ErrorCategory.SYNTAX_ERROR, "the patch does not apply", details
        )
    try:
        official = grading.logs_eval(test_output, instance.log_parser)
    except OfficialParserCrash as crash:
        details["test_output.txt"] = _keep(test_output)
        return _verdict(
            result, "fail", ErrorCategory.EXCEPTION, f"official parser crash: {crash}", details
        )
    channel = _as_official_names(outputs.get("channel_statuses") or {}, instance.log_parser)
    trusted_channel = bool(outputs.get("channel_used")) and not outputs.get("channel_tampered")
    tests = (*instance.fail_to_pass, *instance.pass_to_pass)
    if trusted_channel:
        channel = _with_parser_artifacts(channel, official.status_map, tests)
    statuses = channel if trusted_channel else official.status_map
    disagreeing = (
        grading.disagreement(official.status_map, channel, tests) if trusted_channel else ()
    )
    report = grading.grade(
        instance.fail_to_pass,
        instance.pass_to_pass,
        statuses,
        instance_id=instance.instance_id,
        eval_type=instance.eval_type,
    )
    found = official.found or (trusted_channel and bool(channel))
    resolved = report.resolved and found
    details["report.json"] = report.official_json()
    details["test_output.txt"] = _keep(test_output)
    extra = {
        **_environment_of(program),
        "channel": "pytest"
        if trusted_channel
        else ("tampered" if outputs.get("channel_tampered") else "none"),
        "parser_disagrees": list(disagreeing),
        "machinery_restored": list(_restore_machinery(instance, patch)[1]),
    }
    details["passbench.json"] = json.dumps(extra)
    if resolved:
        return _verdict(result, "pass", None, "", details)
    status = report.tests_status
    if status is None or not found:
        why = official.why or "no test results"
        return _verdict(result, "fail", ErrorCategory.EXCEPTION, why, details)
    reason = (
        f"{report.resolution}: FAIL_TO_PASS {len(status.fail_to_pass.success)}/"
        f"{len(instance.fail_to_pass)}, PASS_TO_PASS {len(status.pass_to_pass.success)}/"
        f"{len(instance.pass_to_pass)}"
    )
    return _verdict(result, "fail", ErrorCategory.ASSERTION_FAILED, reason, details)


def _as_official_names(statuses: Mapping[str, str], parser: str) -> dict[str, str]:
    """The channel's statuses under the names the instance's official parser gives the same
    tests: the dataset lists tests by those names, and some parsers rename what pytest
    reports (`parse_log_pytest_options` cuts an absolute path in a parametrize id to its last
    component: requests' `test_unzipped_paths_unchanged[/testbed/tests/test_utils.py]` is
    `[/test_utils.py]` in PASS_TO_PASS). Each node id is read as the summary line pytest would
    print for it; a name the parser does not read back as one test is kept as it is."""
    named: dict[str, str] = {}
    for nodeid, status in statuses.items():
        try:
            parsed = parse_log(parser, f"{status} {nodeid}")
        except Exception:  # an unknown or crashing parser: the verdict reports the parser itself
            parsed = {}
        named[next(iter(parsed)) if len(parsed) == 1 else nodeid] = status
    return named


def _with_parser_artifacts(
    channel: Mapping[str, str], official: Mapping[str, str], tests: Sequence[str]
) -> dict[str, str]:
    """The channel's statuses, plus the official parser's for listed names that are no test
    pytest could report: the dataset was made with the log parser, which also reads lines of a
    test's own output as tests (pytest-dev__pytest-5262 lists `[100%]` in PASS_TO_PASS, from a
    `PASSED [100%]` line that pytester's inner runs print; pytest-dev__pytest-7521 lists
    `test_capsysbinary.py::test_hello`, a test of such an inner run in a temporary folder).
    Such names are no node id (no `::`) or name a file of which the channel reported nothing;
    a test of a file the run's pytest did report on is graded from the channel alone."""
    merged = dict(channel)
    if not channel:  # pytest reported nothing: the log alone would decide, and a patch prints it
        return merged
    files = {nodeid.split("::")[0] for nodeid in channel}
    for name in tests:
        if name in merged or name not in official:
            continue
        if "::" not in name or name.split("::")[0] not in files:
            merged[name] = official[name]
    return merged


def _environment_of(program: Program) -> dict[str, Any]:
    """The verdict's `environment` (official / approximate / incomplete / the evaluation
    interpreter: testenvs.Fidelity) and
    `environment_lock` (what it was built from: environments.BuiltEnvironment.identity)."""
    files = dict(program.repository.files) if program.repository is not None else {}
    if ENVIRONMENT_FILE not in files:
        return {"environment": NO_ENVIRONMENT, "environment_lock": None}
    record = json.loads(files[ENVIRONMENT_FILE])
    return {"environment": record["fidelity"], "environment_lock": record}


def _verdict(
    result: ExecResult,
    status: str,
    category: ErrorCategory | None,
    reason: str,
    details: Mapping[str, str],
) -> ExecResult:
    from dataclasses import replace

    return replace(
        result,
        status=status,  # type: ignore[arg-type]
        category=category,
        reason=reason,
        details=dict(details),
        outputs=None,
    )


def _report_of(result: ExecResult | SampleResult) -> dict[str, Any] | None:
    text = result.details.get("report.json")
    return json.loads(text) if text else None


def _extra_of(result: ExecResult) -> dict[str, Any]:
    text = result.details.get("passbench.json")
    return json.loads(text) if text else {}


# -- the benchmark -------------------------------------------------------------------------


class _SWEBench(BenchmarkBase):
    subset_field = "repository"
    _files: Mapping[str, DataFile]

    # -- loading

    def data_file(self, version: str) -> DataFile:
        return self._files[version]

    def load(
        self,
        version: str | None = None,
        subset: str = "full",
        *,
        data: DataSettings | None = None,
        progress: Any = None,
    ) -> Any:
        self._data = data or DataSettings()
        return super().load(version, subset, data=self._data, progress=progress)

    def parse_tasks(self, path: Path) -> tuple[Task, ...]:
        data = getattr(self, "_data", None) or DataSettings()
        # the environment exports sit beside the dataset (swebench/ of a data folder)
        resolved = _Resolved(_repository_source(data), data.data_dir or path.parent.parent)
        return tuple(_task(self.info.name, instance, resolved) for instance in read_instances(path))

    def parse_task_id(self, task_id: str) -> TaskId | None:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-)(\d+)", task_id)
        if match is None or str(int(match.group(2))) != match.group(2):
            return None
        return TaskId(match.group(1), int(match.group(2)))

    # -- programs

    def program_fields(self, task: Task, code: str, timeout_s: float) -> dict[str, Any]:
        instance = _instance(task)
        source = _source(task)
        git_dir = source.mirror(instance.repo, instance.base_commit)
        # what the official install fetches online (astropy's astropy_helpers submodule)
        submodules = tuple(
            RepositorySubmodule(
                sub.path, str(source.mirror(sub.repo, sub.commit)), sub.commit, sub.repo
            )
            for sub in bootstrapped_submodules(git_dir, instance.base_commit)
        )
        environment = self.task_environments().for_task(task)
        restore, machinery = _restore_machinery(instance, code)
        script = "\n".join(
            [
                "set -u",
                "cd /testbed",
                *_repository_setup(instance),
                *_apply_chain(),
                *restore,
                *(f"echo 'restored test machinery: {path}'" for path in machinery),
                f"exec bash {FILES}/eval.sh",
                "",
            ]
        )
        stand_ins = run_stand_ins(instance.repo, environments_folder(), FILES)
        files = (
            (MODEL_PATCH, code),
            (TEST_PATCH, instance.test_patch),
            ("eval.sh", eval_script(instance, environment)),
            *stand_ins.files,
        )
        if environment is None:
            spec = RepositorySpec(
                git_dir=str(git_dir),
                commit=instance.base_commit,
                script=script,
                submodules=submodules,
                files=files,
                channel=_uses_pytest(instance),
                services=stand_ins.services,
                tarpit=stand_ins.tarpit,
                repo=instance.repo,
            )
        else:
            built = environment.built
            # the record is one of the program's files: it is part of what the journal keys a
            # verdict by, and `judging` reads it back into the verdict
            described = environment.record()
            if stand_ins.record is not None:
                described["network_stand_ins"] = stand_ins.record
            record = json.dumps(described, sort_keys=True)
            variables = instance_environment(built, step="test", home="/tmp")
            spec = RepositorySpec(
                git_dir=str(git_dir),
                commit=instance.base_commit,
                script=script,
                submodules=submodules,
                python=str(built.python),
                files=(*files, (ENVIRONMENT_FILE, record)),
                read_only=tuple(str(path) for path in built.readonly_paths),
                env=tuple(variables.items()),
                fresh_dirs=(str(built.instance_prefix),),
                channel=_uses_pytest(instance),
                services=stand_ins.services,
                tarpit=stand_ins.tarpit,
                repo=instance.repo,
                # the eval script names its folders (the offline install's PYTHONPATH)
                environment=built.by_identity(rewrite=("eval.sh",)),
            )
        return {"source": code, "style": "repository", "timeout_s": timeout_s, "repository": spec}

    def canonical_code(self, task: Task) -> str:
        return _instance(task).patch

    def solution_from_completion(self, task: Task, completion: str) -> str:
        return prompting.extract_patch(completion)

    def sanitize_answer(self, answer: str, task: Task, split: str) -> SanitizeResult:
        """The official `extract_diff`: the patch in the answer's <patch> tags or diff fence."""
        patch = prompting.extract_patch(answer)
        if not patch.strip():
            return SanitizeResult(code="", ok=False, reason="no patch in the answer")
        return SanitizeResult(code=patch, ok=True, reason="")

    def judging(self, tasks: Mapping[str, Task]) -> Judging:
        instances = {task_id: _instance(task) for task_id, task in tasks.items()}

        def identity(program: Program) -> str:
            # the patch and everything the verdict depends on besides it
            instance = instances[program.task_id]
            spec = program.repository
            script = spec.script if spec is not None else ""
            files = spec.files if spec is not None else ()
            return program_sha(
                json.dumps(
                    [instance.instance_id, instance.log_parser, script, files, program.source]
                )
            )

        def finalize(program: Program, result: ExecResult) -> ExecResult:
            return _judge(program, result, instances[program.task_id])

        return identity, finalize

    def verdict_fields(self, task: Task, result: ExecResult) -> Mapping[str, Any]:
        report = _report_of(result)
        fields: dict[str, Any] = {"resolution": None}
        if report is not None:
            entry = report.get(task.task_id, {})
            status = entry.get("tests_status") or {}
            fields["resolution"] = (
                grading.RESOLVED_FULL if entry.get("resolved") else _resolution(status)
            )
            fields["fail_to_pass"] = status.get("FAIL_TO_PASS")
            fields["pass_to_pass"] = status.get("PASS_TO_PASS")
        # a verdict without the extra (it never ran the tests) names no environment it ran in
        fields.update({"environment": NO_ENVIRONMENT, "environment_lock": None})
        fields.update(_extra_of(result))
        return fields

    def extra_scores(
        self, entries: Sequence[Mapping[str, Any]], ks: Iterable[int]
    ) -> Mapping[str, Any]:
        disagreements = sum(1 for entry in entries if entry.get("parser_disagrees"))
        restored = sum(1 for entry in entries if entry.get("machinery_restored"))
        official = sum(1 for entry in entries if entry.get("environment") == "official")
        approximate = sum(1 for entry in entries if entry.get("environment") == "approximate")
        incomplete = sum(1 for entry in entries if entry.get("environment") == "incomplete")
        return {
            "verdicts_differing_from_the_official_parser": disagreements,
            "patches_with_test_machinery_restored": restored,
            "instances_in_official_environments": official,
            "instances_in_approximate_environments": approximate,
            "instances_in_incomplete_environments": incomplete,
            "instances_without_their_official_environment": len(entries) - official,
            **_environments_used(entries),
        }

    def task_environments(self) -> SWEBenchEnvironments:
        if getattr(self, "_environments", None) is None:
            self._environments = SWEBenchEnvironments(self.info.name, _data_dir)
        return self._environments

    def read_samples(self, path: Path, known_task_ids: Iterable[str]) -> list[Sample] | None:
        if not _looks_like_predictions(path):
            return None
        known = set(known_task_ids)
        samples = []
        for prediction in read_predictions(path):
            if prediction.instance_id not in known:
                raise InputError(
                    f"instance {prediction.instance_id!r} is not in {self.info.name}",
                    path=path,
                    field="instance_id",
                )
            samples.append(
                Sample(
                    task_id=prediction.instance_id,
                    solution=prediction.model_patch or "",
                    model=prediction.model_name_or_path,
                )
            )
        return samples

    def write_official_results(
        self,
        eval_path: Path,
        samples: Sequence[Sample],
        codes: Sequence[str],
        results: Sequence[ExecResult],
        tasks: Mapping[str, Task],
    ) -> None:
        """SWE-bench's own files beside passbench's: logs/run_evaluation/<run_id>/<model>/
        <instance>/{report.json, patch.diff, test_output.txt}, and the run report
        `<model>.<run_id>.json` (schema_version 2)."""
        stem = eval_path.name.removesuffix("_eval_results.json").rstrip("_") or "passbench"
        # one answer per instance and run officially: each sample index is a run of its own
        by_index: dict[int, list[tuple[Sample, str, ExecResult]]] = {}
        for entry in zip(samples, codes, results, strict=True):
            by_index.setdefault(entry[0].sample_index, []).append(entry)
        for index, entries in sorted(by_index.items()):
            run_id = stem if index == 0 else f"{stem}-{index}"
            self._write_run(eval_path.parent, run_id, entries, tasks)

    def _write_run(
        self,
        folder: Path,
        run_id: str,
        entries: list[tuple[Sample, str, ExecResult]],
        tasks: Mapping[str, Task],
    ) -> None:
        predictions: dict[str, _Prediction] = {}
        reports: dict[str, grading.InstanceReport] = {}
        for sample, code, result in entries:
            model = sample.model or run_id
            predictions[sample.task_id] = _Prediction(model, code)
            log_dir = grading.official_log_dir(folder, run_id, model, sample.task_id)
            log_dir.mkdir(parents=True, exist_ok=True)
            (log_dir / "patch.diff").write_text(code, encoding="utf-8")
            if "test_output.txt" in result.details:
                (log_dir / grading.LOG_TEST_OUTPUT).write_text(
                    result.details["test_output.txt"], encoding="utf-8"
                )
            report = result.details.get("report.json")
            if report is not None:
                (log_dir / grading.LOG_REPORT).write_text(report, encoding="utf-8")
                entry = json.loads(report).get(sample.task_id, {})
                reports[sample.task_id] = grading.InstanceReport(
                    instance_id=sample.task_id,
                    patch_is_None=bool(entry.get("patch_is_None")),
                    patch_exists=bool(entry.get("patch_exists")),
                    patch_successfully_applied=bool(entry.get("patch_successfully_applied")),
                    resolved=bool(entry.get("resolved")),
                )
        if not predictions:
            return
        document = grading.run_report(list(tasks), predictions, reports)
        name = grading.run_report_filename(predictions, run_id)
        (folder / name).write_text(grading.run_report_json(document), encoding="utf-8")

    def read_official_results(self, path: Path) -> RunResults | None:
        """A run report `<model>.<run_id>.json` of this benchmark's instances."""
        if path.suffix != ".json" or path.name.endswith("_eval_results.json"):
            return None
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(document, dict) or document.get("schema_version") != 2:
            return None
        submitted = document.get("submitted_ids")
        resolved = set(document.get("resolved_ids") or ())
        if not isinstance(submitted, list) or not all(
            self.parse_task_id(str(i)) for i in submitted
        ):
            return None
        tasks = {
            str(instance): (
                SampleResult(
                    task_id=str(instance),
                    sample_index=0,
                    status="pass" if instance in resolved else "fail",
                    solution="",
                    details={},
                ),
            )
            for instance in submitted
        }
        return RunResults(
            path=path,
            date=None,
            tasks=MappingProxyType(tasks),
            format="swebench-run-report",
            known_benchmark=self.info.name,
        )


def _environments_used(entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Samples per environment they ran in, keyed `environment:<fidelity>:python<version>:<lock
    sha256>` (the pass@k file's extra scores are numbers: the key carries the identity)."""
    used: dict[str, int] = {}
    for entry in entries:
        lock = entry.get("environment_lock")
        if not isinstance(lock, Mapping):
            continue
        key = (
            f"environment:{lock.get('fidelity')}:python{lock.get('python')}:"
            f"{lock.get('lock_sha256')}"
        )
        used[key] = used.get(key, 0) + 1
    return dict(sorted(used.items()))


def _resolution(status: Mapping[str, Any]) -> str:
    """FULL / PARTIAL / NO from a report's tests_status, as `grading.TestsStatus.resolution`."""
    f2p = status.get("FAIL_TO_PASS") or {}
    p2p = status.get("PASS_TO_PASS") or {}
    buckets = grading.TestsStatus(
        fail_to_pass=grading.Bucket(tuple(f2p.get("success", ())), tuple(f2p.get("failure", ()))),
        pass_to_pass=grading.Bucket(tuple(p2p.get("success", ())), tuple(p2p.get("failure", ()))),
    )
    return buckets.resolution


@dataclass(frozen=True)
class _Prediction:
    model_name_or_path: str
    model_patch: str | None


def _looks_like_predictions(path: Path) -> bool:
    """A predictions file: its first record has `instance_id` or `model_patch` (a passbench
    sample file has `task_id`)."""
    try:
        head = path.read_bytes()[:65536]
    except OSError:
        return False
    if head[:2] == b"\x1f\x8b":
        return False  # predictions are never gzipped by the official tools
    text = head.decode("utf-8", errors="replace")
    return '"model_patch"' in text or ('"instance_id"' in text and '"task_id"' not in text)


def _repository_source(data: DataSettings) -> RepositorySource:
    if data.repos_dir is not None:
        return RepositorySource(repos_dir=data.repos_dir)
    return RepositorySource(cache_dir=data.cache_root().parent / "repos")


def _task(benchmark: str, instance: Instance, resolved: _Resolved) -> Task:
    return Task(
        benchmark=benchmark,
        task_id=instance.instance_id,
        entry_point="",
        # the issue: the heart of the prompt, which `SWEBENCH_STYLE.build` completes with the
        # repository's files (contamination checks and reports read this text)
        prompts=MappingProxyType({"complete": instance.problem_statement}),
        code_prompt="",
        test=instance.test_patch,
        canonical_solution=instance.patch,
        metadata=MappingProxyType(
            {
                "instance": instance,
                "repositories": resolved,
                "repository": instance.repo.split("/", 1)[1].lower(),
                "repo": instance.repo,
                "version": instance.version,
                "difficulty": instance.difficulty,
            }
        ),
    )


class SWEBenchVerified(_SWEBench):
    """SWE-bench Verified: 500 instances checked by people (OpenAI, 2024)."""

    info = BenchmarkInfo(
        name="swebench-verified",
        title="SWE-bench Verified",
        # instance ids are "<owner>__<name>-<pull request>"; a bare number means a django one
        id_prefix="django__django-",
        # one prompt: the official text prompt (style-3, oracle retrieval), under the split
        # name every command defaults to
        splits=("complete",),
        versions=("5.0",),
        default_version="5.0",
        subsets=("full", *_REPOSITORIES),
        subset_sizes={"full": 500},
        default_timeout_s=OFFICIAL_TIMEOUT_S,
        # an instance id is in both Verified and Lite: a file of ids alone names neither
        guess_from_ids=False,
        judges_references=True,  # the gold patches are graded from their test logs too
        prompt_style=SWEBENCH_STYLE,
    )
    _files = MappingProxyType(
        {
            "5.0": _data_file(
                "swebench/swebench-verified.jsonl.gz",
                "datasets/SWE-bench/SWE-bench_Verified/resolve/main/data/test-00000-of-00001.parquet",
            )
        }
    )


class SWEBenchLite(_SWEBench):
    """SWE-bench Lite: 300 test instances (and 23 dev ones, version "dev")."""

    info = replace(
        SWEBenchVerified.info,
        name="swebench-lite",
        title="SWE-bench Lite",
        versions=("test", "dev"),
        default_version="test",
        # the test split's repositories (dev's six others: --version dev --subset full)
        subsets=("full", *_REPOSITORIES),
        subset_sizes={"full": 300},
    )
    _files = MappingProxyType(
        {
            "test": _data_file(
                "swebench/swebench-lite.jsonl.gz",
                "datasets/SWE-bench/SWE-bench_Lite/resolve/main/data/test-00000-of-00001.parquet",
            ),
            "dev": _data_file(
                "swebench/swebench-lite-dev.jsonl.gz",
                "datasets/SWE-bench/SWE-bench_Lite/resolve/main/data/dev-00000-of-00001.parquet",
            ),
        }
    )


__all__ = ["SWEBenchLite", "SWEBenchVerified", "eval_script"]
