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
#     "webstand-resume", which is what wrk does); the same against nginx with TLS 1.2 only.
# Usage: scripts/bench/tls-cpu.sh [ROUNDS]  (WEBSTAND=binary, default target/release/webstand;
#   GEN_BEFORE=another webstand binary measured beside it as generator "before")
set -u
ROUNDS=${1:-3}; C=${C:-32}; D=${D:-5}
WEBSTAND=${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}
DIR=$(mktemp -d /tmp/tls-cpu.XXXXXX); DOC=$DIR/www; HZ=$(getconf CLK_TCK)
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
CERT=$DIR/cert.pem; KEY=$DIR/key.pem
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
  -subj /CN=localhost -keyout "$KEY" -out "$CERT" 2>/dev/null
nginx_conf() { # file port protocols
  cat > "$1" <<CONF
worker_processes 1; daemon off; pid $1.pid; error_log $1.err;
events { worker_connections 16384; }
http { access_log off; sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 1000000;
  open_file_cache max=2000;
  server { listen 127.0.0.1:$2 ssl backlog=4096; root $DOC; ssl_protocols $3;
    ssl_certificate $CERT; ssl_certificate_key $KEY; ssl_session_cache shared:S:10m; } }
CONF
}
nginx_conf "$DIR/nginx12.conf" 18501 TLSv1.2
nginx_conf "$DIR/nginx13.conf" 18502 TLSv1.3
nginx_conf "$DIR/nginx.conf" 18503 "TLSv1.2 TLSv1.3"
cat > "$DIR/h2o.conf" <<CONF
listen: {host: 127.0.0.1, port: 18504, ssl: {certificate-file: $CERT, key-file: $KEY}}
num-threads: 1
hosts: {default: {paths: {/: {file.dir: $DOC}}}}
CONF
. "$(dirname "$0")/procs.sh"
OUT=$DIR/results.tsv; : > "$OUT"
P=""
start() { # port cmd... : starts a server on CPU 0, says what it negotiates
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
  local name=$1 work=$2 out reqs rps user sys; shift 2
  out=$( { /usr/bin/time -f "TIME %U %S" taskset -c 1 "$@"; } 2>&1 )
  read -r _ user sys <<<"$(echo "$out" | grep '^TIME' | tail -1)"
  reqs=$(echo "$out" | awk '/requests in/{print $1} /^Complete requests/{print $3}' | head -1)
  rps=$(echo "$out" | awk '/^Requests\/sec/{print $2} /^Requests per second/{print $4}' | head -1)
  echo "$out" | grep -E '^(Failed requests|Non-2xx)' | grep -v ' 0$' >&2
  awk -v n=$name -v w=$work -v r=${reqs:-0} -v q=${rps:-0} -v u=$user -v s=$sys 'BEGIN{
    printf "gen\t%s/%s\t%d\t%.0f\t%.2f\n", n, w, r, q, (r>0? (u+s)*1e6/r : 0)}' | tee -a "$OUT"
}
gens() { # port label
  local u=https://127.0.0.1:$1/2k.html
  gen wrk "$2-ka" wrk -t1 -c$C -d${D}s $u
  gen webstand "$2-ka" $WEBSTAND bench --db $DIR/history.db -q --threads 1 -k -d ${D}s -c $C $u
  [ -n "${GEN_BEFORE:-}" ] && gen before "$2-ka" $GEN_BEFORE bench --db $DIR/history.db -q --threads 1 -k -d ${D}s -c $C $u
  gen wrk "$2-new" wrk -t1 -c$C -d${D}s -H 'Connection: close' $u
  gen webstand "$2-new" $WEBSTAND bench --db $DIR/history.db -q --threads 1 -d ${D}s -c $C $u
  gen webstand-resume "$2-new" $WEBSTAND bench --db $DIR/history.db -q --threads 1 --tls-resume -d ${D}s -c $C $u
  [ -n "${GEN_BEFORE:-}" ] && gen before "$2-new" $GEN_BEFORE bench --db $DIR/history.db -q --threads 1 -d ${D}s -c $C $u
  return 0
}
for r in $(seq $ROUNDS); do
  echo "# round $r $(date -u +%T)" >&2
  start 18501 nginx -c "$DIR/nginx12.conf" && srv nginx tls12-new 18501 -H 'Connection: close'; stop
  start 18502 nginx -c "$DIR/nginx13.conf" && srv nginx tls13-new 18502 -H 'Connection: close'; stop
  start 18511 $WEBSTAND serve --threads 1 --listen-tls 127.0.0.1:18511 --tls-cert $CERT --tls-key $KEY \
    --tls-protocols TLSv1.2 $DOC && srv webstand tls12-new 18511 -H 'Connection: close'; stop
  start 18512 $WEBSTAND serve --threads 1 --listen-tls 127.0.0.1:18512 --tls-cert $CERT --tls-key $KEY \
    --tls-protocols TLSv1.3 $DOC && srv webstand tls13-new 18512 -H 'Connection: close'; stop
  start 18504 h2o -c "$DIR/h2o.conf" && srv h2o tls-ka 18504; stop
  start 18513 $WEBSTAND serve --threads 1 --listen-tls 127.0.0.1:18513 --tls-cert $CERT --tls-key $KEY \
    $DOC && srv webstand tls-ka 18513; stop
  start 18503 nginx -c "$DIR/nginx.conf" && { srv nginx tls-ka 18503; gens 18503 tls13; }; stop
  start 18501 nginx -c "$DIR/nginx12.conf" && gens 18501 tls12; stop
done
echo "# medians: side name/workload requests requests/s cpu_us_per_request ($OUT)"
python3 - "$OUT" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    rows[(f[0], f[1])].append([float(x) for x in f[2:5]])
for (side, what), vals in sorted(rows.items()):
    med = [statistics.median(v[i] for v in vals) for i in range(3)]
    each = " / ".join(f"{v[2]:.2f}" for v in vals)
    print(f"{side}\t{what}\t{med[0]:.0f}\t{med[1]:.0f}\t{med[2]:.2f}\t({each})")
PY
