"""Reports which engine runs after startup, as JSON on one line."""
import json
import os
import sys

# cpython: CPython's own trampoline is the evaluator; sys: what
# sys.is_stack_trampoline_active() answers (perfpy's engine serves it)
state = {"pid": os.getpid(), "perfpy": None, "cpython": None, "sys": None}
if hasattr(sys, "is_stack_trampoline_active"):
    state["cpython"] = state["sys"] = sys.is_stack_trampoline_active()
if "perfpy" in sys.modules:
    s = sys.modules["perfpy"]._stats()
    state["perfpy"] = s["backend"] if s["active"] else None
    if state["sys"] is not None:
        state["cpython"] = s["cpython"]


def marker_function():
    return 1


marker_function()
print(json.dumps(state))
