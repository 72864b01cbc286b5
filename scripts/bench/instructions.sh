#!/usr/bin/env bash
# Instructions per request of two webstand builds side by side, counted by callgrind: a figure that
# does not move with the machine's noise, for "is the new build slower anywhere?" on a busy
# machine (CPU time on a quiet one says how much an instruction costs: docs/BENCHMARKS.md).
#   server: `webstand serve --threads 1` under callgrind, counted from after a warm-up to the end of
#     N requests by h2load: HTTP/1.1 keep-alive (--h1, 32 connections), the same over TLS, and
#     HTTP/2 over TLS (32 connections, 16 streams each)
#   generator: `webstand bench --threads 1 --spin off` under callgrind (blocking, so no spinning is
#     counted), whole runs of N requests against the newer build's serve: -k, a new connection per
#     request (N/10), HTTPS -k, HTTPS new connections (N/100), --h2 -m 16; a run's constant
#     work (start-up, its histograms, saving it to the history) is spread over its requests, so
#     compare the same N only
# Each row: side/case, then instructions per request for OLD and NEW and their ratio.
# Usage: scripts/bench/instructions.sh OLD_BINARY NEW_BINARY [N]   (default N 20000)
set -u
OLD=$(realpath "${1:?OLD_BINARY}"); NEW=$(realpath "${2:?NEW_BINARY}"); N=${3:-20000}
. "$(dirname "$0")/procs.sh"
for b in valgrind callgrind_control h2load openssl; do
  command -v $b >/dev/null || { echo "$b is not installed" >&2; exit 1; }
done
DIR=$(mktemp -d "${TMPDIR:-/tmp}/instructions.XXXXXX"); DOC=$DIR/www; PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=localhost -keyout "$DIR/key.pem" -out "$DIR/cert.pem" 2>/dev/null

total() { # callgrind output file: its instruction total
  sed -n 's/^summary: //p; s/^totals: //p' "$1" | head -1
}

server() { # binary label: prints "case instructions-per-request" for each case
  local bin=$1 label=$2 out=$DIR/serve-$2 p
  valgrind --tool=callgrind --callgrind-out-file="$out.%p" "$bin" serve --threads 1 \
    --listen 127.0.0.1:18801 --listen-tls 127.0.0.1:18802 --tls-cert "$DIR/cert.pem" \
    --tls-key "$DIR/key.pem" "$DOC" >"$out.log" 2>&1 & p=$!; PIDS="$PIDS $p"
  wait_line "$out.log" "listening on https" || return 1
  local case url flags
  for case in h1 tls h2; do
    case $case in
      h1) url=http://127.0.0.1:18801/2k.html; flags="--h1 -c 32" ;;
      tls) url=https://127.0.0.1:18802/2k.html; flags="--h1 -c 32" ;;
      h2) url=https://127.0.0.1:18802/2k.html; flags="-c 32 -m 16" ;;
    esac
    h2load $flags -n 640 "$url" >/dev/null 2>&1 # the connections' warm-up, uncounted
    callgrind_control --zero $p >/dev/null 2>&1
    h2load $flags -n "$N" "$url" | grep -q "$N succeeded" || echo "serve $label $case: not all succeeded" >&2
    rm -f "$out".$p.*; callgrind_control --dump=$case $p >/dev/null 2>&1
    local f; f=$(ls "$out".$p.* 2>/dev/null | head -1)
    echo "server/$case $(( $(total "$f") / N ))"
  done
  kill -INT $p; wait $p 2>/dev/null
}

generator() { # binary label target-pid: prints "case instructions-per-request"
  local bin=$1 label=$2 case n url flags out
  for case in ka close tls-ka tls-new h2; do
    url=https://127.0.0.1:18804/2k.html; n=$N
    case $case in
      ka) url=http://127.0.0.1:18803/2k.html; flags="-k" ;;
      close) url=http://127.0.0.1:18803/2k.html; flags=""; n=$((N / 10)) ;;
      tls-ka) flags="-k" ;;
      tls-new) flags=""; n=$((N / 100)) ;;
      h2) flags="--h2 -m 16" ;;
    esac
    out=$DIR/gen-$label-$case
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" bench $flags -q --threads 1 \
      --spin off -c 32 -n $n "$url" >"$out.log" 2>&1
    grep -q "^Complete requests: *$n$" "$out.log" || echo "bench $label $case: not all completed" >&2
    echo "generator/$case $(( $(total "$out") / n ))"
  done
}

server "$OLD" old > "$DIR/old.txt"
server "$NEW" new > "$DIR/new.txt"
"$NEW" serve --threads 1 --listen 127.0.0.1:18803 --listen-tls 127.0.0.1:18804 \
  --tls-cert "$DIR/cert.pem" --tls-key "$DIR/key.pem" "$DOC" >"$DIR/target.log" 2>&1 & PIDS="$PIDS $!"
wait_line "$DIR/target.log" "listening on https" || exit 1
generator "$OLD" old >> "$DIR/old.txt"
generator "$NEW" new >> "$DIR/new.txt"
echo "case instructions/request: old new new/old"
paste -d' ' "$DIR/old.txt" "$DIR/new.txt" | awk '{ printf "%-18s %9d %9d %6.2f\n", $1, $2, $4, $4 / $2 }'
