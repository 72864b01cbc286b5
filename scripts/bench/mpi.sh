#!/usr/bin/env bash
# The distributed run's costs (docs/BENCHMARKS.md, "Distributed load on MPI"), on this 2-core machine,
# against the builtin server (`webstand lab up builtin`: the lab's config, one thread) pinned to CPU 0, keep-alive, a 2 KiB file, every generator
# pinned to CPU 1 with one load thread, runs interleaved, medians of ROUNDS:
#   1. one rank alone against one process on the same load (-c 8, N requests): `mpirun -np 1` vs
#      plain `webstand bench`;
#   2. two ranks (-c 8 split 4 + 4, both on CPU 1) against two plain processes of one rank's share
#      each (-c 4, N/2 requests) running side by side on CPU 1: the same layout, MPI the difference;
#   CPU per request is the load threads' (the engine's figure, in both) and the whole process's
#   (ranks: getrusage over the share, in the per-rank JSON; plain processes: /usr/bin/time, which
#   also counts their start and history write);
#   3. the start skew and what the start protocol and the merge add (`protocol_ms`): 2 ranks one per
#      core (--bind-to core), and 4 ranks on the 2 cores, SKEWS short runs each.
# Needs the MPI build: cargo build --release --features mpi. Run it on a machine doing nothing else.
# Usage: scripts/bench/mpi.sh   (W=binary, default target/release/webstand; N, ROUNDS, SKEWS)
set -euo pipefail
cd "$(dirname "$0")/../.."
W=$(realpath "${W:-target/release/webstand}")
. scripts/bench/lab.sh
N=${N:-400000}
ROUNDS=${ROUNDS:-5}
SKEWS=${SKEWS:-7}
dir=$(mktemp -d)
trap 'lab_down; rm -rf "$dir"' EXIT
mkdir "$dir/www"; chmod 755 "$dir" "$dir/www"
head -c 2048 /dev/zero | tr '\0' a > "$dir/www/2k.html"
LAB_BIN=$W lab_up builtin --docroot "$dir/www" --cpus 0
url="${LAB_URL}2k.html"
mpi=(mpirun -q --allow-run-as-root --oversubscribe)
bench=(bench -q --json --threads 1 -k)
plain() { # plain NAME CLIENTS REQUESTS: one process on CPU 1, its whole CPU in NAME.time
  /usr/bin/time -f '%U %S' -o "$dir/$1.time" taskset -c 1 "$W" --db "$dir/h.db" "${bench[@]}" \
    -c "$2" -n "$3" "$url" > "$dir/$1.json"
}
for i in $(seq "$ROUNDS"); do
  plain single$i 8 "$N"
  taskset -c 1 "${mpi[@]}" --bind-to none -np 1 "$W" --db "$dir/h.db" "${bench[@]}" -c 8 -n "$N" "$url" \
    > "$dir/rank$i.json"
  plain halfa$i 4 $((N / 2)) & a=$!
  plain halfb$i 4 $((N / 2)) & b=$!
  wait $a $b
  taskset -c 1 "${mpi[@]}" --bind-to none -np 2 "$W" --db "$dir/h.db" "${bench[@]}" -c 8 -n "$N" "$url" \
    > "$dir/ranks$i.json"
done
for i in $(seq "$SKEWS"); do
  "${mpi[@]}" --map-by core --bind-to core -np 2 "$W" --db "$dir/h.db" bench -q --json -k -c 8 -n 8000 "$url" \
    > "$dir/skew2_$i.json"
  "${mpi[@]}" --bind-to none -np 4 "$W" --db "$dir/h.db" bench -q --json -k -c 8 -n 8000 "$url" \
    > "$dir/skew4_$i.json"
done
python3 - "$dir" "$ROUNDS" "$SKEWS" <<'PY'
import json, statistics, sys
d, rounds, skews = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
load = lambda f: json.load(open(f"{d}/{f}.json"))
def whole(f):  # a plain process's user + sys CPU-us per request, from /usr/bin/time
    u, s = map(float, open(f"{d}/{f}.time").read().split()[-2:])
    return (u + s) * 1e6 / load(f)["complete"]
med = statistics.median
def show(name, xs, ref=None):
    ratio = f"  ratio {med(xs) / med(ref):.3f}" if ref else ""
    print(f"{name:<44} {' '.join(f'{x:6.2f}' for x in xs)}  median {med(xs):.2f}{ratio}")
R = range(1, rounds + 1)
single = [load(f"single{i}")["cpu_us_per_request"] for i in R]
single_w = [whole(f"single{i}") for i in R]
rank = [load(f"rank{i}")["ranks"]["per_rank"][0] for i in R]
print("1. -c 8, one process vs one rank (CPU-us per request)")
show("one process, load threads", single)
show("one rank (mpirun -np 1), load threads", [r["cpu_us_per_request"] for r in rank], single)
show("one process, whole process (/usr/bin/time)", single_w)
show("one rank, whole process (getrusage)", [r["process_cpu_us_per_request"] for r in rank], single_w)
half = [med([load(f"half{x}{i}")["cpu_us_per_request"] for x in "ab"]) for i in R]
half_w = [med([whole(f"half{x}{i}") for x in "ab"]) for i in R]
ranks = [load(f"ranks{i}")["ranks"]["per_rank"] for i in R]
print("2. -c 4 each, two plain processes side by side vs two ranks (CPU-us per request, mean of the two)")
show("two processes, load threads", half)
show("two ranks, load threads", [med([r["cpu_us_per_request"] for r in v]) for v in ranks], half)
show("two processes, whole process (/usr/bin/time)", half_w)
show("two ranks, whole process (getrusage)", [med([r["process_cpu_us_per_request"] for r in v]) for v in ranks], half_w)
print("3. start skew (largest per run) and protocol_ms, -c 8 -n 8000")
for n in (2, 4):
    v = [load(f"skew{n}_{i}")["ranks"] for i in range(1, skews + 1)]
    show(f"{n} ranks, start skew ms", [x["start_skew_ms"] for x in v])
    show(f"{n} ranks, protocol ms", [x["protocol_ms"] for x in v])
PY
