#!/usr/bin/env bash
# Server-side CPU per PHP request: webstand serve against nginx, each started by `webstand lab up
# SERVER --php` on the lab's own config (scripts/bench/lab.sh) with the lab's PHP-FPM behind it (a
# static pool of 8 children on a Unix socket, one PHP-FPM per server start), serving the lab's
# ~20 KiB generated page (/php/page.php, the `php` workload of `webstand compare`). Server and PHP-FPM
# pinned to CPU 0, the load to CPU 1 (wrk -t1 -c$C -d${D}s, keep-alive). CPU = utime+stime from /proc
# of the server's process tree, and of PHP-FPM's, each divided by the requests the load completed.
# Rounds alternate the servers.
# The lab's nginx opens a FastCGI connection per request (fastcgi_pass to the socket, no upstream
# keepalive: as `compare` measures it), where webstand serve keeps one per PHP-FPM child.
# Usage: scripts/bench/fastcgi-cpu.sh [ROUNDS]  (WEBSTAND=path/to/webstand; default target/release)
# BEFORE=path/to/webstand: a third contender, "before" (another build of builtin that has `lab up`).
# A round with non-2xx answers is reported and left out of the medians.
# PERF=FILE: one more builtin run of D seconds under `perf record` (the server only), into FILE.
# H2=1: HTTP/2 by prior knowledge (h2c) instead (lab up --h2), h2load -c$C -m$M (default 16) for wrk.
# BODY=BYTES (with H2=1): uploads instead, each request a POST of BYTES random bytes (h2load -d) to a
# page that reads php://input whole and prints its length and MD5; rps × BYTES is the throughput.
set -u
ROUNDS=${1:-3}; C=${C:-4}; D=${D:-5}; M=${M:-16}
H2=${H2:-}; LAB_H2=(); [ -n "$H2" ] && LAB_H2=(--h2)
WEBSTAND=$(realpath "${WEBSTAND:-$(dirname "$0")/../../target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
. "$HERE/procs.sh"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/fastcgi-cpu.XXXXXX"); DOC=$DIR/www; HZ=$(getconf CLK_TCK)
trap 'lab_down; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR" "$DOC"   # the servers' workers run as another user when started as root
PAGE=php/page.php; BODY_ARGS=()
if [ -n "${BODY:-}" ]; then
  [ -n "$H2" ] || { echo "BODY needs H2=1 (h2load -d)" >&2; exit 2; }
  head -c "$BODY" /dev/urandom > "$DIR/body.bin"; PAGE=sum.php; BODY_ARGS=(-d "$DIR/body.bin")
  echo '<?php $b = file_get_contents("php://input"); echo strlen($b), " ", md5($b);' > "$DOC/sum.php"
fi
OUT=$DIR/results.tsv; : > "$OUT"
load() { # seconds url: the load generator's report
  if [ -n "$H2" ]; then taskset -c 1 h2load -c$C -m$M -D$1 "${BODY_ARGS[@]}" "$2"
  else taskset -c 1 wrk -t1 -c$C -d$1s "$2"; fi
}
completed() { # the report's requests completed
  if [ -n "$H2" ]; then awk '/^requests:/{print $8}'; else awk '/requests in/{print $1}'; fi
}
failures() { # the report's lines about failures or non-2xx answers, if any
  if [ -n "$H2" ]; then grep -E '^requests:.* [1-9][0-9]* (failed|errored)|^status codes:.* [1-9][0-9]* [345]xx'
  else grep -E 'Non-2xx|Socket errors'; fi
}
up() { # name server: the server with PHP-FPM on CPU 0 serving $DOC
  LAB_BIN=${3:-$WEBSTAND} lab_up "$2" --php "${LAB_H2[@]}" --docroot "$DOC" --cpus 0
}
measure() { # name: a warm-up second, then D seconds of load on the server lab_up started
  local url=$LAB_URL$PAGE
  curl -sf ${H2:+--http2-prior-knowledge} "$url" | md5sum | sed "s/^/  $1 page md5 /" >&2
  load 1 "$url" >/dev/null   # warm-up
  local s0 f0 s1 f1 out reqs errs
  s0=$(tree_ticks $LAB_PID); f0=$(tree_ticks $LAB_FPM)
  out=$(load $D "$url")
  s1=$(tree_ticks $LAB_PID); f1=$(tree_ticks $LAB_FPM)
  reqs=$(echo "$out" | completed)
  errs=$(echo "$out" | failures)
  if [ -n "$errs" ] || [ -z "$reqs" ] || [ "$reqs" = 0 ]; then
    echo "$errs" | sed "s/^/  $1: /" >&2; echo "  $1: round left out" >&2; return
  fi
  awk -v n=$1 -v r=$reqs -v s=$((s1-s0)) -v f=$((f1-f0)) -v hz=$HZ -v d=$D 'BEGIN{
    printf "%s\t%d\t%.1f\t%.1f\n", n, r/d, s/hz*1e6/r, (s+f)/hz*1e6/r }' | tee -a "$OUT"
}
echo -e "server\trps\tserver_us_per_req\tserver+fpm_us_per_req"
for r in $(seq $ROUNDS); do
  up nginx nginx && measure nginx; lab_down
  up builtin builtin && measure builtin; lab_down
  [ -n "${BEFORE:-}" ] || continue
  up before builtin "$(realpath "$BEFORE")" && measure before; lab_down
done
if [ -n "${PERF:-}" ]; then
  up builtin builtin && {
    load 1 "$LAB_URL$PAGE" >/dev/null
    perf record -q -F 2999 -g -o "$PERF" -p $LAB_PID -- sleep $D 2>/dev/null & REC=$!
    load $D "$LAB_URL$PAGE" | grep -E 'Requests/sec|^finished' >&2
    wait $REC
  }
  lab_down
fi
echo "# medians"
for n in nginx builtin ${BEFORE:+before}; do
  for col in 2 3 4; do awk -v n=$n -v c=$col '$1==n{print $c}' "$OUT" | sort -n | awk '{a[NR]=$1}END{printf "%s ", a[int((NR+1)/2)]}'; done
  echo " $n"
done
