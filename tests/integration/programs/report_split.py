"""A workload that measures its own split of CPU time between two functions.

work_a and work_b are leaf Python functions (they call no Python function),
so even a perf-map recording, whose stacks stop at the innermost Python
frame, attributes every sample to one of them. The program prints how much
time each took, measured with the thread's CPU clock, and runs for SECONDS
of that clock (so as many samples on a busy machine as on an idle one),
and its wall time (from which a test sees how much of a CPU it had):

    SPLIT <seconds in work_a> <seconds in work_b> <wall seconds>

Usage: python report_split.py SECONDS [jitter]

Each round takes the same few milliseconds, so a sampler of a fixed period
can fall in step with it (docs/PERFORMANCE.md, split_calls.py); with
"jitter" each round's two lengths are drawn at random (the split about the
same on average).
"""
import random
import sys
import time


def work_a(n):
    s = 0
    for i in range(n):
        s += i
    return s


def work_b(n):
    s = 0
    for i in range(n):
        s += i
    return s


def main(seconds, jitter=False):
    clock = time.thread_time
    wall = time.monotonic()
    spent_a = spent_b = 0.0
    # The length is CPU time, not wall time: on a busy machine a wall-clock
    # loop gets fewer samples (cpu-clock counts CPU time) than the test needs.
    end = clock() + seconds
    while clock() < end:
        na, nb = (random.randint(20000, 40000), random.randint(50000, 90000)) if jitter \
            else (30000, 70000)         # drawn outside both timed parts
        t0 = clock()
        work_a(na)
        t1 = clock()
        work_b(nb)
        t2 = clock()
        spent_a += t1 - t0
        spent_b += t2 - t1
    print("SPLIT %.6f %.6f %.6f" % (spent_a, spent_b, time.monotonic() - wall))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0, sys.argv[2:] == ["jitter"])
