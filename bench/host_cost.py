#!/usr/bin/python3
"""What `perfpy record -a --every` costs a host, and whether it keeps up
(issue 27's item 3): the load the profiling agents are measured with,

  BUSY     CPython processes that never stop computing (handler -> middle ->
           leaf), two of each interpreter: pyenv 3.8-3.13, Debian's 3.11 on
           the host, and the sid root's 3.13, 3.14 and 3.15 each in a
           container (scripts/sidroot container: its own PID and mount
           namespaces, chrooted)
  SHORT    short-lived CPython processes started per minute on the host, in
           turn of its interpreters, each computing SHORT_CPU seconds of CPU
           and exiting

while `perfpy record -a --every EVERY -o DIR` (its default 19 Hz per CPU)
records for MINUTES. Every 10 s the recorder's CPU time (utime + stime of
/proc/PID/stat) and memory (VmRSS, VmHWM) are read. At the end it is
stopped with SIGINT, and every file it wrote is decoded (Google's protobuf
runtime, tests/integration/pprof_decode.py): samples, and which processes
are in them (the pid label), against the pids the bench started (a
container's by its host pid), each short one with the CPU it used (wait4).

The busy processes run at nice 19, all in the bench's session: the kernel
shares the CPU between sessions first (autogroups), nice only inside one,
so they take what the machine's other users leave. Each short-lived one
runs at nice 10 in a session of its own, as a job a host starts would:
in the bench's session they got so little of its share that they piled up
by the hundred (load average 150) instead of ending at the rate they
start. (As SCHED_IDLE the load was starved to nothing on this shared
machine.) The recorder runs as any process. The CPUs are kept busy with Python all
the same: the recorder takes its most samples.

    bench/host_cost.py [--minutes M] [--every S] [--busy N] [--short N]
                       [--short-cpu S] [--build DIR] [--out DIR] [--write-docs]

--write-docs puts the table in docs/PERFORMANCE.md between
<!-- bench:host-soak:begin --> and <!-- bench:host-soak:end -->, and the
10-second readings in bench/results/host-soak.csv.
"""
import argparse
import glob
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import sample_cost  # noqa: E402  (the docs block)
import pprof_decode  # noqa: E402

SIDROOT = os.path.join(ROOT, "scripts", "sidroot")
HOST_PYTHONS = ["/root/.pyenv/versions/%s/bin/python%s" % (v, v.rsplit(".", 1)[0])
                for v in ("3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0")] + \
               ["/usr/bin/python3.11"]
CONTAINER_PYTHONS = ["python3.13", "python3.14", "python3.15"]
TICK = os.sysconf("SC_CLK_TCK")

BUSY = """\
import sys
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def middle(n):
    return leaf(n)
def handler(n):
    return middle(n)
def serve():
    while True:
        handler(2000)
serve()
"""

SHORT = """\
import sys, time
def work(n):
    s = 0
    for i in range(n):
        s += i
    return s
def job(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        work(1000)
job(float(sys.argv[1]))
"""


def idle():
    os.setpgrp()        # killed as a group; the same session (one autogroup: the
    os.nice(19)         # kernel shares CPU per session first, nice only inside one)


def lower():
    os.nice(10)


