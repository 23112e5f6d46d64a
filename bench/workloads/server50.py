"""A server that mostly waits: 50 worker threads take requests from a
queue (200 a second from a feeder thread), each computes about half a
millisecond, then waits 5 ms for a "downstream" reply (a sleep) and 2 ms
for a pipe it writes to itself. Runs for `scale` seconds."""
import os
import queue
import threading
import time


def handle(n):
    return sum(i * i for i in range(n))


def worker(q):
    r, w = os.pipe()
    try:
        while True:
            job = q.get()
            if job is None:
                return
            handle(400)
            time.sleep(0.005)
            os.write(w, b"x")
            os.read(r, 1)
    finally:
        os.close(r)
        os.close(w)


def main(scale):
    q = queue.Queue()
    workers = [threading.Thread(target=worker, args=(q,), name="worker-%d" % i)
               for i in range(50)]
    for t in workers:
        t.start()
    end = time.monotonic() + scale
    while time.monotonic() < end:
        q.put(1)
        time.sleep(0.005)
    for _ in workers:
        q.put(None)
    for t in workers:
        t.join()
