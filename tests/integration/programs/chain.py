"""perfpy and another frame-evaluation hook together.

    python chain.py before|after     (otherhook on sys.path)

before: the other hook is installed first; perfpy's trampolines call it.
after:  the other hook is installed over perfpy and chains to it.
Prints "pid N", then "ok"; the test checks the map for work_* names.
"""
import os
import sys

import otherhook
import perfpy

print("pid %d" % os.getpid(), flush=True)


def work_one():
    return sum(range(10))


def work_two():
    return sum(range(10))


def work_three():
    return sum(range(10))


if sys.argv[1] == "before":
    otherhook.install()
    perfpy.activate_stack_trampoline("perf")
    assert not otherhook.is_current()         # perfpy is the interpreter's hook
    n = otherhook.count()
    work_one()
    assert otherhook.count() > n, "trampolines must call the other hook"
    perfpy.deactivate_stack_trampoline()
    assert otherhook.is_current(), "deactivation restores the other hook"
    n = otherhook.count()
    work_two()
    assert otherhook.count() > n
else:
    perfpy.activate_stack_trampoline("perf")
    otherhook.install()                       # chains to perfpy's hook
    n = otherhook.count()
    work_one()
    assert otherhook.count() > n
    perfpy.deactivate_stack_trampoline()
    assert otherhook.is_current(), "perfpy must not remove a hook installed over it"
    n = otherhook.count()
    work_two()                                # perfpy inactive: no name
    assert otherhook.count() > n
    otherhook.uninstall()                     # back to perfpy's (inactive) hook
    work_three()
    perfpy.activate_stack_trampoline("perf")  # and perfpy can come back
    work_three()
print("ok")
