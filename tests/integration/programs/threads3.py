"""Three threads, each busy in a function of its own for SECONDS / 3
(SECONDS default 1.5) of its own CPU time (on a loaded machine a thread's
share of wall time can be a few samples): the main thread (threading's
"MainThread") in main_work, "worker-1" in work_one, "worker-2" in work_two
(started as "starting-2" and renamed once running, as a pool renames its
workers: after it has computed 0.15 s of CPU time under its first name, so
that a sampler sees it by both names). Prints its pid and each thread's name and native id ("tid NAME
N") before the work ends, so a test can match them with the profile's
thread roots."""
import os
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
ready = threading.Barrier(3)
early = threading.Event()         # worker-2 computed a while as starting-2


def spin(cpu):
    n = 0
    until = time.thread_time() + cpu
    while time.thread_time() < until:
        n += sum(range(200))
    return n


def work_one(cpu):
    ready.wait()
    return spin(cpu)


def work_two(cpu):
    spin(0.15)
    early.set()
    ready.wait()
    return spin(cpu)


def main_work(cpu):
    ready.wait()
    return spin(cpu)


print("pid", os.getpid(), flush=True)
cpu = SECONDS / 3             # each thread's CPU seconds
threads = [threading.Thread(target=f, args=(cpu,), name=n)
           for f, n in ((work_one, "worker-1"), (work_two, "starting-2"))]
for t in threads:
    t.start()
early.wait()
threads[1].name = "worker-2"
print("tid MainThread", threading.get_native_id(), flush=True)
for t in threads:
    print("tid", t.name, t.native_id, flush=True)
main_work(cpu)
for t in threads:
    t.join()
