"""Four parts of wall-clock time, measured by the program itself.

Each round: crunch (CPU work), doze (time.sleep), drain (a blocking read of
a pipe that a helper thread writes to later) and queue_wait (acquiring a
threading.Lock that the helper holds). Each part takes 30-60 ms; the
program adds up its own perf_counter time per part and prints it as JSON
(seconds) on its last line, for a wall-clock profile to be checked against,
with crunch's CPU time (crunch_cpu: less than crunch's when the machine
made it wait for a CPU).

    python wall_parts.py [ROUNDS]
"""
import json
import os
import queue
import sys
import threading
import time

CRUNCH_MS, DOZE_MS, DRAIN_MS, LOCK_MS = 50, 40, 35, 30


def crunch(ms):
    end = time.perf_counter() + ms / 1000
    n = 0
    while time.perf_counter() < end:
        n += sum(i * i for i in range(200))
    return n


def doze(ms):
    time.sleep(ms / 1000)


def drain(fd):
    return os.read(fd, 16)


def queue_wait(lock):
    lock.acquire()
    lock.release()


def helper(orders, w, lock, held):
    while True:
        order = orders.get()
        if order is None:
            return
        if order == "write":
            time.sleep(DRAIN_MS / 1000)
            os.write(w, b"x" * 16)
        else:
            with lock:
                held.set()
                time.sleep(LOCK_MS / 1000)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    r, w = os.pipe()
    lock, held, orders = threading.Lock(), threading.Event(), queue.Queue()
    t = threading.Thread(target=helper, args=(orders, w, lock, held), name="helper")
    t.start()
    parts = dict.fromkeys(("crunch", "doze", "drain", "queue_wait"), 0.0)
    crunch_cpu = 0.0
    for _ in range(rounds):
        c0 = time.thread_time()
        t0 = time.perf_counter()
        crunch(CRUNCH_MS)
        t1 = time.perf_counter()
        crunch_cpu += time.thread_time() - c0
        doze(DOZE_MS)
        t2 = time.perf_counter()
        orders.put("write")
        t3 = time.perf_counter()
        drain(r)
        t4 = time.perf_counter()
        held.clear()
        orders.put("hold")
        held.wait()
        t5 = time.perf_counter()
        queue_wait(lock)
        t6 = time.perf_counter()
        parts["crunch"] += t1 - t0
        parts["doze"] += t2 - t1
        parts["drain"] += t4 - t3
        parts["queue_wait"] += t6 - t5
    orders.put(None)
    t.join()
    parts["crunch_cpu"] = crunch_cpu
    print(json.dumps(parts))


if __name__ == "__main__":
    main()
