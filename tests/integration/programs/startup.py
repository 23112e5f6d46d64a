"""Reports which engine runs after startup, as JSON on one line."""
import json
import os
import sys

state = {"pid": os.getpid(), "perfpy": None, "cpython": None}
if "perfpy" in sys.modules:
    s = sys.modules["perfpy"]._stats()
    state["perfpy"] = s["backend"] if s["active"] else None
if hasattr(sys, "is_stack_trampoline_active"):
    state["cpython"] = sys.is_stack_trampoline_active()


def marker_function():
    return 1


marker_function()
print(json.dumps(state))
