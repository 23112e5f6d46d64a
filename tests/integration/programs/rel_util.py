"""Shared by the reliability programs (tests/integration/programs/rel_*.py).

The programs run with perfpy's engine started the way `perfpy run` starts
it (PYTHONPATH=build/lib, PERFPY=perf|jit); each prints "pid N" first (so
the test can remove the files of the processes it started) and "ok NAME
key=value..." when a scenario passed. A failed check raises, so the exit
status is not 0.
"""
import os
import sys

import perfpy


def backend():
    """The backend the process was started with: 'perf' or 'perf_jit'."""
    return "perf_jit" if os.environ.get("PERFPY") in ("jit", "perf_jit") else "perf"


def scale():
    """REL_SCALE multiplies the sizes of a scenario (make stress: 10)."""
    return max(1, int(os.environ.get("REL_SCALE", "1")))


def say(*words):
    """One line on stdout in one write(2): forked children do not mix lines."""
    sys.stdout.flush()
    os.write(1, (" ".join(str(w) for w in words) + "\n").encode())


def functions(prefix, count, filename, body="return %d"):
    """count new functions (new code objects) prefix_0..prefix_<count-1>,
    compiled from filename in batches; function i returns i."""
    made = []
    for start in range(0, count, 200):
        ns = {}
        src = "".join("def %s_%d():\n    %s\n" % (prefix, i, body % i)
                      for i in range(start, min(count, start + 200)))
        exec(compile(src, filename, "exec"), ns)
        made.extend(ns["%s_%d" % (prefix, i)] for i in range(start, min(count, start + 200)))
    return made


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def in_child(work):
    """Forks; the child runs work(), says "child <pid>" and exits (0, or 1
    if work raised). Returns the child's pid, in the parent."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            work()
            say("child %d" % os.getpid())
            code = 0
        finally:
            os._exit(code)
    return pid


def still_active():
    """perfpy did not turn itself off after a failure."""
    expect(perfpy.is_stack_trampoline_active(), "perfpy turned itself off")


say("pid %d" % os.getpid())
