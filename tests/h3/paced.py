"""An HTTP/3 client for tests/serve_h3_alloc.rs, on aioquic: one QUIC connection to
127.0.0.1:PORT; it sends WARM batches of requests (16 GETs and 4 conditional GETs of /2k.html
each, at once, as h2load -m 16 would), prints "READY", waits for a line on stdin, sends ROUNDS
more batches, and prints "DONE OK NOT_MODIFIED" (the answers of the measured rounds by status).
Usage: paced.py PORT CAFILE WARM ROUNDS"""
import asyncio
import sys

from aioquic.asyncio import connect
from aioquic.h3.connection import H3_ALPN
from aioquic.quic.configuration import QuicConfiguration

from client import Client


async def batch(client, etag):
    asked = [client.request("GET", "/2k.html", [], b"") for _ in range(16)]
    asked += [client.request("GET", "/2k.html", [["if-none-match", etag]], b"")
              for _ in range(4)]
    client.transmit()
    # A bound, not a pace: on a loaded machine (load 12 on 2 CPUs seen) a batch can take seconds.
    await asyncio.wait_for(asyncio.gather(*(d for _, d in asked)), 60)
    statuses = [client.answers.pop(s)["status"] for s, _ in asked]
    return statuses.count(200), statuses.count(304)


async def main(port, cafile, warm, rounds):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name="localhost")
    config.load_verify_locations(cafile)
    # Windows large enough that no round waits for the client's flow-control updates.
    config.max_data = config.max_stream_data = 64 << 20
    async with connect("127.0.0.1", port, configuration=config, create_protocol=Client) as c:
        stream, done = c.request("GET", "/2k.html", [], b"")
        c.transmit()
        await done
        etag = c.answers.pop(stream)["headers"]["etag"]
        for _ in range(warm):
            await batch(c, etag)
        print("READY", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        ok = not_modified = 0
        for _ in range(rounds):
            a, b = await batch(c, etag)
            ok, not_modified = ok + a, not_modified + b
        print(f"DONE {ok} {not_modified}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
