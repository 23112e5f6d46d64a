#!/usr/bin/python3
"""What wall-clock mode costs the rest of the machine: a bystander (a
process perfpy does not profile) making system calls in a loop (os.getppid,
--calls of them, pinned to --pin), its own CPU time while `perfpy record
--idle` records another program that only sleeps, against no recorder.
perfpy's programs at every switch run for every thread of the machine; a
program at every system call's end (sys_exit, on kernels without sched_exit_tp, or
PERFPY_SAMPLE_SYS_EXIT=1) also puts every system call of the machine on
the slow path. Interleaved, the median of each run's ratio to the
bystander alone in the same rep, and the ratios' middle half.

    bench/wall_bystander.py [--reps N] [--calls N] [--build DIR]
                            [--baseline DIR] [--pin CPU] PYTHON
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LOOP = ("import os, sys, time\n"
        "t = time.process_time()\n"
        "for _ in range(int(sys.argv[1])): os.getppid()\n"
        "print('%.6f' % (time.process_time() - t))\n")


def bystander(py, a):
    out = subprocess.run(["taskset", "-c", str(a.pin), py, "-c", LOOP, str(a.calls)],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return float(out)


def beside(py, a, perfpy, env, tmp):
    """The bystander while perfpy --idle records `sleep` (started in a
    session of its own, given 1.5 s to settle; then the sleep, perfpy's
    child, is interrupted and perfpy ends; what is left of that session is
    killed)."""
    e = {k: v for k, v in os.environ.items() if k != "PERFPY_SAMPLE_SYS_EXIT"}
    e.update(env)
    rec = subprocess.Popen([perfpy, "record", "--idle", "-f", "collapsed", "-o",
                            os.path.join(tmp, "o.txt"), "--", "sleep", "600"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e,
                           universal_newlines=True, start_new_session=True)
    try:
        time.sleep(1.5)
        children = "/proc/%d/task/%d/children" % (rec.pid, rec.pid)
        kids = open(children).read().split() if os.path.exists(children) else []
        if rec.poll() is not None or not kids:
            sys.exit("perfpy record --idle ended early: " + rec.stderr.read()[-2000:])
        x = bystander(py, a)
        for kid in kids:
            os.kill(int(kid), signal.SIGINT)
        rec.communicate(timeout=120)
        return x
    finally:
        if rec.poll() is None:
            os.killpg(rec.pid, signal.SIGKILL)
            rec.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=15, help="at least 2")
    ap.add_argument("--calls", type=int, default=300000)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--baseline", help="another build directory, beside this one")
    ap.add_argument("--pin", type=int, default=1)
    ap.add_argument("python")
    a = ap.parse_args()
    if a.reps < 2:
        ap.error("--reps: at least 2 (the ratios' quartiles)")
    configs = {"perfpy --idle": (os.path.join(a.build, "perfpy"), {}),
               "perfpy --idle, PERFPY_SAMPLE_SYS_EXIT=1": (os.path.join(a.build, "perfpy"),
                                                            {"PERFPY_SAMPLE_SYS_EXIT": "1"})}
    if a.baseline:
        configs["perfpy --idle, the --baseline build"] = (os.path.join(a.baseline, "perfpy"), {})
    names = ["alone"] + list(configs)
    ratios = {n: [] for n in names}
    with tempfile.TemporaryDirectory(prefix="perfpy-bystander-") as tmp:
        print("load average %.2f at the start" % os.getloadavg()[0])
        for rep in range(a.reps):
            base = bystander(a.python, a)
            for n in names[rep % len(names):] + names[:rep % len(names)]:
                x = bystander(a.python, a) if n == "alone" else \
                    beside(a.python, a, configs[n][0], configs[n][1], tmp)
                ratios[n].append(x / base)
    print("| the bystander's own CPU (%d os.getppid calls), %d reps | / alone (median) | "
          "middle half |" % (a.calls, a.reps))
    print("|---|---|---|")
    for n in names:
        q = statistics.quantiles(ratios[n], n=4)
        print("| %s | %.3f | %.3f-%.3f |" % (n, statistics.median(ratios[n]), q[0], q[2]))
    print("load average %.2f at the end" % os.getloadavg()[0])


if __name__ == "__main__":
    main()
