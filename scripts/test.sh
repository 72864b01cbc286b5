#!/usr/bin/env bash
# Every test: installs the Debian packages the tests use (real servers, wrk, ab, curl, chromium),
# then builds and runs the whole workspace's tests. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Tests open many sockets (10,000-connection checks): raise the soft fd limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
# The style gate first: formatting and lints are part of "the tests pass".
cargo fmt --all --check
cargo clippy --release --all-targets --quiet -- -D warnings
cargo build --release --bin webstand
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Unit tests beside the code and the end-to-end tests in tests/ (the crates have no doc tests).
status=0
cargo test --workspace --release --lib --bins --tests -- --test-threads=2 "$@" 2>&1 | tee "$log" || status=$?
# One closing line over every test binary, so a log reader sees the whole count at the end.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit $status
