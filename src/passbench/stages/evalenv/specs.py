"""What each evaluation environment must contain: one EnvSpec per benchmark, in a registry.

A spec names the lock file to install for each Python minor version it supports (the first is
the default), and what `env check` verifies afterwards: modules that must import, NLTK data
packages, and host programs the benchmark's tasks call through `subprocess` (the sandbox shows
the host's /usr read-only).
"""

from __future__ import annotations

from dataclasses import dataclass

from passbench.core.errors import InputError, UnknownNameError


@dataclass(frozen=True)
class Executable:
    """A host program some tasks run, and the Debian package that provides it."""

    name: str
    apt_package: str
    used_by: str  # task ids, for the report


@dataclass(frozen=True)
class EnvSpec:
    """The contents of one evaluation environment."""

    name: str
    python: str  # "3.11": the default minor version, the one `lock_file` was resolved for
    lock_file: str  # file name under src/passbench/stages/evalenv/locks/ (or an absolute path)
    modules: tuple[str, ...]  # must import in the environment's interpreter
    nltk_packages: tuple[str, ...] = ()
    executables: tuple[Executable, ...] = ()
    # Locks for other Python minor versions, as (minor, lock file): chosen when the
    # interpreter the environment is built from is of that version.
    other_locks: tuple[tuple[str, str], ...] = ()
    # The Python version of the benchmark's official evaluator: a new environment is built
    # with it (and its lock) when an interpreter of it is on the machine.
    official_python: str | None = None
    # The environment variable naming this environment's folder (see location.py). A tool
    # environment has its own, so that PASSBENCH_ENV_DIR, which names the evaluation
    # environment's folder, never sends `env create security` over it.
    dir_variable: str = "PASSBENCH_ENV_DIR"

    @property
    def locks(self) -> dict[str, str]:
        """Python minor version -> lock file, the default first."""
        return {self.python: self.lock_file, **dict(self.other_locks)}

    @property
    def supported_pythons(self) -> str:
        """ "3.10, 3.11": for messages."""
        return ", ".join(sorted(self.locks, key=_version_key))

    def lock_for(self, minor: str) -> str:
        """The lock file for Python `minor` ("3.10"); InputError names the supported ones."""
        try:
            return self.locks[minor]
        except KeyError:
            raise InputError(
                f"the {self.name} environment has no lock for Python {minor} "
                f"(supported: {self.supported_pythons})",
                field="--python",
            ) from None


def minor_version(full_version: str) -> str:
    """ "3.10.13" -> "3.10"."""
    return ".".join(full_version.split(".")[:2])


def _version_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split(".") if part.isdigit())


# Top-level modules that BigCodeBench v0.1.4 imports (found by parsing every task's prompt,
# canonical solution and test), plus the standard-library modules that need a system library
# or an optional part of the interpreter build (tkinter for `turtle`, sqlite3, ssl, lzma...).
_BIGCODEBENCH_MODULES = (
    "Crypto",
    "Levenshtein",
    "PIL",
    "blake3",
    "bs4",
    "chardet",
    "cryptography",
    "cv2",
    "dateutil",
    "django",
    "docx",
    "docxtpl",
    "faker",
    "flask",
    "flask_login",
    "flask_mail",
    "flask_restful",
    "flask_wtf",
    "folium",
    "gensim",
    "geopandas",
    "geopy",
    "holidays",
    "keras",
    "librosa",
    "lxml",
    "matplotlib",
    "mechanize",
    "mpl_toolkits",
    "natsort",
    "nltk",
    "numpy",
    "openpyxl",
    "pandas",
    "prettytable",
    "psutil",
    "pyfakefs",
    "pyquery",
    "pytesseract",
    "python_http_client",
    "pytz",
    "regex",
    "requests",
    "requests_mock",
    "rsa",
    "scipy",
    "seaborn",
    "selenium",
    "sendgrid",
    "shapely",
    "skimage",
    "sklearn",
    "soundfile",
    "statsmodels",
    "sympy",
    "tensorflow",
    "textblob",
    "texttable",
    "werkzeug",
    "wikipedia",
    "wordcloud",
    "wordninja",
    "wtforms",
    "xlrd",
    "xlwt",
    "xmltodict",
    "yaml",
    # standard library pieces that depend on how Python was built
    "bz2",
    "ctypes",
    "lzma",
    "sqlite3",
    "ssl",
    "tkinter",
    "zlib",
)

# Everything the tasks load (stopwords, words, punkt, the tagger) and what TextBlob's
# `download_corpora` fetches (brown, punkt, wordnet, averaged_perceptron_tagger, conll2000,
# movie_reviews), plus the universal tagset that `pos_tag(tagset="universal")` needs.
_BIGCODEBENCH_NLTK = (
    "stopwords",
    "punkt",
    "words",
    "averaged_perceptron_tagger",
    "universal_tagset",
    "wordnet",
    "brown",
    "conll2000",
    "movie_reviews",
)

# Programs that canonical solutions run through subprocess (found by reading every task).
_BIGCODEBENCH_EXECUTABLES = (
    Executable("bash", "bash", "461"),
    Executable("tar", "tar", "16, 785"),
    Executable("gzip", "gzip", "350"),
    Executable("split", "coreutils", "18"),
    Executable("pgrep", "procps", "348"),
    Executable("g++", "g++", "604"),
)

# What CWEval's Python tests and reference solutions import (cweval/core/py/*_{task,test}.py),
# plus sqlite3 (cwe_943_0) and ls (cwe_078_0 runs `ls -l`).
_CWEVAL_MODULES = ("Crypto", "argon2", "jwt", "lxml", "yaml", "sqlite3", "tarfile")
# The static-analysis tools of `passbench security` (security/): bandit, and CodeShield with
# CyberSecEval's insecure-code-detector rules and semgrep. They run as programs over files,
# never inside the sandbox and never imported by passbench: semgrep's pins clash with
# passbench's own dependencies.
_SECURITY_MODULES = ("bandit", "semgrep", "yaml")

_SPECS: dict[str, EnvSpec] = {
    "bigcodebench": EnvSpec(
        name="bigcodebench",
        python="3.11",
        lock_file="bigcodebench-py311.txt",
        modules=_BIGCODEBENCH_MODULES,
        nltk_packages=_BIGCODEBENCH_NLTK,
        executables=_BIGCODEBENCH_EXECUTABLES,
        # The official evaluator's own Python, with its numpy 1.21 and scipy 1.7 (the only
        # way tasks 111 and 276 pass); docs/evalenv.md compares the two.
        other_locks=(("3.10", "bigcodebench-py310.txt"),),
        official_python="3.10",
    ),
    "cweval": EnvSpec(
        name="cweval",
        python="3.11",
        lock_file="cweval-py311.txt",
        modules=_CWEVAL_MODULES,
        executables=(Executable("ls", "coreutils", "cweval/core/py/cwe_078_0"),),
    ),
    "security": EnvSpec(
        name="security",
        python="3.11",
        lock_file="security-py311.txt",
        modules=_SECURITY_MODULES,
        dir_variable="PASSBENCH_SECURITY_ENV_DIR",
    ),
}


def get_spec(name: str) -> EnvSpec:
    """The spec registered under `name`; UnknownNameError lists the known ones."""
    try:
        return _SPECS[name]
    except KeyError:
        known = ", ".join(sorted(_SPECS))
        raise UnknownNameError(
            f"unknown evaluation environment {name!r} (known: {known})"
        ) from None


def spec_names() -> list[str]:
    """Names of every registered environment."""
    return sorted(_SPECS)
