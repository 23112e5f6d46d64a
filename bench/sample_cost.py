#!/usr/bin/python3
"""What recording costs the program, sample mode against the alternatives
(issue 15): the program's own CPU time (it measures itself:
time.process_time() around the workload, so start-up and the recorder's own
work are out) under each configuration, runs interleaved, medians.

    bench/sample_cost.py [--reps N] [--scale S] [--rate HZ] [--workload NAME]
                         [--build DIR] [--perfpy PATH] [--configs A,B]
                         [--write-docs] PYTHON...

Configurations, each where it exists for that interpreter:
  plain          the interpreter alone
  perfpy sample  perfpy record --mode sample (BPF; nothing in the program)
  perfpy read    perfpy record --mode read (no root: frames read from outside)
  perfpy jit     perfpy record --mode jit (perfpy's trampolines, perf record)
  -X perf        CPython's own trampolines (3.12+), not recorded: their cost
  py-spy         py-spy record (from PyPI, installed into BUILD/bench-venv; in
                 the sid root, the host's build/bench-venv)
  Tachyon        python -m profiling.sampling run (CPython 3.15)
All samplers at the same rate (--rate, default 399 Hz, perfpy's default).
Ratios: the median of each run's CPU time over the plain run of the same
rep. --write-docs puts the table in docs/PERFORMANCE.md between
<!-- bench:sample-WORLD:begin --> and <!-- bench:sample-WORLD:end --> (WORLD:
host, or sid inside the sid root).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from portable import py_arg, py_label  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUNNER = r"""
import importlib.util, os, sys, time
sys.stderr.write("pid %d\n" % os.getpid())
spec = importlib.util.spec_from_file_location("workload", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0)     # bench/wall.py --settle
t0 = time.process_time()
mod.main(float(sys.argv[2]))
sys.stderr.write("cpu %.6f\n" % (time.process_time() - t0))
"""


def version(py):
    out = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True)
    return tuple(int(x) for x in out.stdout.split("."))


def py_spy(build):
    """py-spy from PyPI in a venv of its own (once), or None. A static
    binary: the sid root, whose pip reaches no index, uses the host's
    (build/bench-venv of the clone)."""
    for b in (build, os.path.join(ROOT, "build")):
        exe = os.path.join(b, "bench-venv", "bin", "py-spy")
        if os.path.exists(exe):
            return exe
    venv = os.path.join(build, "bench-venv")
    exe = os.path.join(venv, "bin", "py-spy")
    if not os.path.exists(exe):
        if subprocess.run([sys.executable, "-m", "venv", venv]).returncode != 0:
            return None
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q",
                        "--disable-pip-version-check", "py-spy"])
    return exe if os.path.exists(exe) else None


def configs(py, ver, a, spy, tmp):
    perfpy = a.perfpy or os.path.join(a.build, "perfpy")
    out = os.path.join(tmp, "out")
    c = {"plain": [py]}
    if a.perfpy or os.path.exists(os.path.join(a.build, "perfpy-sample")):
        c["perfpy sample"] = [perfpy, "record", "--mode", "sample", "-r", str(a.rate),
                              "-f", "collapsed", "-o", out + ".txt", "--", py]
        c["perfpy read"] = [perfpy, "record", "--mode", "read", "-r", str(a.rate),
                            "-f", "collapsed", "-o", out + "-read.txt", "--", py]
    c["perfpy jit"] = [perfpy, "record", "--mode", "jit", "-r", str(a.rate),
                       "-f", "collapsed", "-o", out + "-jit.txt", "--", py]
    if ver >= (3, 12):
        c["-X perf"] = [py, "-X", "perf"]
    if spy:
        c["py-spy"] = [spy, "record", "-r", str(a.rate), "-f", "raw", "-o", out + ".spy",
                       "--", py]
    if ver >= (3, 15):
        c["Tachyon"] = [py, "-m", "profiling.sampling", "run", "-r", str(a.rate),
                        "--collapsed", "-o", out + ".tachyon"]
    if a.configs:
        c = {k: v for k, v in c.items() if k in a.configs.split(",") or k == "plain"}
    return c


def world():
    """"sid" inside the sid root, else "host"."""
    with open("/etc/debian_version") as f:
        return "sid" if f.read().startswith(("forky", "trixie/sid", "sid")) else "host"


def cpu_of(cmd, runner, workload, scale):
    p = subprocess.run(cmd + [runner, workload, str(scale)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    m = re.search(r"^cpu ([\d.]+)$", p.stderr, re.M)
    for pid in re.findall(r"^pid (\d+)$", p.stderr, re.M):
        for path in ("/tmp/perf-%s.map" % pid, "/tmp/jit-%s.dump" % pid):
            if os.path.exists(path):    # -X perf's map: the run's own
                os.unlink(path)
    return float(m.group(1)) if m and p.returncode == 0 else None


def measure(py, a, spy):
    ver = version(py)
    tmp = tempfile.mkdtemp(prefix="perfpy-bench-sample-")
    try:
        runner = os.path.join(tmp, "runner.py")
        with open(runner, "w") as f:
            f.write(RUNNER)
        workload = os.path.join(HERE, "workloads", a.workload + ".py")
        cfg = configs(py, ver, a, spy, tmp)
        names = list(cfg)
        runs = {n: [] for n in names}
        for rep in range(a.reps):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for n in order:
                runs[n].append(cpu_of(cfg[n], runner, workload, a.scale))
        return ver, names, runs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def table(results, a, world):
    lines = ["_Generated by `bench/sample_cost.py --reps %d --scale %g --rate %d --workload %s "
             "--write-docs%s` on %s (world %s; load average %s at the end)._" % (
                 a.reps, a.scale, a.rate, a.workload, "".join(" " + py_arg(p) for p in a.pythons),
                 time.strftime("%Y-%m-%d %H:%M"), world,
                 " ".join("%.2f" % x for x in os.getloadavg())),
             "",
             "The program's own CPU time (time.process_time() around the workload), median "
             "of %d interleaved runs; ratio: the median of each run over the plain run of "
             "the same rep. A dash: the run failed (the tool does not support that "
             "interpreter)." % a.reps, ""]
    for py, (ver, names, runs) in results.items():
        lines += ["#### CPython %d.%d (%s), workload %s" % (ver + (py_label(py), a.workload)), ""]
        lines += cost_rows(names, runs) + [""]
    return "\n".join(lines)


def cost_rows(names, runs, spread=False):
    """The table of each configuration's CPU (median) and its ratio to the
    plain run of the same rep (median); runs[name] is a list per rep, None
    where the run failed. spread: a column with the ratios' middle half
    (their 25th and 75th percentiles), what one rep's noise is."""
    lines = ["| configuration | CPU (ms, median) | / plain |%s" % (
                 " / plain, middle half of the runs |" if spread else ""),
             "|---|---|---|%s" % ("---|" if spread else "")]
    plain = runs["plain"]
    for n in names:
        ok = [x for x in runs[n] if x is not None]
        ratios = [x / p for x, p in zip(runs[n], plain) if x is not None and p]
        quart = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else None
        lines.append("| %s | %s | %s |%s" % (
            n, "%.0f" % (1000 * statistics.median(ok)) if ok else "–",
            "%.3f" % statistics.median(ratios) if ratios else "–",
            (" %.3f-%.3f |" % (quart[0], quart[2]) if quart else " – |") if spread else ""))
    return lines


