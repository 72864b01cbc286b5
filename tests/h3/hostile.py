"""Hostile HTTP/3 and QUIC clients for tests/serve_h3_hostile.rs, over real UDP sockets on
loopback. QUIC itself is aioquic's lower layer (QuicConnection, fed and drained here by hand, so a
case can send what no well-behaved client sends); HTTP/3 frames and QPACK sections are written by
hand (pylsqpack, aioquic's QPACK, encodes the valid requests). Each case prints one JSON object.
Usage: hostile.py PORT CAFILE CASE [ARGS]. Cases:
- h3 cases (one connection; "closed" is the connection's close code, "resets" the streams reset
  with their codes, "statuses" the answers' statuses, "goaway" a GOAWAY's stream ID):
  qpack-past-table, qpack-dynamic, data-on-control, missing-settings, second-control,
  http2-frame, truncated-frame, encoder-insert, malformed-request, too-many-streams,
  after-goaway FLAG (waits for FLAG, a file the test makes once it has sent SIGTERM to the
  server, then for GOAWAY; then opens a stream past it).
- never-completes HOLD: one Initial flight, no answer ever; prints "ANSWERED" once the server's
  first datagram came, then listens HOLD s: "bytes_in"/"bytes_out" on the wire.
- flood N PORTS: N Initials of new connections from PORTS source ports, never answered; then
  listens 2 s: "retries" (Retry packets), "answered_ports", and "worst_ratio", the most bytes the
  server sent an address over what it received from it.
- stateless-reset QUIET: a connection silent for QUIET s (past the idle timeout), then a packet
  on it: the reply's length, whether it looks like a short header and ends with the token.
- version-negotiation: an Initial of an unknown version: the versions the server offers.
- garbage N: N datagrams of random bytes and sizes (no answer expected)."""
import json
import os
import random
import socket
import struct
import sys
import time

import pylsqpack
from aioquic.h3.connection import H3_ALPN
from aioquic.quic import events
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection

PORT, CAFILE = int(sys.argv[1]), sys.argv[2]
ADDR = ("127.0.0.1", PORT)


def varint(v):
    for size, tag in ((1, 0), (2, 0x40), (4, 0x80), (8, 0xC0)):
        if v < 1 << (8 * size - 2):
            b = bytearray(v.to_bytes(size, "big"))
            b[0] |= tag
            return bytes(b)
    raise ValueError(v)


def frame(kind, payload):
    return varint(kind) + varint(len(payload)) + payload


SETTINGS = frame(0x4, b"")
CONTROL = varint(0x0) + SETTINGS


def section(fields):
    """A valid QPACK field section (static table and literals: the server gives no table)."""
    encoder = pylsqpack.Encoder()
    encoder.apply_settings(max_table_capacity=0, blocked_streams=0)
    _, data = encoder.encode(0, fields)
    return data


def get(path="/2k.html", extra=()):
    return frame(0x1, section([(b":method", b"GET"), (b":scheme", b"https"),
                               (b":authority", b"localhost"), (b":path", path.encode()),
                               *extra]))


