#!/usr/bin/env bash
# What each generator costs nginx (issue 10's keep-alive and new-connection questions): nginx 1.22
# (1 worker, ECDSA P-256, TLS 1.2 + 1.3) on CPU 0, one generator at a time on CPU 1, C connections,
# D s. Per completed request: nginx's worker's utime+stime (µs), the generator's own CPU (µs) and
# its voluntary context switches (each a block in epoll_wait that nginx's next write must end); with
# PERF=1 also nginx's read/write/epoll_wait calls and sched_waking events (perf stat on the worker).
#   keep-alive: wrk, wrk with webstand's request headers, webstand bench -k
#   TLS 1.2 only, a new connection per request: wrk (which resumes: it SSL_clears and reuses each
#   slot's session), webstand --tls-resume, webstand (full handshakes), and both against an nginx
#   without session cache or tickets (full handshakes for both)
# Usage: scripts/bench/tls-nginx-cost.sh [ROUNDS]   (WEBSTAND=binary, default target/release/webstand)
set -u
ROUNDS=${1:-3}; C=${C:-32}; D=${D:-5}; PERF=${PERF:-0}; HZ=$(getconf CLK_TCK)
WEBSTAND=${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}
. "$(dirname "$0")/procs.sh"
DIR=$(mktemp -d /tmp/tls-nginx-cost.XXXXXX); DOC=$DIR/www
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
  -subj /CN=localhost -keyout "$DIR/key.pem" -out "$DIR/cert.pem" 2>/dev/null
nginx_conf() { # name port protocols session-settings
  cat > "$DIR/$1.conf" <<CONF
worker_processes 1; daemon off; pid $DIR/$1.pid; error_log $DIR/$1.err;
events { worker_connections 16384; }
http { access_log off; sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 1000000;
  open_file_cache max=2000;
  server { listen 127.0.0.1:$2 ssl backlog=4096; root $DOC; ssl_protocols $3; $4
    ssl_certificate $DIR/cert.pem; ssl_certificate_key $DIR/key.pem; } }
CONF
}
nginx_conf both 18621 "TLSv1.2 TLSv1.3" "ssl_session_cache shared:S:10m;"
nginx_conf tls12 18622 TLSv1.2 "ssl_session_cache shared:S:10m;"
nginx_conf full12 18623 TLSv1.2 "ssl_session_cache off; ssl_session_tickets off;"
EV=syscalls:sys_enter_epoll_wait,syscalls:sys_enter_read,syscalls:sys_enter_write,sched:sched_waking
one() { # conf port label cmd... : one generator against a fresh nginx
  local conf=$1 port=$2 label=$3 np w="" t0 t1 pp="" out reqs u s vw counts=""; shift 3
  taskset -c 0 nginx -c "$DIR/$conf.conf" & np=$!
  wait_port "$port" || { echo "nginx ($conf) never opened port $port" >&2; kill $np; return 1; }
  w=$(pgrep -P $np | head -1)
  t0=$(awk '{print $14+$15}' /proc/$w/stat)
  [ "$PERF" = 1 ] && { perf stat -x, -e $EV -p "$w" -o "$DIR/perf.txt" -- sleep $((D + 1)) & pp=$!; }
  out=$( { /usr/bin/time -f "TIME %U %S %w" taskset -c 1 "$@"; } 2>&1 )
  [ -n "$pp" ] && wait $pp
  t1=$(awk '{print $14+$15}' /proc/$w/stat)
  kill $np; wait $np 2>/dev/null
  reqs=$(echo "$out" | awk '/requests in/{print $1} /^Complete requests/{print $3}' | head -1)
  read -r _ u s vw <<<"$(echo "$out" | grep '^TIME' | tail -1)"
  [ "$PERF" = 1 ] && counts=$(awk -F, -v r="${reqs:-1}" '$1 ~ /^[0-9]+$/ {
    n = split($3, a, ":"); printf " %s=%.3f", a[n], $1 / r }' "$DIR/perf.txt")
  awk -v l="$label" -v r="${reqs:-0}" -v t=$((t1 - t0)) -v hz="$HZ" -v u="$u" -v s="$s" -v vw="$vw" \
    -v d="$D" -v c="$counts" 'BEGIN{ if (r == 0) { printf "%s\tno requests completed\n", l; exit }
    printf "%s\t%d req/s\tnginx %.2f µs/req\tgenerator %.2f µs/req\tgenerator sleeps/req %.3f\t%s\n",
      l, r / d, t / hz * 1e6 / r, (u + s) * 1e6 / r, vw / r, c }'
}
wb() { echo "$WEBSTAND" bench --db "$DIR/history.db" -q --threads 1 -d "${D}s" -c "$C"; }
for r in $(seq "$ROUNDS"); do
  echo "# round $r $(date -u +%T)"
  one both 18621 ka/wrk wrk -t1 -c"$C" -d"${D}s" https://127.0.0.1:18621/2k.html
  one both 18621 ka/wrk+webstand-headers wrk -t1 -c"$C" -d"${D}s" \
    -H 'User-Agent: webstand/0.1.0' -H 'Accept: */*' https://127.0.0.1:18621/2k.html
  one both 18621 ka/webstand $(wb) -k https://127.0.0.1:18621/2k.html
  one tls12 18622 new12/wrk-resumes wrk -t1 -c"$C" -d"${D}s" -H 'Connection: close' https://127.0.0.1:18622/2k.html
  one tls12 18622 new12/webstand-tls-resume $(wb) --tls-resume https://127.0.0.1:18622/2k.html
  one tls12 18622 new12/webstand-full $(wb) https://127.0.0.1:18622/2k.html
  one full12 18623 new12-full/wrk wrk -t1 -c"$C" -d"${D}s" -H 'Connection: close' https://127.0.0.1:18623/2k.html
  one full12 18623 new12-full/webstand $(wb) https://127.0.0.1:18623/2k.html
done
rm -rf "$DIR"
