# Shared by the bench scripts here (sourced, not run): the servers' configurations that more than
# one script measures, written once so their figures compare (one worker, keep-alive unbounded).

lighttpd_conf() { # file docroot port
  cat > "$1" <<CONF
server.document-root = "$2"
server.bind = "127.0.0.1"
server.port = $3
server.max-connections = 2048
server.max-keep-alive-requests = 1000000
server.modules = ()
mimetype.assign = (".html" => "text/html")
CONF
}

self_signed() { # cert key: an ECDSA P-256 certificate for localhost
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
    -subj /CN=localhost -keyout "$2" -out "$1" 2>/dev/null
}

nginx_tls_conf() { # file docroot port protocols cert key (pid and error log beside the file)
  cat > "$1" <<CONF
worker_processes 1; daemon off; pid $1.pid; error_log $1.err;
events { worker_connections 16384; }
http { access_log off; sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 1000000;
  open_file_cache max=2000;
  server { listen 127.0.0.1:$3 ssl backlog=4096; root $2; ssl_protocols $4;
    ssl_certificate $5; ssl_certificate_key $6; ssl_session_cache shared:S:10m; } }
CONF
}
