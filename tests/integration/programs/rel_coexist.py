"""perfpy next to other users of the frame-evaluation hook, and next to
subinterpreters. Run with perfpy on PYTHONPATH; PERFPY decides whether
perfpy starts with the program (the hook scenarios start it themselves).

    python rel_coexist.py hook_before BACKEND   other hook first, then perfpy
    python rel_coexist.py hook_after BACKEND    perfpy first, other hook over it
    python [-X perf] rel_coexist.py cpython BACKEND    CPython's own trampoline
                                                       (3.12+) on at start or
                                                       switched on before perfpy
    python rel_coexist.py cpython_off BACKEND   sys's functions with perfpy off
    python rel_coexist.py subinterpreters KIND BACKEND   KIND: isolated | legacy

BACKEND is perf or perf_jit. Prints "pid N", notes, and "ok SCENARIO".
Functions named work_on_* must be named for perf; work_off_* must not.
"""
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


def both(perfpy_on, cpython_on, when):
    """Both sides tell the truth: exactly one hook (or none) is on."""
    got = (perfpy.is_stack_trampoline_active(), sys.is_stack_trampoline_active())
    expect(got == (perfpy_on, cpython_on), "%s: perfpy %s, sys %s, expected %s, %s"
           % ((when,) + got + (perfpy_on, cpython_on)))


def cpython(backend):
    """CPython's own trampoline, on at start (-X perf) or switched on here
    before perfpy: perfpy takes it over and hands it back. sys's activate
    and deactivate are never called while CPython's own is on (CPython
    3.13.12+/3.14.3+ crash at exit after that by themselves, issue 146522)."""
    at_start = sys.is_stack_trampoline_active()
    if not at_start:
        sys.activate_stack_trampoline("perf")     # the first initialisation
    both(False, True, "before perfpy")
    perfpy.activate_stack_trampoline(backend)
    both(True, False, "perfpy took over")
    work_on_1()
    for call, args in (("activate", ("perf",)), ("deactivate", ())):
        try:
            getattr(sys, call + "_stack_trampoline")(*args)
            say("note: sys.%s_stack_trampoline while perfpy is active: accepted" % call)
        except RuntimeError as e:
            say("note: sys.%s_stack_trampoline while perfpy is active: %s" % (call, e))
        both(True, False, "after sys." + call)
    work_on_2()
    perfpy.deactivate_stack_trampoline()
    both(False, True, "perfpy handed back")     # no sys call needed
    work_off_1()                                  # named by CPython, not perfpy
    perfpy.activate_stack_trampoline(backend)     # and perfpy takes over again
    both(True, False, "taken over again")
    work_on_3()
    perfpy.deactivate_stack_trampoline()
    both(False, True, "handed back again")
    say("note: CPython's trampoline on at start: %s" % at_start)


def cpython_off(backend):
    """sys's functions work as CPython's own while perfpy is off (the guard
    perfpy puts on 3.15 refuses only while perfpy is on)."""
    perfpy.activate_stack_trampoline(backend)
    work_on_1()
    perfpy.deactivate_stack_trampoline()
    both(False, False, "perfpy on and off")
    sys.activate_stack_trampoline("perf")
    both(False, True, "sys.activate_stack_trampoline with perfpy off")
    work_off_1()
    say("note: sys.activate_stack_trampoline with perfpy off: accepted")


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
