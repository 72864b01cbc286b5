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
  local name=$1 case=$2 out reqs rps user sys t0 t1; shift 2
  t0=$(tree_ticks $LAB_PID)
  out=$( { /usr/bin/time -f "TIME %U %S" taskset -c 1 "$@"; } 2>&1 )
  t1=$(tree_ticks $LAB_PID)
  read -r _ user sys <<<"$(echo "$out" | grep '^TIME' | tail -1)"
  reqs=$(echo "$out" | awk '/requests in/{print $1} /^Complete requests/{print $3}' | head -1)
  rps=$(echo "$out" | awk '/^Requests\/sec/{print $2} /^Requests per second/{print $4}' | head -1)
  echo "$out" | grep -E '^(Failed requests|Non-2xx)' | grep -v ' 0$' >&2
  awk -v n=$name -v w=$case -v r=${reqs:-0} -v q=${rps:-0} -v u=$user -v s=$sys \
    -v t=$((t1-t0)) -v hz=$HZ 'BEGIN{
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
python3 - "$OUT" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    rows[f[0]].append([float(x) for x in f[1:]])
for what, vals in sorted(rows.items()):
    med = [statistics.median(v[i] for v in vals) for i in range(len(vals[0]))]
    each = " / ".join(f"{v[2]:.2f}" for v in vals)
    print(f"{what}\t{med[0]:.0f}\t{med[1]:.0f}\t{med[2]:.2f}\t{med[3]:.2f}\t({each})")
PY
