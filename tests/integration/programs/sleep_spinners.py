"""A thread's sleep beside four threads that only compute (GIL-bound on an
interpreter with a GIL): the sleep must read as a sleep in a wall-clock
profile, not as a wait for a CPU, however busy the others keep the
machine.

The sleeper computes a little (so that it blocks owing CPU time, as a
thread that held the GIL does) and then runs nap(): time.sleep(SECONDS /
NAPS), NAPS times (default one nap of 1.5 s), while the four spin. It
measures its naps with perf_counter and with its own thread's schedstat
(/proc/thread-self/schedstat: CPU time and run_delay, the time the
scheduler counted it waiting for a CPU). Prints them as JSON (seconds) on
its last line, with `asked`, the time its naps asked to sleep.

--move: a sixth thread moves the sleeper from CPU to CPU every
millisecond (sched_setaffinity), as the scheduler's load balancing does
now and then. Linux 6.12+ keeps a thread that blocks owing CPU time
queued until it is picked or woken (delayed dequeue), and one moved
meanwhile is counted from then on as waiting for a CPU (its run_delay
grows by its sleep): what made a sleep read as a wait for a CPU, which
this makes happen in most runs instead of now and then.

    python sleep_spinners.py [SECONDS [NAPS]] [--move]
"""
import json
import os
import sys
import threading
import time

SPINNERS = 4


def schedstat():
    """This thread's CPU time and run_delay (seconds), or zeros."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            cpu, delay = f.read().split()[:2]
        return int(cpu) / 1e9, int(delay) / 1e9
    except (OSError, ValueError):
        return 0.0, 0.0


def spin(stop):
    n = 0
    while not stop.is_set():
        n += sum(i * i for i in range(100))
    return n


def crunch(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        sum(i * i for i in range(100))


def nap(seconds):
    time.sleep(seconds)


def sleeper(seconds, naps, own, where):
    where.append(threading.get_native_id() if hasattr(threading, "get_native_id") else 0)
    wall = cpu = delay = 0.0
    for _ in range(naps):
        crunch(5)
        c0, d0 = schedstat()
        t0 = time.perf_counter()
        nap(seconds / naps)
        wall += time.perf_counter() - t0
        c1, d1 = schedstat()
        cpu += c1 - c0
        delay += d1 - d0
    own.update(wall=wall, cpu=cpu, run_delay=delay, asked=seconds)


def mover(where, stop):
    cpus = sorted(os.sched_getaffinity(0))
    i = 0
    while not stop.is_set() and len(cpus) > 1:
        if where and where[0]:
            try:
                os.sched_setaffinity(where[0], {cpus[i % len(cpus)]})
            except OSError:
                return
        i += 1
        time.sleep(0.001)


def main():
    args = [a for a in sys.argv[1:] if a != "--move"]
    seconds = float(args[0]) if args else 1.5
    naps = int(args[1]) if len(args) > 1 else 1
    stop, moved = threading.Event(), threading.Event()
    spinners = [threading.Thread(target=spin, args=(stop,), name="spin%d" % i)
                for i in range(SPINNERS)]
    own, where = {}, []
    holder = threading.Thread(target=sleeper, args=(seconds, naps, own, where), name="holder")
    helpers = [threading.Thread(target=mover, args=(where, moved), name="mover")] \
        if "--move" in sys.argv[1:] else []
    for t in spinners:
        t.start()
    time.sleep(0.1)                 # the spinners under way first
    holder.start()
    for t in helpers:
        t.start()
    holder.join()
    moved.set()
    stop.set()
    for t in spinners + helpers:
        t.join()
    print(json.dumps(own))


if __name__ == "__main__":
    main()
