# syntax=docker/dockerfile:1
# passbench's runner image: the agent (python -m passbench.stages.sandbox.remote.agent) with bubblewrap and the
# BigCodeBench evaluation environment, built from this checkout's passbench and its lock.
#
#   passbench image build                         # tags passbench:VERSION-LOCK12, see docs/backend-containers.md
#   docker build -t passbench:dev .               # the same by hand (labels then need the build args)
#
# Pin the base by digest for a reproducible image (digests cannot be resolved offline, so the
# default is the tag): --build-arg BASE_IMAGE=python:3.10-slim-bookworm@sha256:<digest>
ARG BASE_IMAGE=python:3.10-slim-bookworm

# --- the passbench wheel, built from this checkout (not a moving branch or an index) ---------
FROM ${BASE_IMAGE} AS wheel
# extra pip arguments for every install (an offline build: --no-index --find-links URL)
ARG PIP_ARGS=""
WORKDIR /build
COPY pyproject.toml README.md ./
COPY src ./src
# (in a venv of its own: a base whose Python is the distribution's may refuse system installs)
RUN python3 -m venv /tmp/build-venv \
    && /tmp/build-venv/bin/python -m pip wheel --no-cache-dir --no-deps --wheel-dir /dist $PIP_ARGS .

# --- the runner --------------------------------------------------------------------------------
FROM ${BASE_IMAGE}
ARG PIP_ARGS=""
# evaluation environments to build, space-separated ("" for an image that runs only programs
# needing no environment, such as HumanEval's: the tests' small image)
ARG ENVIRONMENTS="bigcodebench"
# what the labels claim; the build fails when the environment built has another lock
ARG PASSBENCH_VERSION=""
ARG PYTHON_VERSION=""
ARG BIGCODEBENCH_LOCK_SHA256=""
# MultiPL-E's and HumanEval-X's toolchains from Debian (MULTIPLE=1; `passbench image build --with-multipl-e`
# passes all three from the language tables in src/passbench/stages/benchmarks/multiple.py and humanevalx.py;
# these defaults are the same, for hand builds), then the compiled caches scripts/setup.sh builds too
# (scripts/toolchain-caches.sh: HumanEval-X's Rust crates, the Go build cache).
ARG MULTIPLE=""
ARG MULTIPLE_PACKAGES="nodejs g++ default-jdk libjavatuples-java rustc lua5.3 lua-unit golang-go libboost-dev libssl-dev golang-github-stretchr-testify-dev cargo librust-rand-dev librust-regex-dev librust-md5-dev cmake make libboost-date-time-dev junit5 libassertj-core-java python3 python3-pytest librust-time-dev librust-anyhow-dev"
ARG MULTIPLE_TOOLS="node g++ javac java /usr/share/java/javatuples.jar rustc lua5.3 /usr/share/lua/5.3/luaunit.lua go /usr/include/boost/any.hpp /usr/include/openssl/md5.h /usr/share/gocode/src/github.com/stretchr/testify/assert cmake make /usr/include/boost/date_time.hpp /usr/share/java/junit-platform-console-standalone.jar /usr/share/java/assertj-core.jar /usr/bin/python3 /usr/lib/python3/dist-packages/pytest cargo"

# with MULTIPLE=1, what scripts/setup.sh adds from npm, pinned as it pins them: tsc (multipl-e-ts) and js-md5
# (HumanEval-X's JavaScript) into /usr/local, and Aider's polyglot JavaScript test stack (Jest, Babel and
# Exercism's preset, stages/benchmarks/aider_polyglot/toolchains.py JS_PACKAGES) in the folder each
# exercise links as its node_modules
ARG NPM_PACKAGES="typescript@5.9.3 js-md5@0.8.3"
ARG AIDER_JS_PACKAGES="jest@29.7.0 babel-jest@29.7.0 @babel/core@7.25.2 @exercism/babel-preset-javascript@0.2.1 core-js@3.37.1"

