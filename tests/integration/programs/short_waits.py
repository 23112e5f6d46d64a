"""Waits shorter than wall-clock mode's period and longer: COUNT sleeps of
1 ms (each a stretch off the CPU shorter than the 2.5 ms period at 399 Hz:
sampled with probability d / period, each sample weighing a period), then
sleeps of 25 ms for as long (each longer than the period: always sampled,
weighing its length), then a little computing. For each part it prints
the kernel's own account of its time, as one JSON line: its length, the
CPU time the thread ran and the time it waited for a CPU (the first two
fields of /proc/thread-self/schedstat); the rest is time it slept.

    {"short_sleeps": {"wall": s, "cpu": s, "run_delay": s}, "long_sleeps": {...},
     "crunch": {...}}

Usage: python short_waits.py [COUNT]   (default 1000)
"""
import json
import sys
import time


def schedstat():
    """(CPU time, run_delay) of this thread, in seconds."""
    with open("/proc/thread-self/schedstat") as f:
        ran, waited = f.read().split()[:2]
    return int(ran) / 1e9, int(waited) / 1e9


def short_sleeps(count):
    for _ in range(count):
        time.sleep(0.001)


def long_sleeps(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.025)


def crunch(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def measured(fn, *args):
    t0, (c0, d0) = time.monotonic(), schedstat()
    fn(*args)
    (c1, d1), t1 = schedstat(), time.monotonic()
    return {"wall": t1 - t0, "cpu": c1 - c0, "run_delay": d1 - d0}


def main(count):
    parts = {"short_sleeps": measured(short_sleeps, count)}
    parts["long_sleeps"] = measured(long_sleeps, parts["short_sleeps"]["wall"])
    parts["crunch"] = measured(crunch, 0.2)
    print(json.dumps(parts))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
