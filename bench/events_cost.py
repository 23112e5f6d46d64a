#!/usr/bin/python3
"""What sampling an event costs the program (perfpy record -e, sample
mode) at the default period (-c 1: every event), beside the plain program:
page faults on a program that makes memory (160 MB zero-filled and freed,
five times: 204,800 faults), system calls on one that makes 100,000
one-byte writes (syscalls:sys_enter_write). Each program measures itself
(time.process_time() and time.monotonic() around its work: start-up and
the recorder's own work are out); runs interleaved, medians; the samples
the ring buffer could not hold are counted from perfpy's summary.

    bench/events_cost.py [--reps N] [--build DIR] [--write-docs] PYTHON...

--write-docs puts the table in docs/PERFORMANCE.md between
<!-- bench:events-WORLD:begin --> and <!-- bench:events-WORLD:end -->
(WORLD: host, or sid inside the sid root).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from portable import py_label
from sample_cost import world as sample_world

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = {
    "faults": ("page-faults", """
def work():
    for _ in range(5):
        b = bytearray(160 << 20)
        del b
"""),
    "writes": ("syscalls:sys_enter_write", """
import os
def work():
    fd = os.open(os.devnull, os.O_WRONLY)
    for _ in range(100000):
        os.write(fd, b"x")
    os.close(fd)
"""),
}
TIMED = """
import sys, time
t0, w0 = time.process_time(), time.monotonic()
work()
sys.stderr.write("cpu %.6f wall %.6f\\n" % (time.process_time() - t0, time.monotonic() - w0))
"""


def once(cmd):
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       universal_newlines=True)
    m = re.search(r"cpu ([\d.]+) wall ([\d.]+)", p.stderr)
    if p.returncode != 0 or not m:
        raise SystemExit("bench: %s failed:\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    lost = re.search(r"perfpy: (\d+) samples lost", p.stderr)
    samples = re.search(r"perfpy: (\d+) samples of", p.stderr)
    return (float(m.group(1)), float(m.group(2)), int(samples.group(1)) if samples else 0,
            int(lost.group(1)) if lost else 0)


def bench(py, perfpy, reps, count, tmp):
    rows = []
    for name, (event, code) in WORK.items():
        prog = os.path.join(tmp, name + ".py")
        with open(prog, "w") as f:
            f.write(code + TIMED)
        plain, rec = [], []
        for _ in range(reps):
            plain.append(once([py, prog]))
            rec.append(once([perfpy, "record", "-e", event] + (["-c", count] if count else []) +
                            ["-f", "collapsed", "-o",
                             os.path.join(tmp, name + ".txt"), "--", py, prog]))
        cpu0 = statistics.median(r[0] for r in plain)
        wall0 = statistics.median(r[1] for r in plain)
        cpu1 = statistics.median(r[0] for r in rec)
        wall1 = statistics.median(r[1] for r in rec)
        rows.append("| %s | %s | %.3f s | %.3f s (%.2fx) | %.3f s | %.3f s (%.2fx) | %d | %d |" % (
            py_label(py), event, cpu0, cpu1, cpu1 / cpu0, wall0, wall1, wall1 / wall0,
            statistics.median(r[2] for r in rec), statistics.median(r[3] for r in rec)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--count", help="-c N (default: perfpy's default period)")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("pythons", nargs="+")
    a = ap.parse_args()
    perfpy = os.path.join(a.build, "perfpy")
    with tempfile.TemporaryDirectory(prefix="perfpy-bench-events-") as tmp:
        rows = []
        for py in a.pythons:
            rows += bench(py, perfpy, a.reps, a.count, tmp)
    world = sample_world()
    table = "\n".join([
        "Measured by `python3 bench/events_cost.py --reps %d %s` (%s world), medians:"
        % (a.reps, " ".join(a.pythons), world), "",
        "| interpreter | event (default -c) | CPU plain | CPU recorded | wall plain | "
        "wall recorded | samples | lost |",
        "|---|---|---|---|---|---|---|---|"] + rows)
    print(table)
    if a.write_docs:
        path = os.path.join(ROOT, "docs", "PERFORMANCE.md")
        with open(path) as f:
            text = f.read()
        begin, end = ("<!-- bench:events-%s:begin -->" % world,
                      "<!-- bench:events-%s:end -->" % world)
        if begin not in text:
            sys.exit("bench: no %s in %s" % (begin, path))
        head, rest = text.split(begin, 1)
        with open(path, "w") as f:
            f.write(head + begin + "\n" + table + "\n" + end + rest.split(end, 1)[1])


if __name__ == "__main__":
    main()
