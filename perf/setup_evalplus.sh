#!/usr/bin/env bash
# Install EvalPlus 0.3.1 (the reference HumanEval+ evaluator) into its own venv, outside
# passbench, for perf/evalplus_agreement.py and evalplus_speed.py. Usage:
#   bash perf/setup_evalplus.sh [VENV_DIR]        (default ../baseline/evalplus-venv)
# Needs python3.11 on PATH; ~300 MB. See docs/performance.md.
set -euo pipefail
venv="${1:-../baseline/evalplus-venv}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -x "$venv/bin/python" ] || python3.11 -m venv "$venv"
"$venv/bin/pip" install -q -r "$here/evalplus-requirements-py311.txt"
"$venv/bin/evalplus.evaluate" --help >/dev/null
echo "EvalPlus installed in $venv"
