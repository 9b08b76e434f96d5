"""SWE-bench's text prompts and patch extraction, checked against the official tool's own output.

How the expected values were made: SWE-bench's `swebench/inference/make_datasets/` at
SWE-bench/SWE-bench@7a21e05772954cc81471ae19d56f436cecf43c54 was extracted to a throwaway folder
(with `tokenize_dataset.py` replaced by `TOKENIZER_FUNCS = {}`, the only import the pure functions
do not need) and run in a throwaway venv with unidiff 1.0.1, chardet and GitPython:
- the prompt digests are sha256 of `PROMPT_FUNCTIONS[style]({"problem_statement": ...,
  "readmes": ..., "file_contents": ...})` on the inputs below, UTF-8 encoded;
- the repository digest is sha256 of `prompt_style_3` after `ContextManager(<clone of the
  repository `_make_repository` builds>, <first commit>)`, `ingest_files(cm.get_readme_files())`
  and `ingest_files(get_oracle_filenames(instance))`: the official oracle pipeline on a checkout;
- every `extract_patch` expectation is what `extract_diff` returns for that answer;
- every `oracle_files` expectation is `{f.source_file.split("a/", 1)[-1] for f in
  unidiff.PatchSet(patch)}` (sorted), or unidiff raising where an InputError is expected.
Nothing of SWE-bench is imported here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tests.gitrepo import git

from passbench.core.errors import DatasetError, InputError
from passbench.stages.benchmarks.swebench.prompting import (
    PROMPT_STYLES,
    chat_messages,
    dataset_text,
    extract_patch,
    list_at_commit,
    oracle_files,
    read_at_commit,
    read_oracle_files,
    read_readmes,
    readme_files,
    text_prompt,
)

# --- text_prompt -------------------------------------------------------------------------------

PROBLEM = (
    "Tally drops the last item\nCalling `tally([1, 2, 3])` returns 2 instead of 3.\n\n"
    "```python\n>>> tally([1, 2, 3])\n2\n```\n"
)
README = {"README.rst": "Tally\n=====\n\nCounts things. \u00e9t\u00e9\n"}
CORE = (
    "def tally(items):\n    count = 0\n    for _ in items[:-1]:\n        count += 1\n"
    "    return count\n"
)
FILES = {
    "tally/core.py": CORE,
    "tally/__init__.py": 'from tally.core import tally\n\n__all__ = ["tally"]',
}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("readmes", "files", "style", "digest"),
    [
        (
            README,
            FILES,
            "style-3",
            "21125d99b91d8d39edf75fd1147bab7bd2f667e240d6e5634f568e1bba1978e3",
        ),
        (
            README,
            FILES,
            "style-2",
            "e49fcc6889ce0088972c84a0b430464a6b4101ddb487643c98bf90de74ba24ce",
        ),
        (  # no readme, and the "/dev/null" entry of a file the gold patch creates
            {},
            {"/dev/null": "", "tally/core.py": CORE},
            "style-3",
            "79535f2e0df5aeff12b6146c330b8d0eb7bdf4ff6e0491a329aeb2efa3827ddd",
        ),
    ],
)
def test_prompt_is_byte_for_byte_the_official_one(
    readmes: dict[str, str], files: dict[str, str], style: str, digest: str
) -> None:
    assert _sha256(text_prompt(PROBLEM, readmes, files, style)) == digest


def test_the_code_block_numbers_every_line_in_path_order() -> None:
    prompt = text_prompt(PROBLEM, README, FILES)
    code = prompt.split("<code>\n", 1)[1].split("\n</code>", 1)[0]
    assert code == (
        "[start of README.rst]\n1 Tally\n2 =====\n3 \n4 Counts things. \u00e9t\u00e9\n5 \n"
        "[end of README.rst]\n"
        "[start of tally/__init__.py]\n1 from tally.core import tally\n2 \n"
        '3 __all__ = ["tally"]\n[end of tally/__init__.py]\n'
        "[start of tally/core.py]\n1 def tally(items):\n2     count = 0\n"
        "3     for _ in items[:-1]:\n4         count += 1\n5     return count\n6 \n"
        "[end of tally/core.py]"
    )


def test_style_3_frames_the_issue_and_ends_with_its_instruction() -> None:
    prompt = text_prompt(PROBLEM, {}, {})
    assert prompt.startswith(
        "You will be provided with a partial code base and an issue statement explaining a "
        f"problem to resolve.\n<issue>\n{PROBLEM}\n</issue>\n\n<code>\n\n\n</code>\n\n"
    )
    assert prompt.endswith("in the format shown above.\nRespond below:")


def test_an_unknown_style_is_refused() -> None:
    assert PROMPT_STYLES == ("style-2", "style-3")
    with pytest.raises(InputError, match="full_file_gen"):
        text_prompt(PROBLEM, {}, {}, style="full_file_gen")


def test_dataset_text_and_chat_messages() -> None:
    text = dataset_text("\n premise line\nrest\n\nmore \n\n")
    assert text == "premise line\nrest\n\nmore\n\n"
    assert chat_messages(text + "\n\n") == ("premise line", "rest\n\nmore\n\n\n\n")
    assert chat_messages("one line") == ("one line", "")


# --- extract_patch -----------------------------------------------------------------------------

DIFF = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"


@pytest.mark.parametrize(
    ("answer", "patch"),
    [
        # a <patch> element: its body, untouched
        (f"Here is the fix.\n<patch>\n{DIFF}</patch>\nDone.", f"\n{DIFF}"),
        (f"<diff>{DIFF}</diff>", DIFF),
        # the first patch element wins over an earlier other element and later patches
        (f"<code>print(1)</code>\n<patch>\n{DIFF}</patch>\n<patch>second</patch>", f"\n{DIFF}"),
        # elements are looked at before fences, wherever they are
        (f"```diff\n{DIFF}```\nor\n<patch>\n{DIFF.upper()}</patch>", f"\n{DIFF.upper()}"),
        # a diff fence wins over an earlier other fence
        (f"```python\nprint(1)\n```\n```diff\n{DIFF}```", DIFF),
        (f"```patch\n{DIFF}```", DIFF),
        # no patch: the first other element, then the first other fence
        ("<code>print(1)</code>\n```python\nprint(2)\n```", "print(1)"),
        ("```python\nprint(2)\n```", "print(2)\n"),
        (f"```\n{DIFF}```", DIFF),
        # tag names are case-sensitive and may hold word characters and hyphens
        (f"<PATCH>{DIFF}</PATCH>", DIFF),
        (f"<my-patch_2>{DIFF}</my-patch_2>", DIFF),
        # elements do not overlap: the outer one is taken, as an "other" element
        (f"<issue><patch>{DIFF}</patch></issue>", f"<patch>{DIFF}</patch>"),
        # a fence language must be followed at once by a newline; an open element is no element
        (f"```diff {DIFF}```", f"```diff {DIFF}```"),
        (f"<patch>{DIFF}", f"<patch>{DIFF}"),
        # nothing found: the answer up to its first end-of-sequence marker
        (f"{DIFF}</s><s>more", DIFF),
        ("no patch at all", "no patch at all"),
        ("", ""),
    ],
)
def test_extract_patch_is_the_official_extract_diff(answer: str, patch: str) -> None:
    assert extract_patch(answer) == patch


def test_a_missing_answer_has_no_patch() -> None:
    assert extract_patch(None) is None


# --- oracle_files and readme_files -------------------------------------------------------------

MODIFIED = (
    "diff --git a/pkg/zeta.py b/pkg/zeta.py\n"
    "--- a/pkg/zeta.py\n+++ b/pkg/zeta.py\n"
    "@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"
    "diff --git a/pkg/alpha.py b/pkg/alpha.py\n"
    "index 1234567..89abcde 100644\n"
    "--- a/pkg/alpha.py\n+++ b/pkg/alpha.py\n"
    "@@ -3 +3 @@ def f():\n-    return 1\n+    return 2\n"
)
CREATED_DELETED_RENAMED_BINARY = (
    "diff --git a/pkg/new.py b/pkg/new.py\n"
    "new file mode 100644\nindex 0000000..e69de29\n"
    "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
    "diff --git a/pkg/other_new.py b/pkg/other_new.py\n"
    "new file mode 100755\nindex 0000000..e69de29\n"
    "--- /dev/null\n+++ b/pkg/other_new.py\n@@ -0,0 +1 @@\n+y = 1\n"
    "diff --git a/pkg/gone.py b/pkg/gone.py\n"
    "deleted file mode 100644\nindex e69de29..0000000\n"
    "--- a/pkg/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z = 1\n"
    "diff --git a/pkg/old_name.py b/pkg/new_name.py\n"
    "similarity index 90%\nrename from pkg/old_name.py\nrename to pkg/new_name.py\n"
    "--- a/pkg/old_name.py\n+++ b/pkg/new_name.py\n@@ -1 +1 @@\n-w = 1\n+w = 2\n"
    "diff --git a/pkg/moved.py b/pkg/elsewhere.py\n"
    "similarity index 100%\nrename from pkg/moved.py\nrename to pkg/elsewhere.py\n"
    "diff --git a/logo.png b/logo.png\n"
    "index 1111111..2222222 100644\nBinary files a/logo.png and b/logo.png differ\n"
)
# Hunk bodies are consumed by their line counts: the removed line "-- a/fake.py" and the added
# line "++ b/fake.py" look like file headers but are not.
PLAIN = (
    "--- a/setup.cfg\t2024-01-01 00:00:00\n+++ b/setup.cfg\t2024-01-01 00:00:01\n"
    "@@ -1,2 +1,2 @@\n [metadata]\n-- a/fake.py\n++ b/fake.py\n"
)


@pytest.mark.parametrize(
    ("patch", "files"),
    [
        (MODIFIED, ("pkg/alpha.py", "pkg/zeta.py")),
        # created files are one "/dev/null"; deleted and renamed files by their old path
        (
            CREATED_DELETED_RENAMED_BINARY,
            ("/dev/null", "logo.png", "pkg/gone.py", "pkg/moved.py", "pkg/old_name.py"),
        ),
        (PLAIN, ("setup.cfg",)),
        # everything up to the first "a/" goes, even where it is no prefix
        ("--- data/mod.py\n+++ data/mod.py\n@@ -1 +1 @@\n-a\n+b\n", ("mod.py",)),
        ("", ()),
    ],
)
def test_oracle_files_are_the_official_ones(patch: str, files: tuple[str, ...]) -> None:
    assert oracle_files(patch) == files


@pytest.mark.parametrize(
    ("patch", "complaint"),
    [
        (
            "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-a\n+b\n",
            "line 4 of the patch: a hunk shorter",
        ),
        ("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n b\n", "longer"),
        ("+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n", "line 1 of the patch: target b/x.py without"),
        ("new file mode 100644\n", "a file mode line outside a git header"),
        ("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n?b\n", "line 5 of the patch: a hunk line"),
    ],
)
def test_a_patch_the_official_parser_rejects_is_refused(patch: str, complaint: str) -> None:
    with pytest.raises(InputError, match=complaint):
        oracle_files(patch)


def test_readmes_are_root_files_named_readme_in_any_case() -> None:
    listed = [
        "setup.py",
        "readme.txt",
        "docs/README.md",
        "README.rst",
        "README-dev.md",
        "Readme",
        ".readme",
        "READ_ME",
        "README.rst",
    ]
    assert readme_files(lambda: iter(listed)) == (
        "README-dev.md",
        "README.rst",
        "Readme",
        "readme.txt",
    )


# --- reading a commit --------------------------------------------------------------------------

GOLD_PATCH = (
    "diff --git a/pkg/mod.py b/pkg/mod.py\n"
    "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
    "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    "diff --git a/pkg/new.py b/pkg/new.py\n"
    "new file mode 100644\n"
    "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+g = 1\n"
)


def _make_repository(work: Path) -> tuple[str, str]:
    """A working copy whose first commit has every case of reading, and a second commit that
    changes pkg/mod.py. Returns both commits."""
    work.mkdir()
    git(work, "init", "--quiet", "--initial-branch=main")
    files: dict[str, bytes] = {
        "README.md": b"# Demo\r\nWindows line ends\r\n",
        "readme.txt": "\ufeffplain readme, with a byte order mark\n".encode(),
        "docs/README.md": b"a readme, but not at the root\n",
        "docs/guide.md": b"Guide\n",
        "pkg/__init__.py": b"",
        "pkg/mod.py": b"def f():\r    return 1\r",
        "data.bin": b"\xff\xfe\x00not text",
    }
    for path, data in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    links = {
        "README-link.md": "docs/guide.md",
        "README-dir": "docs",
        "README-dangling": "nowhere.md",
        "README-outside": "../outside-the-repository.md",
    }
    for path, target in links.items():
        (work / path).symlink_to(target)
    git(work, "add", "-A")
    # A submodule entry (gitlink) named like a readme: a folder in a checkout, not a file.
    git(work, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},README-vendor")
    git(work, "commit", "--quiet", "-m", "first")
    first = git(work, "rev-parse", "HEAD")
    (work / "pkg/mod.py").write_bytes(b"def f():\n    return 2\n")
    git(work, "commit", "--quiet", "-am", "second")
    return first, git(work, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    root = tmp_path_factory.mktemp("repository")
    first, second = _make_repository(root / "work")
    git(root, "clone", "--quiet", "--bare", str(root / "work"), "bare.git")
    return root, first, second


def _git_dirs(root: Path) -> list[Path]:
    # a bare repository, the git directory of a working copy, and the working copy itself
    return [root / "bare.git", root / "work" / ".git", root / "work"]


def test_list_at_commit_lists_files_and_links_not_submodules(
    repository: tuple[Path, str, str],
) -> None:
    root, first, _ = repository
    for git_dir in _git_dirs(root):
        assert list_at_commit(git_dir, first) == [
            "README-dangling",
            "README-dir",
            "README-link.md",
            "README-outside",
            "README.md",
            "data.bin",
            "docs/README.md",
            "docs/guide.md",
            "pkg/__init__.py",
            "pkg/mod.py",
            "readme.txt",
        ]


def test_read_at_commit_reads_text_as_open_does(repository: tuple[Path, str, str]) -> None:
    root, first, second = repository
    for git_dir in _git_dirs(root):
        assert read_at_commit(git_dir, first, "pkg/mod.py") == "def f():\n    return 1\n"
        assert read_at_commit(git_dir, second, "pkg/mod.py") == "def f():\n    return 2\n"
        assert read_at_commit(git_dir, first, "README.md") == "# Demo\nWindows line ends\n"
        assert read_at_commit(git_dir, first, "readme.txt") == (
            "\ufeffplain readme, with a byte order mark\n"
        )
        assert read_at_commit(git_dir, first, "pkg/__init__.py") == ""
        assert read_at_commit(git_dir, first, "README-link.md") == "Guide\n"


@pytest.mark.parametrize(
    "path",
    ["nothing.py", "docs", "README-dir", "README-dangling", "README-outside", "README-vendor"],
)
def test_read_at_commit_finds_no_file(repository: tuple[Path, str, str], path: str) -> None:
    root, first, _ = repository
    assert read_at_commit(root / "bare.git", first, path) is None


def test_read_at_commit_refuses_what_the_official_tool_cannot_read(
    repository: tuple[Path, str, str], tmp_path: Path
) -> None:
    root, first, _ = repository
    bare = root / "bare.git"
    with pytest.raises(DatasetError, match=r"data\.bin at \w+ is not UTF-8 text"):
        read_at_commit(bare, first, "data.bin")
    with pytest.raises(DatasetError, match=r"cannot read commit 0{40}"):
        read_at_commit(bare, "0" * 40, "pkg/mod.py")
    with pytest.raises(DatasetError, match=r"cannot read commit 0{40}"):
        list_at_commit(bare, "0" * 40)
    with pytest.raises(DatasetError, match="cannot read commit"):
        list_at_commit(tmp_path, first)
    with pytest.raises(InputError, match="not a commit"):
        read_at_commit(bare, "--output=x", "pkg/mod.py")
    with pytest.raises(InputError, match="newline"):
        read_at_commit(bare, first, "a\nb")


def test_readmes_and_oracle_files_read_at_the_base_commit(
    repository: tuple[Path, str, str],
) -> None:
    root, first, _ = repository
    bare = root / "bare.git"
    assert read_readmes(bare, first) == {
        "README-link.md": "Guide\n",
        "README.md": "# Demo\nWindows line ends\n",
        "readme.txt": "\ufeffplain readme, with a byte order mark\n",
    }
    assert read_oracle_files(bare, first, GOLD_PATCH) == {
        "/dev/null": "",
        "pkg/mod.py": "def f():\n    return 1\n",
    }
    missing = GOLD_PATCH.replace("pkg/mod.py", "pkg/missing.py")
    with pytest.raises(DatasetError, match=r"pkg/missing\.py, which the gold patch edits"):
        read_oracle_files(bare, first, missing)
    binary = GOLD_PATCH.replace("pkg/mod.py", "data.bin")
    with pytest.raises(DatasetError, match="not UTF-8 text"):
        read_oracle_files(bare, first, binary)


def test_the_prompt_from_a_git_directory_is_the_official_oracle_prompt(
    repository: tuple[Path, str, str],
) -> None:
    root, first, _ = repository
    bare = root / "bare.git"
    prompt = text_prompt(
        PROBLEM, read_readmes(bare, first), read_oracle_files(bare, first, GOLD_PATCH)
    )
    assert _sha256(prompt) == "18058cf68de904948c7ae3ad26e797877598cea4ec294a52bc10b6f4e10a5a3a"
