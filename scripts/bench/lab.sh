# Shared by the bench scripts here (sourced, not run): the servers they measure, started by
# `webstand lab up` on the lab's own configs (crates/lab/src/servers, docs/LAB-CONFIGS.md), so a
# script's nginx is the nginx `webstand compare` measures and no script writes a config of its own.
# One server at a time: lab_up starts it in the background and returns once it printed ready=1;
# lab_down (also run on the script's exit) stops it with SIGTERM and waits until the lab has stopped
# everything it started.
#   lab_up SERVER [lab up options...]   e.g. lab_up nginx --tls --docroot "$DOC" --cpus 0
#     uses $LAB_BIN (default $WEBSTAND) as the `webstand` binary: for the builtin server, the build
#     whose `serve` is measured
#     sets LAB_URL (http[s]://127.0.0.1:PORT/), LAB_PORT, LAB_PID (the server's process: its tree is
#     the server's CPU), LAB_FPM (PHP-FPM's pid with --php, else empty), LAB_CA (with --tls)
#   lab_get KEY: any other of its key=value lines (version, docroot, cpus)

LAB_UP=""    # the pid of the running `webstand lab up`
LAB_OUT=""   # its stdout (the key=value lines), then its stderr in $LAB_OUT.err

lab_get() { sed -n "s/^$1=//p" "$LAB_OUT" | tail -1; }

lab_up() {
  lab_down
  local bin=${LAB_BIN:-${WEBSTAND:?WEBSTAND names the webstand binary}}
  LAB_OUT=$(mktemp "${TMPDIR:-/tmp}/lab-up.XXXXXX")
  "$bin" lab up "$@" >"$LAB_OUT" 2>"$LAB_OUT.err" &
  LAB_UP=$!
  local i
  for i in $(seq 1200); do # 60 s: PHP-FPM and apache take a few seconds on a busy machine
    grep -qx 'ready=1' "$LAB_OUT" && break
    if ! kill -0 "$LAB_UP" 2>/dev/null; then
      wait "$LAB_UP" 2>/dev/null || true; LAB_UP=""
      echo "webstand lab up $* failed: $(tail -3 "$LAB_OUT.err")" >&2
      return 1
    fi
    sleep 0.05
  done
  if ! grep -qx 'ready=1' "$LAB_OUT"; then
    echo "webstand lab up $* was not ready within 60 s" >&2; lab_down; return 1
  fi
  LAB_URL=$(lab_get url); LAB_PORT=$(lab_get port); LAB_PID=$(lab_get pid)
  LAB_FPM=$(lab_get php_fpm_pid); LAB_CA=$(lab_get ca)
  echo "  lab up $*: $(lab_get server) $(lab_get version) at $LAB_URL, pid $LAB_PID, CPUs $(lab_get cpus)" >&2
}

lab_down() {
  if [ -n "$LAB_UP" ]; then
    kill -TERM "$LAB_UP" 2>/dev/null
    wait "$LAB_UP" 2>/dev/null || true
    LAB_UP=""
  fi
  [ -n "$LAB_OUT" ] && rm -f "$LAB_OUT" "$LAB_OUT.err"
  LAB_OUT=""
  return 0
}
trap lab_down EXIT
trap 'lab_down; exit 130' INT
trap 'lab_down; exit 143' TERM
trap 'lab_down; exit 129' HUP
