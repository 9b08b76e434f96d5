#!/usr/bin/env bash
# Install the official BigCodeBench evaluator (bigcodebench 0.2.5) into its own venv, outside
# passbench, for the speed comparisons in this folder. Usage:
#   bash perf/setup_official.sh [VENV_DIR]        (default ../baseline/venv)
# Needs python3.11 on PATH; ~3.5 GB and a few minutes. See docs/performance.md.
set -euo pipefail
venv="${1:-../baseline/venv}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

[ -x "$venv/bin/python" ] || python3.11 -m venv "$venv"
"$venv/bin/pip" install --no-deps bigcodebench==0.2.5
"$venv/bin/pip" install -r "$here/official-requirements-py311.txt"
# scikit-image 0.20.0 pins networkx >= 2.8; the official requirements pin networkx 2.6.3
"$venv/bin/pip" install --no-deps scikit-image==0.20.0

bash "$here/transformers_stub.sh" "$venv"
"$venv/bin/python" -c 'import bigcodebench.evaluate' && echo "official evaluator ready in $venv"