# bubblewrap isolates each sample inside the container; git makes repository programs' (SWE-bench)
# working copies and applies their patches, iproute2's `ip` sets up their tarpit (setpriv and
# prlimit are util-linux's, in every Debian); the rest is what BigCodeBench's programs
# run (evalenv/apt-packages.txt) and what building its lock compiles (g++), and with MULTIPLE=1
# MultiPL-E's toolchains, each checked where the sandbox looks (its PATH). Only missing packages
# are installed, so a base that has them builds without a Debian mirror. (The JDK's post-install
# links its man pages, whose folder slim images lack: it is made first.)
COPY src/passbench/stages/evalenv/apt-packages.txt /tmp/apt-packages.txt
RUN set -eu; \
    wanted="bubblewrap git iproute2"; \
    if [ -n "$ENVIRONMENTS" ]; then \
      wanted="$wanted $(grep -v '^#' /tmp/apt-packages.txt | grep -v '^python3\.11' | tr '\n' ' ') libtk8.6"; \
    fi; \
    if [ -n "$MULTIPLE" ]; then wanted="$wanted $MULTIPLE_PACKAGES"; mkdir -p /usr/share/man/man1; fi; \
    missing=""; \
    for p in $wanted; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"; done; \
    if [ -n "$missing" ]; then \
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
      && rm -rf /var/lib/apt/lists/*; \
    fi; \
    rm /tmp/apt-packages.txt; \
    if [ -n "$MULTIPLE" ]; then \
      for tool in $MULTIPLE_TOOLS; do \
        case "$tool" in /*) test -e "$tool" ;; *) PATH=/usr/local/bin:/usr/bin:/bin command -v "$tool" >/dev/null ;; esac \
        || { echo "MultiPL-E toolchain incomplete: $tool missing" >&2; exit 1; }; \
      done; \
    fi

# the npm packages (MULTIPLE=1), from the npm registry at build time as scripts/setup.sh installs them (npm
# itself from Debian when the base has none, or the one NodeSource's nodejs bundles); each checked where the
# sandbox looks
RUN set -eu; \
    if [ -n "$MULTIPLE" ]; then \
      npm="npm"; \
      if ! command -v npm >/dev/null; then \
        if [ -f /usr/lib/node_modules/npm/bin/npm-cli.js ]; then \
          npm="node /usr/lib/node_modules/npm/bin/npm-cli.js"; \
        else \
          apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm \
          && rm -rf /var/lib/apt/lists/*; \
        fi; \
      fi; \
      $npm install -g --prefix /usr/local --no-audit --no-fund $NPM_PACKAGES; \
      js=/usr/local/lib/passbench/aider-polyglot-js; \
      mkdir -p "$js"; \
      echo '{"name": "passbench-aider-polyglot-js", "private": true}' > "$js/package.json"; \
      (cd "$js" && $npm install --no-audit --no-fund $AIDER_JS_PACKAGES); \
      echo "$AIDER_JS_PACKAGES" > "$js/stamp"; \
      $npm cache clean --force; \
      for tool in /usr/local/bin/tsc /usr/local/lib/node_modules/js-md5/package.json "$js/node_modules/.bin/jest" \
                  "$js/node_modules/@exercism/babel-preset-javascript/package.json"; do \
        test -e "$tool" || { echo "npm toolchain incomplete: $tool missing" >&2; exit 1; }; \
      done; \
    fi

# the compiled toolchain caches (MULTIPLE=1), by the script scripts/setup.sh runs: samples read them
COPY scripts/toolchain-caches.sh /tmp/toolchains/toolchain-caches.sh
COPY scripts/humaneval-x-rust /tmp/toolchains/humaneval-x-rust
COPY scripts/humaneval-x-go /tmp/toolchains/humaneval-x-go
RUN set -eu; \
    if [ -n "$MULTIPLE" ]; then \
      bash /tmp/toolchains/toolchain-caches.sh; \
      for crate in rand regex md5; do \
        test -e "/usr/local/lib/passbench/humaneval-x-rust/lib$crate.rlib" \
        || { echo "Rust crate $crate missing" >&2; exit 1; }; \
      done; \
      test -d /usr/local/lib/passbench/humaneval-x-go/gocache || { echo "Go build cache missing" >&2; exit 1; }; \
    fi; \
    rm -rf /tmp/toolchains

# a user of its own: the agent never runs as root (uid fixed so hosts can reason about it)
RUN useradd --uid 10001 --user-group --home-dir /home/passbench --create-home passbench

COPY --from=wheel /dist /dist
RUN python3 -m venv /opt/passbench/venv \
    && /opt/passbench/venv/bin/python -m pip install --no-cache-dir $PIP_ARGS /dist/passbench-*.whl \
    && rm -rf /dist
ENV PATH=/opt/passbench/venv/bin:$PATH

# the evaluation environments, from the locks inside the wheel; their NLTK data is fetched now.
# Built from the base image's interpreter, not passbench's venv (which `python3` now is): the
# sandbox makes an environment's own prefix and its base Python visible to samples, nothing else.
RUN set -eu; \
    base_python="$(python -c 'import sys; print(f"{sys.base_prefix}/bin/python{sys.version_info[0]}.{sys.version_info[1]}")')"; \
    test -x "$base_python"; \
    for name in $ENVIRONMENTS; do \
      args=""; for a in $PIP_ARGS; do args="$args --pip-arg=$a"; done; \
      passbench env create "$name" --path "/opt/passbench/envs/$name" --python "$base_python" $args; \
    done; \
    if [ -n "$BIGCODEBENCH_LOCK_SHA256" ]; then \
      grep -q "\"lock_sha256\": \"$BIGCODEBENCH_LOCK_SHA256\"" /opt/passbench/envs/bigcodebench/passbench-env.json \
      || { echo "the bigcodebench environment is not lock $BIGCODEBENCH_LOCK_SHA256" >&2; exit 1; }; \
    fi; \
    if [ -n "$PYTHON_VERSION" ]; then \
      python3 -c "import sys; sys.exit(f'{sys.version_info[0]}.{sys.version_info[1]}' != '$PYTHON_VERSION')" \
      || { echo "the base image's Python is not $PYTHON_VERSION" >&2; exit 1; }; \
    fi; \
    if [ -n "$PASSBENCH_VERSION" ]; then \
      test "$(python -c 'import importlib.metadata as m; print(m.version("passbench"))')" = "$PASSBENCH_VERSION" \
      || { echo "the wheel is not passbench $PASSBENCH_VERSION" >&2; exit 1; }; \
    fi; \
    mkdir -p /opt/passbench/envs

LABEL org.opencontainers.image.title="passbench runner" \
      org.passbench.version="${PASSBENCH_VERSION}" \
      org.passbench.python_version="${PYTHON_VERSION}" \
      org.passbench.environments="${ENVIRONMENTS}" \
      org.passbench.env.bigcodebench.lock_sha256="${BIGCODEBENCH_LOCK_SHA256}" \
      org.passbench.toolchains="${MULTIPLE:+js cpp java rs lua go ts}"

USER passbench
WORKDIR /home/passbench
# the backend runs containers with a read-only root: scratch space and HOME live in /tmp
ENV HOME=/tmp PYTHONDONTWRITEBYTECODE=1
ENTRYPOINT ["python", "-m", "passbench.stages.sandbox.remote.agent", "--envs-root", "/opt/passbench/envs", "--scratch-dir", "/tmp/passbench-scratch"]
