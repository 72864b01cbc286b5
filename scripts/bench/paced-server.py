#!/usr/bin/env python3
# A server of known capacity for scripts/bench/max-rate.sh: HTTP/1.1 keep-alive on 127.0.0.1, a
# thread per connection, answering at most RATE requests per second in all. Each request takes the
# next free slot of one shared clock (slots 1/RATE apart) and is answered when its slot comes: below
# RATE nothing waits, above it a queue grows and latency with it (tests/common/paced.rs is the same
# server for the tests). Prints `port=N` once it listens; stops on SIGTERM or SIGINT.
# Usage: scripts/bench/paced-server.py RATE
import signal
import socket
import sys
import threading
import time

REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


class Clock:
    """The shared clock: each request's slot, 1/rate after the previous one's."""

    def __init__(self, rate):
        self.gap = 1.0 / rate
        self.next = time.monotonic()
        self.lock = threading.Lock()

    def slot(self):
        with self.lock:
            slot = max(self.next, time.monotonic())
            self.next = slot + self.gap
            return slot


def answer(conn, clock):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pending = b""
    with conn:
        while True:
            while b"\r\n\r\n" in pending:
                _, pending = pending.split(b"\r\n\r\n", 1)
                wait = clock.slot() - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                try:
                    conn.sendall(REPLY)
                except OSError:
                    return
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            pending += data


def main():
    if len(sys.argv) != 2 or float(sys.argv[1]) <= 0:
        sys.exit("usage: paced-server.py RATE (requests per second, more than 0)")
    clock = Clock(float(sys.argv[1]))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    print(f"port={listener.getsockname()[1]}", flush=True)
    try:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=answer, args=(conn, clock), daemon=True).start()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
