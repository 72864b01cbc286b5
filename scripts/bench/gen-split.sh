#!/usr/bin/env bash
# Where the generator's cost per request goes as keep-alive connections pile up: user space (ours)
# or the kernel (sockets, epoll), for `webstand bench -k --threads 1` and `wrk -t1`, side by side in
# one unattended run. The target is `webstand serve --threads 1 --max-connections 16000` on CPU 0; the generator alone on CPU 1,
# D s per point. Each row: generator, connections, requests/s, the generator's user and system
# CPU-µs per request (utime and stime / completed requests), medians over ROUNDS with every
# round's system figure. (docs/BENCHMARKS.md, "Scale with connections".)
# serve is started here, not by `webstand lab up builtin`: the lab's config admits 2,112
# connections (the lab's own default), and past that serve answers 503, so a 5,000 or 15,000 row
# would measure refusals.
# Usage: scripts/bench/gen-split.sh [ROUNDS] [COUNTS]   (default 3 and "32 15000";
#        WEBSTAND=binary, default target/release/webstand)
set -u
ROUNDS=${1:-3}; COUNTS=${2:-32 15000}; D=${D:-5}
WEBSTAND=$(realpath "${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/procs.sh"
. "$HERE/timed.sh"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gen-split.XXXXXX"); DOC=$DIR/www
SERVE=""
trap '[ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null; wait; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
OUT=$DIR/results.tsv; : > "$OUT"
PORT=${PORT:-18805}
taskset -c 0 "$WEBSTAND" serve --threads 1 --max-connections 16000 --listen "127.0.0.1:$PORT" "$DOC" \
  >"$DIR/serve.log" 2>&1 & SERVE=$!
wait_line "$DIR/serve.log" "listening on http" || exit 1
URL=http://127.0.0.1:$PORT/2k.html

run() { # generator connections cmd...
  local name=$1 c=$2 reqs rps; shift 2
  timed $SERVE "$@"
  read -r reqs rps <<<"$(counts "$TIMED_OUT")"
  awk -v n=$name -v c=$c -v r=$reqs -v q=$rps -v u=$TIMED_USER -v s=$TIMED_SYS 'BEGIN{
    printf "%s\t%d\t%.0f\t%.2f\t%.2f\n", n, c, q, (r>0? u*1e6/r : 0), (r>0? s*1e6/r : 0)}' | tee -a "$OUT"
}

for r in $(seq "$ROUNDS"); do
  for c in $COUNTS; do
    run webstand "$c" "$WEBSTAND" bench -k -q --threads 1 -c "$c" -d "${D}s" "$URL"
    run wrk "$c" wrk -t1 -c"$c" -d"${D}s" --timeout 10s "$URL"
  done
done
echo "generator connections req/s user-us/req sys-us/req (each round's sys)"
medians "$OUT" 2 .0f .2f
