#!/usr/bin/python3
"""Wall-clock profiles (issue 23): what recording costs, how right it is,
and how it scales, perfpy --idle side by side with py-spy --idle and CPython
3.15's sampler (--mode wall), each at the same rate, the same programs in
the same run.

    bench/wall.py [--reps N] [--rate HZ] [--server-seconds S] [--build DIR]
                  [--configs A,B] [--skip cost,accuracy,server] [--pin CPU]
                  [--baseline DIR] [--floor] [--settle S] [--write-docs] PYTHON...

1. Cost: the program's own CPU time (time.process_time() around it) under a
   two-thread ping-pong (15,000 round trips through queue.Queue:
   bench/workloads/pingpong.py, nothing but switches), runs interleaved,
   the median of each run's ratio to the plain run of its rep; and
   perfpy's own CPU per scheduler event: the CPU of perfpy's process tree
   (getrusage of the children) less the program's, over the switches its
   notes count. The program sleeps --settle seconds (default 1) before its
   measured part, in every configuration: a recorder's start-up slows the
   program that starts right after it on this machine for a while, and
   that is not the cost of following its switches. --pin CPU runs the program (not the tools) on that CPU:
   both threads on one CPU, each hand-over a switch, without the noise of
   where the scheduler puts them (unpinned, the ping-pong's own CPU time
   moves by 20% or more from run to run on this machine). --baseline DIR
   adds another build's perfpy --idle to these runs (a change against the
   build before it, interleaved); a row runs this build the older way
   (PERFPY_SAMPLE_SYS_EXIT=1: captures at sys_exit), and perfpy's notes give
   each perfpy row's switches a run. --floor adds what perfpy --idle stands on:
   one cpu-clock event per CPU (perf record -a), and perfpy --idle without
   its programs at every switch and at its end (sched_switch and
   sched_exit_tp; on kernels without it every system call's end), with the
   first alone doing nothing, and with both doing nothing
   (PERFPY_BENCH_WALL=none / switch / empty: wrong profiles, costs only).
2. Accuracy: tests/integration/programs/wall_parts.py (CPU work, sleep, a
   pipe read, a lock wait, each 30-60 ms, a dozen rounds) measures its own
   split; each tool's profile's split of the same four parts, and the
   largest difference in points.
3. Scale: bench/workloads/server50.py (50 threads that mostly wait, 200
   requests a second) recorded for --server-seconds (default 600): the
   recorder's peak memory (VmHWM of its process, polled), the scheduler
   events and anything lost, from perfpy's notes.

--write-docs puts each part's tables in docs/PERFORMANCE.md between
<!-- bench:wall-WORLD-PART:begin --> and <!-- bench:wall-WORLD-PART:end -->
(PART: cost, accuracy, scale): a run that skips a part leaves its block.
"""
import argparse
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from portable import build_arg, py_arg, py_label  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from sample_cost import (RUNNER as RUNNER_CPU, cost_rows, py_spy, version, world,  # noqa: E402
                         write_docs)

PARTS = os.path.join(ROOT, "tests", "integration", "programs", "wall_parts.py")
# sample_cost's runner, and the process's CPU time since its start (the
# recorder's own is its process tree's less this)
RUNNER = RUNNER_CPU + 'sys.stderr.write("cpu-all %.6f\\n" % time.process_time())\n'
# read mode's wall clock (no root, no BPF: /proc's account of each thread
# at each tick), the one to set beside py-spy's, which needs no root either
READ = "perfpy --mode read --idle"
TOOLS = ("perfpy --idle", READ, "py-spy --idle", "3.15 sampler --mode wall")
# the waits of wall_parts.py and the marker of each one's reason
REASONS = {"doze": "[off-CPU: sleep]", "drain": "[off-CPU: I/O]",
           "queue_wait": "[off-CPU: lock]"}
