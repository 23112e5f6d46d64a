"""Three phases, each timed by the program itself:

  startup  0.5 s of imports: modules written to DIR and imported, until the
           time is up (the interpreter's import machinery, compile and exec)
  crunch   1 s of work in crunch() on two threads (they share the GIL), the
           main thread waiting for them
  finish   0.5 s in finish() on the main thread

Prints "phase NAME SECONDS" for each, measured with time.perf_counter
around it, the CPU time of the thread doing it ("cpu NAME SECONDS",
time.thread_time: each crunch thread's, and the main thread's in startup
and finish), and the threads' native ids ("tid NAME N").

    python3 phases.py DIR [SCALE]      (SCALE multiplies every duration)
"""
import importlib
import os
import sys
import threading
import time

DIR = sys.argv[1]
SCALE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
BODY = "".join("def f%d(x):\n    return [i * x for i in range(%d)]\n" % (i, i) for i in range(60))


def say(line):
    """One write per line: threads print at the same time."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def startup(seconds):
    sys.path.insert(0, DIR)
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        name = "phase_mod_%d" % n
        with open(os.path.join(DIR, name + ".py"), "w") as f:
            f.write(BODY)
        importlib.import_module(name)
        n += 1
    return n


def crunch(until):
    n = 0
    cpu = time.thread_time()
    while time.perf_counter() < until:
        n += sum(range(300))
    say("cpu %s %.6f" % (threading.current_thread().name, time.thread_time() - cpu))
    return n


def finish(until):
    n = 0
    while time.perf_counter() < until:
        n += len(str(n))
    return n


say("pid %d" % os.getpid())
say("tid MainThread %d" % threading.get_native_id())
t0, c0 = time.perf_counter(), time.thread_time()
startup(0.5 * SCALE)
t1, c1 = time.perf_counter(), time.thread_time()
workers = [threading.Thread(target=crunch, args=(t1 + 1.0 * SCALE,), name="cruncher-%d" % i)
           for i in (1, 2)]
for w in workers:
    w.start()
for w in workers:
    say("tid %s %d" % (w.name, w.native_id))
for w in workers:
    w.join()
t2, c2 = time.perf_counter(), time.thread_time()
finish(t2 + 0.5 * SCALE)
t3, c3 = time.perf_counter(), time.thread_time()
for name, a, b in (("startup", t0, t1), ("crunch", t1, t2), ("finish", t2, t3)):
    say("phase %s %.6f" % (name, b - a))
say("cpu MainThread-startup %.6f" % (c1 - c0))
say("cpu MainThread-finish %.6f" % (c3 - c2))
