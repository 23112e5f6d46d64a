"""Resource faults and resource use, with or without perfpy's engine.

    python rel_faults.py work N        makes and calls N new functions (a long
                                       file name, so a small disk fills),
                                       forks a child that makes more, and
                                       prints the same checksums every run
    python rel_faults.py toggles N     N activate/deactivate pairs, a call in
                                       each state: prints memory and fds
    python rel_faults.py functions N   N new functions made, called once and
                                       dropped: prints memory and fds

Prints "pid N" first (when perfpy is importable), then its results. The
measuring scenarios print "rss_kb=A/B fds=C/D trampolines=E/F n=N slot=S"
(before and after; from /proc/self/status and /proc/self/fd; S is the
arena's bytes per trampoline).
"""
import gc
import os
import sys

try:
    import perfpy
except ImportError:
    perfpy = None
print("pid %d" % os.getpid(), flush=True)

FILE = "/rel/faults/" + "a_long_directory_name_to_fill_a_small_disk_quickly/" * 2 + "f.py"


def make(prefix, n):
    ns = {}
    for start in range(0, n, 500):
        src = "".join("def %s_%d():\n    return %d\n" % (prefix, i, i)
                      for i in range(start, min(n, start + 500)))
        exec(compile(src, FILE, "exec"), ns)
    return [ns["%s_%d" % (prefix, i)] for i in range(n)]


def work(n):
    fns = make("w", n)
    print("sum", sum(f() for f in fns), flush=True)
    pid = os.fork()
    if pid == 0:
        print("child sum", sum(f() for f in make("c", 1000)), flush=True)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print("child status", status, flush=True)
    print("done", flush=True)


def usage():
    gc.collect()
    rss = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    fds = len(os.listdir("/proc/self/fd"))
    tramps = perfpy._stats()["trampolines"] if perfpy else 0
    return rss, fds, tramps


def report(before, after, n):
    slot = perfpy._stats()["bytes_per_trampoline"] if perfpy else 0
    print("rss_kb=%d/%d fds=%d/%d trampolines=%d/%d n=%d slot=%d" % (
        before[0], after[0], before[1], after[1], before[2], after[2], n, slot), flush=True)


def toggles(n):
    backend = "perf_jit" if os.environ.get("PERFPY") == "jit" else "perf"
    f = make("t", 1)[0]
    active = perfpy is not None and perfpy.is_stack_trampoline_active()
    for _ in range(1000):          # warm up: what a first toggle allocates
        if active:
            perfpy.deactivate_stack_trampoline()
            perfpy.activate_stack_trampoline(backend)
        f()
    before = usage()
    for _ in range(n):
        if active:
            perfpy.deactivate_stack_trampoline()
        f()
        if active:
            perfpy.activate_stack_trampoline(backend)
        f()
    report(before, usage(), n)


def functions(n):
    make("warm", 2000)             # warm up pymalloc's pools and the arena
    before = usage()
    done = 0
    while done < n:                # new code objects, called once, dropped
        batch = min(500, n - done)
        for f in make("f%d" % done, batch):
            f()
        done += batch
    report(before, usage(), n)


if __name__ == "__main__":
    globals()[sys.argv[1]](int(sys.argv[2]))
