#!/usr/bin/env bash
# Install the official BigCodeBench *client* (bigcodebench 0.2.5) into its own venv, outside
# passbench: enough for `bigcodebench.evaluate --execution gradio`, which sends samples to an
# evaluator server and runs nothing itself (no evaluation requirements, ~300 MB). Used by
# perf/serve_official.py. Usage:
#   bash perf/setup_official_client.sh [VENV_DIR]     (default ../baseline/official-client)
# Needs python3.11 on PATH. See docs/serve.md.
set -euo pipefail
venv="${1:-../baseline/official-client}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

[ -x "$venv/bin/python" ] || python3.11 -m venv "$venv"
"$venv/bin/pip" install -q --no-deps bigcodebench==0.2.5
"$venv/bin/pip" install -q -r "$here/official-client-requirements-py311.txt"

bash "$here/transformers_stub.sh" "$venv"
"$venv/bin/python" -c 'import bigcodebench.evaluate' && echo "official client ready in $venv"
