"""A program for the tooling-fault tests of perfpy record.

    python rel_tooling.py spin SECONDS STATUS   spins in spin() for SECONDS
                                                of wall time, then exits STATUS
    python rel_tooling.py selfkill              spins, then SIGKILLs itself

Prints "pid N" first and "program finished normally" at a normal end.
"""
import os
import signal
import sys
import time

print("pid %d" % os.getpid(), flush=True)


def spin():
    return sum(range(1000))


if sys.argv[1] == "spin":
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        spin()
    print("program finished normally", flush=True)
    sys.exit(int(sys.argv[3]))
else:
    for _ in range(40000):
        spin()
    os.kill(os.getpid(), signal.SIGKILL)
