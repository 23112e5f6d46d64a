"""Code objects freed and made again at the same addresses (issue 15's name
cache): N generations, each a copy of one function under a name of its own
(gen_<i>), run for about SECONDS of CPU time, then dropped. The copy and
its name usually land where the previous generation's were freed: only
the name's characters tell them apart. Prints how many generations sat at
an address an earlier one had used.

    python code_churn.py [N] [SECONDS] [wait]

With `wait`, it first prints "ready PPID" (its parent: the recorder that
started it) and reads a line from stdin before the first generation, so
that a test can stop the recorder meanwhile: every generation is then
freed long before the recorder could read it from memory.
"""
import os
import sys
import time
import types

N = int(sys.argv[1]) if len(sys.argv) > 1 else 30
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05


def template():
    end = time.process_time() + SECONDS
    while time.process_time() < end:
        pass


if len(sys.argv) > 3 and sys.argv[3] == "wait":
    print("ready %d" % os.getppid(), flush=True)
    sys.stdin.readline()
seen = set()
reused = 0
for i in range(N):
    name = "gen_%d" % (1000 + i)          # one length: a freed name's slot fits the next
    names = {"co_name": name}
    if sys.version_info >= (3, 11):
        names["co_qualname"] = name
    f = types.FunctionType(template.__code__.replace(**names), globals(), name)
    reused += id(f.__code__) in seen
    seen.add(id(f.__code__))
    f()
    del f, names, name
print("REUSED %d of %d" % (reused, N), flush=True)
