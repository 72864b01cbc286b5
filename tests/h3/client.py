"""An HTTP/3 client for tests/serve_h3*.rs, on aioquic (PyPI; scripts/install-deps.sh installs it):
one QUIC connection to 127.0.0.1:PORT, verifying the server's certificate against CAFILE, sends
the requests of a JSON list at once, each {"method", "path", "headers": [[name, value]...],
"body": text, or "body_size": N for N bytes of "x"}, and prints one JSON object: "responses", in the order asked, each {"status",
"headers" (lower-case names), "length" (body bytes), "md5", "sha256", "body" (text, when under 4 KiB)};
"alpn" (what the handshake chose), or "error" alone when no connection came up; "goaway" (the stream ID a GOAWAY named, or null); an answer
cut short says "reset" (the stream's error code) or "closed" (the connection's).
Usage: client.py PORT CAFILE REQUESTS-JSON"""
import asyncio
import hashlib
import json
import sys

from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, StreamDataReceived, StreamReset

GOAWAY = 0x7


def varint(data, at):
    """A QUIC variable-length integer at `at`: (value, next position), or None if cut short."""
    if at >= len(data):
        return None
    n = 1 << (data[at] >> 6)
    if at + n > len(data):
        return None
    value = data[at] & 0x3F
    for b in data[at + 1:at + n]:
        value = (value << 8) | b
    return value, at + n


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        # aioquic 1.7 checks every answer's content-length against its body, a HEAD's too, which
        # carries the GET's length and no body (RFC 9110 §9.3.2): not for the HEAD streams here.
        check = self.h3._check_content_length
        self.heads = set()
        self.h3._check_content_length = lambda s: None if s.stream_id in self.heads else check(s)
        self.waiting = {}
        self.answers = {}
        self.goaway = None
        # The server's control stream as it came (aioquic skips GOAWAY's payload: read it here).
        self.control = b""

    def request(self, method, path, headers, body):
        stream = self._quic.get_next_available_stream_id()
        fields = [(b":method", method.encode()), (b":scheme", b"https"),
                  (b":authority", b"localhost"), (b":path", path.encode())]
        fields += [(n.encode(), v.encode()) for n, v in headers]
        if body:
            fields.append((b"content-length", str(len(body)).encode()))
        if method == "HEAD":
            self.heads.add(stream)
        self.h3.send_headers(stream, fields, end_stream=not body)
        if body:
            self.h3.send_data(stream, body, end_stream=True)
        done = asyncio.get_running_loop().create_future()
        self.waiting[stream] = done
        # A bytearray grows in place: adding to bytes copies the whole body each time, which
        # made a 16 MiB answer take minutes of the client's own CPU.
        self.answers[stream] = {"status": None, "headers": {}, "data": bytearray()}
        return stream, done

    def control_frames(self):
        """The frames of the server's control stream (stream 3) so far: notes a GOAWAY's ID."""
        at = 1  # the stream type
        while True:
            head = varint(self.control, at)
            length = head and varint(self.control, head[1])
            if not length or length[1] + length[0] > len(self.control):
                return
            if head[0] == GOAWAY:
                self.goaway = varint(self.control, length[1])[0]
            at = length[1] + length[0]

    def quic_event_received(self, event):
        if isinstance(event, StreamDataReceived) and event.stream_id == 3:
            self.control += event.data
            self.control_frames()
        if isinstance(event, StreamReset) and event.stream_id in self.waiting:
            self.answers[event.stream_id]["reset"] = event.error_code
            self.finish(event.stream_id)
        if isinstance(event, ConnectionTerminated):
            for stream in list(self.waiting):
                self.answers[stream]["closed"] = event.error_code
                self.finish(stream)
        for e in self.h3.handle_event(event):
            if isinstance(e, HeadersReceived) and e.stream_id in self.answers:
                a = self.answers[e.stream_id]
                for n, v in e.headers:
                    if n == b":status":
                        a["status"] = int(v)
                    else:
                        a["headers"][n.decode()] = v.decode()
                if e.stream_ended:
                    self.finish(e.stream_id)
            elif isinstance(e, DataReceived) and e.stream_id in self.answers:
                self.answers[e.stream_id]["data"] += e.data
                if e.stream_ended:
                    self.finish(e.stream_id)

    def finish(self, stream):
        done = self.waiting.pop(stream, None)
        if done is not None and not done.done():
            done.set_result(None)


async def main(port, cafile, requests):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name="localhost")
    config.load_verify_locations(cafile)
    out = {"responses": []}
    async with connect("127.0.0.1", port, configuration=config, create_protocol=Client,
                       wait_connected=True) as client:
        out["alpn"] = client._quic.tls.alpn_negotiated
        asked = [client.request(r.get("method", "GET"), r["path"], r.get("headers", []),
                                r.get("body", "").encode() or b"x" * r.get("body_size", 0))
                 for r in requests]
        client.transmit()
        await asyncio.wait_for(asyncio.gather(*(d for _, d in asked)), 100)
        for stream, _ in asked:
            a = client.answers[stream]
            data = a.pop("data")
            a["length"] = len(data)
            a["md5"] = hashlib.md5(data).hexdigest()
            a["sha256"] = hashlib.sha256(data).hexdigest()
            if len(data) < 4096:
                a["body"] = bytes(data).decode("latin-1")
            out["responses"].append(a)
        out["goaway"] = client.goaway
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        asyncio.run(main(int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])))
    except ConnectionError as e:
        # The server refused or closed the connection before it was up.
        print(json.dumps({"error": repr(e)}))
