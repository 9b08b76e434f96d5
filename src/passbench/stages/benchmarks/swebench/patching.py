"""The official patch-apply fallback chain, run on a working copy on this machine.

SWE-bench 5.0 (`swebench/harness/run_evaluation.py`, `run_instance`) writes the prediction's
`model_patch` (`None` as the empty string) to a file outside the repository and tries these
commands in the repository root, in this order:

    git apply --verbose
    git apply --verbose --3way
    git apply --verbose --reject
    patch --batch --forward --fuzz=5 -p1 -i

The first that exits 0 wins: the patch is applied and the log gets `>>>>> Applied Patch:` and that
command's output. Before every attempt but the first the tree is made pristine again with
`git checkout -- . ; git clean -fd`, because a failed attempt (`--reject` above all) leaves part
of the patch and `.rej` files behind. When all four fail, `git apply --check --reverse` decides:
exit 0 means the patch is already fully applied (the chain can leave it so while every command
still exits non-zero) and counts as applied ("verified already applied"). Otherwise the log gets
`>>>>> Patch Apply Failed:` with the last command's output and the instance is never tested (no
report; the run report counts it as an error, so it is unresolved). SWE-bench 4.x ran three
commands (no `--3way`, no `--forward`), with neither the resets nor the reverse check; the dataset
rows passbench ships carry 5.0 eval scripts, so passbench follows 5.0.

Running the same commands gives the official answer for the cases that surprise people, each
checked by the tests:
- CRLF: `git apply` matches context byte for byte, so a patch whose lines end in CRLF applies to
  LF files with no `git apply`; GNU `patch` strips the CRs ("Stripping trailing CRs from patch")
  and applies it, and the lines it writes end in LF.
- Binary: a `GIT binary patch` hunk (full index lines) applies with `git apply`, while GNU `patch`
  refuses it ("git binary diffs are not supported"). A bare "Binary files a/x and b/x differ"
  carries no content: every `git apply` fails on it ("cannot apply binary patch ... without full
  index line"), and GNU `patch` exits 0 leaving such files as they were (creating a new one
  empty), so the patch counts as applied without its binary content.
- Fuzz: `git apply` needs every context line to match; GNU `patch --fuzz=5` may ignore context
  lines, so a hunk whose context drifted applies only at the last step.

The commands run with no user or system git configuration, no caller `GIT_*` variables and the C
locale, as in the official container, so a user's `apply.whitespace` or `core.autocrlf` cannot
change the answer.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from passbench.core.errors import EnvironmentError_
from passbench.stages.sandbox.host.workingcopy import isolated_environment

#: What the official instance log says when a patch applied, and when none of the chain did.
APPLY_PATCH_PASS = ">>>>> Applied Patch"
APPLY_PATCH_FAIL = ">>>>> Patch Apply Failed"

#: The fallback chain, in order; each gets the patch file's path as its last argument.
APPLY_COMMANDS: tuple[str, ...] = (
    "git apply --verbose",
    "git apply --verbose --3way",
    "git apply --verbose --reject",
    "patch --batch --forward --fuzz=5 -p1 -i",
)
#: Run before every attempt but the first (as one shell line officially: both always run).
RESET_COMMANDS: tuple[str, ...] = ("git checkout -- .", "git clean -fd")
#: Asked when the whole chain failed: exit 0 means the patch is already fully applied.
ALREADY_APPLIED_CHECK = "git apply --check --reverse"

_GIT_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_OCTAL = frozenset("01234567")


@dataclass(frozen=True)
class PatchOutcome:
    """What the chain did with one patch.

    `command` is the command that decided: the one that applied the patch, `ALREADY_APPLIED_CHECK`
    when the reverse check did, or the last command of the chain when nothing applied it ("" when
    the patch could not even be written). `output` is that command's stdout and stderr together,
    as the official log shows them (empty for the reverse check, which the official log does not
    quote)."""

    applied: bool
    command: str
    output: str

    def log(self) -> str:
        """The lines the official instance log (`run_instance.log`) writes about the patch, with
        its markers, so tools that grep for them read passbench's log the same way."""
        failed = APPLY_COMMANDS
        if self.command in APPLY_COMMANDS and self.applied:
            failed = APPLY_COMMANDS[: APPLY_COMMANDS.index(self.command)]
        elif not self.command:
            failed = ()
        lines = [f"Failed to apply patch: {command}" for command in failed]
        if not self.applied:
            lines.append(f"{APPLY_PATCH_FAIL}:\n{self.output}")
        elif self.command == ALREADY_APPLIED_CHECK:
            lines.append(f"{APPLY_PATCH_PASS}: verified already applied")
        else:
            lines.append(f"{APPLY_PATCH_PASS}:\n{self.output}")
        return "\n".join(lines)


