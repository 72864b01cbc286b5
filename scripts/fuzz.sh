#!/usr/bin/env bash
# Coverage-guided fuzzing with AFL++ (docs/FUZZING.md): `scripts/fuzz.sh TARGET [SECONDS]` runs one
# target for a bounded time (default 600 s); `scripts/fuzz.sh --all SECONDS` runs every target, one
# after another, for an equal share of SECONDS; `scripts/fuzz.sh --list` names the targets.
# Fuzz-only setup, installed here when missing (CI needs none of it: it replays the committed corpora
# as a plain test, fuzz/tests/replay.rs): cargo-afl from crates.io, which builds AFL++ (afl-fuzz,
# afl-cmin and the runtime, all of one version) and the instrumented target on stable Rust.
# Each run starts from the seeds our encoders make (fuzz/src/seeds.rs; for HTTP/2, frames h2load and
# nginx exchange on loopback too: fuzz/capture/h2.py) plus the committed corpus,
# writes its findings under target/fuzz/TARGET/, and merges what it found into fuzz/corpora/TARGET/
# minimised by afl-cmin. Crashes are left in target/fuzz/TARGET/out/default/crashes/: fix each, then
# add its input to the corpus and a test named after what it broke.
set -euo pipefail
cd "$(dirname "$0")/.."

setup() {
  if ! cargo afl --version >/dev/null 2>&1; then
    cargo install --locked cargo-afl
  fi
  # The AFL++ runtime cargo-afl links in, built once per rustc version (a no-op once built).
  cargo afl config --build >/dev/null 2>&1 || true
}

# The instrumented build has flags of its own: it lives in a target directory of its own, so that it
# does not make the tests' build start over.
AFL_TARGET=target/afl-build
HARNESS=$AFL_TARGET/ci/afl

build() {
  # The ci profile's optimisation, with debug assertions on (overflow checks among them).
  CARGO_TARGET_DIR=$AFL_TARGET RUSTFLAGS="-C debug-assertions" \
    cargo afl build --profile ci -p webstand-fuzz --features afl --bin afl --quiet
  cargo build --profile ci -p webstand-fuzz --bin seeds --quiet
}

targets() { "$HARNESS" --list 2>&1 | sed -n 's/.*one of: //p' | tr ',' '\n' | tr -d ' '; }

run() {
  local name=$1 secs=$2 dir=target/fuzz/$1
  rm -rf "$dir/in" "$dir/out"; mkdir -p "$dir/in" fuzz/corpora/"$name"
  target/ci/seeds "$dir/seeds" >/dev/null
  # HTTP/2 seeds from real peers too: h2load against nginx on loopback (fuzz/capture/h2.py).
  case $name in
    serve_h2|h2_frames|hpack_server|hpack_client)
      python3 fuzz/capture/h2.py "$dir/seeds" >/dev/null || echo "fuzz: no nginx/h2load capture (seeds from our encoders only)" ;;
  esac
  cp "$dir/seeds/$name"/* "$dir/in"/
  cp fuzz/corpora/"$name"/* "$dir/in"/ 2>/dev/null || true
  echo "fuzz: $name for $secs s"
  # One instance, at the lowest priority: the machine's cores are shared. -V bounds the run.
  AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
    nice -n 19 cargo afl fuzz -V "$secs" -i "$dir/in" -o "$dir/out" -- "$HARNESS" "$name" \
    >"$dir/afl.log" 2>&1 || { tail -20 "$dir/afl.log"; return 1; }
  local stats=$dir/out/default/fuzzer_stats
  awk -F' *: *' '/^(run_time|execs_done|execs_per_sec|corpus_count|edges_found|total_edges|saved_crashes|saved_hangs|bitmap_cvg)/ { printf "  %s=%s", $1, $2 } END { print "" }' "$stats"
  # The corpus kept: the committed one and the new queue, minimised to the inputs that reach
  # distinct edges, by the afl-cmin shell script of cargo-afl's AFL++ with its afl-showmap first on
  # PATH (another AFL++, such as Debian's older one, speaks another fork-server protocol; the Python
  # afl-cmin kept nothing here). Should it keep nothing, the queue's entries that found new coverage
  # (+cov) are kept instead. Inputs over 2 KiB are left out.
  local bin; bin=$(ls -dt "$HOME"/.local/share/afl.rs/*/afl.rs-*/afl/bin | head -1)
  rm -rf "$dir/min"; mkdir -p "$dir/min"
  rmdir "$dir/min"
  PATH=$bin:$PATH AFL_PATH=$bin nice -n 19 "$bin/afl-cmin.bash" -i "$PWD/$dir/out/default/queue" \
    -o "$PWD/$dir/min" -- "$PWD/$HARNESS" "$name" >"$dir/cmin.log" 2>&1 || true
  mkdir -p "$dir/min"
  if [ -z "$(ls -A "$dir/min")" ]; then
    echo "  afl-cmin kept nothing ($dir/cmin.log): keeping the queue's +cov entries"
    cp "$dir"/out/default/queue/*+cov* "$dir/min"/ 2>/dev/null || true
  fi
  rm -rf fuzz/corpora/"$name"; mkdir -p fuzz/corpora/"$name"
  local i=0
  for f in "$dir/min"/*; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 2048 ] || continue
    cp "$f" "fuzz/corpora/$name/$(sha1sum "$f" | cut -c1-16)"; i=$((i + 1))
  done
  echo "  corpus: $i files in fuzz/corpora/$name"
  local crashes; crashes=$(find "$dir/out/default/crashes" -name 'id*' | wc -l)
  [ "$crashes" = 0 ] || { echo "  $crashes crashes in $dir/out/default/crashes"; return 1; }
}

case "${1:-}" in
  ""|-h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
setup
build
case "$1" in
  --list) targets ;;
  --all)
    secs=${2:?--all needs SECONDS}
    mapfile -t all < <(targets)
    share=$((secs / ${#all[@]})); [ "$share" -ge 10 ] || share=10
    status=0
    for t in "${all[@]}"; do run "$t" "$share" || status=1; done
    exit $status ;;
  *) run "$1" "${2:-600}" ;;
esac
