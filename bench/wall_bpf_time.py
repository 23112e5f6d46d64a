#!/usr/bin/python3
"""Wall-clock mode's BPF programs: the kernel's own count of their runs and
of the time they took, under bench/wall.py's ping-pong (the worst case for
scheduler events), per program and per context switch of the machine (the
runs of the sched_switch program, read at the same moment: every switch
runs it, the program's and the rest of the machine's).

    bench/wall_bpf_time.py [--scale S] [--build DIR] PYTHON

Turns kernel.bpf_stats_enabled on for the run (the kernel then times every
BPF program of the machine: each run costs two clock reads more, so the
times are a little high) and back to what it was at the end, whatever
happens. The programs are those the recorder holds (their ids in its fds' fdinfo),
each read with bpftool every ~0.1 s until it ends: the last reading misses
the last moments at most.

Needs root and bpftool.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from sample_cost import RUNNER  # noqa: E402

STATS = "/proc/sys/kernel/bpf_stats_enabled"


def progs(ids=()):
    """bpftool's view of the machine's BPF programs (or of those ids only:
    {} unless it has them all)."""
    out = subprocess.run(["bpftool", "prog", "show", "--json"] +
                         [w for i in ids for w in ("id", str(i))][:2],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         universal_newlines=True).stdout
    try:
        got = json.loads(out or "[]")
    except ValueError:
        return {}
    got = got if isinstance(got, list) else [got]
    return {p["id"]: p for p in got if isinstance(p, dict) and "id" in p}


def own_progs(pid):
    """The ids of the BPF programs process pid holds (its fds' fdinfo:
    perfpy record execs perfpy-sample, which loads them)."""
    ids = set()
    d = "/proc/%d/fdinfo" % pid
    try:
        for fd in os.listdir(d):
            with open(os.path.join(d, fd)) as f:
                m = re.search(r"^prog_id:\s+(\d+)", f.read(), re.M)
                if m:
                    ids.add(int(m.group(1)))
    except OSError:
        pass
    return sorted(ids)


def read_ids(ids):
    """The programs ids, each read alone (a listing of the whole machine
    fails while others load and unload programs), or {} if one is gone."""
    out = {}
    for i in ids:
        got = progs([i])
        if i not in got:
            return {}
        out[i] = got[i]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=3)
    ap.add_argument("--rate", type=int, default=399)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("python")
    a = ap.parse_args()
    workload = os.path.join(HERE, "workloads", "pingpong.py")
    runner = "/tmp/perfpy-bench-bpf-time-%d.py" % os.getpid()
    with open(runner, "w") as f:
        f.write(RUNNER)
    with open(STATS) as f:
        was = f.read().strip()
    last = {}
    try:
        with open(STATS, "w") as f:
            f.write("1")
        p = subprocess.Popen([os.path.join(a.build, "perfpy"), "record", "--idle", "-r",
                              str(a.rate), "-f", "collapsed", "-o", "/dev/null", "--",
                              a.python, runner, workload, str(a.scale)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             universal_newlines=True)
        while p.poll() is None:
            ids = own_progs(p.pid)
            if any(v["name"] == "pp_on_switch" for v in (last or read_ids(ids)).values()):
                last = read_ids(ids) or last
            time.sleep(0.05)
        err = p.communicate()[1]
    finally:
        with open(STATS, "w") as f:
            f.write(was)
        os.unlink(runner)
    m = re.search(r"stopped running (\d+) times", err)
    cpu = re.search(r"^cpu ([\d.]+)$", err, re.M)
    if not m or not last or not cpu:
        sys.exit("bench/wall_bpf_time.py: no reading (perfpy said: %s)" % err[-400:])
    switches = int(m.group(1))
    machine = max(v.get("run_cnt", 0) for v in last.values() if v["name"] == "pp_on_switch")
    print("_The ping-pong at scale %g under `perfpy record --idle -r %d` (%s): %d switches of "
          "its threads, its own CPU %.3f s; load average %s._" % (
              a.scale, a.rate, a.python, switches, float(cpu.group(1)),
              " ".join("%.2f" % x for x in os.getloadavg())))
    print()
    print("| BPF program | runs | time (ms) | ns a run | ns per switch of the machine |")
    print("|---|---|---|---|---|")
    total = 0
    for v in sorted(last.values(), key=lambda v: v["id"]):
        n, t = v.get("run_cnt", 0), v.get("run_time_ns", 0)
        if not n:
            continue
        total += t
        print("| %s | %d | %.1f | %.0f | %.0f |" % (v["name"], n, t / 1e6, t / n, t / machine))
    print("| all | | %.1f | | %.0f |" % (total / 1e6, total / machine))


if __name__ == "__main__":
    main()