# the cost's reference: what one cpu-clock perf event per thread costs the
# program by itself (perf counting it, no sample, no BPF): perfpy's
# on-CPU samples come from such events, whose every switch of the program's
# threads is a switch of their perf context in the kernel
PER_THREAD_EVENT = "perf stat -e cpu-clock (a per-thread event alone)"
# and the same event sampling at the rate (perf record, no BPF): a sampling
# event re-arms its timer at each switch of its thread, which counting does
# not (in a virtual machine each re-arm can be an exit to the hypervisor)
PER_THREAD_SAMPLING = "perf record -e cpu-clock (a per-thread sampling event alone)"
REFERENCES = (PER_THREAD_EVENT, PER_THREAD_SAMPLING)
# --floor: what the machinery under perfpy's scheduler programs costs by
# itself: one cpu-clock sampling event per CPU (perf record -a, no BPF: the
# kind wall-clock mode's on-CPU samples come from), perfpy --idle without
# its programs at every switch and at its end (or every system call's
# end, on kernels without sched_exit_tp), with the first alone and with
# both attached but returning at once (PERFPY_BENCH_WALL, read by
# src/collect/collect.c for this alone: those three profiles are wrong)
PER_CPU_SAMPLING = "perf record -a -e cpu-clock (a sampling event per CPU alone)"
WALL_NONE = "perfpy --idle without its two programs at every switch"
WALL_EMPTY = "perfpy --idle, those two programs attached, doing nothing"
WALL_ONE = "perfpy --idle, the switch's program alone attached, doing nothing"
FLOOR = (PER_CPU_SAMPLING, WALL_NONE, WALL_ONE, WALL_EMPTY)
BENCH_WALL = {WALL_NONE: "none", WALL_ONE: "switch", WALL_EMPTY: "empty"}
# --baseline DIR: another build's perfpy --idle in the same runs (a change's
# cost measured against the build before it, interleaved, not a day apart)
BASELINE = "perfpy --idle, the --baseline build"
# the older way of capturing, which kernels without sched_exit_tp get: at
# sys_exit, a program at every system call's end, each on the slow path
SYS_EXIT = "perfpy --idle, PERFPY_SAMPLE_SYS_EXIT=1"


def commands(tool, py, ver, a, spy, out, pin=None):
    """The command line that records `py ...` with tool, or None (pin: the
    program, not the tool, on that CPU)."""
    perfpy = os.path.join(a.build, "perfpy")
    if pin is not None:
        pinned = ["taskset", "-c", str(pin), py]
        cmd = commands_unpinned(tool, "\0", ver, a, spy, out, perfpy)
        return None if cmd is None else \
            [w for x in cmd for w in (pinned if x == "\0" else [x])]
    return commands_unpinned(tool, py, ver, a, spy, out, perfpy)


def commands_unpinned(tool, py, ver, a, spy, out, perfpy):
    if tool == "plain":
        return [py]
    if tool == PER_THREAD_EVENT:
        perf = shutil.which("perf")
        return [perf, "stat", "-e", "cpu-clock", "-x,", "-o", "/dev/null", "--", py] if perf \
            else None
    if tool == PER_THREAD_SAMPLING:
        perf = shutil.which("perf")
        return [perf, "record", "-q", "-e", "cpu-clock", "-c", str(1000000000 // a.rate),
                "-o", out + ".data", "--", py] if perf else None
    if tool in FLOOR and not a.floor:
        return None
    if tool == PER_CPU_SAMPLING:
        perf = shutil.which("perf")
        return [perf, "record", "-q", "-a", "-e", "cpu-clock", "-c", str(1000000000 // a.rate),
                "-o", out + ".data", "--", py] if perf else None
    if tool in BENCH_WALL:
        return ["env", "PERFPY_BENCH_WALL=" + BENCH_WALL[tool],
                perfpy, "record", "--idle", "-r", str(a.rate), "-f", "collapsed",
                "-o", out + ".txt", "--", py]
    if tool == BASELINE and not a.baseline:
        return None
    if tool == SYS_EXIT:
        return ["env", "PERFPY_SAMPLE_SYS_EXIT=1", perfpy, "record", "--idle", "-r",
                str(a.rate), "-f", "collapsed", "-o", out + ".txt", "--", py]
    if tool == READ:
        return [perfpy, "record", "--mode", "read", "--idle", "-r", str(a.rate), "-f",
                "collapsed", "-o", out + ".txt", "--", py]
    if tool in ("perfpy --idle", BASELINE):
        return [os.path.join(a.baseline, "perfpy") if tool == BASELINE else perfpy, "record",
                "--idle", "-r", str(a.rate), "-f", "collapsed", "-o", out + ".txt", "--", py]
    if tool == "py-spy --idle" and spy:
        return [spy, "record", "--idle", "-r", str(a.rate), "-f", "raw", "-o", out + ".spy",
                "--", py]
    if tool == "3.15 sampler --mode wall" and ver >= (3, 15):
        return [py, "-m", "profiling.sampling", "run", "--mode", "wall", "-a", "-r", str(a.rate),
                "--collapsed", "-o", out + ".tachyon"]
    return None


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd, timeout=1800):
    c0, t0 = children_cpu(), time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout)
    return p, children_cpu() - c0, time.monotonic() - t0


