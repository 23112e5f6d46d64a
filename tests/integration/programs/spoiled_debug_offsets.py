"""Spoils one field of this interpreter's own _Py_DebugOffsets (CPython
3.13+ publishes them at the start of _PyRuntime for readers outside the
process and never reads them itself: the program runs on unchanged), then
spins in spin() <- work() <- <module> until its stdin closes.

    python spoiled_debug_offsets.py cookie|version|free_threaded|none
"""
import ctypes
import sys
import threading

what = sys.argv[1]
runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
if what == "cookie":
    ctypes.memmove(runtime, b"xdebugpz", 8)
elif what == "version":
    ctypes.c_uint64.from_address(runtime + 8).value = 0x036300f0      # 3.99.0
elif what == "free_threaded":
    ctypes.c_uint64.from_address(runtime + 16).value = 1
elif what != "none":
    sys.exit("what to spoil: cookie, version, free_threaded or none")

done = threading.Event()


def wait_for_stdin():
    sys.stdin.read()
    done.set()


def spin():
    n = 0
    while not done.is_set():
        for _ in range(10000):
            n += 1
    return n


def work():
    return spin()


threading.Thread(target=wait_for_stdin, daemon=True).start()
print("ready", flush=True)
work()
