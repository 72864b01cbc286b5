#!/usr/bin/env bash
# The highest open-loop rate that meets an SLO (docs/SWEEP.md; docs/BENCHMARKS.md): each server
# started by `webstand lab up` on CPU 0 serving /2k.html, `webstand sweep --find-max-rate` on CPU 1
# with one load thread, $C connections, D per rate, ROUNDS searches per server; prints each
# search's table, its answer and spread, and its wall time. `known` is a server of known capacity
# (scripts/bench/paced-server.py: at most $CAPACITY requests per second, default 2000), searched
# from $KNOWN_START (500/s): its answer should be within 5 % of $CAPACITY.
# Usage: scripts/bench/max-rate.sh [ROUNDS] [SERVERS...]  (default 3 known builtin nginx lighttpd;
#        WEBSTAND=binary, default target/release/webstand; SLO='p99<20ms,errors<0.1%')
set -u
ROUNDS=${1:-3}; shift || true
SERVERS=${*:-known builtin nginx lighttpd}
CAPACITY=${CAPACITY:-2000}; KNOWN_START=${KNOWN_START:-500}
C=${C:-64}; D=${D:-2s}; START=${START:-5000}; SLO=${SLO:-'p99<20ms,errors<0.1%'}
WEBSTAND=$(realpath "${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/max-rate.XXXXXX"); DOC=$DIR/www
PACED=""
trap 'lab_down; [ -z "$PACED" ] || { kill "$PACED"; wait "$PACED"; } 2>/dev/null; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
. "$HERE/procs.sh"
for s in $SERVERS; do
  echo "== $s"
  if [ "$s" = known ]; then
    taskset -c 0 python3 "$HERE/paced-server.py" "$CAPACITY" > "$DIR/paced.out" & PACED=$!
    wait_line "$DIR/paced.out" '^port=' || exit 1
    url="http://127.0.0.1:$(sed -n 's/^port=//p' "$DIR/paced.out")/"; start=$KNOWN_START
    echo "  a server of known capacity: $CAPACITY requests/s at $url" >&2
  else
    lab_up "$s" --docroot "$DOC" --cpus 0 || exit 1
    url="${LAB_URL}2k.html"; start=$START
  fi
  t0=$(date +%s)
  taskset -c 1 "$WEBSTAND" sweep --db "$DIR/history.db" --threads 1 --find-max-rate --slo "$SLO" \
    -k -c "$C" -d "$D" --start-rate "$start" --rounds "$ROUNDS" "$url"
  echo "wall time: $(( $(date +%s) - t0 )) s"
  if [ -n "$PACED" ]; then kill "$PACED"; wait "$PACED" 2>/dev/null; PACED=""; fi
  lab_down
done
