"""numpy's C code under Python frames (sample mode's mixed stacks, issue
15): sort_rows sorts the rows of a large array again and again (numpy's own
sort, in its _multiarray_umath module) for about SECONDS of CPU time.

    python numpy_work.py [SECONDS]
"""
import sys
import time

import numpy as np


def sort_rows(a):
    return np.sort(a, axis=1)


def main(seconds):
    a = np.random.default_rng(1).random((200, 5000))
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        sort_rows(a)
        n += 1
    print("sorted", n, flush=True)


main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
