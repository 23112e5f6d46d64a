"""Deep recursion with a raised recursion limit.

    python deep.py DEPTH [THREAD_STACK_BYTES]

Prints "pid N", then "depth D" if the recursion completed or
"RecursionError" if it was refused; a crash prints neither.
"""
import os
import sys
import threading

print("pid %d" % os.getpid(), flush=True)
sys.setrecursionlimit(10 ** 6)


def rec(n):
    return 0 if n == 0 else 1 + rec(n - 1)


def attempt(out):
    try:
        out.append("depth %d" % rec(int(sys.argv[1])))
    except RecursionError:
        out.append("RecursionError")


result = []
if len(sys.argv) > 2:
    threading.stack_size(int(sys.argv[2]))
    t = threading.Thread(target=attempt, args=(result,))
    t.start()
    t.join()
else:
    attempt(result)
print(result[0])
