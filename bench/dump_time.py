#!/usr/bin/python3
"""perfpy dump's wall time on a 10-thread process, each mode beside py-spy.

    bench/dump_time.py [--runs N] [--build DIR] [--before DIR] [--py-spy PATH] [PYTHON]

Starts bench/workloads/dump10.py (ten threads: computing, sleeping, waiting
on a lock and on a pipe) under PYTHON (default: this interpreter), then
times N interleaved rounds (default 21) of `perfpy dump --mode sample PID`
(BPF), `perfpy dump --mode read PID` (process_vm_readv, threads stopped
together by ptrace) and `py-spy dump --pid PID`, each as a whole command
from exec to exit. --before DIR adds the same two perfpy modes of another
build (the figures before a change, measured in the same rounds). py-spy:
--py-spy, else build/bench-venv/bin/py-spy (`python3 -m venv
build/bench-venv && build/bench-venv/bin/pip install py-spy`), else PATH;
left out when none is found. Prints a Markdown table: median, min and
max wall time, and the median CPU time the command and its children used
(user + system), per command. A machine shared with others makes the
wall times spread: the medians of interleaved runs are what to compare.

Needs root for sample mode.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def timed(cmd):
    """(wall s, cpu s, exit status) of one run of cmd, its output dropped."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, rc


def py_spy(given):
    for path in (given, os.path.join(ROOT, "build", "bench-venv", "bin", "py-spy"),
                 shutil.which("py-spy")):
        if path and os.access(path, os.X_OK):
            return path
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--before", help="another build's directory, timed in the same rounds")
    ap.add_argument("--py-spy", dest="pyspy")
    ap.add_argument("python", nargs="?", default=sys.executable)
    a = ap.parse_args()
    target = subprocess.Popen([a.python, os.path.join(HERE, "workloads", "dump10.py"), "3600"],
                              stdout=subprocess.PIPE, universal_newlines=True)
    try:
        pid = int(target.stdout.readline().split()[1])
        time.sleep(0.5)                             # every thread where it stays
        commands = []
        for label, build in (("perfpy dump --mode sample", a.build),
                             ("perfpy dump --mode read", a.build)) + \
                ((("before: perfpy dump --mode sample", a.before),
                  ("before: perfpy dump --mode read", a.before)) if a.before else ()):
            mode = label.split()[-1]
            commands.append((label, [os.path.join(build, "perfpy"), "dump", "--mode", mode,
                                     str(pid)]))
        spy = py_spy(a.pyspy)
        if spy:
            commands.append(("py-spy dump", [spy, "dump", "--pid", str(pid)]))
            commands.append(("py-spy dump --native", [spy, "dump", "--native", "--pid",
                                                      str(pid)]))
        for _, cmd in commands:                     # warm the page cache
            timed(cmd)
        got = {label: [] for label, _ in commands}
        for _ in range(a.runs):                     # interleaved
            for label, cmd in commands:
                wall, cpu, rc = timed(cmd)
                if rc != 0:
                    sys.exit("bench/dump_time.py: %s failed (exit %d)" % (" ".join(cmd), rc))
                got[label].append((wall, cpu))
        threads = len(os.listdir("/proc/%d/task" % pid))
    finally:
        target.kill()
        target.wait()
    load = " ".join("%.2f" % x for x in os.getloadavg())
    print("_%d threads (bench/workloads/dump10.py under %s), %d interleaved rounds, load "
          "average after: %s._" % (threads, a.python, a.runs, load))
    print()
    print("| command | wall median (ms) | min | max | CPU median (ms) |")
    print("|---|---|---|---|---|")
    for label, _ in commands:
        walls = [w * 1e3 for w, _ in got[label]]
        cpus = [c * 1e3 for _, c in got[label]]
        print("| %s | %.1f | %.1f | %.1f | %.1f |" % (label, statistics.median(walls),
                                                     min(walls), max(walls),
                                                     statistics.median(cpus)))


if __name__ == "__main__":
    main()
