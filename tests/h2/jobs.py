"""An HTTP/2 client for the serve tests of CGI and FastCGI jobs on one connection (prior-knowledge
h2c), over hostile.py's frames and hpack. Cases, each printing the lines the test asserts on:
- bodies PORT PATH...: each path on streams 1, 3, 5... at once; "BODY <stream> <status> <md5>"
  as each answer ends (its body's md5, "-" for none), then "DONE".
- reset PORT SERVER_PID MARKER JOB_PATH OTHER_PATH: OTHER_PATH answered first (the connection is
  accepted), then the server's open descriptors counted before the job's stream, while its job
  runs (MARKER, a file the job writes, exists), and after the stream was reset (RST_STREAM
  CANCEL) and OTHER_PATH answered again on the same connection:
  "FDS <before> <during> <after>".
- close PORT MARKER JOB_PATH: the job's stream, then the connection closed once MARKER exists."""
import hashlib
import os
import struct
import sys
import time

from hostile import (Client, DATA, END_STREAM, RST, WINDOW_UPDATE, frame, get)


class Reader(Client):
    """A client that keeps each stream's body and gives back the windows its DATA used."""

    def __init__(self, port):
        super().__init__(port)
        self.bodies = {}

    def event(self, kind, flags, stream, payload):
        if kind == DATA and payload:
            self.bodies.setdefault(stream, b"")
            self.bodies[stream] += payload
            inc = struct.pack(">I", len(payload))
            self.send(frame(WINDOW_UPDATE, 0, 0, inc) + frame(WINDOW_UPDATE, 0, stream, inc))
        return super().event(kind, flags, stream, payload)


def fds(pid):
    return len(os.listdir("/proc/%s/fd" % pid))


def wait_for(path, limit=10.0):
    deadline = time.time() + limit
    while not os.path.exists(path):
        if time.time() > deadline:
            print("NO MARKER", flush=True)
            sys.exit(1)
        time.sleep(0.02)


def main():
    name, port, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    c = Reader(port)
    if name == "bodies":
        statuses, ended = {}, set()

        def seen(line):
            if line.startswith("STATUS"):
                _, stream, status = line.split()
                statuses[int(stream)] = status
            if line.startswith("END"):
                stream = int(line.split()[1])
                ended.add(stream)
                body = c.bodies.get(stream)
                md5 = hashlib.md5(body).hexdigest() if body is not None else "-"
                print("BODY %d %s %s" % (stream, statuses.get(stream), md5), flush=True)
            return len(ended) == len(args)
        for i, path in enumerate(args):
            c.request(2 * i + 1, get(path))
        if c.events(seen, limit=60) not in ("CLOSED", "TIMEOUT"):
            print("DONE", flush=True)
    elif name == "reset":
        pid, marker, job, other = args
        # OTHER first: the connection is accepted (and OTHER cached) before anything is counted.
        c.request(1, get(other))
        c.events(lambda l: l == "END 1")
        before = fds(pid)
        c.request(3, get(job))
        wait_for(marker)
        during = fds(pid)
        c.send(frame(RST, 0, 3, struct.pack(">I", 8)))
        c.request(5, get(other))
        c.events(lambda l: l == "END 5")
        print("FDS %d %d %d" % (before, during, fds(pid)), flush=True)
    elif name == "close":
        marker, job = args
        c.request(1, get(job))
        wait_for(marker)
        c.sock.close()
        print("CLOSED_BY_CLIENT", flush=True)


if __name__ == "__main__":
    main()
