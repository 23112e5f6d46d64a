"""A parent and a child that both burn CPU in named functions.

    python children.py os.fork|mp|spawn|subprocess

Prints "pid N" for every process it starts (and itself).
"""
import os
import subprocess
import sys
import time


def burn(seconds):
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += sum(range(200))
    return n


def child_work():
    print("pid %d" % os.getpid(), flush=True)
    return burn(0.8)


def parent_work():
    return burn(0.8)


def main(how):
    print("pid %d" % os.getpid(), flush=True)
    if how == "child":
        child_work()
        return 0
    if how == "os.fork":
        pid = os.fork()
        if pid == 0:
            child_work()
            os._exit(0)
        parent_work()
        os.waitpid(pid, 0)
    elif how in ("mp", "spawn"):
        import multiprocessing as mp
        ctx = mp.get_context("fork" if how == "mp" else "spawn")
        p = ctx.Process(target=child_work)
        p.start()
        parent_work()
        p.join()
    elif how == "subprocess":
        subprocess.run([sys.executable, os.path.abspath(__file__), "child"], check=True)
        parent_work()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