class Client:
    """One QUIC connection driven by hand over a UDP socket of its own."""

    def __init__(self, handshake=True):
        config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN,
                                   server_name="localhost")
        config.load_verify_locations(CAFILE)
        self.quic = QuicConnection(configuration=config)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.result = {"resets": {}, "statuses": {}, "closed": None, "goaway": None}
        self.control = b""
        self.data = {}
        self.connected = False
        self.quic.connect(ADDR, now=time.time())
        self.flush()
        if handshake:
            self.run(lambda: self.connected, 10)
            assert self.connected, "no handshake"

    def flush(self):
        for data, addr in self.quic.datagrams_to_send(now=time.time()):
            self.sock.sendto(data, addr)

    def run(self, done, limit):
        """Exchanges datagrams until done() or the connection ends, for `limit` s at most."""
        deadline = time.time() + limit
        while not done() and self.result["closed"] is None and time.time() < deadline:
            timer = self.quic.get_timer()
            wait = min(deadline, timer if timer else deadline) - time.time()
            self.sock.settimeout(max(wait, 0.001))
            try:
                data, addr = self.sock.recvfrom(65536)
                self.quic.receive_datagram(data, addr, now=time.time())
            except socket.timeout:
                if timer and time.time() >= timer:
                    self.quic.handle_timer(now=time.time())
            self.events()
            self.flush()

    def events(self):
        while (e := self.quic.next_event()) is not None:
            if isinstance(e, events.HandshakeCompleted):
                self.connected = True
            elif isinstance(e, events.ConnectionTerminated):
                self.result["closed"] = e.error_code
            elif isinstance(e, events.StreamReset):
                self.result["resets"][e.stream_id] = e.error_code
            elif isinstance(e, events.StreamDataReceived):
                if e.stream_id == 3:
                    self.control += e.data
                    self.goaway()
                elif e.stream_id % 4 == 0:
                    self.answer(e.stream_id, e.data, e.end_stream)

    def goaway(self):
        at = 1
        while len(self.control) > at + 1:
            kind, at = read_varint(self.control, at)
            length, at = read_varint(self.control, at)
            if kind == 0x7 and at + length <= len(self.control):
                self.result["goaway"] = read_varint(self.control, at)[0]
            at += length

    def answer(self, stream, data, end):
        self.data[stream] = self.data.get(stream, b"") + data
        buf = self.data[stream]
        if stream in self.result["statuses"] or len(buf) < 2:
            return
        kind, at = read_varint(buf, 0)
        length, at = read_varint(buf, at)
        if kind == 0x1 and len(buf) >= at + length:
            decoder = pylsqpack.Decoder(0, 0)
            _, fields = decoder.feed_header(stream, buf[at:at + length])
            self.result["statuses"][stream] = int(dict(fields)[b":status"])

    def uni(self, data, end=False):
        stream = self.quic.get_next_available_stream_id(is_unidirectional=True)
        self.quic.send_stream_data(stream, data, end_stream=end)
        return stream

    def request(self, data, end=True):
        stream = self.quic.get_next_available_stream_id()
        self.quic.send_stream_data(stream, data, end_stream=end)
        return stream

    def settle(self, limit=5):
        """Sends what is queued, then runs until the server closes or `limit` passes."""
        self.flush()
        self.run(lambda: False, limit)
        return self.result


def read_varint(data, at):
    n = 1 << (data[at] >> 6)
    value = data[at] & 0x3F
    for b in data[at + 1:at + n]:
        value = (value << 8) | b
    return value, at + n


def h3_case(name, args):
    c = Client()
    if name not in ("data-on-control", "missing-settings"):
        c.uni(CONTROL)
    if name == "qpack-past-table":
        # Indexed field line, static index 99 (one past the table): 0xff then 99 - 63.
        c.request(frame(0x1, b"\x00\x00\xff\x24"))
    elif name == "qpack-dynamic":
        # Required Insert Count 2 (encoded 3) with no table.
        c.request(frame(0x1, b"\x03\x81\x10\x11"))
    elif name == "data-on-control":
        c.uni(CONTROL + frame(0x0, b"body"))
    elif name == "missing-settings":
        c.uni(varint(0x0) + frame(0x7, varint(0)))
    elif name == "second-control":
        c.uni(CONTROL)
    elif name == "http2-frame":
        c.request(get()[:0] + frame(0x6, b"\x00" * 8) + get())
    elif name == "truncated-frame":
        c.request(varint(0x1) + varint(100) + b"\x00" * 10)
    elif name == "encoder-insert":
        # Set Dynamic Table Capacity 220 (what RFC 9204 B.2 opens with).
        c.uni(varint(0x2) + b"\x3f\xbd\x01")
    elif name == "malformed-request":
        bad = c.request(frame(0x1, section([(b":method", b"GET"), (b":scheme", b"https"),
                                            (b":path", b"/2k.html"), (b"Upper", b"x")])))
        c.flush()
        c.run(lambda: bad in c.result["resets"], 5)
        good = c.request(get())
        c.flush()
        c.run(lambda: good in c.result["statuses"], 5)
        return c.result
    elif name == "too-many-streams":
        for _ in range(20):
            c.request(get())
        c.flush()
        c.run(lambda: len(c.result["statuses"]) == 20, 5)
        # Past the server's MAX_STREAMS (100 at once): aioquic would wait; this client does not.
        c.quic._remote_max_streams_bidi = 1000
        for _ in range(150):
            c.request(get(), end=False)
    elif name == "after-goaway":
        flag = args[0]
        slow = c.request(get("/cgi-bin/slow"))
        c.flush()
        deadline = time.time() + 10
        while not os.path.exists(flag) and time.time() < deadline:
            c.run(lambda: False, 0.05)
        c.run(lambda: c.result["goaway"] is not None, 5)
        late = c.request(get())
        c.flush()
        c.run(lambda: late in c.result["resets"] and slow in c.result["statuses"], 5)
        c.result["late"] = late
        return c.result
    return c.settle()


