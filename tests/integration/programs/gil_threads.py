"""Two threads that only compute, for SECONDS (default 2): on an
interpreter with a GIL, each holds it about half the time and waits for it
the rest. Prints the process's CPU time and its wall time (seconds, JSON):
about one CPU's worth when the machine let it run freely.

    python gil_threads.py [SECONDS]
"""
import json
import resource
import sys
import threading
import time


def spin(seconds):
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += sum(i * i for i in range(100))
    return n


def spin_a(seconds):
    return spin(seconds)


def spin_b(seconds):
    return spin(seconds)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    threads = [threading.Thread(target=f, args=(seconds,)) for f in (spin_a, spin_b)]
    t0 = time.perf_counter()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    print(json.dumps({"cpu": cpu, "wall": time.perf_counter() - t0}))


if __name__ == "__main__":
    main()