def apply_patch(workdir: Path, patch: str) -> PatchOutcome:
    """Apply `patch` to the git working copy `workdir` as the official harness does (module
    docstring). A patch that fails is data, not an error: the working copy is left as the last
    command left it. An empty patch counts as applied (GNU patch accepts empty input); the
    official run never gets that far, it sets empty patches aside as "empty patch" instances,
    and so must a caller. Raises EnvironmentError_ when
    git or GNU patch is not installed, ValueError when `workdir` is not a git working copy."""
    workdir = workdir.resolve()
    if not (workdir / ".git").exists():
        raise ValueError(f"{workdir}: not a git working copy (no .git)")
    _require_tools()
    try:
        data = patch.encode("utf-8")
    except UnicodeEncodeError as error:
        # the official harness crashes writing such a patch: the instance errors, unresolved
        return PatchOutcome(False, "", f"the patch cannot be written as UTF-8: {error}")
    env = isolated_environment(workdir)
    with tempfile.TemporaryDirectory(prefix="passbench-patch-") as folder:
        patch_file = Path(folder) / "patch.diff"
        patch_file.write_bytes(data)
        output = ""
        for attempt, command in enumerate(APPLY_COMMANDS):
            if attempt:
                for reset in RESET_COMMANDS:
                    _run(shlex.split(reset), workdir, env)
            code, output = _run([*shlex.split(command), str(patch_file)], workdir, env)
            if code == 0:
                return PatchOutcome(True, command, output)
        code, _ = _run([*shlex.split(ALREADY_APPLIED_CHECK), str(patch_file)], workdir, env)
        if code == 0:
            return PatchOutcome(True, ALREADY_APPLIED_CHECK, "")
        return PatchOutcome(False, APPLY_COMMANDS[-1], output)


def touched_files(patch: str) -> tuple[str, ...]:
    """The repository paths a unified diff creates, modifies, deletes or renames (both names of
    a rename), in the order the diff names them, each once. Paths are taken as every command of
    the chain takes them (`-p1`: the first component, `a/` or `b/`, removed) and git's quoting of
    unusual names is undone. CRLF line ends are read as LF, as GNU `patch` reads them.

    This is what the diff says, parsed with `unidiff` (as SWE-bench parses diffs); what a patch
    really changed is the working copy's state after `apply_patch`. Raises ValueError for text
    that is a diff with malformed hunks (text with no diff in it touches nothing)."""
    try:
        patch_set = PatchSet(patch.replace("\r\n", "\n"))
    except UnidiffParseError as error:
        raise ValueError(f"not a valid unified diff: {error}") from error
    paths: list[str] = []
    for patched in patch_set:
        for name in (patched.source_file, patched.target_file):
            path = diff_path(name)
            if path is not None and path not in paths:
                paths.append(path)
    return tuple(paths)


def diff_path(name: str) -> str | None:
    """A file name from a diff header (`a/x.py`, `"b/caf\\303\\251.py"`, `/dev/null`) as a path in
    the repository (`x.py`, `café.py`), or None for `/dev/null`: git's C quoting undone, then the
    first path component removed as `-p1` does (a name without one is kept whole)."""
    name = _unquote(name.rstrip("\r"))
    if name == "/dev/null":
        return None
    return name.split("/", 1)[1] if "/" in name else name


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    completed = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
    )
    return completed.returncode, completed.stdout.decode("utf-8", errors="replace")


def _require_tools() -> None:
    for tool, package in (("git", "git"), ("patch", "patch")):
        if shutil.which(tool) is None:
            raise EnvironmentError_(
                f"'{tool}' is not installed; the official patch-apply chain needs it "
                f"(Debian/Ubuntu: apt-get install {package})"
            )


def _unquote(name: str) -> str:
    """Undo git's C-style quoting of a path ("a/caf\\303\\251.py" -> a/café.py)."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return name
    body, out, index = name[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        following = body[index + 1 : index + 2]
        octal = body[index + 1 : index + 4]
        if char != "\\":
            out += char.encode("utf-8")
            index += 1
        elif following in _GIT_ESCAPES:
            out.append(_GIT_ESCAPES[following])
            index += 2
        elif len(octal) == 3 and set(octal) <= _OCTAL:
            out.append(int(octal, 8) & 0xFF)
            index += 4
        else:
            out += b"\\"
            index += 1
    return out.decode("utf-8", errors="surrogateescape")
