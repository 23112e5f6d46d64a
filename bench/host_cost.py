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
           (a few ms: most of its life is the interpreter's start) and exiting
  CHURN    (0 unless asked) other programs exec'd per minute, no Python
           (true, sh -c :, env true): a shared host's builds and tests,
           each an exec the recorder is told of and decides about

while `perfpy record -a --every EVERY -o DIR` (its default 19 Hz per CPU)
records for MINUTES. Every 10 s the recorder's CPU time (utime + stime of
/proc/PID/stat: perfpy-sample, which perfpy exec'd in its place) and memory
(VmRSS, VmHWM) are read. At the end it is stopped with SIGINT, and every
file it wrote is decoded (Google's protobuf runtime,
tests/integration/pprof_decode.py): samples, and which processes are in
them (the pid label), against the pids the bench started (a container's by
its host pid), each short one with the CPU it used (wait4).

The machine is shared, so the load takes only what others leave: the busy
processes run in one session of their own (the kernel shares the CPU
between sessions first, autogroups, and nice only inside one) whose
autogroup is set to nice 19, each process at nice 19 too: the whole load
weighs as one nice-19 task against any other session. The short-lived ones
each run in a session of their own, briefly; at most CAP are alive at once,
and one due while CAP are alive is not started but counted; any still alive
30 s after the run are killed and counted as not ended. (A first version
gave each 0.25 s of CPU at nice 10 and no cap: starved, they piled up by
the hundred and took the CPU share of as many ordinary processes.) The
recorder runs as any process, at nice 0 in the bench's session, so its CPU
figure is its own. The CPUs stay busy with Python all the same: the
recorder takes its most samples.

A process is in the profiles only if it was sampled: at 19 Hz a process
that ran t seconds of CPU is hit with probability about min(1, 19 t), which
the table gives as the expected count beside the measured one; perfpy's
own count of the CPython processes it saw is the other figure.

    bench/host_cost.py [--minutes M] [--every S] [--busy N] [--short N]
                       [--short-cpu S] [--cap N] [--churn N] [--build DIR] [--out DIR]
                       [--write-docs]

The 10-second readings go to readings.csv in the bench's directory (named
at the end); --write-docs puts the table in docs/PERFORMANCE.md between
<!-- bench:host-soak:begin --> and <!-- bench:host-soak:end -->, and the
readings in bench/results/host-soak.csv.
"""
import argparse
import glob
import os
import re
import shlex
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
PYENV_ROOT = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
HOST_PYTHONS = [os.path.join(PYENV_ROOT, "versions", v, "bin", "python" + v.rsplit(".", 1)[0])
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


RATE = 19                   # perfpy record -a's default, per CPU


def lowest():
    """A session of its own (one autogroup), at nice 19 as a whole."""
    os.setsid()
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass                    # no autogroups: nice alone
    os.nice(19)


class Load:
    """The busy processes and the stream of short ones."""

    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp
        self.busy = []          # (label, host pid)
        self.tags, self.busy_pids = [], {}
        self.group = None       # the shell that started them, leader of their group
        self.short = {}         # pid -> (label, start)
        self.done = []          # (pid, label, cpu seconds, status)
        self.life = []          # wall seconds of each short one, start to reaped
        self.started = self.not_started = self.not_ended = self.churned = 0
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
        jobs, labels = [], []
        for i in range(self.a.busy):
            where, py = kinds[i % len(kinds)]
            tag = "busy-%d" % i
            if where == "host":
                jobs.append([py, path, tag])
                labels.append(("%s host" % os.path.basename(py), tag))
            else:
                jobs.append([SIDROOT, "container", py, self.rel + "/busy.py", tag])
                labels.append(("%s container" % py, tag))
        # one shell starts them all, so that they share its session and its
        # nice-19 autogroup; they are killed as its process group
        script = "".join(" ".join(shlex.quote(x) for x in j) + " &\n" for j in jobs) + "wait\n"
        self.group = subprocess.Popen(["/bin/sh", "-c", script], preexec_fn=lowest)
        # a container's python starts after its namespaces and chroot: on a
        # loaded machine 3 s was not enough for them (the first hour's run
        # matched 14 of 20, the other six were sampled under pids it never
        # learnt)
        # (the 20-minute run's six still had not started after 60 s, at load
        # average 26 to 58: those not found by then are looked for again at
        # every reading, find_missing)
        self.tags = labels
        self.busy_pids, deadline = {}, time.monotonic() + 60
        while len(self.busy_pids) < len(labels) and time.monotonic() < deadline:
            time.sleep(1)
            self.find_missing()

    def find_missing(self):
        for label, tag in self.tags:
            if tag not in self.busy_pids and find_pid(tag):
                self.busy_pids[tag] = find_pid(tag)
        self.busy = [(label, self.busy_pids.get(tag)) for label, tag in self.tags]

    def spawn(self):
        pys = [p for p in HOST_PYTHONS if os.path.exists(p)]
        path = os.path.join(self.tmp, "short.py")
        with open(path, "w") as f:
            f.write(SHORT)
        k, every = 0, 60.0 / self.a.short
        t = time.monotonic()
        while not self.stop.is_set():
            self.reap(os.WNOHANG)
            if len(self.short) >= self.a.cap:
                self.not_started += 1
            else:
                py = pys[k % len(pys)]
                k += 1
                try:
                    p = subprocess.Popen([py, path, str(self.a.short_cpu)],
                                         start_new_session=True)
                except OSError:
                    self.not_started += 1
                else:
                    self.short[p.pid] = (os.path.basename(py), time.monotonic())
                    self.started += 1
                    p.returncode = 0                # reaped here, with its rusage
            t += every
            self.stop.wait(max(0, t - time.monotonic()))
        deadline = time.monotonic() + 30
        while self.short and time.monotonic() < deadline:
            self.reap(os.WNOHANG)
            time.sleep(0.2)
        for pid in list(self.short):
            self.not_ended += 1
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.reap(0)

    def churn(self):
        """CHURN other programs exec'd a minute (no Python: a shell, true,
        env running true), each reaped at once: what a busy host's builds
        and tests make the recorder decide about."""
        progs = [["/bin/true"], ["/bin/sh", "-c", ":"], ["/usr/bin/env", "true"]]
        k, every = 0, 60.0 / self.a.churn
        t = time.monotonic()
        while not self.stop.is_set():
            try:
                subprocess.run(progs[k % len(progs)], preexec_fn=os.setsid)
                self.churned += 1
            except OSError:
                pass
            k += 1
            t += every
            self.stop.wait(max(0, t - time.monotonic()))

    def reap(self, flags):
        for pid in list(self.short):
            try:
                got, status, ru = os.wait4(pid, flags)
            except ChildProcessError:
                got, status, ru = pid, -1, None
            if got:
                label, t0 = self.short.pop(pid)
                self.done.append((pid, label, ru.ru_utime + ru.ru_stime if ru else 0, status))
                self.life.append(time.monotonic() - t0)

    def end(self):
        if self.group:
            try:
                os.killpg(self.group.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.group.wait()
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
    """(cpu seconds, rss MB, hwm MB, anonymous MB, file-backed MB) of pid
    now: RssAnon is its heap; RssFile the BPF maps' pages, its libraries,
    and the unwinder's mappings of the files the profiled processes map."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    got = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key = line.split(":", 1)[0]
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                got[key] = int(line.split()[1]) / 1024
    return (cpu, got.get("VmRSS", 0), got.get("VmHWM", 0), got.get("RssAnon", 0),
            got.get("RssFile", 0))


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
    tmp = tempfile.mkdtemp(prefix="host-cost-")  # not perfpy-*: the suites count those in /tmp as theirs
    out = a.out or os.path.join(tmp, "profiles")
    load = Load(a, tmp)
    load.start_busy()
    log = open(os.path.join(tmp, "perfpy.log"), "w")
    cmd = [os.path.join(a.build, "perfpy"), "record", "-a", "--every", str(a.every), "-o", out]
    rec = subprocess.Popen(cmd, stderr=log)
    spawner = threading.Thread(target=load.spawn)
    spawner.start()
    churner = threading.Thread(target=load.churn) if a.churn else None
    if churner:
        churner.start()
    readings, t0 = [], time.monotonic()
    while time.monotonic() - t0 < a.minutes * 60 and rec.poll() is None:
        time.sleep(10)
        try:
            readings.append((time.monotonic() - t0,) + reading(rec.pid))
        except OSError:
            break
        if len(load.busy_pids) < len(load.tags):
            load.find_missing()
    load.stop.set()
    spawner.join()
    if churner:
        churner.join()
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
    with open(os.path.join(tmp, "readings.csv"), "w") as f:
        f.write(csv(readings))
    return {"cmd": cmd, "a": a, "wall": wall, "status": status, "crashed": crashed,
            "readings": readings, "said": said, "files": files, "total": total,
            "pids": pids, "busy": load.busy, "short": load.done, "tmp": tmp,
            "started": load.started, "not_started": load.not_started,
            "not_ended": load.not_ended, "life": load.life, "churned": load.churned}


