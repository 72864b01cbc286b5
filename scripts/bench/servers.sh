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

apache_conf() { # file docroot port: the event MPM, one child whose 300 threads cover 256 clients
  local dir user=""
  dir=$(cd "$(dirname "$1")" && pwd) # apache takes its paths relative to ServerRoot
  [ "$(id -u)" = 0 ] && user="User nobody
Group nogroup"
  cat > "$1" <<CONF
ServerRoot $dir
ServerName 127.0.0.1
Listen 127.0.0.1:$3
ListenBacklog 4096
PidFile $dir/apache2.pid
ErrorLog $dir/apache2-error.log
DefaultRuntimeDir $dir
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so
StartServers 1
ServerLimit 1
ThreadLimit 300
ThreadsPerChild 300
MaxRequestWorkers 300
MinSpareThreads 1
MaxSpareThreads 300
MaxConnectionsPerChild 0
$user
KeepAlive On
MaxKeepAliveRequests 0
EnableSendfile On
TypesConfig /dev/null
AddType text/html .html
DocumentRoot $2
<Directory />
  Require all granted
  AllowOverride None
</Directory>
CONF
}

caddy_conf() { # file docroot port: no admin endpoint, no automatic HTTPS (run it with GOMAXPROCS=1)
  cat > "$1" <<CONF
{
  admin off
  auto_https off
  storage file_system $(dirname "$1")/caddy-data
}
http://:$3 {
  bind 127.0.0.1
  root * $2
  file_server
}
CONF
}
