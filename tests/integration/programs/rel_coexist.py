"""perfpy next to other users of the frame-evaluation hook, and next to
subinterpreters. Run with perfpy on PYTHONPATH; PERFPY decides whether
perfpy starts with the program (the hook scenarios start it themselves).

    python rel_coexist.py hook_before BACKEND   other hook first, then perfpy
    python rel_coexist.py hook_after BACKEND    perfpy first, other hook over it
    python [-X perf] rel_coexist.py cpython BACKEND    CPython's own trampoline
                                                       (3.12+) on at start or
                                                       switched on before perfpy
    python rel_coexist.py cpython_off BACKEND   sys's functions, perfpy off
    python rel_coexist.py subinterpreters KIND BACKEND   KIND: isolated | legacy

BACKEND is perf or perf_jit. Prints "pid N", notes, and "ok SCENARIO".
Functions named work_on_* must be named for perf; work_off_* must not.
"""
import os
import sys

import perfpy
from rel_util import expect, say

scenario, arg = sys.argv[1], sys.argv[2]


def work_on_1():
    return sum(range(10))


def work_off_1():
    return sum(range(10))


def work_on_2():
    return sum(range(10))


def work_on_3():
    return sum(range(10))


def hook_before(backend):
    import otherhook
    otherhook.install()
    perfpy.activate_stack_trampoline(backend)
    expect(not otherhook.is_current(), "perfpy is the interpreter's hook")
    n = otherhook.count()
    work_on_1()
    expect(otherhook.count() > n, "trampolines call the other hook")
    perfpy.deactivate_stack_trampoline()
    expect(otherhook.is_current(), "deactivation restores the other hook")
    n = otherhook.count()
    work_off_1()
    expect(otherhook.count() > n, "the other hook still runs")
    perfpy.activate_stack_trampoline(backend)
    work_on_2()
    expect(otherhook.count() > n + 1, "and again through perfpy")


def hook_after(backend):
    import otherhook
    perfpy.activate_stack_trampoline(backend)
    otherhook.install()
    n = otherhook.count()
    work_on_1()
    expect(otherhook.count() > n, "the other hook chains to perfpy")
    perfpy.deactivate_stack_trampoline()
    expect(otherhook.is_current(), "perfpy never removes a hook installed over it")
    n = otherhook.count()
    work_off_1()
    expect(otherhook.count() > n, "the other hook still runs")
    otherhook.uninstall()
    perfpy.activate_stack_trampoline(backend)
    work_on_2()


def both(perfpy_on, sys_on, when):
    """Both sides tell the truth: sys answers for whichever engine owns the
    hook (perfpy's once perfpy started, else CPython's)."""
    got = (perfpy.is_stack_trampoline_active(), sys.is_stack_trampoline_active())
    expect(got == (perfpy_on, sys_on), "%s: perfpy %s, sys %s, expected %s, %s"
           % ((when,) + got + (perfpy_on, sys_on)))


def map_fds():
    """How many of this process's descriptors are open on its perf map."""
    path = "/tmp/perf-%d.map" % os.getpid()
    try:
        want = os.stat(path)
    except FileNotFoundError:
        return 0
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            st = os.stat("/proc/self/fd/" + fd)
        except OSError:
            continue
        n += (st.st_dev, st.st_ino) == (want.st_dev, want.st_ino)
    return n


def cpython(backend):
    """CPython's own trampoline, on at start (-X perf) or switched on here
    before perfpy: perfpy takes it over (closing CPython's map file) and
    perfpy.deactivate_stack_trampoline hands it back; then sys's functions,
    called while perfpy's engine owns the hook, are served by it (CPython's
    answers, no error); sys.deactivate_stack_trampoline turns tracing off
    for good. CPython's trampoline is never initialised again (CPython
    3.13.12+/3.14.3+ crash at exit after that by themselves, issue 146522)."""
    own_fds = 1 if backend == "perf" else 0       # perfpy's own map descriptor
    at_start = sys.is_stack_trampoline_active()
    if not at_start:
        sys.activate_stack_trampoline("perf")     # the first initialisation
    both(False, True, "before perfpy")
    expect(map_fds() == 1, "CPython's map open before perfpy: %d" % map_fds())
    perfpy.activate_stack_trampoline(backend)
    both(True, True, "perfpy took over")
    expect(map_fds() == own_fds, "CPython's map closed at the take-over: %d "
           "descriptors on it, expected %d" % (map_fds(), own_fds))
    work_on_1()
    perfpy.deactivate_stack_trampoline()
    both(False, True, "perfpy handed back")       # CPython's own again
    work_cpython_1()                              # named by CPython
    perfpy.activate_stack_trampoline(backend)     # and perfpy takes over again
    both(True, True, "taken over again")
    sys.activate_stack_trampoline("perf")         # served by perfpy's engine
    both(True, True, "sys.activate_stack_trampoline('perf') served")
    say("note: sys.activate_stack_trampoline while perfpy is active: accepted")
    work_on_2()
    sys.deactivate_stack_trampoline()             # off for good
    both(False, False, "sys.deactivate_stack_trampoline served")
    say("note: sys.deactivate_stack_trampoline while perfpy is active: accepted")
    work_off_1()                                  # named by nobody
    sys.activate_stack_trampoline("perf")         # perfpy's engine again
    both(True, True, "sys.activate_stack_trampoline('perf') again")
    work_on_3()
    perfpy.deactivate_stack_trampoline()          # nothing to hand back
    both(False, False, "off")
    say("note: CPython's trampoline on at start: %s" % at_start)


