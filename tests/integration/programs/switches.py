"""Context switches in two functions: napper() sleeps 1000 times, dozer()
40 times (each sleep leaves the CPU: one switch at the executing line
`time.sleep(...)`); neither uses enough CPU to be preempted much."""
import time


def napper():
    for _ in range(1000):
        time.sleep(0.0005)


def dozer():
    for _ in range(40):
        time.sleep(0.0005)


napper()
dozer()
