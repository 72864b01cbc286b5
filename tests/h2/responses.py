"""A plain HTTP/2 client for tests/serve_h2_hpack.rs: python3-h2 (Debian's, with its own hpack
decoder) fetches PATH COUNT times over one prior-knowledge h2c connection, a few streams at a
time, and prints each response's decoded header list as one JSON line, in stream order.

usage: responses.py PORT PATH COUNT"""
import json
import socket
import sys

import h2.config
import h2.connection
import h2.events

port, path, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
sock = socket.create_connection(("127.0.0.1", port), timeout=10)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
conn.initiate_connection()
sock.sendall(conn.data_to_send())
heads, done, sent = {}, set(), 0
request = [(":method", "GET"), (":scheme", "http"), (":path", path), (":authority", "localhost")]
while len(done) < count:
    while sent < count and sent - len(done) < 8:
        conn.send_headers(conn.get_next_available_stream_id(), request, end_stream=True)
        sent += 1
    sock.sendall(conn.data_to_send())
    data = sock.recv(65536)
    if not data:
        sys.exit("the server closed the connection")
    for event in conn.receive_data(data):
        if isinstance(event, h2.events.ResponseReceived):
            heads[event.stream_id] = event.headers
        elif isinstance(event, h2.events.DataReceived):
            conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            done.add(event.stream_id)
        elif isinstance(event, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
            sys.exit("unexpected %r" % event)
    sock.sendall(conn.data_to_send())
for stream in sorted(heads):
    print(json.dumps(heads[stream]))
