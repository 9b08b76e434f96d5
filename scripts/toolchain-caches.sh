#!/usr/bin/env bash
# Compiled toolchain caches that samples read but never write, built once from Debian's packages
# (no network): HumanEval-X's Rust crates and the Go build cache HumanEval-X's and Aider's Go
# exercises start from. Run by scripts/setup.sh (--multipl-e, --dev) and by the runner image's
# Dockerfile (MULTIPLE=1), so both hold the same caches; each is rebuilt only when its inputs
# change (a stamp of their sha256). SUDO_CMD: the command to write under /usr/local ("" as root).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sudo_cmd="${SUDO_CMD:-}"
# HumanEval-X's Rust crates (rand with 0.4's interface, regex, md5), built once from Debian's
# crate sources with Debian's cargo and rustc (the rustc samples are compiled with) into
# /usr/local/lib/passbench/humaneval-x-rust; rebuilt when scripts/humaneval-x-rust changes.
crates=/usr/local/lib/passbench/humaneval-x-rust
stamp=$(cat "$here/humaneval-x-rust"/Cargo.toml "$here/humaneval-x-rust"/rand04/Cargo.toml \
  "$here/humaneval-x-rust"/rand04/src/lib.rs | sha256sum | cut -d' ' -f1)
if [ "$(cat "$crates/stamp" 2>/dev/null)" != "$stamp" ]; then
  build=$(mktemp -d)
  cp -r "$here/humaneval-x-rust"/. "$build/project"
  mkdir -p "$build/cargo-home"
  cp "$here/humaneval-x-rust"/.cargo-config.toml "$build/cargo-home/config.toml"
  (cd "$build/project" && env PATH=/usr/bin:/bin CARGO_HOME="$build/cargo-home" RUSTC=/usr/bin/rustc \
    CARGO_TARGET_DIR="$build/target" /usr/bin/cargo build --release --message-format=json \
    > "$build/messages.json")
  $sudo_cmd rm -rf "$crates"
  $sudo_cmd mkdir -p "$crates/deps"
  $sudo_cmd cp "$build"/target/release/deps/*.rlib "$crates/deps/"
  # the rlibs samples name with --extern: the rand of rand04/ (not Debian's 0.8), regex, md5
  python3 - "$build/messages.json" <<'PY' | while read -r crate file; do $sudo_cmd cp "$file" "$crates/lib$crate.rlib"; done
import json, sys
for line in open(sys.argv[1]):
    message = json.loads(line)
    if message.get("reason") != "compiler-artifact":
        continue
    crate, package = message["target"]["name"], message["package_id"]
    if crate in ("regex", "md5") or (crate == "rand" and "path+file" in package):
        print(crate, next(f for f in message["filenames"] if f.endswith(".rlib")))
PY
  echo "$stamp" | $sudo_cmd tee "$crates/stamp" >/dev/null
  rm -rf "$build"
fi
# HumanEval-X's Go: a build cache holding testify and the standard packages compiled (and
# vetted) once, which each sample copies, so that a sample compiles only its own file (a cold
# cache costs ~12 s of CPU per sample); rebuilt when go or the seed program changes.
seed=/usr/local/lib/passbench/humaneval-x-go
stamp=$( (go version; cat "$here/humaneval-x-go"/main_test.go) | sha256sum | cut -d' ' -f1)
if [ "$(cat "$seed/stamp" 2>/dev/null)" != "$stamp" ]; then
  build=$(mktemp -d)
  cp "$here/humaneval-x-go"/main_test.go "$build/main_test.go"
  (cd "$build" && env -i PATH=/usr/bin:/bin HOME="$build" GOPROXY=off GOTOOLCHAIN=local GOFLAGS= \
    GOENV=off GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$build/gocache" \
    go test -c -o "$build/seed.test" "$build/main_test.go")
  $sudo_cmd rm -rf "$seed"
  $sudo_cmd mkdir -p "$seed"
  $sudo_cmd cp -r "$build/gocache" "$seed/gocache"
  $sudo_cmd chmod -R a+rX "$seed"
  echo "$stamp" | $sudo_cmd tee "$seed/stamp" >/dev/null
  rm -rf "$build"
fi
