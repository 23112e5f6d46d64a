#!/usr/bin/python3
"""Attaching to a running program (issue 15): a CPython started plainly (no
perfpy, no environment) runs a request loop in two threads
(tests/integration/programs/served.py --rate, which reports its own
throughput every 0.25 s); the bench measures that throughput

  before        SECONDS with nothing attached
  sample        while `perfpy record --mode sample -p PID -d SECONDS` runs
  (gap)         SECONDS, nothing attached
  py-spy        while `py-spy record -p PID -d SECONDS` runs (when installed:
                bench/sample_cost.py's venv): py-spy stops the program for
                each sample, its default
  py-spy nb     the same with --nonblocking (reads it running, as perfpy)
  Tachyon       python -m profiling.sampling attach -a (CPython 3.15+)
  after         SECONDS, nothing attached

ROUNDS times on one process; then CYCLES attach cycles of
`perfpy record --mode sample -p PID -d 0.05`, each with exit status 0, with
the throughput before and after them (medians of four 2.5 s windows); then
the program is asked to end, and its output must be what it prints
unattached ("ready", "done").

The machine's own variation is large on a small VM (a one-thread loop's
rate moves by 8% from one second to the next here, and two threads sharing
the GIL settle in faster and slower states for seconds at a time, with or
without a profiler: seen with 200 runs of a plain busy process in place of
the attach cycles), so only medians over many interleaved rounds say
anything; the table gives the spread of the "before" intervals.

    bench/sample_attach.py [--seconds S] [--rounds N] [--cycles N] [--rate HZ]
                           [--build DIR] [--write-docs] PYTHON...

A throughput is requests over time between the first and last report inside
the interval (the recorder's start-up and end included); each ratio is over
the "before" of its round; medians over the rounds. --write-docs puts the
table in docs/PERFORMANCE.md between <!-- bench:attach-WORLD:begin --> and
<!-- bench:attach-WORLD:end -->.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from portable import py_arg, py_label  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import sample_cost  # noqa: E402  (py-spy's venv, the world, the docs block)

SERVED = os.path.join(ROOT, "tests", "integration", "programs", "served.py")
ROWS = ("before", "sample", "py-spy", "py-spy nb", "Tachyon", "after")


class Served:
    """served.py --rate, its reports collected as (time, requests)."""

    def __init__(self, py):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFPY", "PYTHON"))}
        self.p = subprocess.Popen([py, SERVED, "--rate"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, env=env)
        self.out = [self.p.stdout.readline().strip()]
        self.reports = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stderr:
            f = line.split()
            if len(f) == 3 and f[0] == "RATE":
                self.reports.append((float(f[1]), int(f[2])))

    def throughput(self, t0, t1):
        inside = [r for r in self.reports if t0 <= r[0] <= t1]
        if len(inside) < 2:
            return None
        return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])

    def idle(self, seconds):
        t0 = time.monotonic()
        time.sleep(seconds)
        return self.throughput(t0, time.monotonic())

    def during(self, cmd):
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           universal_newlines=True)
        time.sleep(0.3)                          # the report after the end
        if p.returncode != 0:
            sys.stderr.write("%s: exit %d: %s\n" % (cmd[0], p.returncode, p.stderr[-500:]))
            return None
        return self.throughput(t0, time.monotonic() - 0.3)

    def end(self):
        self.p.stdin.close()
        self.out += self.p.stdout.read().split()
        self.p.wait(timeout=60)
        return self.out


def measure(py, a, spy, tmp):
    perfpy = os.path.join(a.build, "perfpy")
    s = Served(py)
    pid = str(s.p.pid)
    rows = {k: [] for k in ROWS}
    ver = sample_cost.version(py)
    time.sleep(1.0)
    for _ in range(a.rounds):
        before = s.idle(a.seconds)
        rows["before"].append(before)
        rows["sample"].append(s.during([perfpy, "record", "--mode", "sample", "-p", pid, "-d",
                                        str(a.seconds), "-r", str(a.rate), "-f", "collapsed",
                                        "-o", os.path.join(tmp, "attach.txt")]))
        s.idle(a.seconds)
        for k, extra in (("py-spy", []), ("py-spy nb", ["--nonblocking"])):
            if spy:
                rows[k].append(s.during([spy, "record", "-p", pid, "-d", str(int(a.seconds)),
                                         "-r", str(a.rate), "-f", "raw", "-o",
                                         os.path.join(tmp, "attach.spy")] + extra))
        if ver >= (3, 15):
            rows["Tachyon"].append(s.during([py, "-m", "profiling.sampling", "attach", "-a",
                                             "-r", str(a.rate), "-d", str(int(a.seconds)),
                                             "--collapsed", "-o",
                                             os.path.join(tmp, "attach.tachyon"), pid]))
        rows["after"].append(s.idle(a.seconds))
    before_cycles = statistics.median(s.idle(2.5) for _ in range(4))
    failed = 0
    t0 = time.monotonic()
    for _ in range(a.cycles):
        failed += subprocess.run([perfpy, "record", "--mode", "sample", "-p", pid, "-d", "0.05",
                                  "-f", "collapsed", "-o", os.path.join(tmp, "cycle.txt")],
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL).returncode != 0
    cycles_s = time.monotonic() - t0
    after_cycles = statistics.median(s.idle(2.5) for _ in range(4))
    out = s.end()
    return {"rows": rows, "before_cycles": before_cycles, "after_cycles": after_cycles,
            "failed": failed, "cycles_s": cycles_s, "out": out, "ver": ver}


def ratio_cell(values, befores):
    pairs = [(v, b) for v, b in zip(values, befores) if v and b]
    if not pairs:
        return "–", "–"
    return ("%.0f" % statistics.median(v for v, _ in pairs),
            "%.3f" % statistics.median(v / b for v, b in pairs))


def table(results, a):
    lines = ["_Generated by `bench/sample_attach.py --seconds %g --rounds %d --cycles %d "
             "--rate %d --write-docs%s` on %s (world %s; load average %s at the end)._" % (
                 a.seconds, a.rounds, a.cycles, a.rate, "".join(" " + py_arg(p) for p in a.pythons),
                 time.strftime("%Y-%m-%d %H:%M"), sample_cost.world(),
                 " ".join("%.2f" % x for x in os.getloadavg())),
             "",
             "served.py's own throughput (requests/s, two threads), started plainly; each "
             "interval %g s, %d rounds on one process, medians; ratio: over the same "
             "round's \"before\"." % (a.seconds, a.rounds), ""]
    for py, r in results.items():
        befores = r["rows"]["before"]
        ok = [b for b in befores if b]
        lines += ["#### CPython %d.%d (%s)" % (r["ver"] + (py_label(py),)), "",
                  "The \"before\" intervals ranged %s requests/s: the machine's own "
                  "variation." % ("%.0f to %.0f" % (min(ok), max(ok)) if ok else "–"), "",
                  "| interval | requests/s | / before |", "|---|---|---|"]
        for k in ROWS:
            if r["rows"][k]:
                label = {"sample": "perfpy record --mode sample -p (attached)",
                         "py-spy": "py-spy record -p (attached; stops the program per "
                                   "sample)",
                         "py-spy nb": "py-spy record --nonblocking -p (attached)",
                         "Tachyon": "python -m profiling.sampling attach -a "
                                    "(attached)"}.get(k, k)
                lines.append("| %s | %s | %s |" % ((label,) + ratio_cell(r["rows"][k], befores)))
        bc, ac = r["before_cycles"], r["after_cycles"]
        lines += ["", "%d attach cycles (`-d 0.05`) in %.0f s: %d failed; throughput %s "
                  "before them, %s after (%s; medians of four 2.5 s windows); the program's "
                  "output: %s." % (
                      a.cycles, r["cycles_s"], r["failed"], "%.0f" % bc if bc else "–",
                      "%.0f" % ac if ac else "–",
                      "%.3f" % (ac / bc) if ac and bc else "–", " ".join(r["out"])), ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--cycles", type=int, default=200)
    ap.add_argument("--rate", type=int, default=399)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("pythons", nargs="+")
    a = ap.parse_args()
    spy = sample_cost.py_spy(a.build)
    tmp = tempfile.mkdtemp(prefix="perfpy-bench-attach-")
    try:
        results = {py: measure(py, a, spy, tmp) for py in a.pythons}
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    text = table(results, a)
    print(text)
    if a.write_docs:
        sample_cost.write_docs(text, "attach-" + sample_cost.world(),
                               "## Sample mode: attaching to a running program")
    bad = [py for py, r in results.items() if r["failed"] or r["out"] != ["ready", "done"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
