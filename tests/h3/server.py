"""An HTTP/3 server for tests/bench_h3.rs, on aioquic (PyPI; scripts/install-deps.sh installs it):
listens on 127.0.0.1, port 0 (the kernel's choice), with CERT and KEY, and prints "ready PORT"
once it does. MODE says how it answers each request:
  ok      200 with a body of N bytes of "x" for a path /N (else 1000 bytes), after DELAY ms;
  reset   resets every request stream with H3_REQUEST_REJECTED (0x10b);
  close   closes the connection with H3_GENERAL_PROTOCOL_ERROR (0x101) at the first request;
  alpn    offers ALPN "hq-interop" only (a server without HTTP/3): the handshake fails;
  forget  as ok, but every session ticket it issued is forgotten at once: a client resuming gets
          a full handshake, and its 0-RTT data is rejected;
  trailers-data  as ok, then trailers, then one more DATA frame: a frame out of order (RFC 9114
          §4.1), which a client must treat as a connection error, H3_FRAME_UNEXPECTED.
Each request answered is one line of LOG, "METHOD PATH STATUS LENGTH OPEN", OPEN being how many
of the connection's requests were waiting for their answer when it arrived (itself included), so a
test sees whether requests came concurrently. Each handshake completed is one line of
LOG.handshakes, "resumed EARLY" or "full EARLY", EARLY being "0rtt-accepted" or "no-0rtt".
Session tickets (allowing 0-RTT) are issued on every connection and kept in memory, each taken
once.
Usage: server.py CERT KEY LOG MODE [DELAY]"""
import asyncio
import sys

from aioquic.asyncio import serve
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, FrameType, H3Connection, encode_frame
from aioquic.h3.events import HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import HandshakeCompleted, ProtocolNegotiated

REQUEST_REJECTED = 0x10B
GENERAL_PROTOCOL_ERROR = 0x101


class Server(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = None
        self.open = 0

    def quic_event_received(self, event):
        if isinstance(event, HandshakeCompleted):
            kind = "resumed" if event.session_resumed else "full"
            early = "0rtt-accepted" if event.early_data_accepted else "no-0rtt"
            with open(LOG + ".handshakes", "a") as log:
                log.write(f"{kind} {early}\n")
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self.h3 = H3Connection(self._quic)
        if self.h3 is None:
            return
        for e in self.h3.handle_event(event):
            if isinstance(e, HeadersReceived):
                self.request(e)

    def request(self, e):
        if MODE == "reset":
            self._quic.reset_stream(e.stream_id, REQUEST_REJECTED)
            self.transmit()
            return
        if MODE == "close":
            self._quic.close(error_code=GENERAL_PROTOCOL_ERROR, reason_phrase="test close")
            self.transmit()
            return
        fields = dict(e.headers)
        method = fields[b":method"].decode()
        path = fields[b":path"].decode()
        self.open += 1
        asyncio.get_running_loop().create_task(self.answer(e.stream_id, method, path))

    async def answer(self, stream, method, path):
        opened = self.open
        await asyncio.sleep(DELAY / 1000)
        tail = path.rsplit("/", 1)[-1]
        size = int(tail) if tail.isdigit() else 1000
        body = b"x" * size
        self.h3.send_headers(stream, [(b":status", b"200"), (b"server", b"aioquic-test"),
                                      (b"content-length", str(size).encode())])
        if MODE == "trailers-data":
            self.h3.send_data(stream, body, end_stream=False)
            self.h3.send_headers(stream, [(b"x-trailer", b"1")], end_stream=False)
            # aioquic refuses DATA after trailers itself: the frame is written by hand.
            self._quic.send_stream_data(stream, encode_frame(FrameType.DATA, b"late"), end_stream=True)
        else:
            self.h3.send_data(stream, body, end_stream=True)
        self.transmit()
        self.open -= 1
        with open(LOG, "a") as log:
            log.write(f"{method} {path} 200 {size} {opened}\n")


TICKETS = {}


def keep_ticket(ticket):
    if MODE != "forget":
        TICKETS[ticket.ticket] = ticket


def take_ticket(label):
    return TICKETS.pop(label, None)


async def main():
    alpn = ["hq-interop"] if MODE == "alpn" else H3_ALPN
    config = QuicConfiguration(is_client=False, alpn_protocols=alpn)
    config.load_cert_chain(CERT, KEY)
    server = await serve("127.0.0.1", 0, configuration=config, create_protocol=Server,
                         session_ticket_fetcher=take_ticket,
                         session_ticket_handler=keep_ticket)
    port = server._transport.get_extra_info("sockname")[1]
    print(f"ready {port}", flush=True)
    await asyncio.Future()


CERT, KEY, LOG, MODE = sys.argv[1:5]
DELAY = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
open(LOG, "w").close()
open(LOG + ".handshakes", "w").close()
asyncio.run(main())
