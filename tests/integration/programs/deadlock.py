"""Two threads, two locks, each holding one and waiting for the other; the
main thread sleeps, a second at a time, and after each sleep writes its
count, whether both threads live and whether both locks are held to the
file argv[1] (the test's view of the program going on unchanged). A third
thread, with argv[2] "pipe", waits in os.read on a pipe nobody writes."""
import os
import sys
import threading
import time

a = threading.Lock()
b = threading.Lock()
both = threading.Barrier(3)


def first():
    with a:
        both.wait()
        with b:                                     # waits for b
            pass


def second():
    with b:
        both.wait()
        with a:                                     # waits for a
            pass


def reader(fd):
    os.read(fd, 1)                                  # waits in read


def main(status):
    threads = [threading.Thread(target=first, name="first"),
               threading.Thread(target=second, name="second")]
    if sys.argv[2:] == ["pipe"]:
        r, w = os.pipe()
        threads.append(threading.Thread(target=reader, args=(r,), name="reader"))
    for t in threads:
        t.daemon = True
        t.start()
    both.wait()
    count = 0
    label = "sleeping"
    stamps = [0.5, 1.5]
    while True:
        with open(status + ".new", "w") as f:
            f.write("%d %s %s %s\n" % (count, all(t.is_alive() for t in threads),
                                       a.locked(), b.locked()))
        os.rename(status + ".new", status)
        time.sleep(1)                               # the main thread sleeps
        count += 1


main(sys.argv[1])