def notes(stderr):
    """perfpy's wall-clock notes: switches, captures, everything lost."""
    n = {}
    m = re.search(r"stopped running (\d+) times; (\d+) stacks off the CPU captured", stderr)
    if m:
        n["switches"], n["captures"] = int(m.group(1)), int(m.group(2))
    m = re.search(r"lost (\d+) stacks off the CPU and (\d+) ends of one.*?(\d+) stacks whose "
                  r"end never came, (\d+) threads", stderr)
    n["lost"] = sum(int(x) for x in m.groups()) if m else 0
    m = re.search(r"(\d+) samples lost", stderr)
    n["lost"] += int(m.group(1)) if m else 0
    m = re.search(r"did not report (\d+) of the switches", stderr)
    n["unreported"] = int(m.group(1)) if m else 0
    return n


# ---- 1. cost --------------------------------------------------------------

def cost(py, ver, a, spy, tmp):
    runner = os.path.join(tmp, "runner.py")
    with open(runner, "w") as f:
        f.write(RUNNER)
    workload = os.path.join(HERE, "workloads", "pingpong.py")
    names = [t for t in ("plain",) + TOOLS + (SYS_EXIT, BASELINE) + REFERENCES + FLOOR
             if commands(t, py, ver, a, spy, os.path.join(tmp, "o")) and
             (not a.configs or t in ("plain", SYS_EXIT, BASELINE) + REFERENCES + FLOOR or
              t in a.configs)]
    runs = {n: [] for n in names}
    own = []                      # perfpy's CPU per switch, per run
    switches = {}                 # per perfpy configuration that counts them, per run
    per_s = {}                    # read mode's and py-spy's own CPU a second, per run
    load = [os.getloadavg()[0]]
    for rep in range(a.reps):
        for n in names[rep % len(names):] + names[:rep % len(names)]:
            cmd = commands(n, py, ver, a, spy, os.path.join(tmp, "o"), a.pin)
            p, tree, took = run(cmd + [runner, workload, "1", str(a.settle)])
            m = re.search(r"^cpu ([\d.]+)$", p.stderr, re.M)
            runs[n].append(float(m.group(1)) if m and p.returncode == 0 else None)
            m_all = re.search(r"^cpu-all ([\d.]+)$", p.stderr, re.M)
            sw = notes(p.stderr).get("switches")
            if sw:
                switches.setdefault(n, []).append(sw)
            if n == "perfpy --idle" and m_all and sw:
                own.append((tree - float(m_all.group(1)), sw))
            if n in (READ, "py-spy --idle") and m_all and p.returncode == 0:
                per_s.setdefault(n, []).append((tree - float(m_all.group(1))) / took)
    load.append(os.getloadavg()[0])
    return names, runs, (own, switches, per_s), load


SETTLE_TEXT = (" The program slept %g s before its measured part in every configuration "
               "(plain too, --settle): on this machine a program that starts right after "
               "another process's busy start-up (a recorder's) runs slower for a while, "
               "which is not the cost of following its switches (--settle 0 counts it).")
