"""CPython 3.12+'s sys trampoline API as a program uses it; every answer
must be CPython's, with or without perfpy (perfpy run, perfpy record,
PERFPY=perf|jit: perfpy's engine then serves the calls).

    python sys_api.py SECONDS

named_1 and named_2 run (SECONDS each, busy) while the trampoline is on,
unnamed_1 while it is off. Prints "pid N" first and "ok" at the end.
"""
import os
import sys
import time

print("pid", os.getpid(), flush=True)
SECONDS = float(sys.argv[1])


def spin():
    until, x = time.perf_counter() + SECONDS, 0
    while time.perf_counter() < until:
        x += 1
    return x


def named_1():
    return spin()


def unnamed_1():
    return spin()


def named_2():
    return spin()


sys.activate_stack_trampoline("perf")
assert sys.is_stack_trampoline_active() is True, "on after activate"
named_1()
sys.deactivate_stack_trampoline()
assert sys.is_stack_trampoline_active() is False, "off after deactivate"
unnamed_1()
sys.activate_stack_trampoline("perf")
sys.activate_stack_trampoline("perf")          # again: harmless
assert sys.is_stack_trampoline_active() is True, "on again"
named_2()


def refusal(backend):
    """CPython's ValueError message for backend, or None if accepted."""
    try:
        sys.activate_stack_trampoline(backend)
        return None
    except ValueError as e:
        return str(e)


why = refusal("invalid")
assert why and "invalid backend: invalid" in why, why
assert sys.is_stack_trampoline_active() is True, "still on"
print("ok", flush=True)
