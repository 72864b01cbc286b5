#!/usr/bin/env bash
# What a wrk script costs the generator (docs/SCRIPTING.md; docs/BENCHMARKS.md), side by side with
# wrk 4.1 (Debian's, on LuaJIT) in one unattended run: nginx started by `webstand lab up nginx` on
# the lab's own config (scripts/bench/lab.sh) serving /2k.html on CPU 0; the generator alone on
# CPU 1, one thread, keep-alive, $C connections, D s each; four cases, each run by both generators:
#   none      no script
#   fields    a script that only sets wrk.method, wrk.headers and wrk.body (built once)
#   path      request() building a new path each call (wrk.format with a counter)
#   response  response(status, headers, body) defined (the head and body kept for each response)
# Each row: generator/case, requests, requests/s, the generator's CPU-µs per request
# (utime+stime / completed requests), the server tree's CPU-µs per request; medians over ROUNDS
# with every round's generator figure. The goals: fields within 5 % of none; path and response
# at most 0.9x wrk's CPU per request.
# Usage: scripts/bench/lua-cpu.sh [ROUNDS]  (WEBSTAND=binary, default target/release/webstand)
set -u
ROUNDS=${1:-3}; C=${C:-32}; D=${D:-5}
WEBSTAND=$(realpath "${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
. "$HERE/procs.sh"
. "$HERE/timed.sh"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/lua-cpu.XXXXXX"); DOC=$DIR/www; HZ=$(getconf CLK_TCK)
trap 'lab_down; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
OUT=$DIR/results.tsv; : > "$OUT"

# The scripts: every one leaves the request a GET of /2k.html (with a query for `path`), so nginx
# answers each the same 2 KiB page.
cat > "$DIR/fields.lua" <<'LUA'
wrk.method = "GET"
wrk.headers["X-Bench"] = "lua-cpu"
wrk.body = nil
LUA
cat > "$DIR/path.lua" <<'LUA'
local n = 0
function request()
  n = n + 1
  return wrk.format(nil, "/2k.html?n=" .. n)
end
LUA
cat > "$DIR/response.lua" <<'LUA'
local bytes = 0
function response(status, headers, body)
  bytes = bytes + #body
end
LUA

run() { # generator case cmd... : generator CPU per request, requests/s, server CPU per request
  local name=$1 case=$2 reqs rps; shift 2
  timed $LAB_PID "$@"
  read -r reqs rps <<<"$(counts "$TIMED_OUT")"
  echo "$TIMED_OUT" | grep -E '^(Failed requests|Non-2xx)' | grep -v ' 0$' >&2
  awk -v n=$name -v w=$case -v r=$reqs -v q=$rps -v u=$TIMED_USER -v s=$TIMED_SYS \
    -v t=$TIMED_TICKS -v hz=$HZ 'BEGIN{
    printf "%s/%s\t%d\t%.0f\t%.2f\t%.2f\n", n, w, r, q, (r>0? (u+s)*1e6/r : 0),
      (r>0? t/hz*1e6/r : 0)}' | tee -a "$OUT"
}

cases() { # url
  local u=$1 s flag
  for s in none fields path response; do
    flag=(); [ $s = none ] || flag=(-s "$DIR/$s.lua")
    run wrk $s wrk -t1 -c$C -d${D}s "${flag[@]}" "$u"
    run webstand $s $WEBSTAND bench --db $DIR/history.db -q --threads 1 -k -d ${D}s -c $C \
      "${flag[@]}" "$u"
  done
}

for r in $(seq $ROUNDS); do
  echo "# round $r $(date -u +%T)" >&2
  lab_up nginx --docroot "$DOC" --cpus 0 || exit 1
  cases "${LAB_URL}2k.html"
  lab_down
done
echo "# medians: generator/case requests requests/s gen_cpu_us_per_request server_cpu_us_per_request (each round's gen figure) ($OUT)"
medians "$OUT" 1 .0f .0f .2f .2f
