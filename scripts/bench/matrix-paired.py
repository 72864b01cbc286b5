#!/usr/bin/env python3
"""Each extra generator of loadgen-matrix.sh (EXTRA=...) against today's webstand, paired by round.

Usage: matrix-paired.py FILE.tsv...
Per server and clients level, for each generator other than webstand, wrk and ab: its requests/s
÷ webstand's in each round (the A/B pairing: both ran in the same round, seconds apart), their
median, its requests/s ÷ the best of wrk and ab (webstand's in brackets), its CPU per request ÷
webstand's and ÷ wrk's (webstand's in brackets), and the server's busy fraction under it.
"""
import collections
import statistics
import sys

points = collections.defaultdict(dict)
for path in sys.argv[1:]:
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 10 or line.startswith("#"):
            continue
        points[(f[0], int(f[2]), int(f[4]))][f[3]] = (float(f[6]), float(f[7]), float(f[9]))
levels = sorted({(s, c) for (s, c, _) in points})
variants = sorted({g for e in points.values() for g in e} - {"webstand", "wrk", "ab"})
med = statistics.median
print("| server, clients | variant | ÷ today req/s, rounds | median | ÷ best of wrk, ab (today's)"
      " | CPU ÷ today | CPU ÷ wrk (today's) | server busy (variant) |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for s, c in levels:
    for g in variants:
        rounds = [e for (s2, c2, r), e in sorted(points.items())
                  if (s2, c2) == (s, c) and {g, "webstand", "wrk", "ab"} <= e.keys()]
        if not rounds:
            continue
        paired = [e[g][0] / e["webstand"][0] for e in rounds]
        best = med([e[g][0] / max(e["wrk"][0], e["ab"][0]) for e in rounds])
        best_today = med([e["webstand"][0] / max(e["wrk"][0], e["ab"][0]) for e in rounds])
        cpu = med([e[g][1] / e["webstand"][1] for e in rounds])
        cpu_wrk = med([e[g][1] / e["wrk"][1] for e in rounds])
        cpu_wrk_today = med([e["webstand"][1] / e["wrk"][1] for e in rounds])
        busy = med([e[g][2] for e in rounds])
        print(f"| {s} {c} | {g} | {' '.join(f'{x:.2f}' for x in paired)} | **{med(paired):.3f}** "
              f"| {best:.2f} ({best_today:.2f}) | {cpu:.2f} | {cpu_wrk:.2f} ({cpu_wrk_today:.2f}) "
              f"| {busy:.2f} |")