class Load:
    """The busy processes and the stream of short ones."""

    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp
        self.busy = []          # (label, host pid, Popen)
        self.short = {}         # pid -> (label, start)
        self.done = []          # (pid, label, cpu seconds, status)
        self.stop = threading.Event()
        self.root = None
        self.rel = "/opt/perfpy-bench-%d" % os.getpid()

    def start_busy(self):
        pys = [p for p in HOST_PYTHONS if os.path.exists(p)]
        path = os.path.join(self.tmp, "busy.py")
        with open(path, "w") as f:
            f.write(BUSY)
        kinds = [("host", p) for p in pys]
        r = subprocess.run([SIDROOT, "path"], stdout=subprocess.PIPE, universal_newlines=True)
        root = r.stdout.strip()
        if r.returncode == 0 and os.path.isdir(os.path.join(root, "usr")):
            self.root = root
            os.makedirs(root + self.rel, exist_ok=True)
            with open(root + self.rel + "/busy.py", "w") as f:
                f.write(BUSY)
            kinds += [("container", p) for p in CONTAINER_PYTHONS]
        for i in range(self.a.busy):
            where, py = kinds[i % len(kinds)]
            tag = "busy-%d" % i
            if where == "host":
                p = subprocess.Popen([py, path, tag], preexec_fn=idle)
                self.busy.append(("%s %s" % (os.path.basename(py), where), p.pid, p))
            else:
                p = subprocess.Popen([SIDROOT, "container", py, self.rel + "/busy.py", tag],
                                     preexec_fn=idle)
                self.busy.append(("%s container" % py, None, p, tag))
        time.sleep(3)
        for i, b in enumerate(self.busy):      # a container's python by its tag
            if b[1] is None:
                self.busy[i] = (b[0], find_pid(b[3]), b[2])

    def spawn(self):
        pys = [p for p in HOST_PYTHONS if os.path.exists(p)]
        path = os.path.join(self.tmp, "short.py")
        with open(path, "w") as f:
            f.write(SHORT)
        k, every = 0, 60.0 / self.a.short
        t = time.monotonic()
        while not self.stop.is_set():
            py = pys[k % len(pys)]
            k += 1
            p = subprocess.Popen([py, path, str(self.a.short_cpu)], preexec_fn=lower,
                                 start_new_session=True)
            self.short[p.pid] = (os.path.basename(py), time.monotonic())
            p.returncode = 0                    # reaped here, with its rusage
            self.reap(os.WNOHANG)
            t += every
            self.stop.wait(max(0, t - time.monotonic()))
        deadline = time.monotonic() + 120
        while self.short and time.monotonic() < deadline:
            self.reap(os.WNOHANG)
            time.sleep(0.2)

    def reap(self, flags):
        for pid in list(self.short):
            try:
                got, status, ru = os.wait4(pid, flags)
            except ChildProcessError:
                got, status, ru = pid, -1, None
            if got:
                label, _ = self.short.pop(pid)
                self.done.append((pid, label, ru.ru_utime + ru.ru_stime if ru else 0, status))

    def end(self):
        for b in self.busy:
            p = b[2]
            try:
                os.killpg(p.pid, signal.SIGKILL) if b[0].endswith("container") else p.kill()
            except ProcessLookupError:
                pass
            p.wait()
        if self.root:
            subprocess.run(["rm", "-rf", self.root + self.rel])


def find_pid(tag):
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if tag.encode() in args and b"busy.py" in b" ".join(args) and \
                    b"sidroot" not in b" ".join(args) and b"unshare" not in args[0] and \
                    b"chroot" not in args[0] and b"bash" not in args[0]:
                return int(d)
    return None


