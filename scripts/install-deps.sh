#!/usr/bin/env bash
# Installs what webstand's tests, lab and benchmarks use, from Debian's packages (needs root or sudo).
# Idempotent: packages already present are skipped quickly, and a run that installs nothing changes
# nothing. It touches only what it installs: the lab starts its own server instances on loopback ports,
# so a service this run installs is kept from starting (a policy-rc.d of its own, made only where none
# exists) and stopped if it started anyway; services that were already there are left as they are.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
# fcgiwrap: the CGI bridge the lab puts behind nginx, caddy and h2o; iproute2 (ss) and perl: the lab's
# tests read listen backlogs and run a CPU-burning CGI program; iproute2 (ip, tc) and util-linux
# (unshare): the diagnosis tests' own network namespaces, a veth pair and its shaped rate; lighttpd-mod-openssl: lighttpd's TLS
# (`compare --tls`; the others' TLS is in their main packages, apache's as mod_ssl).
PKGS=(nginx-light lighttpd lighttpd-mod-openssl apache2 apache2-utils h2o caddy mini-httpd fcgiwrap wrk curl time procps
      util-linux iproute2 perl chromium python3
      # strace: tests/bench_syscalls.rs counts the generator's system calls per request.
      strace
      # slowhttptest: `compare --probe`'s slowloris and slow-read attacks (lab::slowhttp, tests/lab_probe.rs).
      slowhttptest
      # nghttp2-client: h2load, the reference tests/bench_h2.rs counts `bench --h2` against; nghttp,
      # which tests/lab_h2.rs reads the SETTINGS every lab server announces with.
      nghttp2-client
      # openssl: tests/serve_tls.rs makes its certificates and drives `openssl s_client` with it.
      openssl
      # issue 11: HTTP/2 clients against `webstand serve` (curl --http2 above, nghttp and h2load) and
      # the raw-frame hostile client of tests/serve_h2_hostile.rs (Debian's python3-h2: its hpack).
      nghttp2-client python3-h2
      # issue 12: PHP-FPM behind every server, apache's mod_php, php-cli (the lab installs WordPress
      # with it), a private MariaDB, and Debian's WordPress with its twentytwentyone theme.
      php8.2-fpm php8.2-cli php8.2-mysql libapache2-mod-php8.2 mariadb-server wordpress
      wordpress-theme-twentytwentyone lighttpd-mod-deflate
      # `--features mpi` (mpirun -np N webstand bench|sweep): OpenMPI, and libclang for rsmpi's bindings.
      openmpi-bin libopenmpi-dev libclang-dev
      # HTTP/3: the venv aioquic is installed into (below).
      python3-venv
      # `--metrics-listen`: a real Prometheus scrapes it in tests/watch_prometheus.rs (promtool checks
      # the exposition); tmux: tests/watch_live.rs runs `--live` in a real terminal.
      prometheus tmux)
