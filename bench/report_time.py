"""How long `perfpy record` takes to make the profile once the program has
ended, per mode, per 1,000 samples; and whose time it is (perf inject, perf
script, perfpy's own parsing and folding), from the line every recording
prints ("perfpy: the profile took ...").

    python3 bench/report_time.py [--perfpy build/perfpy] [--python PY]
                                 [--seconds 4] [--reps 3] [--modes jit,perf,sample]

The program (written to a temporary directory) defines 4,000 functions, as
a sympy run's 4,457, and calls them all in turn for SECONDS of CPU time:
jit mode then writes 4,000 jitted ELFs to inject and read back. Prints a
Markdown table (medians of REPS runs per mode) for docs/PERFORMANCE.md.
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
PROGRAM = """import time
NS = {}
for i in range(4000):
    exec("def f_%d(x):\\n    return sum(range(x)) + %d\\n" % (i, i), NS)
funcs = [NS["f_%d" % i] for i in range(4000)]
end = time.process_time() + SECONDS
while time.process_time() < end:
    for f in funcs:
        f(200)
"""
TOOK = re.compile(r"the profile took ([\d.]+) s to make(?: after the recording ended)?"
                  r"(?::(?: perf inject --jit ([\d.]+) s,)? perf script ([\d.]+) s "
                  r"\(perf's CPU ([\d.]+) s in all\); perfpy's own CPU ([\d.]+) s"
                  r"| \(samples were folded as they came: perfpy-sample's CPU, ([\d.]+) s)")
SAMPLES = re.compile(r"perfpy: (\d+) samples \(")


def one(perfpy, python, prog, mode, tmp):
    out = os.path.join(tmp, "out.txt")
    # TMPDIR unset, as a user runs it: jit mode's dumps and the ELFs perf
    # inject makes of them then go to /dev/shm when /tmp is on disk
    env = {k: v for k, v in os.environ.items() if k != "TMPDIR"}
    p = subprocess.run([perfpy, "record", "--mode", mode, "-f", "collapsed", "-o", out,
                        "--", python, prog], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env, cwd=tmp)
    if p.returncode != 0:
        sys.exit("%s mode failed: %s" % (mode, p.stderr[-2000:]))
    took, samples = TOOK.search(p.stderr), SAMPLES.search(p.stderr)
    if not took or not samples:
        sys.exit("no timing line in %s mode's output: %s" % (mode, p.stderr[-2000:]))
    g = [float(x) if x else 0.0 for x in took.groups()]
    n = int(samples.group(1))
    return {"samples": n, "wall": g[0], "inject": g[1], "script": g[2], "perf_cpu": g[3],
            "own_cpu": g[4] if mode != "sample" else g[5]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfpy", default=os.path.join(os.path.dirname(HERE), "build", "perfpy"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="jit,perf,sample")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="perfpy-bench-report-")
    try:
        prog = os.path.join(tmp, "many_functions.py")
        with open(prog, "w") as f:
            f.write(PROGRAM.replace("SECONDS", repr(a.seconds)))
        rows = []
        for mode in a.modes.split(","):
            runs = [one(a.perfpy, a.python, prog, mode, tmp) for _ in range(a.reps)]
            per_k = lambda key: statistics.median(r[key] * 1000.0 / r["samples"] for r in runs)
            rows.append((mode, statistics.median(r["samples"] for r in runs),
                         statistics.median(r["wall"] for r in runs), per_k("wall"),
                         per_k("inject"), per_k("script"), per_k("perf_cpu"), per_k("own_cpu")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| mode | samples | profile made in (s) | per 1,000 samples: wall s | perf inject s "
          "| perf script s | perf's CPU s | perfpy's CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, n, wall, w, inj, scr, pcpu, own in rows:
        print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.3f |"
              % (mode, n, wall, w, inj, scr, pcpu, own))


if __name__ == "__main__":
    main()
