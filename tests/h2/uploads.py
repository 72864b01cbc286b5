"""An HTTP/2 client for the serve tests of request bodies streamed to FastCGI (prior-knowledge h2c),
over hostile.py's frames and jobs.py's reader. It sends bodies as DATA within the windows the
server grants (the stream's and the connection's) and prints the lines the test asserts on:
- uploads PORT PATH FILE...: each FILE PUT to PATH on streams 1, 3, 5... at once, interleaved;
  "ANSWER <stream> <status> <body>" as each answer ends, then "DONE".
- slow PORT PATH FILE MARKER GO: FILE PUT to PATH, whose script reads a little, creates MARKER
  and reads on only once GO exists. Once MARKER exists and the server has granted no window for
  a second, "HELD <bytes sent>" (what the server and the backend have taken of the body by then);
  then GO is created and the body sent to its end: "ANSWER 1 <status> <body>".
- error KIND PORT SERVER_PID PATH FILE [MARKER]: /b.php first (the connection is accepted and
  its backend connection kept), the server's descriptors counted, then FILE PUT to PATH on stream 3
  and cut short by KIND — longer (bytes past its content-length), shorter (END_STREAM before
  them all), reset (RST_STREAM CANCEL after 100 000 bytes), close (the connection closed after
  100 000 bytes) or backend (the script's process, whose pid MARKER holds, killed mid-body) —
  the server's events printed, /b.php again on stream 5 (not for close), and once the server's
  descriptors are back to their count (10 s at most; for close, two fewer: the connection's socket
  and the kept backend connection its job had taken): "FDS <before> <after>"."""
import os
import signal
import socket
import struct
import sys
import time

from hostile import DATA, END_STREAM, RST, WINDOW_UPDATE, frame, get
from jobs import Reader, fds, wait_for

FRAME = 16384
WINDOW = 65535


def put(path, length):
    return [(":method", "PUT")] + get(path)[1:] + [("content-length", str(length))]


class Uploader(Reader):
    """A client that sends bodies within the server's windows and notes each answer."""

    def __init__(self, port):
        super().__init__(port)
        self.conn_window = WINDOW
        self.windows = {}
        self.statuses = {}
        self.ended = set()
        self.granted_at = time.time()

    def event(self, kind, flags, stream, payload):
        if kind == WINDOW_UPDATE:
            inc = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
            if stream == 0:
                self.conn_window += inc
            else:
                self.windows[stream] = self.windows.get(stream, 0) + inc
                self.granted_at = time.time()
        line = super().event(kind, flags, stream, payload)
        for one in (line or "").split("\n"):
            if one.startswith("STATUS"):
                self.statuses[stream] = one.split()[2]
            if one.startswith("END") or one.startswith("RST"):
                self.ended.add(stream)
        return line

    def poll(self, timeout):
        """Reads what arrived within `timeout`, acting on each frame; False once closed."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 20)
        except socket.timeout:
            return True
        except OSError:
            return False
        if not data:
            return False
        self.buf += data
        while len(self.buf) >= 9:
            n = struct.unpack(">I", b"\0" + self.buf[:3])[0]
            if len(self.buf) < 9 + n:
                break
            kind, flags = self.buf[3], self.buf[4]
            stream = struct.unpack(">I", self.buf[5:9])[0]
            payload, self.buf = self.buf[9:9 + n], self.buf[9 + n:]
            line = self.event(kind, flags, stream, payload)
            if line and ("RST" in line or "GOAWAY" in line):
                print(line, flush=True)
        return True

    def open(self, stream, path, length):
        self.windows[stream] = WINDOW
        self.request(stream, put(path, length), end_stream=False)

    def send_some(self, stream, body, pos, end):
        """Sends body[pos:end] as far as the windows allow; the new position."""
        while pos < end and stream not in self.ended:
            n = min(FRAME, self.windows[stream], self.conn_window, end - pos)
            if n <= 0:
                break
            last = pos + n == len(body)
            self.send(frame(DATA, END_STREAM if last else 0, stream, body[pos:pos + n]))
            self.windows[stream] -= n
            self.conn_window -= n
            pos += n
        return pos

    def answer(self, stream):
        body = self.bodies.get(stream, b"").decode("latin-1")
        print("ANSWER %d %s %s" % (stream, self.statuses.get(stream), body), flush=True)


def uploads(c, path, files):
    bodies = {2 * i + 1: open(f, "rb").read() for i, f in enumerate(files)}
    pos = {s: 0 for s in bodies}
    for s, body in bodies.items():
        c.open(s, path, len(body))
    deadline = time.time() + 120
    while len(c.ended) < len(bodies) and time.time() < deadline:
        for s, body in bodies.items():
            pos[s] = c.send_some(s, body, pos[s], len(body))
        if not c.poll(0.05):
            break
    for s in bodies:
        c.answer(s)
    print("DONE", flush=True)


def slow(c, path, file, marker, go):
    body = open(file, "rb").read()
    c.open(1, path, len(body))
    pos, held, deadline = 0, None, time.time() + 120
    while 1 not in c.ended and time.time() < deadline:
        pos = c.send_some(1, body, pos, len(body))
        if not c.poll(0.05):
            break
        quiet = time.time() - c.granted_at > 1.0
        if held is None and (pos == len(body) or (os.path.exists(marker) and quiet)):
            held = pos
            print("HELD %d" % held, flush=True)
            open(go, "w").close()
    c.answer(1)


def error(c, kind, pid, path, file, marker):
    c.request(1, get("/b.php"))
    c.events(lambda l: l == "END 1")
    before = fds(pid)
    body = open(file, "rb").read()
    c.open(3, path, len(body))
    cut = {"longer": len(body) + 10, "shorter": len(body) // 2}.get(kind, 100000)
    sent = body + b"x" * 10 if kind == "longer" else body
    pos, deadline = 0, time.time() + 60
    while 3 not in c.ended and time.time() < deadline:
        pos = c.send_some(3, sent, pos, cut)
        if kind == "backend" and os.path.exists(marker):
            os.kill(int(open(marker).read()), signal.SIGKILL)
            kind = "killed"
        if pos == cut and kind in ("shorter", "reset", "close"):
            break
        if not c.poll(0.05):
            break
    if kind == "shorter":
        c.send(frame(DATA, END_STREAM, 3, b""))
    elif kind == "reset":
        c.send(frame(RST, 0, 3, struct.pack(">I", 8)))
        c.ended.add(3)
    elif kind == "close":
        c.sock.close()
        print("CLOSED_BY_CLIENT", flush=True)
    if kind != "close":
        while 3 not in c.ended and time.time() < deadline and c.poll(0.05):
            pass
        print("STREAM 3 %s" % c.statuses.get(3), flush=True)
        c.request(5, get("/b.php"))
        c.events(lambda l: l == "END 5")
    # A closed connection also gives back its own socket and the kept backend connection its
    # job had taken (and closed).
    want = before - 2 if kind == "close" else before
    deadline = time.time() + 10
    while fds(pid) != want and time.time() < deadline:
        time.sleep(0.02)
    print("FDS %d %d" % (before, fds(pid)), flush=True)


def main():
    at = 2 if sys.argv[1] == "error" else 1
    name, port, args = sys.argv[at], int(sys.argv[at + 1]), sys.argv[at + 2:]
    c = Uploader(port)
    if name == "uploads":
        uploads(c, args[0], args[1:])
    elif name == "slow":
        slow(c, *args)
    else:
        pid, path, file = args[:3]
        error(c, name, pid, path, file, args[3] if len(args) > 3 else "")


if __name__ == "__main__":
    main()
