"""Programs that show how they were stopped: stopping.py CHECK OUT...

    handler OUT   spins until KeyboardInterrupt, then (after 0.3 s of its own
                  clean-up) writes "interrupted after N" to OUT and exits 3
    pool OUT      a multiprocessing pool of 3 workers that spin forever; each
                  worker's pid goes to OUT, one a line
    signals       prints the dispositions it started with: "usr2 <handler>",
                  "pipe <handler>", "blocked <sorted signal numbers>"
Prints "pid N" first.
"""
import os
import signal
import sys
import time

print("pid", os.getpid(), flush=True)
check = sys.argv[1]


def spin_forever(_):
    while True:
        sum(range(10000))


if check == "handler":
    n = 0
    try:
        while True:
            sum(range(100000))
            n += 1
    except KeyboardInterrupt:
        time.sleep(0.3)
        with open(sys.argv[2], "w") as f:
            f.write("interrupted after %d\n" % n)
        sys.exit(3)
elif check == "pool":
    import multiprocessing
    with multiprocessing.Pool(3) as pool:
        res = pool.map_async(spin_forever, range(3))
        deadline = time.monotonic() + 60          # workers start slowly under load
        while len(multiprocessing.active_children()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(sys.argv[2], "w") as f:
            for child in multiprocessing.active_children():
                f.write("%d\n" % child.pid)
        res.get()
elif check == "signals":
    print("usr2", int(signal.getsignal(signal.SIGUSR2)))
    print("pipe", int(signal.getsignal(signal.SIGPIPE)))
    print("blocked", " ".join(str(int(s)) for s in sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))))
    sum(range(3_000_000))
