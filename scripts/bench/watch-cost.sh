#!/usr/bin/env bash
# What watching a run costs the generator (docs/METRICS.md; docs/BENCHMARKS.md): `webstand serve`
# started by `webstand lab up builtin` on CPU 0 serving /2k.html, `webstand bench --threads 1 -k
# -c $C` on CPU 1 for D s, three ways in each round, interleaved:
#   off    no watch
#   lines  --live with stdout not a terminal (a plain line a second on stderr) and
#          --metrics-listen 127.0.0.1:0 (the Prometheus endpoint, not scraped)
#   view   the same on a terminal (`script` gives it one): the full-screen view redrawn each second
# Each row: case, requests, requests/s, the generator's CPU-µs per request (utime+stime of the
# whole process, the watcher's thread included, / completed requests); then medians over ROUNDS and
# each case's ratio to `off`, paired by round. The goal: under 2 %.
# Usage: scripts/bench/watch-cost.sh [ROUNDS]  (WEBSTAND=binary, default target/release/webstand)
set -u
ROUNDS=${1:-3}; C=${C:-32}; D=${D:-5}
WEBSTAND=$(realpath "${WEBSTAND:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/webstand}")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
command -v script >/dev/null || { echo "script (util-linux) is not installed" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/watch-cost.XXXXXX"); DOC=$DIR/www
trap 'lab_down; rm -rf "$DIR"' EXIT
mkdir -p "$DOC"; chmod 755 "$DIR"; head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
OUT=$DIR/results.tsv; : > "$OUT"
lab_up builtin --docroot "$DOC" --cpus 0 || exit 1
URL=${LAB_URL}2k.html

run() { # round case
  local bench=("$WEBSTAND" bench --db "$DIR/history.db" --threads 1 -k -c "$C" -t "$D" -n 1000000000)
  local watch=(--live --metrics-listen 127.0.0.1:0) t=$DIR/time.txt o=$DIR/out.txt
  rm -f "$t" "$o"
  case $2 in
    off) taskset -c 1 /usr/bin/time -f 'TIME %e %U %S' -o "$t" "${bench[@]}" "$URL" >"$o" 2>/dev/null ;;
    lines) taskset -c 1 /usr/bin/time -f 'TIME %e %U %S' -o "$t" "${bench[@]}" "${watch[@]}" "$URL" >"$o" 2>/dev/null ;;
    view) script -q -e -c "taskset -c 1 /usr/bin/time -f 'TIME %e %U %S' -o $t ${bench[*]} ${watch[*]} $URL" "$o" >/dev/null 2>&1 ;;
  esac
  local n wall u s
  n=$(grep -a '^Complete requests' "$o" | tail -1 | awk '{print $3}')
  read -r _ wall u s < <(grep TIME "$t")
  awk -v r=$1 -v m=$2 -v n=${n:-0} -v u=$u -v s=$s -v w=$wall \
    'BEGIN{printf "%d\t%s\t%d\t%.0f\t%.3f\n", r, m, n, n/w, (n>0? (u+s)*1e6/n : 0)}' | tee -a "$OUT"
}

for r in $(seq $ROUNDS); do
  for m in off lines view; do run $r $m; done
done
echo "# medians: case requests/s cpu_us_per_request ratio_to_off (paired by round)"
python3 - "$OUT" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
by = {}
for r, m, n, rps, cpu in rows:
    by.setdefault(m, {})[r] = (float(rps), float(cpu))
for m in ("off", "lines", "view"):
    rounds = sorted(by.get(m, {}))
    ratios = [by[m][r][1] / by["off"][r][1] for r in rounds if r in by["off"] and by["off"][r][1] > 0]
    print(f"{m}\t{st.median(v[0] for v in by[m].values()):.0f}\t{st.median(v[1] for v in by[m].values()):.3f}\t{st.median(ratios):.3f}")
PY
