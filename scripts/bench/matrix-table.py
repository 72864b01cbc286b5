#!/usr/bin/env python3
"""Medians of loadgen-matrix.sh's TSV rows as Markdown tables, one per server and mode.

Usage: matrix-table.py FILE.tsv...        matrix-table.py --perf perf-SERVER.tsv...
Columns in: server mode clients generator round requests req/s cpu-us/req errors server-busy
wake-ups/req.
Per clients level: each generator's median req/s, webstand ÷ the best of wrk and ab, each
generator's median CPU-µs per request, webstand ÷ wrk, each generator's voluntary context switches
(wake-ups) per request, the server's busy fraction during webstand's and wrk's points (1.00 =
the server's CPU was saturated: CPU per request is compared where both are) and the server's own
CPU-µs per request under each (busy ÷ req/s: what a request costs the server, which differs
between generators when one makes it wake more often).
With --perf: the medians of the server-side counts per request that SERVER_PERF=1 recorded, a row
per level and generator.
"""
import collections
import statistics
import sys


def perf_tables(paths):
    counts = collections.defaultdict(list)
    for path in paths:
        for line in open(path):
            f = line.rstrip("\n").split("\t")
            if len(f) == 7:
                counts[tuple(f[:4]) + (f[5],)].append(float(f[6]))
    # task-clock comes in ms: shown as µs per request; events never counted are left out.
    events = sorted({k[4] for k in counts if any(counts[k])}, key=lambda e: (e != "task-clock", e))
    short = [e.split(":")[-1].replace("sys_enter_", "") for e in events]
    short = ["CPU-µs (perf)" if e == "task-clock" else e for e in short]
    for server, mode in sorted({k[:2] for k in counts}):
        print(f"\n{server}, {mode}: the server's counts per request (medians)\n")
        print("| clients | generator | " + " | ".join(short) + " |")
        print("|---:|---|" + "---:|" * len(events))
        for c, g in sorted({(int(k[2]), k[3]) for k in counts if k[:2] == (server, mode)}):
            cells = [statistics.median(counts.get((server, mode, str(c), g, e), [0])) for e in events]
            cells = [f"{x * 1000:.2f}" if e == "task-clock" else f"{x:.3f}"
                     for e, x in zip(events, cells)]
            print(f"| {c} | {g} | " + " | ".join(cells) + " |")


if sys.argv[1:2] == ["--perf"]:
    perf_tables(sys.argv[2:])
    sys.exit(0)

rows = collections.defaultdict(list)
for path in sys.argv[1:]:
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 10 or line.startswith("#"):
            continue
        server, mode, clients, gen = f[0], f[1], int(f[2]), f[3]
        rps, cpu, errs, busy = float(f[6]), float(f[7]), int(f[8]), float(f[9])
        wakes = float(f[10]) if len(f) > 10 else float("nan")
        server_cpu = busy * 1e6 / rps if rps else float("nan")
        rows[(server, mode, clients, gen)].append((rps, cpu, errs, busy, wakes, server_cpu))


def med(key, i):
    v = rows.get(key)
    return statistics.median(x[i] for x in v) if v else None


def spread(key):
    v = [x[0] for x in rows.get(key, [])]
    m = statistics.median(v) if v else 0
    return (max(v) - min(v)) / m if len(v) > 1 and m else 0.0


below = []


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


for server, mode in sorted({(k[0], k[1]) for k in rows}, key=lambda k: (k[0], k[1] != "ka")):
    keys = [k for k in rows if k[0] == server and k[1] == mode]
    gens = sorted({k[3] for k in keys}, key=lambda g: (["webstand", "wrk", "ab"].index(g)
                  if g in ("webstand", "wrk", "ab") else 3, g))
    extra = [g for g in gens if g not in ("webstand", "wrk", "ab")]
    n = max(len(rows[k]) for k in keys)
    label = "keep-alive" if mode == "ka" else "new connection per request"
    names = " / ".join(gens)
    print(f"\n{server}, {label} (medians of {n}; each cell lists {names}):\n")
    head = ["clients", "req/s", "webstand ÷ best of wrk, ab", "spread", "CPU-µs per request"]
    head += ["webstand ÷ wrk CPU"] + [f"{g} ÷ wrk CPU" for g in extra]
    each = "webstand / wrk" if gens == ["webstand", "wrk", "ab"] else " / ".join(gens)
    head += ["wake-ups per request", f"server busy ({each})"]
    head += [f"server CPU-µs per request ({each})", "errors"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    for c in sorted({k[2] for k in keys}):
        m = {g: [med((server, mode, c, g), i) for i in range(6)] for g in gens}
        r = {g: m[g][0] for g in gens}
        u = {g: m[g][1] for g in gens}
        rivals = [g for g in ("wrk", "ab") if r.get(g)]
        top = max(rivals, key=lambda g: r[g], default=None)
        best = r[top] if top else None
        ws, wrk_cpu = r.get("webstand"), u.get("wrk")
        sp = max(spread((server, mode, c, "webstand")), spread((server, mode, c, top))) if top else 0
        cells = [str(c), " / ".join(fmt(r[g], ".0f") for g in gens)]
        mark = ""
        if ws and best and ws / best < 1 - sp:
            mark = " below"
            below.append(f"{server} {mode} c={c}: {ws / best:.2f} of {top} (spread {sp:.0%})")
        cells.append(f"**{ws / best:.2f}**{mark}" if ws and best else "-")
        cells.append(f"{sp:.0%}")
        cells.append(" / ".join(fmt(u[g], ".2f") for g in gens))
        cells.append(f"**{u['webstand'] / wrk_cpu:.2f}**" if u.get("webstand") and wrk_cpu else "-")
        cells += [fmt(u[g] / wrk_cpu if u[g] and wrk_cpu else None, ".2f") for g in extra]
        cells.append(" / ".join(fmt(m[g][4], ".2f") for g in gens))
        shown = ("webstand", "wrk") if gens == ["webstand", "wrk", "ab"] else gens
        cells.append(" / ".join(fmt(m[g][3], ".2f") for g in shown if g in m))
        cells.append(" / ".join(fmt(m[g][5], ".2f") for g in shown if g in m))
        errs = sum(x[2] for g in gens for x in rows.get((server, mode, c, g), []))
        cells.append(str(errs))
        print("| " + " | ".join(cells) + " |")

if below:
    print("\nwebstand below the best of wrk and ab by more than the run-to-run spread:")
    for b in below:
        print("- " + b)
