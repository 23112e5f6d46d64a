"""many_children.py N: N forked children, one after another, each spending
about 20 ms of CPU in work(); prints "pid P" for itself and each child."""
import os
import sys
import time


def work():
    end = time.process_time() + 0.02
    n = 0
    while time.process_time() < end:
        n += 1
    return n


print("pid", os.getpid(), flush=True)
for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        work()
        os._exit(0)
    print("pid", pid, flush=True)
    os.waitpid(pid, 0)
