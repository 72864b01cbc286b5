#!/usr/bin/env bash
# The distributed run's costs (docs/BENCHMARKS.md, "Distributed load on MPI"), on this 2-core machine:
#   1. CPU per request of each MPI rank against one process on the same load (-c 8 -k, N requests in
#      all): `webstand serve` pinned to CPU 0, the generator (the process, or mpirun's 2 ranks) to
#      CPU 1, one load thread each; runs interleaved, medians of 3;
#   2. what the start protocol and the merge add to a run (`protocol_ms`) and the start skew, over
#      4 ranks, medians of 5 short runs.
# Needs the MPI build: cargo build --release --features mpi. Run it under /work/wt/bin/quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${W:-target/release/webstand}
N=${N:-400000}
dir=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$dir"' EXIT
head -c 2048 /dev/zero | tr '\0' a > "$dir/2k.html"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 0 "$W" serve "$dir" --listen "127.0.0.1:$port" --threads 1 2>/dev/null &
server=$!
until curl -sf -o /dev/null "http://127.0.0.1:$port/2k.html"; do sleep 0.05; done
url="http://127.0.0.1:$port/2k.html"
mpi=(mpirun -q --allow-run-as-root --oversubscribe --bind-to none)
for i in 1 2 3; do
  taskset -c 1 "$W" --db "$dir/h.db" bench -q --json --threads 1 -k -c 8 -n "$N" "$url" > "$dir/single$i.json"
  taskset -c 1 "${mpi[@]}" -np 2 "$W" --db "$dir/h.db" bench -q --json --threads 1 -k -c 8 -n "$N" "$url" \
    > "$dir/ranks$i.json"
done
for i in 1 2 3 4 5; do
  "${mpi[@]}" -np 4 "$W" --db "$dir/h.db" bench -q --json -k -c 8 -n 8000 "$url" > "$dir/proto$i.json"
done
python3 - "$dir" <<'PY'
import json, statistics, sys
d = sys.argv[1]
load = lambda f: json.load(open(f"{d}/{f}"))
single = [load(f"single{i}.json")["cpu_us_per_request"] for i in (1, 2, 3)]
ranks = [load(f"ranks{i}.json") for i in (1, 2, 3)]
per_rank = [[r["cpu_us_per_request"] for r in v["ranks"]["per_rank"]] for v in ranks]
merged = [v["cpu_us_per_request"] for v in ranks]
print(f"single process, CPU-us/request: {[round(x, 2) for x in single]} median {statistics.median(single):.2f}")
for k in range(2):
    xs = [p[k] for p in per_rank]
    print(f"rank {k} of 2, CPU-us/request:  {[round(x, 2) for x in xs]} median {statistics.median(xs):.2f}"
          f" ratio {statistics.median(xs) / statistics.median(single):.3f}")
print(f"merged (2 ranks), CPU-us/request: {[round(x, 2) for x in merged]} median {statistics.median(merged):.2f}"
      f" ratio {statistics.median(merged) / statistics.median(single):.3f}")
proto = [load(f"proto{i}.json")["ranks"] for i in range(1, 6)]
p = [x["protocol_ms"] for x in proto]
s = [x["start_skew_ms"] for x in proto]
print(f"4 ranks, protocol ms: {[round(x, 2) for x in p]} median {statistics.median(p):.2f}")
print(f"4 ranks, start skew ms: {[round(x, 3) for x in s]} median {statistics.median(s):.3f}")
PY
