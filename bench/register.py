"""Cost of registering a new function, measured inside the process.

    python register.py N ROUNDS

Run with perf support on (PERFPY=perf|jit, -X perf, -X perf_jit). Makes 2*N
distinct functions up front, then per round: calls N new ones once (each first
call makes and registers a trampoline) and calls them again (cached path);
the difference per function is the registration cost. Prints one JSON line:
median microseconds per registration, and perfpy's bytes per trampoline.
"""
import json
import os
import statistics
import sys
import time

sys.stderr.write("pid %d\n" % os.getpid())
n, rounds = int(sys.argv[1]), int(sys.argv[2])
costs = []
for r in range(rounds):
    funcs = []
    for i in range(n):
        ns = {}
        exec(compile("def f_%d_%d(x):\n    return x\n" % (r, i),
                     "/bench/gen_%d_%d.py" % (r, i), "exec"), ns)
        funcs.append(ns["f_%d_%d" % (r, i)])
    t0 = time.perf_counter()
    for f in funcs:
        f(1)
    t1 = time.perf_counter()
    for f in funcs:
        f(1)
    t2 = time.perf_counter()
    costs.append(((t1 - t0) - (t2 - t1)) / n * 1e6)
out = {"us_per_registration": statistics.median(costs)}
if "perfpy" in sys.modules:
    out["bytes_per_trampoline"] = sys.modules["perfpy"]._stats()["bytes_per_trampoline"]
print(json.dumps(out))
