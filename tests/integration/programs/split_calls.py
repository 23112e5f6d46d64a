"""A program that measures its own split of CPU time between a call-heavy
part (recursion) and a loop-heavy part (no calls), with the thread's CPU
clock, for SECONDS of that clock, and prints

    SPLIT <seconds in recursive_part> <seconds in loop_part> <wall seconds>

A profiler that slows calls (a trampoline per call) overstates the first
part; one that installs nothing in the program should not (issue 15).

Usage: python split_calls.py SECONDS [jitter]

Each round takes the same few hundred microseconds, so a sampler of a
fixed period can fall in step with it; with "jitter" each round's loop is
10,000 to 30,000 steps, drawn at random (bench/split_dist.py compares).
"""
import random
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def recursive_part():
    return fib(16)


def loop_part(n):
    s = 0
    for i in range(n):
        s += i
    return s


if __name__ == "__main__":
    seconds = float(sys.argv[1])
    jitter = sys.argv[2:] == ["jitter"]
    clock = time.thread_time
    wall = time.monotonic()
    ta = tb = 0.0
    while ta + tb < seconds:
        n = random.randint(10000, 30000) if jitter else 20000   # outside both parts
        t0 = clock()
        recursive_part()
        t1 = clock()
        loop_part(n)
        t2 = clock()
        ta += t1 - t0
        tb += t2 - t1
    print("SPLIT %.6f %.6f %.6f" % (ta, tb, time.monotonic() - wall))
