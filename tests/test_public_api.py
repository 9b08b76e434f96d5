"""The public Python API (passbench/__init__.py): its names are pinned, each resolves, and
`import passbench` stays light (records and errors only; the stages load on first use)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import passbench

#: Adding a name is a decision (docs/python-api.md documents each); removing one breaks users.
PUBLIC = [
    "Completion",
    "ErrorCategory",
    "ExecResult",
    "GenerationOutcome",
    "Isolation",
    "PassbenchError",
    "Program",
    "Prompt",
    "RunResults",
    "Sample",
    "SampleFiles",
    "SampleResult",
    "Task",
    "__version__",
    "evaluate",
    "generate",
    "load_results",
]

SRC = Path(__file__).resolve().parents[1] / "src"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def test_all_is_pinned() -> None:
    assert passbench.__all__ == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves_and_is_documented(name: str) -> None:
    value = getattr(passbench, name)
    assert value is not None
    assert name in dir(passbench)
    assert f"`{name}" in DOCS.read_text(encoding="utf-8")


def test_the_lazy_names_are_the_implementations() -> None:
    from passbench.apps.api import evaluate, generate
    from passbench.apps.pipeline import GenerationOutcome
    from passbench.stages.results import RunResults, load_results

    assert passbench.evaluate is evaluate and passbench.generate is generate
    assert passbench.load_results is load_results
    assert passbench.RunResults is RunResults and passbench.GenerationOutcome is GenerationOutcome


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Score'"):
        passbench.Score  # noqa: B018 (removed: it was never built)


def _modules_after(code: str) -> set[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    finished = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return set(json.loads(finished.stdout))


def test_importing_passbench_loads_the_records_and_errors_only() -> None:
    loaded = _modules_after("import passbench")
    ours = {name for name in loaded if name.startswith("passbench")}
    assert ours == {
        "passbench",
        "passbench.core",
        "passbench.core.errors",
        "passbench.core.records",
        "passbench.core.version",
    }
    heavy = {"numpy", "rich", "httpx", "click", "sqlalchemy", "platformdirs", "asyncio"}
    assert not heavy & loaded


def test_using_the_api_loads_no_renderer_and_no_sdk() -> None:
    loaded = _modules_after("import passbench\npassbench.evaluate, passbench.generate")
    assert "passbench.apps.api" in loaded
    # the CLI's renderer, the store, the numeric stack and the providers' SDKs stay unloaded
    assert not {"rich", "click", "sqlalchemy", "numpy", "openai", "anthropic"} & loaded
