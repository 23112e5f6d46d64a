"""perfpy top's target: the main thread burns its CPU in hot_function, a
second thread ("napper") sleeps; every 0.2 s the number of hot_function
calls so far goes to the file argv[1] (the test's view of the program going
on). Runs until killed, or until SIGINT (KeyboardInterrupt)."""
import os
import sys
import threading
import time


def napper():
    # long sleeps: woken rarely, it is almost never runnable (read mode
    # counts a runnable thread waiting for a CPU as running)
    while True:
        time.sleep(60)


def hot_function(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def main(status):
    threading.Thread(target=napper, name="napper", daemon=True).start()
    count, last = 0, time.monotonic()
    while True:
        hot_function(20000)
        count += 1
        if time.monotonic() - last >= 0.2:
            with open(status + ".new", "w") as f:
                f.write("%d\n" % count)
            os.rename(status + ".new", status)
            last = time.monotonic()


main(sys.argv[1])
