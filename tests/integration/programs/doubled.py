"""Three functions, each busy for a time of its own thread's CPU: f for
K x 0.2 s, g and h for 0.4 s each; f's work doubles from K=1 to K=2. Prints
each function's share of the process's CPU time, as the program measured
it: the interpreter's start-up included, as in a profile of the process
(at K=1 about "f 0.18 g 0.36 h 0.36"; of the three functions' time alone,
f's change read 2-3 points over a profile's where the start-up took 0.1
to 0.3 s).

    python3 doubled.py K
"""
import os, sys, time
K = float(sys.argv[1])
def f():
    end = time.thread_time() + K * 0.2
    n = 0
    while time.thread_time() < end:
        n += 1
def g():
    end = time.thread_time() + 0.4
    n = 0
    while time.thread_time() < end:
        n += 1
def h():
    end = time.thread_time() + 0.4
    n = 0
    while time.thread_time() < end:
        n += 1
t = {}
for fn in (f, g, h):
    c = time.thread_time(); fn(); t[fn.__name__] = time.thread_time() - c
tot = time.process_time()
print(" ".join("%s %.4f" % (k, v / tot) for k, v in t.items()))