FLOOR_TEXT = (" Then (--floor) what perfpy's wall-clock mode stands on, without the work of "
              "its programs: one cpu-clock event per CPU sampling at the rate (perf "
              "record -a: no BPF), the kind its on-CPU samples come from; perfpy --idle "
              "without its two programs at every switch (sched_switch, and sched_exit_tp at "
              "its end; on kernels without it sys_exit at every system call's end): its on-CPU "
              "samples and the rest (PERFPY_BENCH_WALL=none); with the switch's program "
              "alone attached, returning at once (=switch); and with both attached, "
              "returning at once (=empty). The profiles of those three are wrong by design.")


def cost_table(results, a):
    lines = ["The program's own CPU time under the ping-pong (bench/workloads/pingpong.py: "
             "15,000 round trips through queue.Queue), median of %d interleaved runs; ratio: "
             "the median of each run over the plain run of the same rep. perfpy's own CPU: "
             "its process tree's (getrusage of the children) less the program's, per "
             "switch of the program's threads its notes count (median over its runs). "
             "perfpy --idle, PERFPY_SAMPLE_SYS_EXIT=1: this build capturing the older "
             "way, at sys_exit (what kernels without sched_exit_tp get: a program at every "
             "system call's end, every system call on the slow path). "
             "Two rows are references (perf's): the program under one cpu-clock "
             "perf event "
             "per thread that perf only counts (no sample, no BPF), and the same event "
             "sampling at the rate (perf record: no BPF), the kind of event perfpy's "
             "on-CPU samples come from; a sampling event re-arms its timer at each "
             "switch of its thread.%s%s%s" % (a.reps, SETTLE_TEXT % a.settle if a.settle else "",
                                              FLOOR_TEXT if a.floor else "",
                                            " The program was pinned to CPU %d "
                                          "(taskset; the tools were not): both its threads "
                                          "on one CPU, every hand-over a switch, and no "
                                          "noise from where the scheduler puts them."
                                          % a.pin if a.pin is not None else ""), ""]
    for py, (ver, (names, runs, (own, switches, per_s), load)) in results.items():
        lines += ["#### CPython %d.%d (%s)" % (ver + (py_label(py),)), "",
                  "Load average (1 min) %.1f at the start of these runs, %.1f at their end."
                  % tuple(load), ""] + cost_rows(names, runs, spread=True)
        if own:
            per = statistics.median(cpu / sw for cpu, sw in own)
            lines += ["", "perfpy's own CPU: %.2f µs per switch (median of %d runs; %d switches "
                      "a run, median)." % (1e6 * per, len(own),
                                             statistics.median(sw for _, sw in own))]
        if per_s:
            lines += ["", "The recorder's own CPU a second of the run (its process tree's "
                      "less the program's, over the run's wall time; median): " +
                      "; ".join("%s %.1f ms/s" % (n, 1e3 * statistics.median(v))
                                for n, v in per_s.items()) + "."]
        if switches:
            lines += ["", "The program's threads' switches a run (median), as perfpy's notes "
                      "count them: " + "; ".join("%s %d" % (n, statistics.median(v))
                                                 for n, v in switches.items()) + "."]
        lines.append("")
    return lines


# ---- 2. accuracy -----------------------------------------------------------

def in_part(stack, part):
    """A frame of the stack is part: "part (file:line)" (perfpy, py-spy) or
    "file:part:line" / "part" (the 3.15 sampler's collapsed frames)."""
    return re.search(r"(^|;)(%s \(|[^;]*:%s:\d+(;|$)|%s(;|$))"
                     % ((re.escape(part),) * 3), stack) is not None


def stacks_of(path):
    stacks = {}
    with open(path, errors="replace") as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if n.isdigit():
                stacks[stack] = stacks.get(stack, 0) + int(n)
    return stacks


def split_of(path):
    stacks = stacks_of(path)
    got = {k: sum(n for s, n in stacks.items() if in_part(s, k))
           for k in ("crunch", "doze", "drain", "queue_wait")}
    total = sum(got.values())
    return {k: 100.0 * v / total for k, v in got.items()} if total else None


