#!/usr/bin/python3
"""Why bench/wall.py lets its program sleep before the measured part
(--settle): on this virtual machine a program that starts right after
another process's busy start-up runs slower for a while, with no profiler
at all. The ping-pong (bench/workloads/pingpong.py, pinned like wall.py's
--pin) run plain, and run right after a busy loop of --busy seconds in
another process (that process then sleeps until the run ends: nothing of it
runs beside the program), with --delay seconds between the two or none;
interleaved, the median of each run's ratio to the plain run of its rep.

    bench/settle.py [--reps N] [--busy S] [--delay S] [--pin CPU] PYTHON
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sample_cost import RUNNER, cpu_of  # noqa: E402

BUSY = ("import sys, time\n"
        "end = time.monotonic() + float(sys.argv[1])\n"
        "while time.monotonic() < end: pass\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n")


def cpu(py, runner, pin):
    x = cpu_of(["taskset", "-c", str(pin), py], runner,
               os.path.join(HERE, "workloads", "pingpong.py"), 1)
    if x is None:
        sys.exit("the ping-pong failed under %s" % py)
    return x


def after_busy(py, runner, a, delay):
    busy = subprocess.Popen([sys.executable, "-c", BUSY, str(a.busy)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, universal_newlines=True)
    try:
        busy.stdout.readline()
        time.sleep(delay)
        return cpu(py, runner, a.pin)
    finally:
        busy.stdin.close()
        busy.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--busy", type=float, default=0.1)
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--pin", type=int, default=1)
    ap.add_argument("python")
    a = ap.parse_args()
    if a.reps < 2:
        ap.error("--reps: at least 2 (the ratios' quartiles)")
    fd, runner = tempfile.mkstemp(prefix="perfpy-settle-", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(RUNNER)
    configs = ("plain", "right after a busy start", "%g s after a busy start" % a.delay)
    ratios = {c: [] for c in configs}
    try:
        print("load average %.2f at the start" % os.getloadavg()[0])
        for rep in range(a.reps):
            base = cpu(a.python, runner, a.pin)
            for c in configs[rep % 3:] + configs[:rep % 3]:
                x = cpu(a.python, runner, a.pin) if c == "plain" else \
                    after_busy(a.python, runner, a, 0.0 if c.startswith("right") else a.delay)
                ratios[c].append(x / base)
        print("| the ping-pong's own CPU, %d reps | / plain (median) | middle half |" % a.reps)
        print("|---|---|---|")
        for c in configs:
            q = statistics.quantiles(ratios[c], n=4)
            print("| %s | %.3f | %.3f-%.3f |" % (c, statistics.median(ratios[c]), q[0], q[2]))
        print("load average %.2f at the end" % os.getloadavg()[0])
    finally:
        os.unlink(runner)


if __name__ == "__main__":
    main()