def reading(pid):
    """(cpu seconds, rss MB, hwm MB) of pid now."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    rss = hwm = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return cpu, rss, hwm


def seen_line(said):
    m = re.search(r"(\d+) CPython processes seen, (\d+) of them sampled", said)
    return "%s, %s" % m.groups() if m else "?"


def slope(points):
    """MB per hour of a least-squares line through (seconds, MB)."""
    if len(points) < 3:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 3600 * sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def run(a):
    tmp = tempfile.mkdtemp(prefix="perfpy-bench-host-")
    out = a.out or os.path.join(tmp, "profiles")
    load = Load(a, tmp)
    load.start_busy()
    log = open(os.path.join(tmp, "perfpy.log"), "w")
    cmd = [os.path.join(a.build, "perfpy"), "record", "-a", "--every", str(a.every), "-o", out]
    rec = subprocess.Popen(cmd, stderr=log)
    spawner = threading.Thread(target=load.spawn)
    spawner.start()
    readings, t0 = [], time.monotonic()
    while time.monotonic() - t0 < a.minutes * 60 and rec.poll() is None:
        time.sleep(10)
        try:
            readings.append((time.monotonic() - t0,) + reading(rec.pid))
        except OSError:
            break
    load.stop.set()
    spawner.join()
    crashed = rec.poll()
    rec.send_signal(signal.SIGINT)
    status = rec.wait(timeout=300)
    wall = time.monotonic() - t0
    load.end()
    log.close()
    with open(log.name) as f:
        said = f.read()
    files = sorted(glob.glob(os.path.join(out, "perfpy-*.pb.gz")))
    decoded = pprof_decode.decode(a.build, files) if files else {}
    pids, total = {}, 0
    for d in decoded.values():
        for s in d["samples"]:
            total += s["values"][0]
            pid = int(s["labels"].get("pid", 0))
            pids[pid] = pids.get(pid, 0) + s["values"][0]
    return {"cmd": cmd, "a": a, "wall": wall, "status": status, "crashed": crashed,
            "readings": readings, "said": said, "files": files, "total": total,
            "pids": pids, "busy": load.busy, "short": load.done, "tmp": tmp}


def table(r):
    a, rd = r["a"], r["readings"]
    cpu = rd[-1][1] if rd else 0
    span = rd[-1][0] if rd else 1
    windows = [(rd[i][1] - rd[i - 6][1]) / (rd[i][0] - rd[i - 6][0])
               for i in range(6, len(rd))]           # each minute's share
    late = [(t, rss) for t, _, rss, _ in rd if t >= min(300, span / 4)]
    busy_in = sum(1 for b in r["busy"] if r["pids"].get(b[1]))
    short = r["short"]
    short_in = [s for s in short if r["pids"].get(s[0])]
    missing = [s for s in short if not r["pids"].get(s[0])]
    versions = sorted({b[0] for b in r["busy"]})
    lines = [
        "_Generated by `bench/host_cost.py --minutes %g --every %g --busy %d --short %d "
        "--short-cpu %g%s` on %s._" % (a.minutes, a.every, a.busy, a.short, a.short_cpu,
                                        " --write-docs" if a.write_docs else "",
                                        time.strftime("%Y-%m-%d %H:%M")),
        "",
        "Recorder: `%s` (19 Hz per CPU, 2 CPUs); load: %d busy CPython processes (%s) "
        "and %d short-lived ones a minute (%g s of CPU each, host interpreters in turn), "
        "busy at nice 19, short at nice 10." % (" ".join(["perfpy"] + r["cmd"][1:-1] + ["DIR"]), a.busy,
                             ", ".join(versions), a.short, a.short_cpu),
        "",
        "| | measured | bound |",
        "|---|---|---|",
        "| recorded | %.0f s, %d files, %d samples | |" % (r["wall"], len(r["files"]),
                                                          r["total"]),
        "| perfpy's CPU, whole run | %.2f s = %.2f%% of one core | <= 1%% |" % (
            cpu, 100 * cpu / span if span else 0),
        "| perfpy's CPU, busiest minute | %.2f%% of one core | |" % (
            100 * max(windows) if windows else 0),
        "| perfpy's memory (RSS): first reading, last, peak (VmHWM) | %.1f MB, %.1f MB, "
        "%.1f MB | <= 250 MB |" % (rd[0][2] if rd else 0, rd[-1][2] if rd else 0,
                                  max(x[3] for x in rd) if rd else 0),
        "| RSS trend after the first %d s (least squares) | %+.1f MB per hour | flat |" % (
            min(300, span / 4), slope(late)),
        "| busy processes in the profiles | %d of %d | all |" % (busy_in, len(r["busy"])),
        "| short-lived processes in the profiles | %d of %d | all |" % (len(short_in),
                                                                        len(short)),
        "| perfpy's own count: CPython processes seen, of them sampled | %s | |" % (
            seen_line(r["said"])),
        "| short-lived ones missing, their CPU | %s | |" % (
            ", ".join("%.2f s" % s[2] for s in missing[:10]) + (" ..." if len(missing) > 10
                                                                else "") or "none"),
        "| exit status after SIGINT; crashed before | %s; %s | 0; no |" % (
            r["status"], "no" if r["crashed"] is None else "yes (%s)" % r["crashed"]),
        "| samples lost (ring buffer full) | %s | |" % (
            "none" if "samples lost" not in r["said"] else
            [l for l in r["said"].splitlines() if "samples lost" in l][0]),
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--every", type=float, default=60)
    ap.add_argument("--busy", type=int, default=20)
    ap.add_argument("--short", type=int, default=200)
    ap.add_argument("--short-cpu", type=float, default=0.2)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out")
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args()
    r = run(a)
    text = table(r)
    print(text)
    print("(files and the recorder's log: %s)" % r["tmp"], file=sys.stderr)
    if a.write_docs:
        sample_cost.write_docs(text, "host-soak", "## Whole host, continuously")
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        with open(os.path.join(HERE, "results", "host-soak.csv"), "w") as f:
            f.write("seconds,cpu_s,rss_mb,hwm_mb\n")
            for x in r["readings"]:
                f.write("%.0f,%.2f,%.1f,%.1f\n" % x)


if __name__ == "__main__":
    main()
