"""THREADS threads (default 32) that compute and sleep, for SECONDS (default
3): each computes about 2 ms (hashing, which releases the GIL: the threads
keep every CPU busy at once) and sleeps about 2 ms, over and over, so
that a wall-clock profile of it takes samples on every CPU and a stack off
the CPU at almost every sleep and preemption, from many threads at once.
Prints as JSON on its last line the count of rounds, the workers' lives
(the seconds each ran worker(), added up: the wall time a profile holds
under worker) and the main thread's (the seconds since the process
started, to 10 ms: the kernel's clock ticks).

    python busy_threads.py [THREADS [SECONDS]]
"""
import hashlib
import json
import os
import sys
import threading
import time


BLOCK = bytes(range(256)) * 256         # 64 KiB: hashed with the GIL released


def compute(ms):
    end = time.perf_counter() + ms / 1000
    n = 0
    while time.perf_counter() < end:
        n += hashlib.sha256(BLOCK).digest()[0]
    return n


def rest(ms):
    time.sleep(ms / 1000)


def worker(until, rounds, lives, i):
    t0 = time.perf_counter()
    n = 0
    while time.monotonic() < until:
        compute(2)
        rest(2)
        n += 1
    rounds[i] = n
    lives[i] = time.perf_counter() - t0


def since_start():
    """Seconds since this process started, or 0 (no /proc)."""
    try:
        with open("/proc/self/stat") as f:
            start = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        return up - start / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    until = time.monotonic() + seconds
    rounds, lives = [0] * threads, [0.0] * threads
    ts = [threading.Thread(target=worker, args=(until, rounds, lives, i), name="busy%d" % i)
          for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps({"threads": threads, "rounds": sum(rounds), "lives": sum(lives),
                      "main": since_start()}))


if __name__ == "__main__":
    main()
