#!/usr/bin/env bash
# Load generators side by side at every concurrency: requests/s and generator CPU-µs per request of
# `webstand bench --threads 1`, `wrk -t1` and ab against one server (one worker), keep-alive and a new
# connection per request; wrk sends webstand's request headers. Server pinned to CPU $SERVER_CPU, each
# generator to CPU $LOAD_CPU; every point runs $DUR seconds; rounds repeat the whole grid so drift
# hits every generator alike.
#
# Usage: scripts/bench/loadgen-matrix.sh SERVER [ROUNDS]
#   SERVER: builtin | lighttpd | h2o | nginx | apache | caddy | mini_httpd (no keep-alive: a new
#   connection per request in both modes), started by `webstand lab up` on the lab's own config
#   (scripts/bench/lab.sh): one worker, keep-alive unbounded, as `webstand compare` runs it
# Env:   CLIENTS="1 2 4 8 12 16 24 32 64 128 256"  MODES="ka close"  DUR=2
#        WEBSTAND=target/release/webstand (the generator measured)   SERVE_BIN=$WEBSTAND (the webstand
#          that runs `lab up`: its `serve` is the builtin server)
#        EXTRA="name=/path/to/webstand ..." more webstand binaries measured beside it (e.g. an old build)
#        BENCH_DIR=/tmp/ws-matrix (docroot, raw TSV)   PORT=28180
#        GENS="webstand wrk ab" the generators measured; wrk-host is wrk sending only Host (its own
#          default request), to see what webstand's two extra headers cost the server
#        SERVER_PERF=1 counts the server's system calls, epoll waits, wake-ups it causes (sched_wakeup)
#          and IPIs it sends per request with `perf stat -p` (costs the server time: diagnosis only;
#          the counts go to $BENCH_DIR/perf-SERVER.tsv and are printed as medians at the end)
# Output: one TSV row per point in $BENCH_DIR/matrix-SERVER.tsv
#   (server mode clients generator round requests req/s cpu-µs/req errors server-busy-fraction
#   generator-voluntary-context-switches-per-request),
#   then the medians as a Markdown table (scripts/bench/matrix-table.py); with EXTRA, scripts/bench/matrix-paired.py
#   pairs each extra build with webstand by round (A/B ratios).
set -u
SERVER=${1:?usage: loadgen-matrix.sh SERVER [ROUNDS]}
ROUNDS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"   # lab_up, lab_down: the server on the lab's own config
. "$HERE/procs.sh" # tree_ticks (the server's whole process tree, as every bench script counts it)
CLIENTS=${CLIENTS:-"1 2 4 8 12 16 24 32 64 128 256"}
MODES=${MODES:-"ka close"}
DUR=${DUR:-2}
WEBSTAND=$(realpath "${WEBSTAND:-target/release/webstand}")
SERVE_BIN=$(realpath "${SERVE_BIN:-$WEBSTAND}")
EXTRA=${EXTRA:-}
SERVER_PERF=${SERVER_PERF:-}
BENCH_DIR=${BENCH_DIR:-/tmp/ws-matrix}
PORT=${PORT:-28180}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
HZ=$(getconf CLK_TCK)
# wrk sends the request webstand sends (Host, User-Agent, Accept: byte for byte the same); ab sends
# HTTP/1.0 with Connection: Keep-Alive (-k), User-Agent: ApacheBench/2.3 and Accept.
UA=$("$WEBSTAND" --version | tr ' ' /)
DOC=$BENCH_DIR/docroot
URL=http://127.0.0.1:$PORT/2k.html
OUT=$BENCH_DIR/matrix-$SERVER.tsv
PERF_TSV=$BENCH_DIR/perf-$SERVER.tsv

case $DUR in ''|*[!0-9]*|0) echo "DUR must be a whole number of seconds (ab's -t takes no fraction)" >&2; exit 2;; esac
for b in wrk ab taskset /usr/bin/time python3 "$WEBSTAND"; do
  command -v "$b" >/dev/null || { echo "missing $b (scripts/install-deps.sh installs it)" >&2; exit 2; }
done
mkdir -p "$DOC"
head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

start_server() { # sets SRV (the pid whose process tree is the server): the lab's own config
  case $SERVER in
  builtin|lighttpd|h2o|nginx|apache|caddy|mini_httpd) ;;
  *) echo "unknown server $SERVER (builtin, lighttpd, h2o, nginx, apache, caddy, mini_httpd)" >&2; exit 2 ;;
  esac
  LAB_BIN=$SERVE_BIN lab_up "$SERVER" --docroot "$DOC" --port "$PORT" --cpus "$SERVER_CPU" || exit 1
  SRV=$LAB_PID
}

