"""A recursion DEPTH deep whose innermost call loops: deep_leaf.py DEPTH [SECONDS].
The leaf runs SECONDS of CPU time (default 1.5), so every interpreter gets the
same number of samples whatever its speed."""
import os
import sys
import time


def leaf():
    end = time.process_time() + SECONDS
    r = 0
    while time.process_time() < end:
        for _ in range(10000):
            r += 1
    return r


def rec(n):
    if n == 0:
        return leaf()
    return rec(n - 1)


if __name__ == "__main__":
    print("pid", os.getpid(), flush=True)
    SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
    rec(int(sys.argv[1]))
