"""Processes with perfpy's engine on (PERFPY=perf|jit).

    python rel_processes.py SCENARIO

many_forks      12 children forked at once; each makes only<i>_<k> while the
                others and the parent make their own
pool_fork       multiprocessing.Pool(4), start methods fork, spawn and
pool_spawn      forkserver: 40 tasks, each makes task<n>_<k> in a worker
pool_forkserver
subprocesses    4 Python subprocesses at once (sub<i>_work burns CPU in
                each), plus a forked child (forked_work), for perfpy record

Prints "pid N", "child N" for every child that made functions, and
"ok SCENARIO ..." at the end.
"""
import multiprocessing as mp
import os
import subprocess
import sys
import time

from rel_util import expect, functions, in_child, say, still_active

HERE = os.path.abspath(__file__)


def burn(seconds, work):
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += work()
    return n


def many_forks():
    common = functions("common", 20, "/rel/procs/common.py")
    expect(sum(f() for f in common) == 190, "common")

    def child_work(i):
        mine = functions("only%d" % i, 30, "/rel/procs/child.py")
        expect(sum(f() for f in mine) == 435, "child sum")
        expect(sum(f() for f in common) == 190, "inherited")
        still_active()

    pids = [in_child(lambda: child_work(i)) for i in range(12)]
    parent = functions("parent", 30, "/rel/procs/parent.py")
    expect(sum(f() for f in parent) == 435, "parent sum")
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        expect(status == 0, "child %d: %d" % (pid, status))
    still_active()
    return "children=12"


def task(n):
    fns = functions("task%d" % n, 10, "/rel/procs/tasks.py")
    expect(sum(f() for f in fns) == 45, "task sum")
    still_active()
    return os.getpid()


def helpers():
    """Pids of multiprocessing's own processes (each runs perfpy too)."""
    from multiprocessing import forkserver, resource_tracker
    found = [getattr(resource_tracker._resource_tracker, "_pid", None),
             getattr(forkserver._forkserver, "_forkserver_pid", None)]
    return [pid for pid in found if pid]


def pool(method):
    ctx = mp.get_context(method)
    with ctx.Pool(4) as p:
        for w in p._pool:
            say("helper %d" % w.pid)
        workers = sorted(set(p.map(task, range(40), chunksize=1)))
    for pid in workers:
        say("child %d" % pid)
    for pid in helpers():
        say("helper %d" % pid)
    expect(os.getpid() not in workers, "tasks ran in the parent")
    still_active()
    return "workers=%d tasks=40" % len(workers)


def sub_work(i):
    return burn(0.4, functions("sub%d_work" % i, 1, "/rel/procs/sub.py",
                               body="return sum(range(300)) + %d")[0])


def subprocesses():
    if len(sys.argv) > 2:       # one of the children
        sub_work(int(sys.argv[2]))
        return "child"
    procs = [subprocess.Popen([sys.executable, HERE, "subprocesses", str(i)])
             for i in range(4)]
    pid = os.fork()
    if pid == 0:
        burn(0.4, functions("forked_work", 1, "/rel/procs/forked.py",
                            body="return sum(range(300)) + %d")[0])
        os._exit(0)
    for p in procs:
        expect(p.wait() == 0, "subprocess failed")
    _, status = os.waitpid(pid, 0)
    expect(status == 0, "forked child failed")
    return "subprocesses=4 forked=1"


if __name__ == "__main__":
    name = sys.argv[1]
    if name.startswith("pool_"):
        result = pool(name[5:])
    else:
        result = globals()[name]()
    say("ok %s %s" % (name, result))