# The services the packages above install, as package:service.
SERVICES=(nginx-light:nginx lighttpd:lighttpd apache2:apache2 h2o:h2o caddy:caddy mini-httpd:mini-httpd
          fcgiwrap:fcgiwrap php8.2-fpm:php8.2-fpm mariadb-server:mariadb prometheus:prometheus)
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
missing=()
# Installed means installed: a package removed with its configuration kept is missing too.
installed=" $(dpkg-query -W -f='${Package}:${db:Status-Status} ' "${PKGS[@]}" 2>/dev/null || true) "
for p in "${PKGS[@]}"; do [[ $installed == *" $p:installed "* ]] || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  # Services must not start on install: a policy-rc.d that says no keeps their ports free. One that is
  # already there is the machine's own and is kept; ours is removed however this script ends.
  policy=/usr/sbin/policy-rc.d
  deny_starts=$'#!/bin/sh\n# install-deps.sh: no service starts while it installs packages\nexit 101'
  if [ ! -e "$policy" ] && [ ! -L "$policy" ]; then
    trap '[ "$($SUDO cat "$policy" 2>/dev/null)" != "$deny_starts" ] || $SUDO rm -f "$policy"' EXIT
    trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM
    printf '%s\n' "$deny_starts" | $SUDO tee "$policy" >/dev/null; $SUDO chmod +x "$policy"
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # A service of a package installed just now may still have started (the machine's own policy-rc.d
  # allowed it): stop it, so that it holds no port the lab or the tests pick.
  installed_services=()
  for entry in "${SERVICES[@]}"; do
    if [[ " ${missing[*]} " == *" ${entry%%:*} "* ]]; then installed_services+=("${entry#*:}"); fi
  done
  if [ ${#installed_services[@]} -gt 0 ]; then
    echo "install-deps: stopping the services installed just now: ${installed_services[*]}"
    for s in "${installed_services[@]}"; do ($SUDO service "$s" stop || true) >/dev/null 2>&1; done
  fi
fi
# HTTP/3's independent references (curl here has no HTTP/3; h2load is built without QUIC):
# - aioquic from PyPI, pinned, in a venv of its own under the user's data directory (outside any
#   checkout: every worktree shares it and `cargo clean` keeps it); tests/common/h3.rs finds it there
#   (or at $WEBSTAND_AIOQUIC_VENV). Its client and lower layers drive tests/serve_h3*.rs.
AIOQUIC_VERSION=1.7.2
AIOQUIC_VENV="${WEBSTAND_AIOQUIC_VENV:-${XDG_DATA_HOME:-$HOME/.local/share}/webstand/aioquic-$AIOQUIC_VERSION}"
if ! "$AIOQUIC_VENV/bin/python" -c "import aioquic, sys; sys.exit(aioquic.__version__ != '$AIOQUIC_VERSION')" 2>/dev/null; then
  echo "install-deps: installing aioquic $AIOQUIC_VERSION into $AIOQUIC_VENV"
  /usr/bin/python3 -m venv "$AIOQUIC_VENV"
  "$AIOQUIC_VENV/bin/pip" install -q --disable-pip-version-check "aioquic==$AIOQUIC_VERSION"
fi
# junitparser from PyPI, pinned, in a venv of its own beside aioquic's: the JUnit reader CI tools
# build on, which tests/common/junit.rs reads every `--junit` file with.
JUNITPARSER_VERSION=4.0.2
JUNITPARSER_VENV="${WEBSTAND_JUNITPARSER_VENV:-${XDG_DATA_HOME:-$HOME/.local/share}/webstand/junitparser-$JUNITPARSER_VERSION}"
if ! "$JUNITPARSER_VENV/bin/python" -c "import junitparser, sys; sys.exit(junitparser.version != '$JUNITPARSER_VERSION')" 2>/dev/null; then
  echo "install-deps: installing junitparser $JUNITPARSER_VERSION into $JUNITPARSER_VENV"
  /usr/bin/python3 -m venv "$JUNITPARSER_VENV"
  "$JUNITPARSER_VENV/bin/pip" install -q --disable-pip-version-check "junitparser==$JUNITPARSER_VERSION"
fi
# - oha with its `http3` feature (crates.io; built here, which takes several minutes, so only when
#   the pinned version with that feature is missing): the second client of tests/serve_h3_oha.rs.
OHA_VERSION=1.16.0
if ! python3 - "$OHA_VERSION" <<'PY' 2>/dev/null
import json, os, sys
installed = json.load(open(os.path.expanduser("~/.cargo/.crates2.json")))["installs"]
sys.exit(not any(k.startswith(f"oha {sys.argv[1]} ") and "http3" in v["features"]
                 for k, v in installed.items()))
PY
then
  echo "install-deps: building oha $OHA_VERSION with HTTP/3 (cargo install; several minutes)"
  cargo install --quiet --locked --version "$OHA_VERSION" --features http3 oha
fi
echo "install-deps: ready ($(nginx -v 2>&1 | tr -d '\n'); $(wrk -v 2>&1 | head -1 | cut -c1-20))"
