#!/usr/bin/env python3
"""HTTP/2 seeds from real peers: h2load talks to nginx (h2c, prior knowledge) on loopback through a
recording relay, and each side's bytes become seeds of the HTTP/2 targets. Usage: h2.py DIR (writes
DIR/TARGET/capture-*). Everything listens on 127.0.0.1 and stops by itself within a few seconds."""
import os, socket, subprocess, sys, tempfile, threading, time

out_dir = sys.argv[1]
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, deadline):
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"capture: nothing listens on {port}")


def relay(client, upstream, into):
    """Copies one direction until it closes, keeping what passed."""
    try:
        while data := client.recv(65536):
            into.extend(data)
            upstream.sendall(data)
    except OSError:
        pass
    finally:
        try:
            upstream.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def frames(stream):
    """(type, flags, payload) of each whole frame."""
    at = 0
    while at + 9 <= len(stream):
        n = int.from_bytes(stream[at:at + 3], "big")
        if at + 9 + n > len(stream):
            break
        yield stream[at + 3], stream[at + 4], stream[at + 9:at + 9 + n]
        at += 9 + n


def header_blocks(stream):
    """HPACK blocks of HEADERS frames (padding and priority removed), each with a length byte."""
    out = bytearray()
    for kind, flags, payload in frames(stream):
        if kind != 1:
            continue
        pad = 0
        if flags & 0x8:
            pad, payload = payload[0], payload[1:]
        if flags & 0x20:
            payload = payload[5:]
        block = payload[:len(payload) - pad]
        if len(block) < 256:
            out.append(len(block))
            out.extend(block)
    return bytes(out)


def save(target, name, data):
    os.makedirs(os.path.join(out_dir, target), exist_ok=True)
    with open(os.path.join(out_dir, target, name), "wb") as f:
        f.write(data)


with tempfile.TemporaryDirectory() as tmp:
    nginx_port, relay_port = free_port(), free_port()
    os.makedirs(f"{tmp}/www")
    with open(f"{tmp}/www/index.html", "w") as f:
        f.write("<p>hello</p>\n" * 40)
    with open(f"{tmp}/nginx.conf", "w") as f:
        f.write(f"""daemon off; master_process off; worker_processes 1; pid {tmp}/nginx.pid;
error_log {tmp}/error.log; events {{ worker_connections 64; }}
http {{ access_log off; client_body_temp_path {tmp}; proxy_temp_path {tmp}; fastcgi_temp_path {tmp};
  uwsgi_temp_path {tmp}; scgi_temp_path {tmp};
  server {{ listen 127.0.0.1:{nginx_port} http2; root {tmp}/www; }} }}
""")
    nginx = subprocess.Popen(["nginx", "-p", tmp, "-c", f"{tmp}/nginx.conf"])
    try:
        wait_listening(nginx_port, time.time() + 10)
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", relay_port))
        listener.listen(1)
        sent, answered = bytearray(), bytearray()

        def serve_one():
            client, _ = listener.accept()
            upstream = socket.create_connection(("127.0.0.1", nginx_port))
            back = threading.Thread(target=relay, args=(upstream, client, answered))
            back.start()
            relay(client, upstream, sent)
            back.join(10)

        t = threading.Thread(target=serve_one)
        t.start()
        subprocess.run(["h2load", "-n", "12", "-c", "1", "-m", "4",
                        f"http://127.0.0.1:{relay_port}/index.html"],
                       stdout=subprocess.DEVNULL, timeout=30, check=True)
        t.join(10)
    finally:
        nginx.terminate()
        nginx.wait(10)
    if not sent.startswith(PREFACE) or not answered:
        sys.exit("capture: no HTTP/2 exchange was seen")
    sent, answered = bytes(sent), bytes(answered)
    save("serve_h2", "capture-h2load", b"\0" + sent)
    save("h2_frames", "capture-h2load", sent[len(PREFACE):])
    save("h2_frames", "capture-nginx", answered)
    save("hpack_server", "capture-h2load", header_blocks(sent[len(PREFACE):]))
    save("hpack_client", "capture-nginx", header_blocks(answered))
    print(f"capture: h2load sent {len(sent)} bytes, nginx answered {len(answered)}")