def csv(readings):
    return "seconds,cpu_s,rss_mb,hwm_mb,anon_mb,file_mb\n" + "".join(
        "%.0f,%.2f,%.1f,%.1f,%.1f,%.1f\n" % x for x in readings)


def table(r):
    a, rd = r["a"], r["readings"]
    cpu = rd[-1][1] if rd else 0
    span = rd[-1][0] if rd else 1
    windows = [(rd[i][1] - rd[i - 6][1]) / (rd[i][0] - rd[i - 6][0])
               for i in range(6, len(rd))]           # each minute's share
    late = [(x[0], x[2]) for x in rd if x[0] >= min(300, span / 4)]
    late_anon = [(x[0], x[4]) for x in rd if x[0] >= min(300, span / 4)]
    mid = rd[len(rd) // 2] if rd else (0, 0, 0, 0, 0, 0)
    first, last = (rd[0], rd[-1]) if rd else (mid, mid)
    busy_in = sum(1 for b in r["busy"] if r["pids"].get(b[1]))
    short = r["short"]
    short_in = [s for s in short if r["pids"].get(s[0])]
    missing = [s for s in short if not r["pids"].get(s[0])]
    expect = sum(min(1.0, RATE * s[2]) for s in short)
    cpus = sorted(s[2] for s in short)
    life = sorted(r["life"])
    versions = sorted({b[0] for b in r["busy"]})
    lines = [
        "_Generated by `bench/host_cost.py --minutes %g --every %g --busy %d --short %d "
        "--short-cpu %g --cap %d%s%s` on %s._" % (
            a.minutes, a.every, a.busy, a.short, a.short_cpu, a.cap,
            " --churn %d" % a.churn if a.churn else "",
            " --write-docs" if a.write_docs else "", time.strftime("%Y-%m-%d %H:%M")),
        "",
        "Recorder: `%s` (19 Hz per CPU, %d CPUs), at nice 0; load: %d busy CPython "
        "processes (%s) in one session at nice 19 (its autogroup too), and %d short-lived "
        "ones a minute (%g s of CPU of work each beyond the interpreter's start, host "
        "interpreters in turn, each in a session of its own, at most %d alive at once)." % (
            " ".join(["perfpy"] + r["cmd"][1:-1] + ["DIR"]), os.cpu_count(), a.busy,
            ", ".join(versions), a.short, a.short_cpu, a.cap) +
        (" Besides, %d other programs exec'd a minute (true, sh, env; %d in all)." % (
            a.churn, r["churned"]) if a.churn else ""),
        "",
        "| | measured | bound |",
        "|---|---|---|",
        "| recorded | %.0f s, %d files, %d samples | |" % (r["wall"], len(r["files"]),
                                                          r["total"]),
        "| perfpy's CPU, whole run | %.2f s = %.2f%% of one core | <= 1%% |" % (
            cpu, 100 * cpu / span if span else 0),
        "| perfpy's CPU, busiest minute | %.2f%% of one core | |" % (
            100 * max(windows) if windows else 0),
        "| perfpy's memory (RSS) at %.0f s, %.0f s, %.0f s; peak (VmHWM) | %.1f MB, %.1f MB, "
        "%.1f MB; %.1f MB | <= 250 MB |" % (
            rd[0][0] if rd else 0, mid[0], span, rd[0][2] if rd else 0, mid[2],
            rd[-1][2] if rd else 0, max(x[3] for x in rd) if rd else 0),
        "| RSS trend after the first %d s (least squares) | %+.1f MB per hour | flat |" % (
            min(300, span / 4), slope(late)),
        "| of the RSS, anonymous (its heap) at the same three times; its trend | %.1f MB, "
        "%.1f MB, %.1f MB; %+.1f MB per hour | |" % (first[4], mid[4], last[4],
                                                     slope(late_anon)),
        "| of the RSS, file-backed (the BPF rings, libraries, the unwinder's mappings of "
        "the profiled processes' files) | %.1f MB, %.1f MB, %.1f MB | |" % (
            first[5], mid[5], last[5]),
        "| busy processes in the profiles | %d of %d | all |" % (busy_in, len(r["busy"])),
        "| short-lived: started, not started (%d alive), not ended 30 s after | %d, %d, %d "
        "| 0 not started, 0 not ended |" % (a.cap, r["started"], r["not_started"],
                                            r["not_ended"]),
        "| short-lived: their CPU each, median and max; wall from start to reaped, median "
        "and max | %s | |" % (
            "%.0f ms, %.0f ms; %.0f ms, %.0f ms" % (
                1000 * cpus[len(cpus) // 2], 1000 * cpus[-1],
                1000 * life[len(life) // 2], 1000 * life[-1]) if cpus and life else "-"),
        "| short-lived in the profiles; expected at 19 Hz from their CPU (sum of min(1, 19 "
        "t)) | %d of %d; %.0f | all |" % (len(short_in), len(short), expect),
        "| perfpy's own count: CPython processes seen, of them sampled (the host's, others' "
        "too) | %s | |" % seen_line(r["said"]),
        "| short-lived ones missing, their CPU (first 10) | %s | |" % (
            ", ".join("%.0f ms" % (1000 * s[2]) for s in missing[:10]) +
            (" ..." if len(missing) > 10 else "") or "none"),
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
    ap.add_argument("--short-cpu", type=float, default=0.005)
    ap.add_argument("--cap", type=int, default=16)
    ap.add_argument("--churn", type=int, default=0)
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
            f.write(csv(r["readings"]))


if __name__ == "__main__":
    main()
