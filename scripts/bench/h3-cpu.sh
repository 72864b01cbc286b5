#!/usr/bin/env bash
# The HTTP/3 figures of docs/BENCHMARKS.md in one unattended run, side by side per round. Both
# servers are started by `webstand lab up SERVER --tls --h2 --h3` on the lab's own config
# (scripts/bench/lab.sh: the lab's ECDSA P-256 certificate; HTTP/3 on UDP at the HTTPS port;
# builtin = `webstand serve --listen-quic`, caddy = Debian's, quic-go inside); servers on CPU 0,
# the generator alone on CPU 1, one thread; /2k.html and a 1 MiB file; $C connections × 1 and × 16
# streams (M1, M16), D s each:
#   gen     generator CPU per request (its utime+stime / completed requests) and requests/s, against
#           webstand serve: `webstand bench --h3 -m M` and `oha --http-version 3 -p M`; also, for
#           scale, the same over HTTP/2 (bench --h2 -m M, oha --http2 -p M) and HTTPS keep-alive
#           (bench -k, oha --http-version 1.1; one request at a time per connection)
#   server  server CPU per request (the server tree's utime+stime / requests completed) and
#           requests/s, serve and caddy, loaded by `webstand bench`, over HTTP/3, HTTP/2 and HTTPS
#           keep-alive
#   offload the 1 MiB file over HTTP/3, webstand bench against serve, with UDP GSO/GRO on (the
#           default where the kernel has them) and off (WEBSTAND_UDP_OFFLOAD=off for both): MB/s of
#           bodies, both sides' CPU per request; bench's report says whether GSO and GRO were used
# Each row: side, name/protocol-file-streams, requests, requests/s, CPU-µs per request, and for gen
# and offload rows the server tree's CPU-µs per request and MB/s; medians over ROUNDS with every
# round's CPU figure.
# Usage: scripts/bench/h3-cpu.sh [ROUNDS]  (WEBSTAND=binary, default target/release/webstand: the
#   generator measured and the builtin server `lab up` starts; C=32, D=5 by default)
set -u
ROUNDS=${1:-3}; C=${C:-32}; D=${D:-5}
WEBSTAND=$(realpath "${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
. "$HERE/procs.sh"
. "$HERE/timed.sh"
command -v oha >/dev/null || { echo "oha is not installed (scripts/install-deps.sh)" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/h3-cpu.XXXXXX"); DOC=$DIR/www; HZ=$(getconf CLK_TCK)
trap 'lab_down; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR"
head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
head -c $((1 << 20)) /dev/urandom > "$DOC/1m.bin"
OUT=$DIR/results.tsv; : > "$OUT"
P=""; PORT=""
FILES="2k.html 1m.bin"; STREAMS="1 16"

start() { # server [env...]: the server on CPU 0 over TLS with h2 and h3, checked over HTTP/3
  lab_up "$1" --tls --h2 --h3 --docroot "$DOC" --cpus 0 || return 1
  P=$LAB_PID; PORT=$LAB_PORT
  local check
  check=$($WEBSTAND bench --db "$DIR/history.db" -q --h3 --cacert "$LAB_CA" -n 1 "${LAB_URL}2k.html" 2>&1)
  echo "$check" | grep -q '^Complete requests: *1$' ||
    { echo "$1 did not answer HTTP/3: $check" >&2; return 1; }
}
stop() { lab_down; }

# bench ARGS: webstand bench's command for the load (one thread, the history in the scratch)
bench() { echo "$WEBSTAND bench --db $DIR/history.db -q --threads 1 -c $C -d ${D}s $*"; }
# proto M: bench's protocol options (h3, h2: M streams per connection; h1: keep-alive)
bench_proto() { case $1 in h3) echo "--h3 -m $2";; h2) echo "--h2 -m $2";; h1) echo "-k";; esac; }
oha_proto() { case $1 in h3) echo "--http-version 3 -p $2";; h2) echo "--http2 -p $2";;
  h1) echo "--http-version 1.1";; esac; }