def reasons_of(path):
    """perfpy's profiles: of each wait's time off the CPU (not a CPU's,
    once woken), the share under its reason's marker (%)."""
    stacks, out = stacks_of(path), {}
    for part, marker in REASONS.items():
        off = sum(n for s, n in stacks.items() if in_part(s, part) and "[off-CPU: " in s
                  and not s.endswith("[off-CPU: waiting for a CPU]"))
        out[part] = 100.0 * sum(n for s, n in stacks.items() if in_part(s, part) and
                                s.endswith(marker)) / off if off else None
    return out


def accuracy(py, ver, a, spy, tmp):
    out = {}
    for tool in TOOLS:
        o = os.path.join(tmp, "acc")
        cmd = commands(tool, py, ver, a, spy, o)
        if not cmd or (a.configs and tool not in a.configs):
            continue
        p, _, _ = run(cmd + [PARTS])
        # the program's own split: its last line of JSON (py-spy writes its
        # own lines to the same stdout)
        own = None
        for line in reversed(p.stdout.splitlines()):
            if line.startswith("{"):
                try:
                    own = json.loads(line)
                    break
                except ValueError:
                    pass
        if own is None:
            continue
        own.pop("crunch_cpu", None)
        truth = {k: 100.0 * v / sum(own.values()) for k, v in own.items()}
        path = {"perfpy --idle": o + ".txt", READ: o + ".txt",
                "py-spy --idle": o + ".spy"}.get(tool, o + ".tachyon")
        got = split_of(path) if os.path.exists(path) else None
        why = reasons_of(path) if got and path.endswith(".txt") else None
        out[tool] = (truth, got, why)
    return out


def accuracy_table(results):
    lines = ["tests/integration/programs/wall_parts.py measures its own split (perf_counter "
             "around each part); each tool's profile, the same four parts' share of the "
             "time in them. Largest difference in points; for perfpy, the share of each "
             "wait's time off the CPU (once woken, a wait for a CPU apart) under its "
             "reason's marker.", ""]
    for py, (ver, acc) in results.items():
        lines += ["#### CPython %d.%d (%s)" % (ver + (py_label(py),)), "",
                  "| tool | crunch | doze (sleep) | drain (pipe read) | queue_wait (lock) | "
                  "largest difference | each wait under its reason |",
                  "|---|---|---|---|---|---|---|"]
        for tool, (truth, got, why) in acc.items():
            if not got:
                lines.append("| %s | – | – | – | – | – | – |" % tool)
                continue
            cells = ["%.1f%% (own %.1f%%)" % (got[k], truth[k]) for k in truth]
            lines.append("| %s | %s | %.1f | %s |" % (
                tool, " | ".join(cells), max(abs(got[k] - truth[k]) for k in truth),
                ", ".join("%s %s" % (k, "%.0f%%" % v if v is not None else "–")
                          for k, v in why.items()) if why else "– (no reasons)"))
        lines.append("")
    return lines


# ---- 3. scale -------------------------------------------------------------

