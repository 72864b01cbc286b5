#!/usr/bin/env bash
# What each generator costs nginx over TLS: nginx 1.22 started by `webstand lab up nginx --tls` on the
# lab's own config (scripts/bench/lab.sh: one worker, ECDSA P-256, TLS 1.2 + 1.3 or TLS 1.2 alone,
# session cache and tickets) on CPU 0, one generator at a time on CPU 1, C connections, D s. Per
# completed request: nginx's worker's utime+stime (µs), the generator's own CPU (µs) and its
# voluntary context switches (each a block in epoll_wait that nginx's next write must end); with
# PERF=1 also nginx's read/write/epoll_wait calls and sched_waking events (perf stat on the worker).
#   keep-alive: wrk, wrk with webstand's request headers, webstand bench -k
#   TLS 1.2 alone, a new connection per request: wrk (which resumes: it SSL_clears and reuses each
#   slot's session), webstand --tls-resume, webstand (full handshakes).
# Full handshakes for both generators would need an nginx without session cache or tickets: the lab
# resumes sessions on every server, as a site does, so wrk's full-handshake cost is not measured here;
# webstand's full handshakes are (it resumes only with --tls-resume).
# Usage: scripts/bench/tls-nginx-cost.sh [ROUNDS]   (WEBSTAND=binary, default target/release/webstand)
set -u
ROUNDS=${1:-3}; C=${C:-32}; D=${D:-5}; PERF=${PERF:-0}; HZ=$(getconf CLK_TCK)
WEBSTAND=$(realpath "${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/tls-nginx-cost.XXXXXX"); DOC=$DIR/www
trap 'lab_down; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
UA=$("$WEBSTAND" --version | tr ' ' /)
EV=syscalls:sys_enter_epoll_wait,syscalls:sys_enter_read,syscalls:sys_enter_write,sched:sched_waking
one() { # versions label cmd... : one generator against a fresh nginx ({URL} in cmd: its URL)
  local versions=$1 label=$2 w t0 t1 pp="" out reqs u s vw counts="" a cmd=(); shift 2
  lab_up nginx --tls --tls-version "$versions" --docroot "$DOC" --cpus 0 || return 1
  for a in "$@"; do cmd+=("${a//\{URL\}/${LAB_URL}2k.html}"); done
  w=$(pgrep -P "$LAB_PID" | head -1)
  t0=$(awk '{print $14+$15}' /proc/$w/stat)
  [ "$PERF" = 1 ] && { perf stat -x, -e $EV -p "$w" -o "$DIR/perf.txt" -- sleep $((D + 1)) & pp=$!; }
  out=$( { /usr/bin/time -f "TIME %U %S %w" taskset -c 1 "${cmd[@]}"; } 2>&1 )
  [ -n "$pp" ] && wait $pp
  t1=$(awk '{print $14+$15}' /proc/$w/stat)
  lab_down
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
  one both ka/wrk wrk -t1 -c"$C" -d"${D}s" {URL}
  one both ka/wrk+webstand-headers wrk -t1 -c"$C" -d"${D}s" -H "User-Agent: $UA" -H 'Accept: */*' {URL}
  one both ka/webstand $(wb) -k {URL}
  one 1.2 new12/wrk-resumes wrk -t1 -c"$C" -d"${D}s" -H 'Connection: close' {URL}
  one 1.2 new12/webstand-tls-resume $(wb) --tls-resume {URL}
  one 1.2 new12/webstand-full $(wb) {URL}
done
