"""The Python API, run under `perfpy run` or with perfpy on PYTHONPATH.

    python api.py CHECK

Prints the pid first, then "ok CHECK" when the check passed.
"""
import os
import sys
import threading

import perfpy

print("pid %d" % os.getpid(), flush=True)
check = sys.argv[1]


def fresh(i):
    """A new function (new code object) each call."""
    ns = {}
    exec("def f_%d():\n    return %d\n" % (i, i), ns)
    return ns["f_%d" % i]


if check == "invalid":
    for bad in ("nope", "", "PERF", "perf "):
        try:
            perfpy.activate_stack_trampoline(bad)
        except ValueError as e:
            assert "invalid backend: %s" % bad in str(e), str(e)
        else:
            raise AssertionError("no ValueError for %r" % bad)
    try:
        perfpy.activate_stack_trampoline(3)
    except TypeError:
        pass
    else:
        raise AssertionError("no TypeError for an int")

elif check == "toggle":
    perfpy.activate_stack_trampoline("perf")
    perfpy.activate_stack_trampoline("perf")          # twice is fine
    assert perfpy.is_stack_trampoline_active()
    f = fresh(0)
    f()
    before = perfpy._stats()
    for i in range(10000):
        perfpy.deactivate_stack_trampoline()
        assert not perfpy.is_stack_trampoline_active()
        f()
        perfpy.activate_stack_trampoline("perf")
        assert perfpy.is_stack_trampoline_active()
        f()
    after = perfpy._stats()
    assert after["extra_index"] == before["extra_index"], (before, after)
    # No new trampolines for code already seen: the arena did not grow.
    assert after["trampolines"] == before["trampolines"], (before, after)
    assert after["bytes_per_trampoline"] <= 64, after

elif check == "inactive_makes_nothing":
    # active, new functions get trampolines (the positive twin) ...
    perfpy.activate_stack_trampoline("perf")
    n = perfpy._stats()["trampolines"]
    for i in range(100):
        fresh(i)()
    active = perfpy._stats()["trampolines"]
    assert active >= n + 100, (n, active)
    # ... deactivated, new functions get none
    perfpy.deactivate_stack_trampoline()
    assert not perfpy.is_stack_trampoline_active()
    for i in range(100, 200):
        fresh(i)()
    assert perfpy._stats()["trampolines"] == active, (active, perfpy._stats())

elif check == "threads":
    perfpy.activate_stack_trampoline("perf")
    errors = []
    stop = threading.Event()

    made = []

    def make(k):
        try:
            for i in range(500):
                f = fresh(k * 1000 + i)
                f()
                made.append(f)
        except Exception as e:  # pragma: no cover
            errors.append(e)

    def toggler():
        while not stop.is_set():
            perfpy.deactivate_stack_trampoline()
            perfpy.activate_stack_trampoline("perf")

    t = threading.Thread(target=toggler)
    t.start()
    workers = [threading.Thread(target=make, args=(k,)) for k in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    t.join()
    assert not errors, errors
    # a function first called while the toggler had perfpy off has no
    # trampoline yet: one more call each, with perfpy on, names all 4,000
    perfpy.activate_stack_trampoline("perf")
    for f in made:
        f()

elif check == "switch_backend":
    perfpy.activate_stack_trampoline("perf")
    fresh(1)()
    try:
        perfpy.activate_stack_trampoline("perf_jit")
    except ValueError as e:
        assert "backend" in str(e), str(e)
    else:
        raise AssertionError("switching backends in one process must fail")
    assert perfpy.is_stack_trampoline_active()

elif check == "generators_and_throw":
    perfpy.activate_stack_trampoline("perf")

    def gen():
        try:
            yield 1
            yield 2
        except KeyError:
            yield "caught"

    g = gen()
    assert next(g) == 1
    assert g.throw(KeyError("x")) == "caught"

    def deep(n):
        if n == 0:
            raise ValueError("bottom")
        return deep(n - 1)

    try:
        deep(100)
    except ValueError as e:
        assert str(e) == "bottom"
    else:
        raise AssertionError("exception lost")

else:
    raise SystemExit("unknown check " + check)

print("ok " + check)
