#!/usr/bin/python3
"""What --async adds to a wall-clock recording (CPython 3.14+): the
program's own CPU time (user and system, where the BPF programs run) under
bench/workloads/tasks200.py (200 asyncio tasks sleeping 1 ms at a time:
every sample of its loop counts 199 waiting tasks and reads 4), plain,
under `perfpy record --wall` and under `perfpy record --wall --async`, runs
interleaved; each run's ratio to the plain run of its rep, median and
range. The bound is wall-clock mode's: <= 1.10x plain.

    bench/async_wall.py [--reps N] [--rounds R] [--build DIR] PYTHON
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKLOAD = os.path.join(HERE, "workloads", "tasks200.py")
CONFIGS = {"plain": None, "--wall": ["--wall"], "--wall --async": ["--wall", "--async"]}


def cpu(py, perfpy, opts, rounds, tmp):
    cmd = [py, WORKLOAD, str(rounds)]
    if opts is not None:
        cmd = [perfpy, "record", "--mode", "sample"] + opts + [
            "-f", "collapsed", "-o", os.path.join(tmp, "out.txt"), "--"] + cmd
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=600)
    m = re.search(r"^cpu ([\d.]+)$", p.stdout, re.M)
    if p.returncode or not m:
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return float(m.group(1))


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--reps", type=int, default=5)
    a.add_argument("--rounds", type=int, default=400)
    a.add_argument("--build", default=os.path.join(ROOT, "build"))
    a.add_argument("python")
    args = a.parse_args()
    perfpy = os.path.join(os.path.abspath(args.build), "perfpy")
    runs = {c: [] for c in CONFIGS}
    with tempfile.TemporaryDirectory(prefix="perfpy-bench-async-") as tmp:
        for rep in range(args.reps):
            order = list(CONFIGS)
            order = order[rep % len(order):] + order[:rep % len(order)]
            for c in order:
                runs[c].append(cpu(args.python, perfpy, CONFIGS[c], args.rounds, tmp))
    print("load average at the end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    for c in CONFIGS:
        ratios = sorted(x / p for x, p in zip(runs[c], runs["plain"]))
        print("%-15s CPU %.3f s (median of %d)  x plain: median %.3f [%.3f-%.3f]"
              % (c, statistics.median(runs[c]), args.reps, statistics.median(ratios),
                 ratios[0], ratios[-1]))


if __name__ == "__main__":
    main()