# run NAME SIDE WHAT CMD...: CMD on CPU 1 under /usr/bin/time; one row of: requests, requests/s,
# generator CPU-µs/request (gen, offload) or server CPU-µs/request (server), server CPU-µs/request,
# MB/s of bodies
run() {
  local name=$1 side=$2 what=$3 reqs rps bytes; shift 3
  timed $P "$@"
  # webstand bench's report is ab's; oha's is its JSON (summary, statusCodeDistribution), its
  # requests/s taken over D: oha's own figure divides by its whole run, which includes the wait
  # for each connection's close after -z's end (30 s, oha's idle timeout, from a server that does
  # not close when oha says GOAWAY; serve closes at once).
  if echo "$TIMED_OUT" | grep -q '^Complete requests'; then
    read -r reqs rps <<<"$(counts "$TIMED_OUT")"
    bytes=$(echo "$TIMED_OUT" | awk '/^HTML transferred/{print $3}')
    echo "$TIMED_OUT" | grep -E '^(Failed requests|Non-2xx|GSO|GRO|UDP offload)' | grep -v ' 0$' >&2
  else
    read -r reqs rps bytes <<<"$(echo "$TIMED_OUT" | python3 -c '
import json, sys
t = sys.stdin.read()
d = json.loads(t[t.index("{"):t.rindex("}") + 1])
ok = sum(v for k, v in d.get("statusCodeDistribution", {}).items() if k.startswith("2"))
print(ok, ok / float(sys.argv[1]), int(d["summary"].get("totalData") or 0))
' "$D" 2>/dev/null || echo "0 0 0")"
  fi
  awk -v n=$name -v side=$side -v w=$what -v r=${reqs:-0} -v q=${rps:-0} -v b=${bytes:-0} \
    -v u=${TIMED_USER:-0} -v s=${TIMED_SYS:-0} -v t=$TIMED_TICKS -v hz=$HZ -v d=$D 'BEGIN{
    gen = (r>0? (u+s)*1e6/r : 0); srv = (r>0? t/hz*1e6/r : 0)
    printf "%s\t%s/%s\t%d\t%.0f\t%.2f\t%.2f\t%.1f\n", side, n, w, r, q, (side=="server"? srv : gen),
      srv, b/d/1e6}' | tee -a "$OUT"
}

gens() { # proto: both generators against the server running (serve), each file × streams
  local f m u
  for f in $FILES; do for m in $STREAMS; do
    [ "$1" = h1 ] && [ "$m" != 1 ] && continue
    u=${LAB_URL}$f
    run webstand gen "$1-$f-m$m" $(bench $(bench_proto $1 $m) --cacert "$LAB_CA" "$u")
    run oha gen "$1-$f-m$m" oha --no-tui --output-format json --cacert "$LAB_CA" -c $C \
      -z ${D}s $(oha_proto $1 $m) "$u"
  done; done
}

servers() { # name proto: the server running, loaded by webstand bench, each file × streams
  local f m
  for f in $FILES; do for m in $STREAMS; do
    [ "$2" = h1 ] && [ "$m" != 1 ] && continue
    run "$1" server "$2-$f-m$m" $(bench $(bench_proto $2 $m) --cacert "$LAB_CA" "${LAB_URL}$f")
  done; done
}

offload() { # on|off: the 1 MiB file over HTTP/3, bench against serve, offload as said
  local m
  for m in $STREAMS; do
    run "offload-$1" offload "h3-1m.bin-m$m" \
      $(bench --h3 -m $m --cacert "$LAB_CA" "${LAB_URL}1m.bin")
  done
}

for r in $(seq $ROUNDS); do
  echo "# round $r $(date -u +%T)" >&2
  if start builtin; then
    for p in h3 h2 h1; do servers webstand $p; gens $p; done
    offload on
  fi
  stop
  if start caddy; then
    for p in h3 h2 h1; do servers caddy $p; done
  fi
  stop
  # Both sides without GSO and GRO: the server started with the variable, bench run with it.
  export WEBSTAND_UDP_OFFLOAD=off
  if start builtin; then offload off; fi
  stop
  unset WEBSTAND_UDP_OFFLOAD
done
echo "# medians: side name/protocol-file-streams requests requests/s cpu_us_per_request server_cpu_us_per_request MB/s ($OUT)"
medians "$OUT" 2 .0f .0f .2f .2f .1f