# The command line of generator $1 in mode $2 at $3 clients, into the array CMD.
gen_cmd() {
  local gen=$1 mode=$2 c=$3 bin=$WEBSTAND e
  case $gen in
  wrk) CMD=(wrk -t1 -c"$c" -d"${DUR}s" -H "User-Agent: $UA" -H 'Accept: */*')
       [ "$mode" = ka ] || CMD+=(-H 'Connection: close') ;;
  wrk-host) CMD=(wrk -t1 -c"$c" -d"${DUR}s")
       [ "$mode" = ka ] || CMD+=(-H 'Connection: close') ;;
  ab)  CMD=(ab -q -t "$DUR" -n $((DUR * 400000)) -c "$c")
       [ "$mode" = ka ] && CMD+=(-k) ;;
  *)   for e in $EXTRA; do [ "${e%%=*}" = "$gen" ] && bin=${e#*=}; done
       CMD=("$bin" bench -q --db "$BENCH_DIR/history.db" --threads 1 -c "$c" -d "${DUR}s")
       [ "$mode" = ka ] && CMD+=(-k) ;;
  esac
  CMD+=("$URL")
}

measure() { # generator mode clients round
  local gen=$1 mode=$2 c=$3 round=$4 out t0 t1 wall user sys reqs rps errs
  t0=$(tree_ticks "$SRV")
  gen_cmd "$gen" "$mode" "$c"
  [ -n "$SERVER_PERF" ] && start_perf
  out=$( { /usr/bin/time -f "TIME %e %U %S %w" taskset -c "$LOAD_CPU" "${CMD[@]}"; } 2>&1 )
  t1=$(tree_ticks "$SRV")
  [ -n "$SERVER_PERF" ] && stop_perf
  read -r _ wall user sys wakes <<<"$(echo "$out" | grep '^TIME' | tail -1)"
  if [ "${gen%-host}" = wrk ]; then
    reqs=$(echo "$out" | awk '/requests in/{print $1}')
    rps=$(echo "$out" | awk '/^Requests\/sec:/{print $2}')
    errs=$(echo "$out" | awk '/Socket errors/{gsub(",","");s=$4+$6+$8+$10} /Non-2xx/{s+=$NF} END{print s+0}')
  else
    reqs=$(echo "$out" | awk '/^Complete requests:/{print $3}')
    rps=$(echo "$out" | awk '/^Requests per second:/{print $4}')
    errs=$(echo "$out" | awk '/^Failed requests:/{print $3}')
  fi
  awk -v s="$SERVER" -v m="$mode" -v c="$c" -v g="$gen" -v r="$round" -v n="${reqs:-0}" -v q="${rps:-0}" \
      -v u="${user:-0}" -v y="${sys:-0}" -v e="${errs:-0}" -v w="${wall:-0}" -v d=$((t1 - t0)) -v hz="$HZ" \
      -v k="${wakes:-0}" \
    'BEGIN{printf "%s\t%s\t%d\t%s\t%d\t%d\t%.0f\t%.2f\t%d\t%.2f\t%.3f\n", s, m, c, g, r, n, q,
           (n>0 ? (u+y)*1e6/n : 0), e, (w>0 ? d/hz/w : 0), (n>0 ? k/n : 0)}' | tee -a "$OUT"
  [ -n "$SERVER_PERF" ] && awk -F, -v p="$SERVER\t$mode\t$c\t$gen\t$round" -v n="${reqs:-0}" \
    'NF > 3 && $1 ~ /^[0-9.]+$/ && n > 0 {printf "%s\t%s\t%.6f\n", p, $3, $1 / n}' "$PERF_OUT" >> "$PERF_TSV"
  return 0
}

# perf stat on every thread of the server's processes for one point (SERVER_PERF=1).
PERF_EVENTS=raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait
PERF_EVENTS+=,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,sched:sched_wakeup
PERF_EVENTS+=,ipi:ipi_send_cpu,context-switches,task-clock
start_perf() {
  PERF_OUT=$BENCH_DIR/perf.out
  perf stat -x, -e "$PERF_EVENTS" -p "$(echo $SRV $(ps -o pid= --ppid "$SRV") | tr ' ' ,)" \
    -o "$PERF_OUT" & PERF=$!
  sleep 0.2 # perf attaches
}
stop_perf() { kill -INT $PERF; wait $PERF; }

: > "$OUT"
: > "$PERF_TSV"
start_server
GENS=${GENS:-"webstand wrk ab"}
for e in $EXTRA; do GENS="$GENS ${e%%=*}"; done
echo "# $(date -u '+%F %T UTC') $SERVER: $ROUNDS rounds × clients ($CLIENTS) × ($MODES) × ($GENS), ${DUR}s each; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for g in $GENS; do for m in $MODES; do gen_cmd "$g" "$m" C; echo "#   $g $m: taskset -c $LOAD_CPU ${CMD[*]}" >&2; done; done
for r in $(seq "$ROUNDS"); do
  for c in $CLIENTS; do
    for m in $MODES; do
      for g in $GENS; do measure "$g" "$m" "$c" "$r"; done
    done
  done
done
echo "# done $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 "$HERE/matrix-table.py" "$OUT"
# An `if`, not `&&`: the script's status is the tables', not whether SERVER_PERF was set.
if [ -n "$SERVER_PERF" ]; then python3 "$HERE/matrix-table.py" --perf "$PERF_TSV"; fi
