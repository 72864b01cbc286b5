#!/usr/bin/env python3
"""What a wait that sleeps costs on this machine, the two ways a load thread sleeps:

1. A timed sleep (the generator's nap): the oversleep (wall time past the asked length) and the
   sleeper's own CPU time per sleep, for 1 µs to 2 ms with 1 ns of timer slack, as the nap takes
   them.
2. A block woken by another CPU (a generator blocked in the poller, woken by the server's send):
   the sleeper's CPU time per wake-up and how long the waker's write() took, against the same
   write() when the reader is not asleep. On a virtual machine whose idle CPUs halt, that write
   carries the inter-processor interrupt: the wake-up's cost to the server.

Both bound how a closed loop may wait: a sleep saves CPU over a spin only when it lasts longer
than its own cost, and a block costs the server its wake-up (docs/BENCHMARKS.md, "What a
wake-up costs on this machine").

Usage: scripts/bench/sleep-cost.py [SLEEPS]   (SLEEPS per length, default 3000; the sleeper runs
       on CPU 1, the waker on CPU 0)
"""
import ctypes
import os
import sys
import time

PR_SET_TIMERSLACK = 29
ASKS_US = [1, 10, 20, 50, 100, 500, 2000]
WAKE_GAPS_US = [0, 50, 200]
SLEEPER_CPU, WAKER_CPU = 1, 0


def quantile(sorted_values, f):
    return sorted_values[min(len(sorted_values) - 1, int(f * len(sorted_values)))]


def timed_sleeps(n):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(1), 0, 0, 0) != 0:
        sys.exit("sleep-cost.py: prctl(PR_SET_TIMERSLACK) failed")
    # The loop's own cost (clock reads, the interpreter) without a sleep, taken off each figure.
    c0 = time.thread_time_ns()
    for _ in range(n):
        time.monotonic_ns()
        time.monotonic_ns()
    loop_us = (time.thread_time_ns() - c0) / n / 1e3
    print("timed sleep, ask µs\toversleep p50 µs\tp90\tp99\tsleeper CPU µs per sleep")
    for ask in ASKS_US:
        count = n if ask <= 100 else max(100, n // 10)
        over = []
        c0 = time.thread_time_ns()
        for _ in range(count):
            t = time.monotonic_ns()
            time.sleep(ask / 1e6)
            over.append((time.monotonic_ns() - t) / 1e3 - ask)
        cpu = (time.thread_time_ns() - c0) / count / 1e3 - loop_us
        over.sort()
        print(f"{ask}\t{quantile(over, 0.5):.1f}\t{quantile(over, 0.9):.1f}\t"
              f"{quantile(over, 0.99):.1f}\t{cpu:.2f}")


def waker(fd, gap_ns, n, report):
    """Writes a byte every gap_ns (busy-waiting between, so this CPU never sleeps); reports the
    median write() time."""
    os.sched_setaffinity(0, {WAKER_CPU})
    took = []
    for _ in range(n):
        t = time.monotonic_ns()
        while time.monotonic_ns() - t < gap_ns:
            pass
        w = time.monotonic_ns()
        os.write(fd, b"x")
        took.append(time.monotonic_ns() - w)
    took.sort()
    os.write(report, f"{quantile(took, 0.5) / 1e3:.2f}".encode())


def wake_ups(n):
    print("\nwoken by CPU 0, gap µs\tsleeper CPU µs per wake-up\twaker's write() p50 µs")
    for gap in WAKE_GAPS_US:
        data_r, data_w = os.pipe()
        report_r, report_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(data_r)
            waker(data_w, gap * 1000, n, report_w)
            os._exit(0)
        os.close(data_w)
        os.close(report_w)
        got, c0 = 0, time.thread_time_ns()
        while got < n:
            chunk = os.read(data_r, 4096)
            if not chunk:
                break
            got += len(chunk)
        cpu = (time.thread_time_ns() - c0) / max(got, 1) / 1e3
        write_us = os.read(report_r, 64).decode() or "?"
        os.waitpid(pid, 0)
        for f in (data_r, report_r):
            os.close(f)
        print(f"{gap}\t{cpu:.2f}\t{write_us}")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    if n < 100:
        sys.exit("sleep-cost.py: SLEEPS must be at least 100")
    if os.cpu_count() < 2:
        sys.exit("sleep-cost.py: needs two CPUs (the sleeper on 1, the waker on 0)")
    os.sched_setaffinity(0, {SLEEPER_CPU})
    timed_sleeps(n)
    wake_ups(n)


if __name__ == "__main__":
    main()
