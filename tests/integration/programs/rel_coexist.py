"""perfpy next to other users of the frame-evaluation hook, and next to
subinterpreters. Run with perfpy on PYTHONPATH; PERFPY decides whether
perfpy starts with the program (the hook scenarios start it themselves).

    python rel_coexist.py hook_before BACKEND   other hook first, then perfpy
    python rel_coexist.py hook_after BACKEND    perfpy first, other hook over it
    python [-X perf] rel_coexist.py cpython BACKEND    CPython's own trampoline
                                                       (3.12+) on at start
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


def cpython(backend):
    cpython_at_start = sys.is_stack_trampoline_active()
    perfpy.activate_stack_trampoline(backend)
    expect(not sys.is_stack_trampoline_active(), "perfpy took over: one hook, not two")
    work_on_1()
    for call, args in (("activate", ("perf",)), ("deactivate", ())):
        try:
            getattr(sys, call + "_stack_trampoline")(*args)
        except RuntimeError as e:
            say("note: sys.%s_stack_trampoline while perfpy is active: %s" % (call, e))
        expect(perfpy.is_stack_trampoline_active(), "perfpy still on after sys." + call)
    work_on_2()
    perfpy.deactivate_stack_trampoline()
    sys.activate_stack_trampoline("perf")         # CPython's own again
    expect(sys.is_stack_trampoline_active(), "CPython's own back on")
    work_off_1()                                  # named by CPython, not perfpy
    perfpy.activate_stack_trampoline(backend)     # and perfpy takes over again
    expect(not sys.is_stack_trampoline_active(), "taken over again")
    work_on_3()
    say("note: CPython's trampoline on at start: %s" % cpython_at_start)


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
