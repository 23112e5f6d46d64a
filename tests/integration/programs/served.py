"""A request loop in two threads, started plainly (issue 15's attach test
and bench/sample_attach.py): the main thread and a worker each handle
requests (handle(3000), its result checked against the one computed at
start) until stdin closes; then it prints "done", or "bad" if any result
was wrong. Its output is the same however often it is attached to.

    python served.py [--rate]

--rate: every 0.25 s, "RATE <time.monotonic()> <requests handled>" on
stderr: the program's own throughput.
"""
import sys
import threading
import time

stop = False
bad = []
handled = [0, 0]


def handle(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


WANT = handle(3000)


def serve(slot):
    while not stop:
        if handle(3000) != WANT:
            bad.append(slot)
        handled[slot] += 1


def wait_stdin():
    global stop
    sys.stdin.read()
    stop = True


def report():
    while not stop:
        time.sleep(0.25)
        sys.stderr.write("RATE %.4f %d\n" % (time.monotonic(), handled[0] + handled[1]))
        sys.stderr.flush()


worker = threading.Thread(target=serve, args=(1,))
worker.start()
threading.Thread(target=wait_stdin, daemon=True).start()
if "--rate" in sys.argv:
    threading.Thread(target=report, daemon=True).start()
print("ready", flush=True)
serve(0)
worker.join()
print("bad" if bad else "done", flush=True)
