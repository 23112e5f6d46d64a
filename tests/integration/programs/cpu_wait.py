"""A thread that sleeps a little and computes a little, over and over, for
SECONDS: run beside a CPU hog on one CPU at a lower priority (nice), each
time it wakes it waits for the CPU. It prints, as one JSON line, the time
the kernel counted it waiting for a CPU meanwhile (the run_delay of
/proc/thread-self/schedstat, in seconds) and the phase's length:

    {"run_delay": <seconds>, "wall": <seconds>}

Usage: python cpu_wait.py SECONDS
"""
import json
import sys
import time


def run_delay():
    with open("/proc/thread-self/schedstat") as f:
        return int(f.read().split()[1]) / 1e9


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
    t0, d0 = time.monotonic(), run_delay()
    wake_and_work(seconds)
    d1, t1 = run_delay(), time.monotonic()
    print(json.dumps({"run_delay": d1 - d0, "wall": t1 - t0}))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
