"""Three threads, each busy in a function of its own for SECONDS (default
1.5) of wall time: the main thread (threading's "MainThread") in
main_work, "worker-1" in work_one, "worker-2" in work_two. Prints its pid
and each thread's name and native id ("tid NAME N") before the work ends,
so a test can match them with the profile's thread roots."""
import os
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
ready = threading.Barrier(3)


def spin(until):
    n = 0
    while time.time() < until:
        n += sum(range(200))
    return n


def work_one(until):
    ready.wait()
    return spin(until)


def work_two(until):
    ready.wait()
    return spin(until)


def main_work(until):
    ready.wait()
    return spin(until)


print("pid", os.getpid(), flush=True)
until = time.time() + SECONDS
threads = [threading.Thread(target=f, args=(until,), name=n)
           for f, n in ((work_one, "worker-1"), (work_two, "worker-2"))]
for t in threads:
    t.start()
print("tid MainThread", threading.get_native_id(), flush=True)
for t in threads:
    print("tid", t.name, t.native_id, flush=True)
main_work(until)
for t in threads:
    t.join()
