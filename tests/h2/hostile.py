"""A raw HTTP/2 client for tests/serve_h2*.rs: plays one case (hostile, or one that needs frames
no ready-made client sends: bodies past a limit, streams interleaved) against a server
(prior-knowledge h2c) and prints what the server did, one line per event the test asserts on:
"GOAWAY <code name>", "RST <stream> <code name>", "STATUS <stream> <status>", "END <stream>"
(the END_STREAM of an answer), "CLOSED".
Frames are written by hand (struct); header blocks by Debian's python3-hpack (python3-h2's)."""
import socket
import struct
import sys
import time

import hpack

CODES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 3: "FLOW_CONTROL_ERROR",
         5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR", 7: "REFUSED_STREAM", 8: "CANCEL",
         9: "COMPRESSION_ERROR", 11: "ENHANCE_YOUR_CALM"}
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS = 0x1, 0x4


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def block(fields, enc=None):
    return (enc or hpack.Encoder()).encode(fields)


def get(path="/2k.html", extra=()):
    return [(":method", "GET"), (":scheme", "http"), (":path", path), (":authority", "localhost")] + list(extra)


class Client:
    def __init__(self, port, settings=b""):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.send(PREFACE + frame(SETTINGS, 0, 0, settings))

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def request(self, stream, fields, end_stream=True):
        flags = END_HEADERS | (END_STREAM if end_stream else 0)
        self.send(frame(HEADERS, flags, stream, self.enc.encode(fields)))

    def events(self, until, limit=10.0):
        """Reads frames, printing events, until `until(line)` is true, the peer closes, or `limit`."""
        deadline = time.time() + limit
        while time.time() < deadline:
            while len(self.buf) >= 9:
                n = struct.unpack(">I", b"\0" + self.buf[:3])[0]
                if len(self.buf) < 9 + n:
                    break
                kind, flags, stream = self.buf[3], self.buf[4], struct.unpack(">I", self.buf[5:9])[0]
                payload, self.buf = self.buf[9:9 + n], self.buf[9 + n:]
                line = self.event(kind, flags, stream, payload)
                if line:
                    print(line, flush=True)
                    if any([until(one) for one in line.split("\n")]):
                        return line
            self.sock.settimeout(max(0.01, deadline - time.time()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                break
            except OSError:
                data = b""
            if not data:
                print("CLOSED", flush=True)
                return "CLOSED"
            self.buf += data
        print("TIMEOUT", flush=True)
        return "TIMEOUT"

    def event(self, kind, flags, stream, payload):
        if kind == GOAWAY:
            return "GOAWAY " + CODES.get(struct.unpack(">I", payload[4:8])[0], "?")
        if kind == RST:
            return "RST %d %s" % (stream, CODES.get(struct.unpack(">I", payload)[0], "?"))
        if kind == HEADERS:
            fields = dict(self.dec.decode(payload))
            status = "STATUS %d %s" % (stream, fields.get(":status"))
            return status + ("\nEND %d" % stream if flags & END_STREAM else "")
        if kind == DATA and flags & END_STREAM:
            return "END %d" % stream
        return None


def post(path, length=None):
    fields = [(":method", "POST")] + get(path)[1:]
    return fields + ([("content-length", str(length))] if length is not None else [])


def body_case(c, name, extra):
    """Request bodies: `limit` is the server's --max-body."""
    limit = int(extra[0])
    chunk = b"b" * 16384
    if name == "body_declared_over":
        # The length alone is past the limit: 413 before any body is sent.
        c.request(1, post("/2k.html", limit + 1), end_stream=False)
        c.events(lambda l: l.startswith("RST 1"))
        c.send(frame(DATA, 0, 1, chunk))  # already on its way: ignored, not an error
    elif name == "body_grows_over":
        # No length: 413 when the body crosses the limit (sent within the first 64 KiB window).
        c.request(1, post("/2k.html"), end_stream=False)
        c.send(frame(DATA, 0, 1, chunk) * (limit // len(chunk) + 1))
        c.events(lambda l: l.startswith("RST 1"))
        c.send(frame(DATA, END_STREAM, 1, chunk))
    elif name in ("body_shorter", "body_longer"):
        c.request(1, post("/2k.html", 10), end_stream=False)
        c.send(frame(DATA, END_STREAM, 1, b"x" * (5 if name == "body_shorter" else 20)))
    c.request(3, get())
    c.events(lambda l: l.startswith("STATUS 3"))


def case(name, port, io_timeout):
    c = Client(port)
    ok = get()
    if name == "rapid_reset":
        burst = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, s, block(ok, c.enc))
                         + frame(RST, 0, s, struct.pack(">I", 8)) for s in range(1, 4001, 2))
        c.send(burst)
        c.events(lambda l: l.startswith("GOAWAY"))
    elif name in ("continuation_flood", "continuation_empty"):
        c.send(frame(HEADERS, 0, 1, block(ok, c.enc)))
        piece = b"" if name == "continuation_empty" else b"x" * 16000
        c.send(b"".join(frame(CONTINUATION, 0, 1, piece) for _ in range(300)))
        c.events(lambda l: l == "CLOSED")
    elif name == "hpack_bomb":
        big = ("x-big", "b" * 4000)
        c.request(1, ok + [big] * 200)
        c.request(3, ok)
        c.events(lambda l: l.startswith("STATUS 3"))
    elif name in ("settings_flood", "ping_flood", "window_update_flood"):
        one = {"settings_flood": frame(SETTINGS, 0, 0, b""),
               "ping_flood": frame(PING, 0, 0, b"12345678"),
               "window_update_flood": frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1))}[name]
        c.send(one * 20000)
        c.events(lambda l: l.startswith("GOAWAY"))
    elif name == "empty_data_flood":
        c.request(1, [(":method", "POST")] + ok[1:], end_stream=False)
        c.send(frame(DATA, 0, 1, b"") * 20000)
        c.events(lambda l: l.startswith("GOAWAY"))
    elif name == "too_many_streams":
        for s in range(1, 2 * 200, 2):
            c.request(s, [(":method", "POST")] + ok[1:], end_stream=False)
        c.events(lambda l: "REFUSED_STREAM" in l)
    elif name == "slow_read":
        c = Client(port, struct.pack(">HI", 4, 0))
        c.request(1, get("/big.bin"))
        c.events(lambda l: l == "CLOSED", limit=io_timeout + 10)
    elif name == "idle":
        c.events(lambda l: l == "CLOSED", limit=io_timeout + 10)
    elif name.startswith("body_"):
        body_case(c, name, sys.argv[4:])
    elif name == "interleaved":
        # Each path in order on streams 1, 3, 5...; every answer is read to its end.
        paths = sys.argv[4:]
        for i, path in enumerate(paths):
            c.request(2 * i + 1, get(path))
        ends = set()

        def all_ended(line):
            if line.startswith("END"):
                ends.add(line)
            return len(ends) == len(paths)
        c.events(all_ended, limit=20)
    elif name == "malformed":
        bad = {
            "uppercase": ok + [("X-Upper", "1")],
            "connection": ok + [("connection", "keep-alive")],
            "te": ok + [("te", "gzip")],
            "no_path": [f for f in ok if f[0] != ":path"],
            "no_method": [f for f in ok if f[0] != ":method"],
            "dup_path": ok + [(":path", "/again")],
            "pseudo_after": ok[:1] + [("x-a", "b")] + ok[1:],
            "empty_path": [(":method", "GET"), (":scheme", "http"), (":path", ""), (":authority", "x")],
        }[sys.argv[5]]
        c.request(1, bad)
        c.request(3, ok)
        c.events(lambda l: l.startswith("STATUS 3"))


if __name__ == "__main__":
    case(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
