#!/usr/bin/env bash
# The highest open-loop rate that meets an SLO (docs/SWEEP.md; docs/BENCHMARKS.md): each server
# started by `webstand lab up` on CPU 0 serving /2k.html, `webstand sweep --find-max-rate` on CPU 1
# with one load thread, $C connections, D per rate, ROUNDS searches per server; prints each
# search's table, its answer and spread, and its wall time.
# Usage: scripts/bench/max-rate.sh [ROUNDS] [SERVERS...]  (default 3 builtin nginx lighttpd;
#        WEBSTAND=binary, default target/release/webstand; SLO='p99<20ms,errors<0.1%')
set -u
ROUNDS=${1:-3}; shift || true
SERVERS=${*:-builtin nginx lighttpd}
C=${C:-64}; D=${D:-2s}; START=${START:-5000}; SLO=${SLO:-'p99<20ms,errors<0.1%'}
WEBSTAND=$(realpath "${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/max-rate.XXXXXX"); DOC=$DIR/www
trap 'lab_down; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
for s in $SERVERS; do
  echo "== $s"
  lab_up "$s" --docroot "$DOC" --cpus 0 || exit 1
  t0=$(date +%s)
  taskset -c 1 "$WEBSTAND" sweep --db "$DIR/history.db" --threads 1 --find-max-rate --slo "$SLO" \
    -k -c "$C" -d "$D" --start-rate "$START" --rounds "$ROUNDS" "${LAB_URL}2k.html"
  echo "wall time: $(( $(date +%s) - t0 )) s"
  lab_down
done
