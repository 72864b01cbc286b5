#!/usr/bin/env bash
# The TLS figures of docs/BENCHMARKS.md in one unattended run, side by side per round. Every server is
# started by `webstand lab up SERVER --tls` on the lab's own config (scripts/bench/lab.sh: the lab's
# ECDSA P-256 certificate, its cipher preference, session cache and tickets; TLS 1.2 or 1.3 alone
# with --tls-version); /2k.html; servers on CPU 0, load on CPU 1; $C connections, D s each.
#   server side (server tree utime+stime / requests wrk completed; wrk -t1 -c$C):
#     tls-new (Connection: close, a new connection each): nginx and webstand serve, each with
#       TLS 1.2 alone and TLS 1.3 alone. wrk offers each slot's previous session, so after the
#       first these are resumed handshakes (TLS 1.2 abbreviated; TLS 1.3 PSK with X25519), not full
#       ones
#     tls-ka (keep-alive): h2o, nginx, webstand serve (TLS 1.2 and 1.3 offered: 1.3 negotiated)
#   generator side (generator utime+stime / completed requests, requests/s), against nginx with
#     TLS 1.2 and 1.3 (negotiates 1.3): wrk and webstand bench, keep-alive and a new connection per
#     request (webstand: full handshakes as ab, and with --tls-resume as "webstand-resume", which is
#     what wrk does); the same against nginx with TLS 1.2 alone; each generator row also gives the
#     server tree's CPU-µs per request and its busy fraction (CPU s / D)
# Usage: scripts/bench/tls-cpu.sh [ROUNDS]  (WEBSTAND=binary, default target/release/webstand: the
#   generator measured, and the builtin server `lab up` starts;
#   GEN_BEFORE=another webstand binary measured beside it as generator "before";
#   EXTRA="name=/path ..." more webstand binaries (or wrappers adding options) measured beside it;
#   ONLY=ka: the generator's keep-alive rows alone, no server rows, no new connections)
set -u
ROUNDS=${1:-3}; C=${C:-32}; D=${D:-5}
WEBSTAND=$(realpath "${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
. "$HERE/procs.sh"
. "$HERE/timed.sh"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/tls-cpu.XXXXXX"); DOC=$DIR/www; HZ=$(getconf CLK_TCK)
trap 'lab_down; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
OUT=$DIR/results.tsv; : > "$OUT"
P=""; PORT=""
start() { # server [lab up options]: the server on CPU 0 over TLS, and what it negotiates
  lab_up "$1" --tls "${@:2}" --docroot "$DOC" --cpus 0 || return 1
  P=$LAB_PID; PORT=$LAB_PORT
  local code; code=$(curl -s --cacert "$LAB_CA" -o /dev/null -w '%{http_code}' "${LAB_URL}2k.html")
  echo | openssl s_client -connect 127.0.0.1:$PORT 2>/dev/null | awk -v p=$PORT -v c=$code \
    '/^New,/{n=$0} /Server Temp Key/{k=$0} END{printf "  port %s: HTTP %s, %s, %s\n", p, c, n, k}' >&2
  [ "$code" = 200 ] || { echo "$1 answered $code, not 200" >&2; return 1; }
}
stop() { lab_down; }
srv() { # name workload port [wrk flags...] : server CPU per request
  local name=$1 work=$2 port=$3 reqs; shift 3
  timed $P wrk -t1 -c$C -d${D}s "$@" https://127.0.0.1:$port/2k.html
  read -r reqs _ <<<"$(counts "$TIMED_OUT")"
  awk -v n=$name -v w=$work -v r=$reqs -v t=$TIMED_TICKS -v hz=$HZ -v d=$D 'BEGIN{
    printf "server\t%s/%s\t%d\t%.0f\t%.2f\n", n, w, r, r/d, (r>0? t/hz*1e6/r : 0)}' | tee -a "$OUT"
}
gen() { # name workload cmd... : generator CPU per request and requests/s (its own report)
  local name=$1 work=$2 reqs rps; shift 2
  timed $P "$@"
  read -r reqs rps <<<"$(counts "$TIMED_OUT")"
  echo "$TIMED_OUT" | grep -E '^(Failed requests|Non-2xx)' | grep -v ' 0$' >&2
  awk -v n=$name -v w=$work -v r=$reqs -v q=$rps -v u=$TIMED_USER -v s=$TIMED_SYS \
    -v t=$TIMED_TICKS -v hz=$HZ -v d=$D 'BEGIN{
    printf "gen\t%s/%s\t%d\t%.0f\t%.2f\t%.2f\t%.2f\n", n, w, r, q, (r>0? (u+s)*1e6/r : 0),
      (r>0? t/hz*1e6/r : 0), t/hz/d}' | tee -a "$OUT"
}
EXTRA=${EXTRA:-}; [ -n "${GEN_BEFORE:-}" ] && EXTRA="$EXTRA before=$GEN_BEFORE"
gens() { # port label
  local u=https://127.0.0.1:$1/2k.html e
  gen wrk "$2-ka" wrk -t1 -c$C -d${D}s $u
  gen webstand "$2-ka" $WEBSTAND bench --db $DIR/history.db -q --threads 1 -k -d ${D}s -c $C $u
  for e in $EXTRA; do
    gen "${e%%=*}" "$2-ka" "${e#*=}" bench --db $DIR/history.db -q --threads 1 -k -d ${D}s -c $C $u
  done
  [ "${ONLY:-}" = ka ] && return 0
  gen wrk "$2-new" wrk -t1 -c$C -d${D}s -H 'Connection: close' $u
  gen webstand "$2-new" $WEBSTAND bench --db $DIR/history.db -q --threads 1 -d ${D}s -c $C $u
  gen webstand-resume "$2-new" $WEBSTAND bench --db $DIR/history.db -q --threads 1 --tls-resume -d ${D}s -c $C $u
  [ -n "${GEN_BEFORE:-}" ] && gen before "$2-new" $GEN_BEFORE bench --db $DIR/history.db -q --threads 1 -d ${D}s -c $C $u
  return 0
}
for r in $(seq $ROUNDS); do
  echo "# round $r $(date -u +%T)" >&2
  if [ "${ONLY:-}" = ka ]; then
    start nginx && gens $PORT tls13; stop
    start nginx --tls-version 1.2 && gens $PORT tls12; stop
    continue
  fi
  start nginx --tls-version 1.2 && srv nginx tls12-new $PORT -H 'Connection: close'; stop
  start nginx --tls-version 1.3 && srv nginx tls13-new $PORT -H 'Connection: close'; stop
  start builtin --tls-version 1.2 && srv webstand tls12-new $PORT -H 'Connection: close'; stop
  start builtin --tls-version 1.3 && srv webstand tls13-new $PORT -H 'Connection: close'; stop
  start h2o && srv h2o tls-ka $PORT; stop
  start builtin && srv webstand tls-ka $PORT; stop
  start nginx && { srv nginx tls-ka $PORT; gens $PORT tls13; }; stop
  start nginx --tls-version 1.2 && gens $PORT tls12; stop
done
echo "# medians: side name/workload requests requests/s cpu_us_per_request [gen rows: server_cpu_us_per_request server_busy] ($OUT)"
medians "$OUT" 2 .0f .0f .2f
