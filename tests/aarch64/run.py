#!/usr/bin/python3
"""The aarch64 stage of the test suite: the cross build (make aarch64, with
Debian's gcc-aarch64-linux-gnu) tested under qemu-user, on any x86-64 host.

  1. the engine's unit tests, built for arm64 (BUILD/aarch64/unit-tests);
  2. the module, loaded by Debian's arm64 python3.11 (unpacked by
     scripts/aarch64-setup, run as qemu-aarch64-static -L ROOT python3.11):
     Python functions called through trampolines give the right results,
     the perf map is in CPython's format, and the jitdump passes the host's
     `perfpy jitdump`;
  3. unwinding through two nested trampolines with libgcc and the engine's
     CFI (tests/aarch64/unwind_probe.c) reaches the interpreter's caller;
     without the CFI it stops at the first trampoline.

What it cannot test: perf sampling on ARM hardware (perf under qemu-user
samples qemu, not the guest). When the cross tools or the arm64 packages
cannot be installed, the stage is one counted skip with the reason.

    tests/aarch64/run.py [--build BUILD]
Ends with "N passed, N failed[, N skipped]" (tests/run-all).
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAP_LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) py::(.+):(.+)$")

passed = failed = 0


def result(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok    " + name)
    else:
        failed += 1
        print("FAIL  " + name)
        for line in str(detail).splitlines()[-40:]:
            print("      " + line)


def skip(reason):
    print("aarch64 stage skipped: " + reason)
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)


def main():
    build = "build"
    if len(sys.argv) == 3 and sys.argv[1] == "--build":
        build = sys.argv[2]
    os.chdir(ROOT_DIR)
    a64 = os.path.join(build, "aarch64")
    root = os.path.join(a64, "root")

    setup = subprocess.run(["scripts/aarch64-setup", root], capture_output=True, text=True)
    if setup.returncode != 3:
        sys.stdout.write(setup.stdout)
    if setup.returncode == 3:
        reason = setup.stdout.strip().splitlines()[-1] if setup.stdout.strip() else "?"
        skip(reason.replace("aarch64: ", "", 1))
    if setup.returncode != 0:
        result("set-up (scripts/aarch64-setup)", False, setup.stdout + setup.stderr)
        return
    mk = subprocess.run(["make", "--no-print-directory", "BUILD=" + build, "aarch64"],
                        capture_output=True, text=True)
    result("cross build (make aarch64: CLI, unit tests, module, probe)",
           mk.returncode == 0, mk.stdout + mk.stderr)
    if mk.returncode != 0:
        return
    qemu = ["qemu-aarch64-static", "-L", root]

    # 1. unit tests: their own summary line counts as one result each way
    # (test_options.c runs the arm64 perfpy beside them: through qemu too)
    ut = subprocess.run(qemu + [os.path.join(a64, "unit-tests")], capture_output=True,
                        text=True, timeout=900,
                        env=dict(os.environ, PERFPY_TEST_EXEC_WRAPPER=shlex.join(qemu)))
    last = (ut.stdout.strip().splitlines() or [""])[-1]
    m = re.match(r"^(\d+) passed, (\d+) failed", last)
    result("aarch64 unit tests under qemu (%s)" % last,
           ut.returncode == 0 and m is not None and m.group(2) == "0",
           ut.stdout + ut.stderr)

    python = qemu + [os.path.join(root, "usr/bin/python3.11"), "-S",
                     "tests/aarch64/guest.py", os.path.join(a64, "lib")]
    perfpy = os.path.join(build, "perfpy")
    with tempfile.TemporaryDirectory(prefix="perfpy-aarch64-") as tmp:
        env = dict(os.environ, PERFPY_JITDUMP_DIR=tmp)
        env.pop("PERFPY", None)

        def guest(*args):
            p = subprocess.Popen(python + list(args), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env)
            out, err = p.communicate(timeout=300)
            try:
                data = json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError):
                data = None
            return p.pid, p.returncode, data, out + err

        expected = {"fib": 2584, "area": 42, "nested": [0, 3, 6, 9, 12], "gen": 4950}

        # 2a. perf-map mode
        pid, rc, data, log = guest("perf")
        mapfile = "/tmp/perf-%d.map" % pid
        try:
            ok = rc == 0 and data and data["active"] and data["inactive_after"] and \
                data["results"] == expected and "aarch64" in data["module"]
            result("module under arm64 python3.11: functions through trampolines "
                   "give the right results", ok, log)
            result("module: invalid backend is a ValueError naming it",
                   bool(data) and "invalid backend: nope" in data.get("bad_backend", ""), log)
            text = open(mapfile).read() if os.path.exists(mapfile) else ""
            lines = text.splitlines()
            bad = [ln for ln in lines if not MAP_LINE.match(ln)]
            names = {MAP_LINE.match(ln).group(3) for ln in lines if MAP_LINE.match(ln)}
            want = {"fib", "Shape.area", "outer_fn.<locals>.inner", "workload"}
            result("perf map in CPython's format (%d lines, qualified names)" % len(lines),
                   bool(lines) and not bad and want <= names and text.endswith("\n"),
                   "bad lines: %r\nnames: %r\nmissing: %r" % (bad[:5], sorted(names)[:20],
                                                           want - names))
        finally:
            if os.path.exists(mapfile):
                os.unlink(mapfile)

        # 2b. jitdump mode, checked by the host's (x86-64) perfpy jitdump
        pid, rc, data, log = guest("perf_jit")
        dump = os.path.join(tmp, "jit-%d.dump" % pid)
        result("module in jit mode: right results",
               rc == 0 and bool(data) and data["results"] == expected, log)
        if os.path.exists(perfpy):
            jd = subprocess.run([perfpy, "jitdump", dump], capture_output=True, text=True)
            result("the arm64 jitdump passes the host's perfpy jitdump (AArch64, elf_mach 183)",
                   jd.returncode == 0 and "AArch64 (elf_mach 183)" in jd.stdout
                   and "valid jitdump" in jd.stdout, jd.stdout + jd.stderr)
        else:
            result("the arm64 jitdump passes the host's perfpy jitdump", False,
                   perfpy + " is not built (make all)")
        mapfile = "/tmp/perf-%d.map" % pid
        if os.path.exists(mapfile):
            os.unlink(mapfile)

        # 3. unwinding through two nested trampolines, and its negative twin
        probe = os.path.join(a64, "unwind_probe.so")
        for what in ("unwind", "unwind-unregistered"):
            pid, rc, data, log = guest(what, probe)
            mapfile = "/tmp/perf-%d.map" % pid
            if os.path.exists(mapfile):
                os.unlink(mapfile)
            frames = [ln.split(" ", 1)[1] for ln in (data or {}).get("backtrace", [])]
            shown = log + "\n" + "\n".join(frames)
            inner = [k for k, f in enumerate(frames) if re.match(r"py::\S*\bprobe_inner:", f)]
            i = inner[0] if inner else None
            outer = [k for k, f in enumerate(frames) if re.match(r"py::\S*\bprobe_outer:", f)]
            callers = [k for k, f in enumerate(frames)
                       if f in ("Py_BytesMain", "__libc_start_main", "__libc_start_call_main")]
            if what == "unwind":
                ok = (rc == 0 and i is not None and outer and outer[0] > i and callers
                      and callers[-1] > outer[0])
                result("libgcc unwinds through two nested trampolines with the engine's "
                       "CFI to the interpreter's caller (%d frames)" % len(frames), ok, shown)
            else:
                ok = rc == 0 and i is not None and not outer and not callers
                result("without the CFI the same unwind stops at the first trampoline",
                       ok, shown)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:   # a crash of the driver is a failure, not a silence
        result("aarch64 stage driver", False, repr(e))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
