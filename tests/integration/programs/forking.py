"""Fork: parent and child each name their own functions in their own map.

Prints "parent <pid>" and "child <pid>" lines. With argv[1] == "mp", the
child is a multiprocessing process (fork start method) instead of os.fork.
"""
import os
import sys


def common():
    return sum(range(100))


def child_only():
    return sum(range(200))


def parent_only():
    return sum(range(300))


def mp_target(q):
    q.put(os.getpid())
    child_only()


def main():
    common()
    print("parent %d" % os.getpid(), flush=True)
    if len(sys.argv) > 1 and sys.argv[1] == "mp":
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=mp_target, args=(q,))
        p.start()
        print("child %d" % q.get(), flush=True)
        p.join()
        parent_only()
        return p.exitcode
    pid = os.fork()
    if pid == 0:
        child_only()
        os._exit(0)
    print("child %d" % pid, flush=True)
    _, status = os.waitpid(pid, 0)
    parent_only()
    return status


if __name__ == "__main__":
    sys.exit(main())
