"""Deep recursion of several kinds, with the recursion limit raised to 10**6.

    python rel_stack.py KIND DEPTH [THREAD_STACK_BYTES]

plain       def rec(n): ... rec(n - 1)
generator   each level a generator delegating with `yield from`
coroutine   each level a coroutine awaiting the next (driven by send)
c_mediated  each level calls the next through a C function (map, max)
catch       recurses until RecursionError, catches it in the deepest
            frame that can, and returns normally from there (DEPTH unused)

Prints "pid N", then "depth D" when the recursion completed, or
"RecursionError" when it was refused; a crash prints neither. With
THREAD_STACK_BYTES it runs in a thread with that stack size.
"""
import os
import sys
import threading

print("pid %d" % os.getpid(), flush=True)
sys.setrecursionlimit(10 ** 6)


def plain(n):
    return 0 if n == 0 else 1 + plain(n - 1)


def gen(n):
    if n == 0:
        return 0
    r = yield from gen(n - 1)
    return r + 1


def generator(n):
    g = gen(n)
    try:
        next(g)
    except StopIteration as e:
        return e.value
    raise AssertionError("gen yielded")


async def co(n):
    return 0 if n == 0 else 1 + await co(n - 1)


def coroutine(n):
    c = co(n)
    try:
        c.send(None)
    except StopIteration as e:
        return e.value
    raise AssertionError("coroutine suspended")


def c_mediated(n):
    return 0 if n == 0 else 1 + max(map(c_mediated, [n - 1]))


def catch(n=0):
    try:
        return catch(n + 1)
    except RecursionError:
        return n


def attempt(out):
    kind, depth = sys.argv[1], int(sys.argv[2])
    try:
        d = globals()[kind](depth) if kind != "catch" else catch()
        out.append("depth %d" % d)
    except RecursionError:
        out.append("RecursionError")


result = []
if len(sys.argv) > 3:
    threading.stack_size(int(sys.argv[3]))
    t = threading.Thread(target=attempt, args=(result,))
    t.start()
    t.join()
else:
    attempt(result)
print(result[0])