def peak_memory(cmd, seconds):
    """Runs cmd; its peak VmHWM (MiB), polled every second (the recorder is
    the process started: perfpy record execs perfpy-sample, py-spy is its
    own; the 3.15 sampler profiles from a process of its own too)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
    peak = 0
    while proc.poll() is None:
        try:
            with open("/proc/%d/status" % proc.pid) as f:
                m = re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M)
                peak = max(peak, int(m.group(1)) if m else 0)
        except OSError:
            pass
        time.sleep(1)
    out, err = proc.communicate()
    return peak / 1024.0, err, proc.returncode


def scale(py, ver, a, spy, tmp):
    runner = os.path.join(tmp, "runner.py")
    with open(runner, "w") as f:
        f.write(RUNNER)
    workload = os.path.join(HERE, "workloads", "server50.py")
    out = {}
    for tool in TOOLS:
        cmd = commands(tool, py, ver, a, spy, os.path.join(tmp, "srv"))
        if not cmd or (a.configs and tool not in a.configs):
            continue
        mib, err, rc = peak_memory(cmd + [runner, workload, str(a.server_seconds)],
                                   a.server_seconds)
        out[tool] = (mib, notes(err) if tool == "perfpy --idle" else {}, rc)
    return out


def scale_table(results, a):
    lines = ["bench/workloads/server50.py (50 threads that mostly wait, 200 requests a "
             "second) recorded for %d s: the recorder's peak memory (VmHWM of its process, "
             "polled each second; the 3.15 sampler's is the profiled process's parent), "
             "and from perfpy's notes its scheduler events and anything lost." %
             a.server_seconds, ""]
    for py, (ver, sc) in results.items():
        lines += ["#### CPython %d.%d (%s)" % (ver + (py_label(py),)), "",
                  "| tool | peak memory (MiB) | switches | stacks captured | lost | "
                  "switches not reported by the kernel |", "|---|---|---|---|---|---|"]
        for tool, (mib, n, rc) in sc.items():
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                tool, "%.1f" % mib if rc == 0 else "failed (%d)" % rc,
                n.get("switches", "–"), n.get("captures", "–"),
                n.get("lost", "–") if n else "–", n.get("unreported", "–") if n else "–"))
        lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--rate", type=int, default=399)
    ap.add_argument("--server-seconds", type=int, default=600)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--configs", help="only these tools (comma-separated)")
    ap.add_argument("--skip", default="", help="cost, accuracy, server")
    ap.add_argument("--settle", type=float, default=1.0,
                    help="the cost's program sleeps this long before its measured part, in "
                    "every configuration (plain too): what a tool's start-up leaves behind "
                    "is not counted as the program's (0: counted)")
    ap.add_argument("--pin", type=int,
                    help="the cost's program (not the tools) on this CPU")
    ap.add_argument("--baseline", help="another build directory: its perfpy --idle beside "
                    "this one's in the cost's runs")
    ap.add_argument("--floor", action="store_true",
                    help="the cost's runs also measure what perfpy --idle stands on")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("pythons", nargs="+")
    a = ap.parse_args()
    a.configs = a.configs.split(",") if a.configs else None
    spy = py_spy(a.build)
    tmp = tempfile.mkdtemp(prefix="perfpy-bench-wall-")
    generated = "_Generated by `bench/wall.py --reps %d --rate %d --server-seconds %d%s%s%s%s%s " \
                "%s--write-docs %s` on %s (world %s)._" % (
                    a.reps, a.rate, a.server_seconds, " --skip " + a.skip if a.skip else "",
                    " --settle %g" % a.settle if a.settle != 1.0 else "",
                    " --configs " + shlex.quote(",".join(a.configs)) if a.configs else "",
                    " --pin %d" % a.pin if a.pin is not None else "",
                    " --baseline " + build_arg(a.baseline) if a.baseline else "",
                    "--floor " if a.floor else "", " ".join(py_arg(p) for p in a.pythons),
                    time.strftime("%Y-%m-%d %H:%M"), world())
    sections = []                  # (name, text): each its own block of the docs
    try:
        vers = {py: version(py) for py in a.pythons}
        if "cost" not in a.skip:
            sections.append(("cost", "**Cost.** " + "\n".join(cost_table(
                {py: (vers[py], cost(py, vers[py], a, spy, tmp)) for py in a.pythons}, a))))
        if "accuracy" not in a.skip:
            sections.append(("accuracy", "**Accuracy.** " + "\n".join(accuracy_table(
                {py: (vers[py], accuracy(py, vers[py], a, spy, tmp)) for py in a.pythons}))))
        if "server" not in a.skip:
            sections.append(("scale", "**Scale.** " + "\n".join(scale_table(
                {py: (vers[py], scale(py, vers[py], a, spy, tmp)) for py in a.pythons}, a))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = "_Load average at the end: %s._" % " ".join("%.2f" % x for x in os.getloadavg())
    print("\n".join([generated, ""] + [text for _, text in sections] + [load]))
    # a block per part, so that a run of one part (--skip) replaces its own
    # and leaves the others' figures, with the command that made them
    for name, text in sections if a.write_docs else ():
        write_docs("\n".join([generated, "", text, load]), "wall-%s-%s" % (world(), name),
                   "## Wall clock: cost, accuracy, scale")

if __name__ == "__main__":
    main()
