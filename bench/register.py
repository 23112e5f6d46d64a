"""Cost of registering a new function, measured inside the process.

    python register.py N ROUNDS

Run with perf support on (PERFPY=perf|jit, -X perf, -X perf_jit). Makes 2*N
distinct functions up front, then per round: calls N new ones once (each first
call makes and registers a trampoline) and calls them again (cached path);
the difference per function is the registration cost. Timed twice: CPU time
of the process (time.process_time: user + system, so the write to the map or
dump counts, but time spent waiting for a CPU other processes hold does not)
and wall time. Prints one JSON line: median microseconds per registration
(CPU, and wall), and perfpy's bytes per trampoline.
"""
import json
import os
import statistics
import sys
import time

sys.stderr.write("pid %d\n" % os.getpid())
n, rounds = int(sys.argv[1]), int(sys.argv[2])
costs, walls = [], []
for r in range(rounds):
    funcs = []
    for i in range(n):
        ns = {}
        exec(compile("def f_%d_%d(x):\n    return x\n" % (r, i),
                     "/bench/gen_%d_%d.py" % (r, i), "exec"), ns)
        funcs.append(ns["f_%d_%d" % (r, i)])
    t0, c0 = time.perf_counter(), time.process_time()
    for f in funcs:
        f(1)
    t1, c1 = time.perf_counter(), time.process_time()
    for f in funcs:
        f(1)
    t2, c2 = time.perf_counter(), time.process_time()
    costs.append(((c1 - c0) - (c2 - c1)) / n * 1e6)
    walls.append(((t1 - t0) - (t2 - t1)) / n * 1e6)
out = {"us_per_registration": statistics.median(costs),
       "us_per_registration_wall": statistics.median(walls)}
if "perfpy" in sys.modules:
    out["bytes_per_trampoline"] = sys.modules["perfpy"]._stats()["bytes_per_trampoline"]
print(json.dumps(out))
