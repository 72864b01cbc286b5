#!/usr/bin/env bash
# Server-side CPU per PHP request: webstand serve --fastcgi against nginx (fastcgi_pass with
# fastcgi_keep_conn and an upstream keepalive), both passing the same ~20 KiB generated PHP page to
# the same php-fpm (static pool of $CHILDREN, unix socket). Server and php-fpm pinned to CPU 0, wrk
# to CPU 1 (-t1 -c$C -d${D}s, keep-alive). CPU = utime+stime from /proc of the server's process tree,
# and of php-fpm's, each divided by the requests wrk completed. Rounds alternate the servers.
# Usage: scripts/bench/fastcgi-cpu.sh [ROUNDS]  (WEBSTAND=path/to/webstand; default target/release)
# BEFORE=path/to/webstand: a third contender, "before" (another build of builtin, e.g. main's).
# A round with non-2xx answers is reported and left out of the medians.
# PERF=FILE: one more builtin run of D seconds under `perf record` (the server only), into FILE.
# H2=1: HTTP/2 by prior knowledge (h2c) instead, h2load -c$C -m$M (default 16) for wrk, nginx
# listening with `http2` and webstand with --h2c.
# BODY=BYTES (with H2=1): uploads instead, each request a POST of BYTES random bytes (h2load -d) to a
# page that reads php://input whole and prints its length and MD5; rps × BYTES is the throughput.
set -u
ROUNDS=${1:-3}; C=${C:-4}; D=${D:-5}; CHILDREN=${CHILDREN:-4}; M=${M:-16}
H2C=""; NGX_H2=""; [ -n "${H2:-}" ] && { H2C=--h2c; NGX_H2=" http2"; }
WEBSTAND=${WEBSTAND:-$(dirname "$0")/../../target/release/webstand}
DIR=$(mktemp -d /tmp/fastcgi-cpu.XXXXXX); DOC=$DIR/www; HZ=$(getconf CLK_TCK)
mkdir -p "$DOC"; chmod 755 "$DIR" "$DOC"   # nginx's worker runs as nobody when started as root
PAGE=page.php; BODY_ARGS=()
if [ -n "${BODY:-}" ]; then
  [ -n "${H2:-}" ] || { echo "BODY needs H2=1 (h2load -d)" >&2; exit 2; }
  head -c "$BODY" /dev/urandom > "$DIR/body.bin"; PAGE=sum.php; BODY_ARGS=(-d "$DIR/body.bin")
  echo '<?php $b = file_get_contents("php://input"); echo strlen($b), " ", md5($b);' > "$DOC/sum.php"
fi
cat > "$DOC/page.php" <<'PHP'
<?php
echo "<!DOCTYPE html>\n<html><head><title>webstand php</title></head><body>\n";
for ($i = 0; $i < 200; $i++) {
    echo "<p class=\"row\">Row ", $i, ": ", str_repeat(chr(97 + $i % 26), 64), " ", md5((string)$i), "</p>\n";
}
echo "</body></html>\n";
PHP
cat > "$DIR/fpm.conf" <<CONF
[global]
error_log = $DIR/fpm.log
daemonize = no
[bench]
listen = $DIR/fpm.sock
listen.backlog = 1024
listen.mode = 0666
pm = static
pm.max_children = $CHILDREN
pm.max_requests = 0
clear_env = yes
CONF
cat > "$DIR/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $DIR/nginx.pid; error_log $DIR/nginx-error.log;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000; client_max_body_size 0;
  upstream php { server unix:$DIR/fpm.sock; keepalive $CHILDREN; }
  server { listen 127.0.0.1:18280$NGX_H2; root $DOC;
    location ~ \.php\$ { include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_keep_conn on; fastcgi_pass php; } } }
