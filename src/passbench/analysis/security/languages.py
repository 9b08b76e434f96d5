"""Which analyzers apply to a sample's language, as CyberSecEval's detector decides.

Languages are named as benchmarks name them ("Python", "C++", "js", "rs", ...) and mapped to
the detector's keys. Its analyzer table (`LANGUAGE_ANALYZER_MAP`): regex rules for every key
below, semgrep rules only for C, C++, C#, Java, JavaScript and Python; bandit reads Python
only. A language with no rules (Lua, R, ...) is scanned by nothing and reported as such.
"""

from __future__ import annotations

#: The detector's language keys (`Language` in codeshield), with a file extension each.
EXTENSIONS: dict[str, str] = {
    "c": ".c",
    "cpp": ".cpp",
    "csharp": ".cs",
    "hack": ".php",
    "java": ".java",
    "javascript": ".js",
    "kotlin": ".kt",
    "objective_c": ".m",
    "php": ".php",
    "python": ".py",
    "ruby": ".rb",
    "rust": ".rs",
    "swift": ".swift",
    "xml": ".xml",
}

#: Languages whose semgrep rules the detector runs (the rest: regex only).
SEMGREP_LANGUAGES = frozenset({"c", "cpp", "csharp", "java", "javascript", "python"})

_ALIASES = {
    "py": "python",
    "python3": "python",
    "c++": "cpp",
    "cxx": "cpp",
    "cc": "cpp",
    "c#": "csharp",
    "cs": "csharp",
    "js": "javascript",
    "node": "javascript",
    "typescript": "javascript",  # not a detector language; its JavaScript rules apply best
    "ts": "javascript",
    "rs": "rust",
    "rb": "ruby",
    "kt": "kotlin",
    "objc": "objective_c",
    "objective-c": "objective_c",
}


def detector_language(name: str | None) -> str | None:
    """The detector's key for a language name (any case, common aliases); None: no rules."""
    if not name:
        return None
    key = name.strip().lower().replace(" ", "_")
    key = _ALIASES.get(key, key)
    return key if key in EXTENSIONS else None


def analyzers(language: str | None) -> tuple[str, ...]:
    """The tools that scan a detector language: ("bandit", "semgrep", "regex") for Python."""
    if language is None:
        return ()
    tools = ["bandit"] if language == "python" else []
    if language in SEMGREP_LANGUAGES:
        tools.append("semgrep")
    tools.append("regex")
    return tuple(tools)
