"""CPython 3.13+'s PyUnstable_PerfTrampoline_SetPersistAfterFork(1) (what
pre-fork servers call, here through ctypes) after CPython's own -X perf
trampoline was switched off or taken over, then fork(). On plain CPython
(3.13.0, 3.13.18, 3.14.10, 3.15.2 measured), after
sys.deactivate_stack_trampoline the child copies the parent's map onto the
parent's map itself, which CPython left open: the file grows until the disk
is full. Run it under a file-size limit (ulimit -f).

    python -X perf persist_fork.py HOW BACKEND

HOW  perfpy   perfpy.activate_stack_trampoline(BACKEND) takes CPython's over
     served   perfpy started by PERFPY; sys.deactivate_stack_trampoline is
              served by it
     handed_back  perfpy takes over and hands CPython's back
              (perfpy.deactivate_stack_trampoline); then
              sys.deactivate_stack_trampoline is CPython's own
     cpython  sys.deactivate_stack_trampoline, CPython's own (the control:
              run it without perfpy)

Prints "pid N", "child N" (from the child), "child status S".
"""
import ctypes
import os
import sys

how, backend = sys.argv[1], sys.argv[2]
print("pid", os.getpid(), flush=True)


def before_fork():
    return 1


before_fork()
if how in ("perfpy", "handed_back"):
    import perfpy
    perfpy.activate_stack_trampoline(backend)
if how == "handed_back":
    perfpy.deactivate_stack_trampoline()
    assert sys.is_stack_trampoline_active(), "CPython's own is back"

    def after_hand_back():     # CPython names it: its map file is open again
        return 3

    after_hand_back()
if how in ("served", "cpython", "handed_back"):
    sys.deactivate_stack_trampoline()
ctypes.pythonapi.PyUnstable_PerfTrampoline_SetPersistAfterFork(1)
pid = os.fork()
if pid == 0:
    print("child", os.getpid(), flush=True)

    def in_child():
        return 2

    in_child()
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child status", status, flush=True)