CONF
. "$(dirname "$0")/procs.sh"
ROOT_FLAG=""; [ "$(id -u)" = 0 ] && ROOT_FLAG=-R
taskset -c 0 php-fpm8.2 -F -y "$DIR/fpm.conf" $ROOT_FLAG & FPM=$!
for _ in $(seq 100); do [ -S "$DIR/fpm.sock" ] && break; sleep 0.05; done
OUT=$DIR/results.tsv; : > "$OUT"
load() { # seconds url: the load generator's report
  if [ -n "${H2:-}" ]; then taskset -c 1 h2load -c$C -m$M -D$1 "${BODY_ARGS[@]}" "$2"
  else taskset -c 1 wrk -t1 -c$C -d$1s "$2"; fi
}
completed() { # the report's requests completed
  if [ -n "${H2:-}" ]; then awk '/^requests:/{print $8}'; else awk '/requests in/{print $1}'; fi
}
failures() { # the report's lines about failures or non-2xx answers, if any
  if [ -n "${H2:-}" ]; then grep -E '^requests:.* [1-9][0-9]* (failed|errored)|^status codes:.* [1-9][0-9]* [345]xx'
  else grep -E 'Non-2xx|Socket errors'; fi
}
measure() { # name port pid
  wait_port $2 || { echo "$1 never listened" >&2; return; }
  curl -sf ${H2:+--http2-prior-knowledge} "http://127.0.0.1:$2/$PAGE" | md5sum | sed "s/^/  $1 page md5 /" >&2
  load 1 "http://127.0.0.1:$2/$PAGE" >/dev/null   # warm-up
  local s0 f0 s1 f1 out reqs
  s0=$(tree_ticks $3); f0=$(tree_ticks $FPM)
  out=$(load $D "http://127.0.0.1:$2/$PAGE")
  s1=$(tree_ticks $3); f1=$(tree_ticks $FPM)
  reqs=$(echo "$out" | completed)
  local errs; errs=$(echo "$out" | failures)
  if [ -n "$errs" ]; then echo "$errs" | sed "s/^/  $1: /" >&2; echo "  $1: round left out" >&2; return; fi
  awk -v n=$1 -v r=$reqs -v s=$((s1-s0)) -v f=$((f1-f0)) -v hz=$HZ -v d=$D 'BEGIN{
    printf "%s\t%d\t%.1f\t%.1f\n", n, r/d, s/hz*1e6/r, (s+f)/hz*1e6/r }' | tee -a "$OUT"
}
echo -e "server\trps\tserver_us_per_req\tserver+fpm_us_per_req"
for r in $(seq $ROUNDS); do
  taskset -c 0 nginx -c "$DIR/nginx.conf" & P=$!; measure nginx 18280 $P; kill $P; wait $P 2>/dev/null
  taskset -c 0 "$WEBSTAND" serve "$DOC" --listen 127.0.0.1:18281 --threads 1 \
    --fastcgi "*.php=unix:$DIR/fpm.sock" --fastcgi-connections $CHILDREN $H2C 2>/dev/null & P=$!
  measure builtin 18281 $P; kill $P; wait $P 2>/dev/null
  [ -n "${BEFORE:-}" ] || continue
  taskset -c 0 "$BEFORE" serve "$DOC" --listen 127.0.0.1:18282 --threads 1 \
    --fastcgi "*.php=unix:$DIR/fpm.sock" --fastcgi-connections $CHILDREN $H2C 2>/dev/null & P=$!
  measure before 18282 $P; kill $P; wait $P 2>/dev/null
done
if [ -n "${PERF:-}" ]; then
  taskset -c 0 "$WEBSTAND" serve "$DOC" --listen 127.0.0.1:18281 --threads 1 \
    --fastcgi "*.php=unix:$DIR/fpm.sock" --fastcgi-connections $CHILDREN $H2C 2>/dev/null & P=$!
  wait_port 18281 && taskset -c 1 wrk -t1 -c$C -d1s "http://127.0.0.1:18281/page.php" >/dev/null
  perf record -q -F 2999 -g -o "$PERF" -p $P -- sleep $D 2>/dev/null & REC=$!
  taskset -c 1 wrk -t1 -c$C -d${D}s "http://127.0.0.1:18281/page.php" | grep -E 'Requests/sec' >&2
  wait $REC; kill $P; wait $P 2>/dev/null
fi
kill $FPM; wait $FPM 2>/dev/null
echo "# medians"
for n in nginx builtin ${BEFORE:+before}; do
  for col in 2 3 4; do awk -v n=$n -v c=$col '$1==n{print $c}' "$OUT" | sort -n | awk '{a[NR]=$1}END{printf "%s ", a[int((NR+1)/2)]}'; done
  echo " $n"
done
rm -rf "$DIR"
