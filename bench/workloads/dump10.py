"""Ten threads for perfpy dump to read, for SECONDS (default 600): the main
thread waiting to join, three computing in Python (one holds the GIL, the
others wait for it), two sleeping, two waiting on a lock no one releases,
two blocked reading a pipe no one writes. Prints "ready PID" once every
thread is started, so that a dump finds them where they stay.

    python dump10.py [SECONDS]
"""
import os
import sys
import threading
import time


def compute(until):
    n = 0
    while time.monotonic() < until:
        n += sum(i * i for i in range(100))


def doze(until):
    while time.monotonic() < until:
        time.sleep(0.05)


def wait_lock(lock, until):
    lock.acquire(timeout=max(0.0, until - time.monotonic()))


def wait_pipe(fd):
    os.read(fd, 1)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
    until = time.monotonic() + seconds
    held = threading.Lock()
    held.acquire()
    r, _w = os.pipe()
    threads = [threading.Thread(target=compute, args=(until,), name="compute-%d" % i)
               for i in range(3)]
    threads += [threading.Thread(target=doze, args=(until,), name="doze-%d" % i)
                for i in range(2)]
    threads += [threading.Thread(target=wait_lock, args=(held, until), name="lock-%d" % i)
                for i in range(2)]
    threads += [threading.Thread(target=wait_pipe, args=(r,), name="pipe-%d" % i, daemon=True)
                for i in range(2)]
    for t in threads:
        t.start()
    print("ready %d" % os.getpid(), flush=True)
    for t in threads:
        if not t.daemon:
            t.join()


if __name__ == "__main__":
    main()
