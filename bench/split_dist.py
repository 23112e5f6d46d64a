#!/usr/bin/python3
"""How far sample mode's profile of tests/integration/programs/split_calls.py
is from the program's own measurement, over many runs: the distribution
behind test_record's test_split_matches_the_programs_own_measurement (2
points allowed), for one build or several side by side, runs interleaved.

    bench/split_dist.py [--runs N] [--rate HZ] [--seconds S] PYTHON
                        [LABEL=PERFPY[,VAR=VALUE...] ...]

Each run records `PERFPY record --mode sample -r HZ -f collapsed -- PYTHON
split_calls.py S` (with VAR=VALUE in its environment: a build's test knobs)
and prints the program's figure (its SPLIT line: the share of its thread's
CPU time in the recursive part), the profile's (the samples under
`recursive_part (` over those under it and `loop_part (`) and the
difference in points; then per configuration the mean, standard deviation,
range and how many runs were 2 points or more off. Without a configuration:
this clone's build/perfpy. The program repeats itself every few hundred
microseconds (a call-heavy part, then a loop), which a sampler of a fixed
period can fall in step with; a configuration with SPLIT_JITTER=1 runs it
with "jitter" instead (each round's loop drawn at random: split_calls.py),
which nothing can fall in step with.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROG = os.path.join(ROOT, "tests", "integration", "programs", "split_calls.py")


def config(text):
    label, _, rest = text.partition("=")
    parts = rest.split(",")
    env = dict(p.split("=", 1) for p in parts[1:])
    return label, parts[0], env


def one_run(perfpy, env, py, a, out):
    e = dict(os.environ, **env)
    jitter = ["jitter"] if e.pop("SPLIT_JITTER", "") == "1" else []
    p = subprocess.run([perfpy, "record", "--mode", "sample", "-r", str(a.rate), "-f",
                        "collapsed", "-o", out, "--", py, PROG, str(a.seconds)] + jitter, env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    m = re.search(r"SPLIT ([\d.]+) ([\d.]+) ([\d.]+)", p.stdout)
    if p.returncode != 0 or not m:
        return None, p.stderr[-500:]
    a_s, b_s, wall = (float(x) for x in m.groups())
    sa = sb = 0
    with open(out) as f:
        for line in f:
            stack, n = line.rsplit(" ", 1)
            if "recursive_part (" in stack:
                sa += int(n)
            elif "loop_part (" in stack:
                sb += int(n)
    lost = re.search(r"(\d+) samples lost", p.stderr)
    program, profile = 100 * a_s / (a_s + b_s), 100 * sa / max(1, sa + sb)
    return (program, profile, sa + sb, (a_s + b_s) / wall, int(lost.group(1)) if lost else 0), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rate", type=int, default=999)
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("python")
    ap.add_argument("configs", nargs="*")
    a = ap.parse_args()
    cfgs = [config(c) for c in a.configs] or [("this", os.path.join(ROOT, "build", "perfpy"), {})]
    diffs = {label: [] for label, _, _ in cfgs}
    tmp = tempfile.mkdtemp(prefix="perfpy-split-dist-")
    try:
        for i in range(a.runs):
            for label, perfpy, env in cfgs[i % len(cfgs):] + cfgs[:i % len(cfgs)]:
                got, why = one_run(perfpy, env, a.python, a, os.path.join(tmp, "out.txt"))
                if not got:
                    print("%s run %d failed: %s" % (label, i, why), flush=True)
                    continue
                program, profile, n, busy, lost = got
                diffs[label].append(profile - program)
                print("%s run %d: program %.2f%% profile %.2f%% (%d samples, %.0f%% of a CPU, "
                      "%d lost): %+.2f points (load %.2f)" % (
                          label, i, program, profile, n, 100 * busy, lost, profile - program,
                          os.getloadavg()[0]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for label, ds in diffs.items():
        if len(ds) > 1:
            print("%s, %s, %d Hz: profile - program over %d runs: mean %+.2f, sd %.2f, "
                  "%+.2f to %+.2f, %d at 2 points or more" % (
                      label, a.python, a.rate, len(ds), statistics.mean(ds), statistics.stdev(ds),
                      min(ds), max(ds), sum(abs(d) >= 2 for d in ds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
