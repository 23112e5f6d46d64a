"""Read mode's wall clock and GIL (`perfpy record --mode read --idle`,
`--gil`): no BPF, no root. Every thread is read at every tick, on and off
the CPU; the time since its last read is split by /proc's account (time on
a CPU, blocked with its reason, waiting for a CPU) and each part weighs its
nanoseconds, under sample mode's markers.

What a user sees, as user nobody on every interpreter nobody can run
(Debian's, sid's) and as root on the others (pyenv's, under /root):
a program in four parts (CPU, sleep, a pipe read, a lock) split as the
program timed them, each wait under its reason, and the summary's wall-time
split; its twin without --idle has no time off the CPU. Two CPU-bound
threads: --idle shows their GIL waits, --gil weighs about half of --idle.
A process this user may not read is one line and exit 1 (its twin: its own
process is read); one that ends while read leaves its profile and a line
saying it ended.
"""
import os
import re
import subprocess
import time

from support import BUILD, ROOT, TempDirTest, interpreters, note, others_can_reach, run
from test_read_mode import as_nobody_setup

SAMPLER = os.path.join(BUILD, "perfpy-sample")
DEADLOCK = os.path.join(ROOT, "tests", "integration", "programs", "deadlock.py")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
# four parts of about the same length, each timed by the program itself
FOUR = """import os, sys, threading, time
SEC = float(sys.argv[1])
def cpu_part():
    end = time.monotonic() + SEC
    while time.monotonic() < end:
        sum(range(100))
def sleep_part():
    time.sleep(SEC)
def pipe_part(r):
    os.read(r, 1)
def lock_part(lock):
    lock.acquire()
took = {}
def timed(f, *args):
    t0 = time.monotonic()
    f(*args)
    took[f.__name__] = time.monotonic() - t0
timed(cpu_part)
timed(sleep_part)
r, w = os.pipe()
t = threading.Timer(SEC, os.write, (w, b"x"))
t.start()
timed(pipe_part, r)
t.join()
lock = threading.Lock()
lock.acquire()
t = threading.Timer(SEC, lock.release)
t.start()
timed(lock_part, lock)
t.join()
print(" ".join("%s=%.4f" % kv for kv in took.items()))
"""
# two threads that spin for the same time: they take turns at the GIL
TWO = """import sys, threading, time
def spin(end):
    x = 0
    while time.monotonic() < end:
        x += 1
end = time.monotonic() + float(sys.argv[1])
t = threading.Thread(target=spin, args=(end,))
t.start()
spin(end)
t.join()
"""
# one thread hashing (hashlib lets go of the GIL for a large buffer), the
# main one spinning in Python
HASH = """import hashlib, sys, threading, time
cpu = {}
def hasher(end):
    buf = bytes(4 << 20)
    while time.monotonic() < end:
        hashlib.sha256(buf).digest()
    cpu["hasher"] = time.thread_time()
def spin(end):
    x = 0
    while time.monotonic() < end:
        x += 1
    cpu["spin"] = time.thread_time()
end = time.monotonic() + float(sys.argv[1])
t = threading.Thread(target=hasher, args=(end,))
t.start()
spin(end)
t.join()
print(" ".join("%s=%.3f" % kv for kv in sorted(cpu.items())))
"""
SLEEPER = "import time\ndef nap():\n    time.sleep(100)\nnap()\n"
PARTS = ("cpu_part", "sleep_part", "pipe_part", "lock_part")
REASON = {"sleep_part": "[off-CPU: sleep]", "pipe_part": "[off-CPU: I/O]",
          "lock_part": "[off-CPU: lock]"}


def stacks_of(path):
    with open(path) as f:
        return [(s, int(n)) for s, n in (l.rsplit(" ", 1) for l in f.read().splitlines())]


def main_thread_part(stack):
    """The part of FOUR a stack of its main thread is in, or None."""
    frames = stack.split(";")
    for name in PARTS:
        if frames[0].startswith("<module> (") and len(frames) > 2 and \
                frames[1].startswith("timed (") and frames[2].startswith(name + " ("):
            return name
    return None


