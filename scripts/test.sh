#!/usr/bin/env bash
# Every test: installs the Debian packages the tests use (real servers, wrk, ab, curl, chromium),
# then builds and runs the whole workspace's tests. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Tests open many sockets (10,000-connection checks): raise the soft fd limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
cargo build --release --bin webstand
cargo test --workspace --release -- --test-threads=2 "$@"
