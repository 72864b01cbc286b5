# Shared by the bench scripts here (sourced, not run, after procs.sh): a load command timed on
# CPU 1 with the server tree's CPU counted around it, the counts its report gives, and the medians
# of a results file's rounds.

timed() { # pid cmd... : cmd on CPU 1 under /usr/bin/time, pid's tree's CPU ticks around it; sets
  # TIMED_OUT (cmd's output and time's line), TIMED_USER and TIMED_SYS (cmd's CPU seconds) and
  # TIMED_TICKS (the tree's meanwhile)
  local pid=$1 t0 t1; shift
  t0=$(tree_ticks $pid)
  TIMED_OUT=$( { /usr/bin/time -f "TIME %U %S" taskset -c 1 "$@"; } 2>&1 )
  t1=$(tree_ticks $pid)
  TIMED_TICKS=$((t1-t0))
  # (oha's JSON ends without a newline: time's line may follow it on the same line.)
  read -r _ TIMED_USER TIMED_SYS <<<"$(echo "$TIMED_OUT" | grep -o 'TIME [0-9.]* [0-9.]*' | tail -1)"
}

counts() { # report: "requests requests/s" as wrk's report or ab's (webstand bench's) gives them
  local reqs rps
  reqs=$(echo "$1" | awk '/requests in/{print $1} /^Complete requests/{print $3}' | head -1)
  rps=$(echo "$1" | awk '/^Requests\/sec/{print $2} /^Requests per second/{print $4}' | head -1)
  echo "${reqs:-0} ${rps:-0}"
}

medians() { # file keys format... : the file's tab-separated rows grouped by their first `keys`
  # fields, a line a group, sorted: the keys, each figure's median over the rounds (printed with
  # its format, the last format for the rest), and every round's third figure, the CPU per request
  python3 - "$@" <<'PY'
import sys, statistics, collections
path, keys, formats = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = collections.defaultdict(list)
for line in open(path):
    f = line.rstrip("\n").split("\t")
    rows[tuple(f[:keys])].append([float(x) for x in f[keys:]])
for key, vals in sorted(rows.items()):
    med = [statistics.median(v[i] for v in vals) for i in range(len(vals[0]))]
    cells = [format(m, formats[min(i, len(formats) - 1)]) for i, m in enumerate(med)]
    each = " / ".join(f"{v[2]:.2f}" for v in vals)
    print("\t".join([*key, *cells, f"({each})"]))
PY
}