def cpython_off(backend):
    """Before perfpy's first activation sys's functions are CPython's own;
    after it, sys.activate_stack_trampoline("perf") with perfpy off turns
    perfpy's engine on (jit: naming in CPython's map too), and
    "perf_jit" with perfpy's perf-map engine hands the hook to CPython's
    own trampoline (3.13+)."""
    expect(sys.activate_stack_trampoline.__module__ == "sys", "sys's own before perfpy")
    perfpy.activate_stack_trampoline(backend)
    work_on_1()
    perfpy.deactivate_stack_trampoline()
    both(False, False, "perfpy on and off")
    sys.activate_stack_trampoline("perf")
    both(True, True, "sys.activate_stack_trampoline with perfpy off")
    work_on_2()
    say("note: sys.activate_stack_trampoline with perfpy off: accepted")
    if backend == "perf" and sys.version_info >= (3, 13):
        try:
            sys.activate_stack_trampoline("perf_jit")  # CPython's own, from here
        except ValueError as e:                        # 3.13.0: -X perf_jit only
            expect("invalid backend: perf_jit" in str(e), str(e))
            both(True, True, "perf_jit refused by CPython, perfpy's engine goes on")
            say("note: perf_jit refused by CPython: %s" % e)
            return
        both(False, True, "sys.activate_stack_trampoline('perf_jit') handed over")
        work_cpython_1()
        sys.deactivate_stack_trampoline()
        both(False, False, "CPython's deactivated")
        say("note: perf_jit handed to CPython")


def work_cpython_1():
    return sum(range(10))


SUB_CODE = """
import sys
try:
    import perfpy
except ImportError as e:
    print("sub: import refused:", e, flush=True)
else:
    print("sub: active here:", perfpy.is_stack_trampoline_active(), flush=True)
    try:
        perfpy.activate_stack_trampoline(%r)
        print("sub: activated", flush=True)
    except RuntimeError as e:
        print("sub: activate refused:", e, flush=True)
    perfpy.deactivate_stack_trampoline()
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print("sub: fib", fib(20), flush=True)
"""


def subinterpreters(kind):
    v = sys.version_info
    if v >= (3, 13):
        import _interpreters as interp
        create = (lambda: interp.create("legacy")) if kind == "legacy" else interp.create
        run = interp.exec
    else:
        import _xxsubinterpreters as interp
        if v >= (3, 12):
            create = lambda: interp.create(isolated=(kind != "legacy"))
        elif kind == "legacy":
            create = interp.create       # before 3.12 every one shares the GIL
        else:
            say("note: no isolated subinterpreters before 3.12")
            return
        run = interp.run_string
    backend = sys.argv[3]
    was = perfpy.is_stack_trampoline_active()
    for i in range(3):
        sub = create()
        run(sub, SUB_CODE % backend)
        interp.destroy(sub)
        work_on_1() if was else work_off_1()
    expect(perfpy.is_stack_trampoline_active() == was, "the main interpreter's state kept")
    # the main interpreter toggles freely after its subinterpreters are gone
    perfpy.deactivate_stack_trampoline()
    perfpy.activate_stack_trampoline(backend)
    work_on_2()
    perfpy.deactivate_stack_trampoline()
    perfpy.activate_stack_trampoline(backend)


if __name__ == "__main__":
    globals()[scenario](arg)
    say("ok %s" % scenario)