class ReadWall(TempDirTest):

    def setUp(self):
        super().setUp()
        as_nobody_setup(self, DEADLOCK)

    def record(self, args, program, as_nobody=True, timeout=300, mode="read"):
        out = os.path.join(self.tmp, "out-%d.txt" % len(os.listdir(self.tmp)))
        cmd = [self.perfpy, "record", "--mode", mode, "-f", "collapsed", "-o", out] + args
        p = run((NOBODY if as_nobody else []) + cmd + (["--"] + program if program else []),
                timeout=timeout)
        return p, out

    def program(self, name, text):
        path = self.write(name, text)
        os.chmod(path, 0o644)
        return path

    def check_four_parts(self, py, p, out):
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertRegex(p.stderr.splitlines()[0], r"in read mode \(.*wall clock.*no root")
        took = dict((k, float(v)) for k, v in re.findall(r"(\w+)=([\d.]+)", p.stdout))
        weight, reasons = dict.fromkeys(PARTS, 0), dict.fromkeys(PARTS, 0)
        waited = dict.fromkeys(PARTS, 0)     # each wait's time off the CPU (not a CPU's)
        for stack, n in stacks_of(out):
            part = main_thread_part(stack)
            if part:
                weight[part] += n
                reasons[part] += n if stack.endswith(";" + REASON.get(part, "")) else 0
                waited[part] += n if re.search(r"\[off-CPU: (?!waiting for a CPU)", stack) \
                    else 0
        total, timed = sum(weight.values()), sum(took.values())
        self.assertGreater(total, 0, p.stderr[-2000:])
        said = []
        for part in PARTS:
            share, own = 100.0 * weight[part] / total, 100.0 * took[part] / timed
            said.append("%s %.1f%% (timed %.1f%%%s)" % (
                part, share, own, ", %.0f%% %s" % (100.0 * reasons[part] / waited[part],
                                                    REASON[part])
                if part in REASON and waited[part] else ""))
            self.assertLess(abs(share - own), 5.0, "; ".join(said) + "\n" + p.stderr[-2000:])
            if part in REASON:      # of its wait, a CPU's after it apart
                self.assertGreaterEqual(waited[part], 0.8 * weight[part], "; ".join(said))
                self.assertGreaterEqual(reasons[part], 0.9 * waited[part], "; ".join(said))
        note("%s: %s" % (py.label, "; ".join(said)))
        self.assertRegex(p.stderr, r"perfpy: wall time: on-CPU [\d.]+%, off-CPU [\d.]+%: "
                         r"sleep [\d.]+%, I/O [\d.]+%, lock [\d.]+%")

    def test_four_parts_split_with_their_reasons_on_every_interpreter(self):
        app = self.program("four.py", FOUR)
        for py in interpreters():
            with self.subTest(py=py.label):
                p, out = self.record(["--idle", "-r", "199"], [py.path, app, "0.6"],
                                     as_nobody=others_can_reach(py.path))
                self.check_four_parts(py, p, out)

    def test_without_idle_the_waits_are_not_in_the_profile(self):
        """The twin: the same program in read mode's CPU time."""
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        app = self.program("four.py", FOUR)
        p, out = self.record(["-r", "199"], [py.path, app, "0.6"])
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        stacks = stacks_of(out)
        self.assertFalse([s for s, _ in stacks if "[off-CPU" in s])
        cpu = sum(n for s, n in stacks if main_thread_part(s) == "cpu_part")
        waits = sum(n for s, n in stacks if main_thread_part(s) in REASON)
        # (CPU time: on a loaded machine the CPU part gets what it ran)
        self.assertGreater(cpu, 5, stacks)
        self.assertLessEqual(waits, max(2, cpu // 10), stacks)
        self.assertNotIn("wall time:", p.stderr)

    def test_gil_weighs_about_half_of_idle_for_two_busy_threads(self):
        """Two threads spinning in Python take turns at the GIL: --idle
        weighs both all along (their waits for it under [off-CPU: GIL]),
        --idle --gil only the one holding it at each read: about half,
        whatever else the machine runs (a holder waiting for a CPU still
        holds it)."""
        app = self.program("two.py", TWO)
        for py in interpreters():
            with self.subTest(py=py.label):
                nobody = others_can_reach(py.path)
                p, idle = self.record(["--idle", "-r", "199"], [py.path, app, "2"],
                                      as_nobody=nobody)
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                # -v: the note of the reads --gil left out
                q, gil = self.record(["-v", "--idle", "--gil", "-r", "199"],
                                     [py.path, app, "2"], as_nobody=nobody)
                self.assertEqual(q.returncode, 0, q.stderr[-2000:])
                self.assertRegex(q.stderr.splitlines()[0], r"in read mode \(.*holding the GIL")
                spin = lambda path: sum(n for s, n in stacks_of(path)
                                        if re.search(r"(^|;)spin \(", s))
                waits = sum(n for s, n in stacks_of(idle) if s.endswith("[off-CPU: GIL]"))
                locks = sum(n for s, n in stacks_of(idle) if s.endswith("[off-CPU: lock]")
                            and re.search(r"(^|;)spin \(", s))
                ratio = spin(gil) / max(spin(idle), 1)
                note("%s: --idle %.2f s of spin (GIL waits %.0f%%), --idle --gil %.2f s: %.2f"
                     % (py.label, spin(idle) / 199.0, 100.0 * waits / max(spin(idle), 1),
                        spin(gil) / 199.0, ratio))
                # their waits for it are the GIL's, not a lock's (how much of
                # their time they wait for it rather than for a CPU depends on
                # the machine's load: 7-25% here)
                self.assertGreater(waits, 0.03 * spin(idle), p.stderr[-2000:])
                self.assertGreater(waits, 5 * locks, p.stderr[-2000:])
                self.assertGreater(ratio, 0.35, q.stderr[-2000:])
                self.assertLess(ratio, 0.65, q.stderr[-2000:])
                self.assertRegex(q.stderr, r"--gil: \d+ reads of threads that did not hold")

    def test_gil_leaves_out_a_thread_that_runs_without_it(self):
        """--gil (CPU time): a thread hashing with the GIL released is left
        out, the thread spinning in Python is kept; its twin without --gil
        keeps both. Each is weighed against the CPU time the thread itself
        measured in the same run: how much CPU the hasher gets beside the
        spinner depends on the machine's load (a third to all of it)."""
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        app = self.program("hash.py", HASH)
        counts, ran = {}, {}
        for opt in ([], ["--gil"]):
            p, out = self.record(opt + ["-r", "199"], [py.path, app, "2"])
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            stacks = stacks_of(out)
            took = dict((k, float(v)) for k, v in re.findall(r"(\w+)=([\d.]+)", p.stdout))
            counts[bool(opt)] = [sum(n for s, n in stacks if re.search(r"(^|;)%s \(" % f, s))
                                 for f in ("hasher", "spin")]
            # the samples each thread's CPU time would give at 199 Hz
            ran[bool(opt)] = [199 * took[f] for f in ("hasher", "spin")]
        note("%s: hasher, spin samples without --gil %s of %s, with %s of %s"
             % (py.label, counts[False], [round(n) for n in ran[False]],
                counts[True], [round(n) for n in ran[True]]))
        # without --gil both are read for the CPU time they ran (the
        # hasher's a little short: a read that finds it waiting for the GIL
        # keeps at most two periods of what it ran for the next: 76-100%)
        self.assertGreater(counts[False][0], 0.5 * ran[False][0], (counts, ran))
        self.assertGreater(counts[False][1], 0.6 * ran[False][1], (counts, ran))
        # with it the spinner still is (less a read or two that finds it
        # handing the GIL over: 76-99%), the hasher hardly at all
        self.assertGreater(counts[True][1], 0.5 * ran[True][1], (counts, ran))
        self.assertLess(counts[True][0], 0.1 * ran[True][0], (counts, ran))

    def test_another_users_process_is_one_line_and_its_twin_is_read(self):
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        app = self.program("sleeper.py", SLEEPER)
        # --mode read, and auto (where the chooser finds it cannot be read)
        for opt, mode, said in (
                ("--idle", "read", r"cannot read the memory of the process %d: not permitted"
                                   r" .*run perfpy as that user"),
                ("--gil", "read", r"cannot read the memory of the process %d: not permitted"
                                  r" .*run perfpy as that user"),
                ("--idle", "auto", r"--idle needs sample or read mode: sample mode cannot run "
                                   r"here \(.*\), and read mode cannot read that process "
                                   r"\(not permitted: run perfpy as that process's user\)"),
                ("--gil", "auto", r"--gil needs sample or read mode: .*not permitted")):
            with self.subTest(opt=opt, mode=mode):
                target = subprocess.Popen([py.path, app])
                self.addCleanup(lambda t=target: (t.kill(), t.wait()))
                time.sleep(0.5)
                p, out = self.record([opt, "-p", str(target.pid), "-d", "1"], None, mode=mode)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertRegex(p.stderr, r"^perfpy: " + said % target.pid
                                 if "%d" in said else r"^perfpy: " + said)
                self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
                self.assertFalse(os.path.exists(out))
                self.assertIsNone(target.poll())
        # the twin: nobody's own sleeping process, its wait with its reason
        own = subprocess.Popen(NOBODY + [py.path, app])
        self.addCleanup(lambda: (own.kill(), own.wait()))
        time.sleep(0.5)
        p, out = self.record(["--idle", "-r", "199", "-p", str(own.pid), "-d", "1"], None)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        # (labelled by its path relative to the program's directory)
        naps = sum(n for s, n in stacks_of(out) if s.endswith("nap (%s:3);[off-CPU: sleep]"
                                                               % os.path.basename(app)))
        self.assertGreater(naps, 0.8 * 199, p.stderr[-2000:])
        self.assertIsNone(own.poll())

    def test_a_process_that_ends_while_read_leaves_its_profile(self):
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        app = self.program("four.py", FOUR)
        target = subprocess.Popen(NOBODY + [py.path, app, "0.5"], stdout=subprocess.DEVNULL)
        self.addCleanup(lambda: (target.kill(), target.wait()))
        time.sleep(0.3)
        p, out = self.record(["--idle", "-p", str(target.pid), "-d", "30"], None)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertRegex(p.stderr, r"perfpy: the process %d ended after [\d.]+ s: the profile "
                         r"is of what was read until then" % target.pid)
        self.assertTrue(any(s.endswith("[off-CPU: lock]") for s, _ in stacks_of(out)),
                        p.stderr[-2000:])

    def test_auto_takes_read_mode_for_idle_and_gil_and_says_so_first(self):
        """As nobody (no BPF): --idle and --gil without --mode record in read
        mode, its first line saying so and why; as root (BPF allowed, where
        it is) the same options take sample mode, saying nothing."""
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        app = self.program("four.py", FOUR)
        for opt in ("--idle", "--gil"):
            with self.subTest(opt=opt):
                p, out = self.record([opt, "-r", "199"], [py.path, app, "0.3"], mode="auto")
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                self.assertRegex(p.stderr.splitlines()[0],
                                 r"^perfpy: read mode, which needs no privilege, for %s: "
                                 r"sample mode cannot run here \(.*\)" % opt)
                self.assertRegex(p.stderr.splitlines()[1], r"in read mode \(199 Hz, %s" %
                                 ("wall clock" if opt == "--idle" else "CPU time of the "
                                  "thread holding the GIL"))
                self.assertTrue(stacks_of(out), p.stderr)
        if subprocess.run([SAMPLER, "--check"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0:
            return                  # root without BPF here: read mode for root too
        p, out = self.record(["--idle", "-r", "199"], [py.path, app, "0.3"], as_nobody=False,
                             mode="auto")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertNotIn("read mode", p.stderr.splitlines()[0])
        self.assertTrue(any(s.endswith("[off-CPU: sleep]") for s, _ in stacks_of(out)))

    def test_dump_of_a_deadlock_names_both_lock_waits(self):
        """perfpy dump (read mode: ptrace, and --nonblocking) as nobody of
        its own deadlocked program: both threads waiting in futex for a
        lock, the main thread in its sleep, the reasons a profile gives."""
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        prog = os.path.join(self.root, os.path.relpath(DEADLOCK, ROOT))
        status = os.path.join(self.tmp, "status")
        target = subprocess.Popen(NOBODY + [py.path, prog, status])
        self.addCleanup(lambda: (target.kill(), target.wait()))
        end = time.monotonic() + 10
        while not os.path.exists(status) and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(0.3)
        for extra in ([], ["--nonblocking"]):
            with self.subTest(how=extra or "ptrace"):
                p = run(NOBODY + [self.perfpy, "dump"] + extra + [str(target.pid)])
                self.assertEqual(p.returncode, 0, p.stderr)
                for name in ("first", "second"):
                    self.assertRegex(p.stdout, r'(?m)^Thread \d+ \(waiting in futex: lock\): '
                                     r'"%s"$' % name)
                self.assertRegex(p.stdout, r'(?m)^Thread \d+ \(waiting in \w+: sleep\): '
                                 r'"MainThread"$')
        self.assertIsNone(target.poll())
