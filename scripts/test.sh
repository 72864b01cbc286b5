#!/usr/bin/env bash
# Every test: installs the Debian packages the tests use (real servers, wrk, ab, curl, chromium),
# checks formatting and lints, then runs the whole workspace's tests. `.ci/run` calls exactly this.
#
# Two phases, both with --no-fail-fast so that every test binary runs even after a failure:
#   1. every test not marked #[ignore], two at a time within a binary (--test-threads=2; cargo runs
#      the binaries one after another);
#   2. the #[ignore = "reason"] tests (slow ones, kept out of a developer's quick `cargo test`), run
#      explicitly here, one at a time, so their timing does not compete with another test.
# The closing lines count both phases: passed, failed, the ignored tests and how many of them ran,
# and anything skipped (an ignored test phase 2 did not run, a binary that ended without a result).
# Extra arguments go to the test harness of both phases (e.g. a name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
bash scripts/install-deps.sh
# Tests open many sockets (10,000-connection checks): raise the soft fd limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
# The style gate first: formatting and lints are part of "the tests pass".
cargo fmt --all --check
# Lints on the `ci` profile the tests build with: the C that build scripts compile (aws-lc, LuaJIT,
# SQLite) and their generated bindings are then built once for both, not once per profile.
cargo clippy --profile ci --workspace --all-targets --quiet -- -D warnings
# And the MPI build (`--features mpi`), whose tests (tests/mpi.rs) run below.
cargo clippy --profile ci --workspace --all-targets --features mpi --quiet -- -D warnings
built=$SECONDS
log=$(mktemp)
ignored_log=$(mktemp)
trap 'rm -f "$log" "$ignored_log"' EXIT
status=0
# The `ci` profile (Cargo.toml): release optimisation without LTO and debug info, so a fresh clone
# builds the test binaries in about half the time `--release` takes (its thin LTO links each one);
# and unwinding, so the `webstand` binary under test shares every compiled crate with the test
# harnesses (cargo builds those unwinding whatever the profile says) instead of a second copy of
# each built to abort.
# --features mpi: the binary under test is the MPI build, so tests/mpi.rs runs under mpirun; every
# other test checks that the same binary behaves as the default one when mpirun did not start it.
targets=(--workspace --features mpi --profile ci --no-fail-fast --lib --bins --tests)
# Each phase is bounded (a test that hangs despite its own bounds ends the phase, not CI's 90
# minutes); the bounds are well above today's durations on a 2-core machine (builds included:
# under 25 minutes and about 1 from a fresh clone).
timeout -k 10 2400 cargo test "${targets[@]}" -- --test-threads=2 "$@" 2>&1 | tee "$log" || status=$?
phase1=$SECONDS
timeout -k 10 1200 cargo test "${targets[@]}" -- --ignored --test-threads=1 "$@" 2>&1 | tee "$ignored_log" || status=$?
phase2=$SECONDS
# Counts from libtest's "test result:" lines; a binary that crashed prints "Running" but no result.
count() {
  awk '/^ *Running / { binaries++ }
       /^test result:/ { results++
         for (i = 1; i <= NF; i++) {
           if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1); if ($i ~ /^ignored/) g += $(i-1)
         } }
       END { printf "%d %d %d %d\n", p, f, g, binaries - results }' "$1"
}
read -r p1 f1 ignored crashed1 < <(count "$log")
read -r p2 f2 _ crashed2 < <(count "$ignored_log")
ran_ignored=$((p2 + f2))
skipped=$((ignored - ran_ignored))
crashed=$((crashed1 + crashed2))
if grep -h '^test .* \.\.\. FAILED$' "$log" "$ignored_log" >/dev/null; then
  echo "failed tests:"
  grep -h '^test .* \.\.\. FAILED$' "$log" "$ignored_log" | sed 's/^test /  /; s/ \.\.\. FAILED$//'
fi
if grep -q '^error: could not compile' "$log" "$ignored_log"; then
  echo "tests: some test targets did not compile: their tests are not counted"
  [ "$status" -ne 0 ] || status=1
fi
if [ $((phase1 - built)) -ge 2400 ] || [ $((phase2 - phase1)) -ge 1200 ]; then
  echo "tests: a phase ran out of its time bound and was stopped: its remaining tests are not counted"
fi
if [ "$crashed" -gt 0 ]; then
  echo "tests: $crashed test binaries ended without a result (crashed): their tests are not counted"
  [ "$status" -ne 0 ] || status=1
fi
echo "tests: wall time $((built - started)) s to check and build, $((phase1 - built)) s phase 1, $((phase2 - phase1)) s phase 2 (ignored tests)"
echo "tests: $ignored ignored by default (#[ignore]), $ran_ignored of them run explicitly in phase 2"
echo "tests: $((p1 + p2)) passed, $((f1 + f2)) failed, $skipped skipped"
exit $status