def never_completes(hold):
    """Sends the first Initial flight, prints "ANSWERED" once the server's first datagram came,
    then only listens for `hold` seconds."""
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name="localhost")
    quic = QuicConnection(configuration=config)
    quic.connect(ADDR, now=time.time())
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    bytes_out = 0
    for data, addr in quic.datagrams_to_send(now=time.time()):
        sock.sendto(data, addr)
        bytes_out += len(data)
    bytes_in, datagrams = 0, 0
    deadline = time.time() + hold
    while time.time() < deadline:
        sock.settimeout(max(deadline - time.time(), 0.001))
        try:
            data, _ = sock.recvfrom(65536)
        except socket.timeout:
            break
        bytes_in += len(data)
        datagrams += 1
        if datagrams == 1:
            print("ANSWERED", flush=True)
    return {"bytes_in": bytes_in, "bytes_out": bytes_out}


def flood(n, ports):
    socks = []
    for _ in range(ports):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        socks.append(s)
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name="localhost")
    sent, received, retries = {}, {}, 0

    def drain():
        nonlocal retries
        for s in socks:
            while True:
                try:
                    data, _ = s.recvfrom(65536)
                except BlockingIOError:
                    break
                port = s.getsockname()[1]
                received[port] = received.get(port, 0) + len(data)
                # A Retry: long header (0x80), fixed bit (0x40), type 3 (0x30) in QUIC v1.
                if data[0] & 0xF0 == 0xF0:
                    retries += 1

    for i in range(n):
        quic = QuicConnection(configuration=config)
        quic.connect(ADDR, now=time.time())
        s = socks[i % ports]
        for data, addr in quic.datagrams_to_send(now=time.time()):
            s.sendto(data, addr)
            port = s.getsockname()[1]
            sent[port] = sent.get(port, 0) + len(data)
        if i % 50 == 0:
            drain()
    deadline = time.time() + 2
    while time.time() < deadline:
        drain()
        time.sleep(0.01)
    worst = max((received.get(p, 0) / sent[p] for p in sent), default=0)
    return {"sent": n, "retries": retries, "answered_ports": len(received), "worst_ratio": worst}


def stateless_reset(quiet):
    """A connection that falls silent for `quiet` seconds (past the server's idle timeout), then
    sends a short-header packet on it: the server no longer knows the connection and answers with
    a stateless reset, whose last 16 bytes are the token it gave for that connection ID."""
    c = Client()
    c.uni(CONTROL)
    stream = c.request(get())
    c.flush()
    c.run(lambda: stream in c.result["statuses"], 5)
    cid, token = c.quic._peer_cid.cid, c.quic._peer_cid.stateless_reset_token
    deadline = time.time() + quiet
    while time.time() < deadline:
        c.sock.settimeout(max(deadline - time.time(), 0.001))
        try:
            c.sock.recvfrom(65536)  # the server's close, unanswered
        except socket.timeout:
            break
    c.sock.settimeout(3)
    c.sock.sendto(bytes([0x40 | random.getrandbits(6)]) + cid + os.urandom(1191), ADDR)
    try:
        data, _ = c.sock.recvfrom(65536)
    except socket.timeout:
        return {"reply_len": 0, "token_matches": False}
    return {"reply_len": len(data), "short_header": data[0] & 0xC0 == 0x40,
            "token_matches": data[-16:] == token}


def version_negotiation():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    dcid, scid = os.urandom(8), os.urandom(8)
    packet = bytes([0xC0]) + struct.pack(">I", 0x1A2A3A4A) + bytes([8]) + dcid + bytes([8]) + scid
    s.sendto(packet + b"\x00" * (1200 - len(packet)), ADDR)
    data, _ = s.recvfrom(65536)
    version = struct.unpack(">I", data[1:5])[0]
    at = 5
    at += 1 + data[at]
    at += 1 + data[at]
    offered = [struct.unpack(">I", data[i:i + 4])[0] for i in range(at, len(data), 4)]
    return {"version": version, "offered": offered}


def garbage(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rng = random.Random(7)
    for _ in range(n):
        s.sendto(bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 20, 1200, 1500]))), ADDR)
    return {"sent": n}


if __name__ == "__main__":
    case, rest = sys.argv[3], sys.argv[4:]
    if case == "never-completes":
        out = never_completes(float(rest[0]))
    elif case == "flood":
        out = flood(int(rest[0]), int(rest[1]))
    elif case == "stateless-reset":
        out = stateless_reset(float(rest[0]))
    elif case == "version-negotiation":
        out = version_negotiation()
    elif case == "garbage":
        out = garbage(int(rest[0]))
    else:
        out = h3_case(case, rest)
    print(json.dumps(out))
