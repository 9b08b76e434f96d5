"""Library -> domain, as BigCodeBench's own analysis groups its 139 libraries.

The table is the official mapping (bigcode-project/bigcodebench, analysis/lib2domain.json), with
the domain names lower-cased, so per-domain scores line up with the paper and leaderboard. There
is no separate "web" domain there: web frameworks (flask, django, requests, bs4) count as
network. A task belongs to every domain any of its libraries maps to, so domain counts add up
to more than the number of tasks. A library outside the table maps to "other".
"""

from __future__ import annotations

from collections.abc import Iterable

DOMAINS = ("computation", "cryptography", "general", "network", "system", "time", "visualization")
OTHER = "other"

_LIBRARIES_BY_DOMAIN: dict[str, tuple[str, ...]] = {
    "computation": (
        "cmath",
        "cv2",
        "gensim",
        "geopandas",
        "IPython",
        "keras",
        "Levenshtein",
        "librosa",
        "math",
        "nltk",
        "numpy",
        "obspy",
        "pandas",
        "pytesseract",
        "scipy",
        "shapely",
        "skimage",
        "sklearn",
        "soundfile",
        "statistics",
        "statsmodels",
        "sympy",
        "tensorflow",
        "textblob",
        "torch",
        "wordninja",
    ),
    "cryptography": (
        "base64",
        "binascii",
        "blake3",
        "codecs",
        "Crypto",
        "cryptography",
        "hashlib",
        "hmac",
        "rsa",
        "secrets",
    ),
    "general": (
        "argparse",
        "array",
        "ast",
        "bisect",
        "builtins",
        "collections",
        "copy",
        "decimal",
        "difflib",
        "enum",
        "faker",
        "fnmatch",
        "functools",
        "heapq",
        "importlib",
        "inspect",
        "itertools",
        "multidict",
        "natsort",
        "operator",
        "pkgutil",
        "pprint",
        "prettytable",
        "queue",
        "random",
        "re",
        "regex",
        "string",
        "texttable",
        "textwrap",
        "types",
        "typing",
        "unicodedata",
        "uuid",
        "warnings",
    ),
    "network": (
        "bs4",
        "cgi",
        "chardet",
        "django",
        "email",
        "flask",
        "flask_login",
        "flask_mail",
        "flask_restful",
        "flask_wtf",
        "ftplib",
        "geopy",
        "html",
        "http",
        "ipaddress",
        "lxml",
        "mechanize",
        "mimetypes",
        "pyquery",
        "python_http_client",
        "requests",
        "selenium",
        "sendgrid",
        "smtplib",
        "socket",
        "ssl",
        "urllib",
        "werkzeug",
        "wikipedia",
        "wtforms",
        "xml",
        "xmltodict",
    ),
    "system": (
        "aspose",
        "configparser",
        "csv",
        "ctypes",
        "docx",
        "docxtpl",
        "errno",
        "filecmp",
        "getpass",
        "glob",
        "gzip",
        "imp",
        "io",
        "json",
        "locale",
        "logging",
        "multiprocessing",
        "openpyxl",
        "os",
        "pathlib",
        "pickle",
        "platform",
        "psutil",
        "select",
        "shlex",
        "shutil",
        "signal",
        "sqlalchemy",
        "sqlite3",
        "struct",
        "subprocess",
        "sys",
        "tarfile",
        "threading",
        "xlrd",
        "xlwt",
        "yaml",
        "zipfile",
        "zlib",
    ),
    "time": ("calendar", "datetime", "dateutil", "holidays", "pytz", "time"),
    "visualization": (
        "folium",
        "matplotlib",
        "mpl_toolkits",
        "PIL",
        "seaborn",
        "turtle",
        "wordcloud",
    ),
}

LIBRARY_DOMAIN: dict[str, str] = {
    library: domain for domain, libraries in _LIBRARIES_BY_DOMAIN.items() for library in libraries
}


def domain_of(library: str) -> str:
    """The domain of one top-level library name ("pandas" -> "computation")."""
    return LIBRARY_DOMAIN.get(library, OTHER)


def task_domains(libraries: Iterable[str]) -> tuple[str, ...]:
    """Every domain a task's libraries fall in, sorted, without repeats."""
    return tuple(sorted({domain_of(library) for library in libraries}))