def write_docs(text, name, heading):
    """text between <!-- bench:NAME:begin --> and <!-- bench:NAME:end --> in
    docs/PERFORMANCE.md; a new block goes at the end, under heading (a line
    "## ...") unless the file has it."""
    path = os.path.join(ROOT, "docs", "PERFORMANCE.md")
    begin, end = "<!-- bench:%s:begin -->" % name, "<!-- bench:%s:end -->" % name
    with open(path) as f:
        doc = f.read()
    block = "%s\n%s\n%s" % (begin, text, end)
    if begin in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + ("" if heading in doc else heading + "\n\n") + \
            block + "\n"
    with open(path, "w") as f:
        f.write(doc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--scale", type=float, default=4.0)
    ap.add_argument("--rate", type=int, default=399)
    ap.add_argument("--workload", default="calls")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--perfpy", help="the perfpy command to measure (default: BUILD/perfpy), "
                    "e.g. a pip install's bin/perfpy, whose sample mode is in its package")
    ap.add_argument("--configs", help="only these configurations (comma-separated), and plain")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("pythons", nargs="+")
    a = ap.parse_args()
    spy = py_spy(a.build)
    results = {py: measure(py, a, spy) for py in a.pythons}
    text = table(results, a, world())
    print(text)
    if a.write_docs:
        write_docs(text, "sample-" + world(), "## Sample mode: what recording costs the program")


if __name__ == "__main__":
    main()
