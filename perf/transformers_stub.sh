#!/usr/bin/env bash
# Give VENV a stub `transformers` package, unless it has the real one. bigcodebench.evaluate
# imports transformers.AutoTokenizer at load (provider/utility.py) and never uses it when
# evaluating: the stub keeps the multi-GB transformers stack out. Usage:
#   bash perf/transformers_stub.sh VENV_DIR
set -euo pipefail
venv="$1"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
if ! "$venv/bin/python" -c 'import transformers' 2>/dev/null; then
    mkdir -p "$site/transformers"
    cat > "$site/transformers/__init__.py" <<'PY'
"""Stub so that bigcodebench.evaluate imports without the real transformers (never called)."""


class AutoTokenizer:
    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        raise RuntimeError("transformers stub: install the real transformers to generate")
PY
fi
