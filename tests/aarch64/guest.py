"""Runs inside Debian's arm64 python3.11 under qemu-user (tests/aarch64/run.py
starts it): loads the aarch64 perfpy module, calls Python functions through
trampolines and prints what the host side checks, one JSON object.

    guest.py LIBDIR perf|perf_jit|unwind|unwind-unregistered [PROBE]
"""
import json
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Shape:
    def __init__(self, w, h):
        self.w, self.h = w, h

    def area(self):
        return self.w * self.h


def outer_fn():
    def inner(x):
        return x * 3
    return [inner(i) for i in range(5)]


def workload():
    return {"fib": fib(18), "area": Shape(6, 7).area(), "nested": outer_fn(),
            "gen": sum(x for x in range(100))}


def main():
    libdir, what = sys.argv[1], sys.argv[2]
    sys.path.insert(0, libdir)
    import perfpy
    out = {"module": perfpy.__file__}
    if what in ("perf", "perf_jit"):
        perfpy.activate_stack_trampoline(what)
        out["active"] = perfpy.is_stack_trampoline_active()
        out["results"] = workload()
        perfpy.deactivate_stack_trampoline()
        out["inactive_after"] = not perfpy.is_stack_trampoline_active()
        try:
            perfpy.activate_stack_trampoline("nope")
        except ValueError as e:
            out["bad_backend"] = str(e)
    else:
        import ctypes
        probe = ctypes.CDLL(sys.argv[3])
        probe.pp_probe_backtrace.argtypes = [ctypes.c_int, ctypes.c_char_p,
                                             ctypes.c_size_t]
        buf = ctypes.create_string_buffer(16384)
        register = 1 if what == "unwind" else 0

        def probe_inner():
            return probe.pp_probe_backtrace(register, buf, len(buf))

        def probe_outer():
            return probe_inner()

        perfpy.activate_stack_trampoline("perf")
        out["frames"] = probe_outer()
        perfpy.deactivate_stack_trampoline()
        out["backtrace"] = buf.value.decode(errors="replace").splitlines()
    print(json.dumps(out))


main()
