#!/usr/bin/env bash
# Issue 10's TLS figures in one unattended run, side by side per round (companion of
# /work/shared/bench/tls-h2-cpu.sh with like-for-like protocol versions). One ECDSA P-256
# certificate for every server; /2k.html; servers on CPU 0, load on CPU 1; 32 connections, D s each.
#   server side (server tree utime+stime / requests wrk completed; wrk -t1 -c32):
#     tls-new (Connection: close, a new connection each): nginx and webstand serve, each with
#       TLS 1.2 only and TLS 1.3 only (nginx ssl_protocols / serve --tls-protocols). wrk offers each
#       slot's previous session, so after the first these are resumed handshakes (TLS 1.2
#       abbreviated; TLS 1.3 PSK with X25519), not full ones (docs/BENCHMARKS.md, issue 10)
#     tls-ka (keep-alive): h2o, nginx (TLS 1.2 and 1.3 enabled), webstand serve (both enabled)
#   generator side (generator utime+stime / completed requests, requests/s), against nginx with
#     TLS 1.2 and 1.3 enabled (negotiates 1.3): wrk and webstand bench, keep-alive and
#     a new connection per request (webstand: full handshakes as ab, and with --tls-resume as
#     "webstand-resume", which is what wrk does); the same against nginx with TLS 1.2 only; each
#     generator row also gives the server tree's CPU-µs per request and its busy fraction (CPU s / D)
# Usage: scripts/bench/tls-cpu.sh [ROUNDS]  (WEBSTAND=binary, default target/release/webstand;
#   GEN_BEFORE=another webstand binary measured beside it as generator "before";
#   EXTRA="name=/path ..." more webstand binaries (or wrappers adding options) measured beside it;
#   ONLY=ka: the generator's keep-alive rows alone, no server rows, no new connections;
#   PORT_BASE=18500: the servers listen on PORT_BASE+1 to +13)
set -u
ROUNDS=${1:-3}; C=${C:-32}; D=${D:-5}; B=${PORT_BASE:-18500}
WEBSTAND=${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}
DIR=$(mktemp -d /tmp/tls-cpu.XXXXXX); DOC=$DIR/www; HZ=$(getconf CLK_TCK)
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
CERT=$DIR/cert.pem; KEY=$DIR/key.pem
. "$(dirname "$0")/servers.sh"
self_signed "$CERT" "$KEY"
nginx_conf() { nginx_tls_conf "$1" "$DOC" "$2" "$3" "$CERT" "$KEY"; } # file port protocols
nginx_conf "$DIR/nginx12.conf" $((B + 1)) TLSv1.2
nginx_conf "$DIR/nginx13.conf" $((B + 2)) TLSv1.3
nginx_conf "$DIR/nginx.conf" $((B + 3)) "TLSv1.2 TLSv1.3"
cat > "$DIR/h2o.conf" <<CONF
listen: {host: 127.0.0.1, port: $((B + 4)), ssl: {certificate-file: $CERT, key-file: $KEY}}
num-threads: 1
hosts: {default: {paths: {/: {file.dir: $DOC}}}}
CONF
. "$(dirname "$0")/procs.sh"
OUT=$DIR/results.tsv; : > "$OUT"
P=""
start() { # port cmd... : starts a server on CPU 0, says what it negotiates
  (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null &&
    { echo "port $1 is taken by another process: set PORT_BASE" >&2; return 1; }
  taskset -c 0 "${@:2}" >/dev/null 2>&1 & P=$!
  wait_port $1 || { echo "port $1 never opened" >&2; return 1; }
  local code; code=$(curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:$1/2k.html)
  echo | openssl s_client -connect 127.0.0.1:$1 2>/dev/null | awk -v p=$1 -v c=$code \
    '/^New,/{n=$0} /Server Temp Key/{k=$0} END{printf "  port %s: HTTP %s, %s, %s\n", p, c, n, k}' >&2
  [ "$code" = 200 ] || { echo "port $1 answered $code, not 200" >&2; return 1; }
}
stop() { kill $P; wait $P 2>/dev/null; }
srv() { # name workload port [wrk flags...] : server CPU per request
  local name=$1 work=$2 port=$3 t0 t1 out reqs; shift 3
  t0=$(tree_ticks $P)
  out=$(taskset -c 1 wrk -t1 -c$C -d${D}s "$@" https://127.0.0.1:$port/2k.html 2>&1)
  t1=$(tree_ticks $P)
  reqs=$(echo "$out" | awk '/requests in/{print $1}')
  awk -v n=$name -v w=$work -v r=${reqs:-0} -v t=$((t1-t0)) -v hz=$HZ -v d=$D 'BEGIN{
    printf "server\t%s/%s\t%d\t%.0f\t%.2f\n", n, w, r, r/d, (r>0? t/hz*1e6/r : 0)}' | tee -a "$OUT"
}
gen() { # name workload cmd... : generator CPU per request and requests/s (its own report)
  local name=$1 work=$2 out reqs rps user sys t0 t1; shift 2
  t0=$(tree_ticks $P)
  out=$( { /usr/bin/time -f "TIME %U %S" taskset -c 1 "$@"; } 2>&1 )
  t1=$(tree_ticks $P)
  read -r _ user sys <<<"$(echo "$out" | grep '^TIME' | tail -1)"
  reqs=$(echo "$out" | awk '/requests in/{print $1} /^Complete requests/{print $3}' | head -1)
  rps=$(echo "$out" | awk '/^Requests\/sec/{print $2} /^Requests per second/{print $4}' | head -1)
  echo "$out" | grep -E '^(Failed requests|Non-2xx)' | grep -v ' 0$' >&2
  awk -v n=$name -v w=$work -v r=${reqs:-0} -v q=${rps:-0} -v u=$user -v s=$sys \
    -v t=$((t1-t0)) -v hz=$HZ -v d=$D 'BEGIN{
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
    start $((B + 3)) nginx -c "$DIR/nginx.conf" && gens $((B + 3)) tls13; stop
    start $((B + 1)) nginx -c "$DIR/nginx12.conf" && gens $((B + 1)) tls12; stop
    continue
  fi
  start $((B + 1)) nginx -c "$DIR/nginx12.conf" && srv nginx tls12-new $((B + 1)) -H 'Connection: close'; stop
  start $((B + 2)) nginx -c "$DIR/nginx13.conf" && srv nginx tls13-new $((B + 2)) -H 'Connection: close'; stop
  start $((B + 11)) $WEBSTAND serve --threads 1 --listen-tls 127.0.0.1:$((B + 11)) --tls-cert $CERT --tls-key $KEY \
    --tls-protocols TLSv1.2 $DOC && srv webstand tls12-new $((B + 11)) -H 'Connection: close'; stop
  start $((B + 12)) $WEBSTAND serve --threads 1 --listen-tls 127.0.0.1:$((B + 12)) --tls-cert $CERT --tls-key $KEY \
    --tls-protocols TLSv1.3 $DOC && srv webstand tls13-new $((B + 12)) -H 'Connection: close'; stop
  start $((B + 4)) h2o -c "$DIR/h2o.conf" && srv h2o tls-ka $((B + 4)); stop
  start $((B + 13)) $WEBSTAND serve --threads 1 --listen-tls 127.0.0.1:$((B + 13)) --tls-cert $CERT --tls-key $KEY \
    $DOC && srv webstand tls-ka $((B + 13)); stop
  start $((B + 3)) nginx -c "$DIR/nginx.conf" && { srv nginx tls-ka $((B + 3)); gens $((B + 3)) tls13; }; stop
  start $((B + 1)) nginx -c "$DIR/nginx12.conf" && gens $((B + 1)) tls12; stop
done
echo "# medians: side name/workload requests requests/s cpu_us_per_request [gen rows: server_cpu_us_per_request server_busy] ($OUT)"
python3 - "$OUT" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    rows[(f[0], f[1])].append([float(x) for x in f[2:]])
for (side, what), vals in sorted(rows.items()):
    med = [statistics.median(v[i] for v in vals) for i in range(len(vals[0]))]
    each = " / ".join(f"{v[2]:.2f}" for v in vals)
    srv = "".join(f"\t{m:.2f}" for m in med[3:])
    print(f"{side}\t{what}\t{med[0]:.0f}\t{med[1]:.0f}\t{med[2]:.2f}{srv}\t({each})")
PY
