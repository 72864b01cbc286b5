#!/usr/bin/env bash
# TCP segments per 1,000 requests, each generator's run against the same server (keep-alive, or a new
# connection per request with MODE=close): the
# kernel's SNMP counters (nstat) over the run ÷ the requests it completed. The whole script runs in a
# network namespace of its own (unshare -n, loopback only), so the counters hold this run's traffic and
# nobody else's; both ends are on loopback, so every segment is counted once sent (Out) and once
# received (In). Server pinned to CPU 0, generator to CPU 1, as the other scripts here.
#   lighttpd: plain HTTP, GET /2k.html        nginx-tls: nginx 1.22 over TLS 1.2 and 1.3 (ECDSA P-256,
#   one worker, session cache), GET /2k.html; both started by `webstand lab up` on the lab's config
# Usage: scripts/bench/tcp-segs.sh SERVER [GENERATOR...]   (GENERATOR: webstand, wrk, ab, or name=/path to
#   another webstand binary, or name=/path:ARGS... with extra bench options, e.g. "off=target/release/webstand:--spin off")
# Env:   WEBSTAND=target/release/webstand  C=32 (connections)  D=3 (seconds per run)  ROUNDS=1
#        MODE=ka|close (close: webstand without -k, wrk with Connection: close, ab without -k)
# Output: a table of counters per 1,000 requests, one column per generator and round.
set -u
SERVER=${1:?usage: tcp-segs.sh lighttpd|nginx-tls [GENERATOR...]}; shift
GENS=("$@"); [ ${#GENS[@]} -gt 0 ] || GENS=(webstand wrk)
C=${C:-32}; D=${D:-3}; ROUNDS=${ROUNDS:-1}; MODE=${MODE:-ka}
case $MODE in ka) KA=(-k); WRK_CLOSE=() ;; close) KA=(); WRK_CLOSE=(-H 'Connection: close') ;;
  *) echo "MODE is ka or close" >&2; exit 2 ;; esac
WEBSTAND=$(realpath "${WEBSTAND:-target/release/webstand}")
if [ -z "${TCP_SEGS_NETNS:-}" ]; then
  TCP_SEGS_NETNS=1 WEBSTAND=$WEBSTAND MODE=$MODE exec unshare -n "$0" "$SERVER" "${GENS[@]}"
fi
ip link set lo up
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lab.sh"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/tcp-segs.XXXXXX"); DOC=$DIR/www; mkdir -p "$DOC"; chmod 755 "$DIR"
head -c 2048 /dev/zero | tr '\0' a > "$DOC/2k.html"
export NSTAT_HISTORY=$DIR/nstat.history
UA=$("$WEBSTAND" --version | tr ' ' /)
case $SERVER in
lighttpd) lab_up lighttpd --docroot "$DOC" --cpus 0 || exit 1 ;;
nginx-tls) lab_up nginx --tls --docroot "$DOC" --cpus 0 || exit 1 ;;
*) echo "unknown server $SERVER (lighttpd, nginx-tls)" >&2; exit 2 ;;
esac
URL=${LAB_URL}2k.html

COUNTERS="TcpOutSegs TcpInSegs TcpRetransSegs TcpExtTCPPureAcks TcpExtTCPHPAcks TcpExtTCPHPHits
  TcpExtDelayedACKs TcpExtTCPDelivered TcpExtTCPAutoCorking TcpExtTCPWantZeroWindowAdv
  TcpExtTCPToZeroWindowAdv TcpExtTCPFromZeroWindowAdv TcpExtTCPRcvCoalesce TcpExtTCPOFOQueue
  TcpExtTCPBacklogCoalesce TcpExtTCPOrigDataSent IpExtInOctets IpExtOutOctets TcpActiveOpens"
COLS=()
for r in $(seq "$ROUNDS"); do
  for g in "${GENS[@]}"; do
    case $g in
    webstand) CMD=("$WEBSTAND" bench -q --db "$DIR/history.db" --threads 1 "${KA[@]}" -c "$C" -d "${D}s" "$URL") ;;
    wrk) CMD=(wrk -t1 -c"$C" -d"${D}s" -H "User-Agent: $UA" -H 'Accept: */*' "${WRK_CLOSE[@]}" "$URL") ;;
    ab) CMD=(ab -q -t "$D" -n $((D * 400000)) -c "$C" "${KA[@]}" "$URL") ;;
    *=*) spec=${g#*=}; bin=${spec%%:*}; extra=""; [ "$spec" != "$bin" ] && extra=${spec#*:}
         CMD=("$(realpath "$bin")" bench -q --db "$DIR/history.db" --threads 1 "${KA[@]}" -c "$C" -d "${D}s" $extra "$URL")
         g=${g%%=*} ;;
    *) echo "unknown generator $g" >&2; exit 2 ;;
    esac
    nstat -n
    out=$(taskset -c 1 "${CMD[@]}" 2>&1)
    nstat -z $COUNTERS > "$DIR/$g-$r.nstat"
    reqs=$(echo "$out" | awk '/requests in/{print $1} /^Complete requests/{print $3}' | head -1)
    echo "$g round $r: ${reqs:-0} requests" >&2
    echo "requests ${reqs:-0}" >> "$DIR/$g-$r.nstat"
    COLS+=("$g-$r")
  done
done
python3 - "$DIR" "${COLS[@]}" <<'PY'
import sys
d, cols = sys.argv[1], sys.argv[2:]
vals = {}
for c in cols:
    v = {}
    for line in open(f"{d}/{c}.nstat"):
        f = line.split()
        if len(f) >= 2 and f[1].isdigit():
            v[f[0]] = int(f[1])
    vals[c] = v
names = [n for n in dict.fromkeys(k for v in vals.values() for k in v) if n != "requests"]
print(f"| per 1,000 requests ({sys.argv[1]}) | " + " | ".join(cols) + " |")
print("|---|" + "---:|" * len(cols))
print("| requests | " + " | ".join(str(vals[c].get("requests", 0)) for c in cols) + " |")
for n in names:
    cells = []
    for c in cols:
        r = vals[c].get("requests", 0)
        cells.append(f"{vals[c].get(n, 0) * 1000 / r:.1f}" if r else "-")
    print(f"| {n} | " + " | ".join(cells) + " |")
PY
