"""A thread that sleeps a little and computes a little, over and over, for
SECONDS: run beside a CPU hog on one CPU at a lower priority (nice), each
time it wakes it waits for the CPU. It prints, as one JSON line, the time
the kernel counted it waiting for a CPU meanwhile (the run_delay of
/proc/thread-self/schedstat, in seconds), its CPU time meanwhile (the
same file's first field) and the phase's length:

    {"run_delay": <seconds>, "cpu": <seconds>, "wall": <seconds>}

Usage: python cpu_wait.py SECONDS
"""
import json
import sys
import time


def schedstat():
    """(CPU time, run_delay) of this thread, in seconds."""
    with open("/proc/thread-self/schedstat") as f:
        ran, waited = f.read().split()[:2]
    return int(ran) / 1e9, int(waited) / 1e9


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def wake_and_work(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.003)
        spin(0.001)


def main(seconds):
    t0, (c0, d0) = time.monotonic(), schedstat()
    wake_and_work(seconds)
    (c1, d1), t1 = schedstat(), time.monotonic()
    print(json.dumps({"run_delay": d1 - d0, "cpu": c1 - c0, "wall": t1 - t0}))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
