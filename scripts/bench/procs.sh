# Shared by the bench scripts here (sourced, not run): a process tree's CPU ticks, and waiting for a
# server's line of readiness.
tree_ticks() { # utime+stime of a process and its descendants, with the children they reaped
  # (cutime+cstime: a fork-per-connection server's children live for one request)
  local total=0 p todo=$1 seen=""
  while :; do
    set -- $todo; [ $# -gt 0 ] || break; p=$1; shift; todo="$*"
    case " $seen " in *" $p "*) continue;; esac; seen="$seen $p"
    [ -r /proc/$p/stat ] && total=$((total + $(awk '{print $14+$15+$16+$17}' /proc/$p/stat)))
    todo="$todo $(ps -o pid= --ppid $p | tr '\n' ' ')"
  done; echo $total; }

wait_line() { # file text: until the file has the text (60 s)
  local i; for i in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "no '$2' in $1" >&2; return 1
}
