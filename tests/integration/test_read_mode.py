"""Read mode (`perfpy record --mode read`): no hook and no root. The
program's Python frames are read from outside (process_vm_readv) on a
timer; a thread counts when the kernel says it runs.

What a user sees: as user nobody, every interpreter's call-heavy program
profiled with whole Python stacks (each read to the thread's first frame:
3.8-3.10's freed frames are not followed), its exit status passed on;
a sleeping thread is not CPU time (its twin: the same thread spinning is),
and each thread weighs the CPU time it says it had; a thread that shares
its CPU with another process weighs what it ran, not the time it waited
for the CPU (its twin: the same program alone);
a child Python process is read too; attaching to a process the kernel
does not let this user read is one message and no profile (its twin: the
same attach as the process's own user works). Interpreters other users
cannot reach (pyenv's, under /root) run as root: read mode asks no more of
root than of anyone.
"""
import os
import re
import shutil
import subprocess
import time

from support import (BUILD, LIBDIR, PERFPY, ROOT, TempDirTest, interpreters, note,
                     others_can_reach, run, tree_for_others)

SAMPLER = os.path.join(BUILD, "perfpy-sample")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
FIB = """import sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def main():
    for _ in range(int(sys.argv[1])):
        fib(22)
main()
sys.exit(3)
"""
WHOLE = re.compile(r"^<module> \([^;]*fib\.py:7\);main \([^;]*fib\.py:6\);fib ")
# each thread says the CPU time it had (time.thread_time): what a CPU
# profile of it should weigh, whatever else the machine runs
THREADS = """import sys, threading, time
cpu = {}
def sleeper():
    time.sleep(3)
    cpu["other"] = time.thread_time()
def spinner(end):
    while time.monotonic() < end:
        pass
    cpu["other"] = time.thread_time()
def busy(end):
    x = 0
    while time.monotonic() < end:
        x += 1
    cpu["busy"] = time.thread_time()
t = threading.Thread(target=spinner if sys.argv[1] == "spin" else sleeper,
                     args=(time.monotonic() + 2.5,) if sys.argv[1] == "spin" else ())
t.start()
busy(time.monotonic() + 2.5)
t.join()
print("cpu %.3f %.3f" % (cpu["busy"], cpu["other"]))
"""
# one thread that spins for a time, on a CPU it shares with a spinning
# process: runnable (state R) all along, running about half of it
CONTENDED = """import sys, time
def spin(end):
    while time.monotonic() < end:
        pass
spin(time.monotonic() + float(sys.argv[1]))
print("cpu %.3f" % time.thread_time())
"""
HOG = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end:\n    pass\n"
CHILD = """import subprocess, sys
def parent():
    subprocess.run([sys.executable, "-c", "def child_work():\\n    x = 0\\n"
                    "    for i in range(20000000):\\n        x += i\\nchild_work()\\n"], check=True)
parent()
"""


def stacks_of(path):
    with open(path) as f:
        return [(s, int(n)) for s, n in (l.rsplit(" ", 1) for l in f.read().splitlines())]


def as_nobody_setup(test, *more):
    """A read-mode test's setUp: skipped without perfpy-sample or without
    root and setpriv; test.root the clone (or a copy, with the paths more)
    nobody can run, test.perfpy its perfpy, test.tmp writable by nobody."""
    if not os.path.exists(SAMPLER):
        test.skipTest("read mode is in perfpy-sample, not built here (libbpf-dev, "
                      "libdw-dev)")
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        test.skipTest("needs root, to run as user nobody")
    test.root = tree_for_others(test.tmp, os.path.relpath(PERFPY, ROOT),
                                os.path.relpath(SAMPLER, ROOT),
                                os.path.relpath(LIBDIR, ROOT),
                                *(os.path.relpath(m, ROOT) for m in more))
    test.perfpy = os.path.join(test.root, os.path.relpath(PERFPY, ROOT))
    os.chmod(test.tmp, 0o777)      # nobody writes its profile here


class ReadMode(TempDirTest):

    def setUp(self):
        super().setUp()
        as_nobody_setup(self)

    def record(self, args, program, as_nobody=True, timeout=300):
        out = os.path.join(self.tmp, "out-%d.txt" % len(os.listdir(self.tmp)))
        cmd = [self.perfpy, "record", "--mode", "read", "-f", "collapsed", "-o", out] + args
        p = run((NOBODY if as_nobody else []) + cmd + (["--"] + program if program else []),
                timeout=timeout)
        return p, out

    def test_whole_python_stacks_on_every_interpreter_as_nobody(self):
        app = self.write("fib.py", FIB)
        os.chmod(app, 0o644)
        ran_as_nobody = 0
        for py in interpreters():
            with self.subTest(py=py.label):
                nobody = others_can_reach(py.path)
                ran_as_nobody += nobody
                # 1500 calls: ~300 samples, so that the 99% below allows a
                # read or two that raced the frames' change (a thread that
                # ran two periods since the last read is two samples of it)
                p, out = self.record(["-r", "199"], [py.path, app, "1500"], as_nobody=nobody)
                self.assertEqual(p.returncode, 3, p.stderr[-2000:])
                self.assertRegex(p.stderr.splitlines()[0], r"in read mode .*no root")
                stacks = stacks_of(out)
                fib = sum(n for s, n in stacks if re.search(r"(^|;)fib \(", s))
                whole = sum(n for s, n in stacks if WHOLE.match(s))
                note("%s (as %s): read mode, %d of %d samples in fib whole to <module>"
                     % (py.label, "nobody" if nobody else "root", whole, fib))
                self.assertGreater(fib, 100, p.stderr[-2000:])
                self.assertGreaterEqual(whole * 100, fib * 99)
        self.assertGreater(ran_as_nobody, 0, "no interpreter user nobody can run")

    def test_a_sleeping_thread_is_not_cpu_time(self):
        """The twin programs differ only in what the second thread does."""
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        app = self.write("threads.py", THREADS)
        os.chmod(app, 0o644)
        counts, cpu = {}, {}
        for what in ("sleep", "spin"):
            p, out = self.record(["-v", "-r", "99"], [py.path, app, what])
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            stacks = stacks_of(out)
            counts[what] = (sum(n for s, n in stacks if re.search(r"(^|;)busy \(", s)),
                            sum(n for s, n in stacks if re.search(r"(^|;)(sleeper|spinner) \(",
                                                                  s)))
            cpu[what] = [float(x) for x in re.search(r"^cpu (\S+) (\S+)$", p.stdout,
                                                      re.M).groups()]
            if what == "sleep":
                self.assertRegex(p.stderr, r"reads found a thread waiting")
        note("busy/other thread samples: sleeping %s, spinning %s; their CPU seconds: %s, %s"
             % (counts["sleep"], counts["spin"], cpu["sleep"], cpu["spin"]))
        # a sample per 1/99 s of CPU time each thread had (the busy and the
        # spinning threads share the GIL: about half a CPU each)
        for what, i in (("sleep", 0), ("spin", 0), ("spin", 1)):
            self.assertGreater(counts[what][i], 0.6 * 99 * cpu[what][i], (what, i))
            self.assertLess(counts[what][i], 1.4 * 99 * cpu[what][i] + 3, (what, i))
        # the sleeper runs for a moment before it sleeps: a sample or two
        self.assertLessEqual(counts["sleep"][1] * 50, counts["sleep"][0])

    def test_a_thread_waiting_for_a_cpu_counts_only_what_it_ran(self):
        """On a CPU shared with another process, the program's thread is
        runnable all along (state R) and runs about half of the time: its
        samples are its CPU time, not the time it waited for a CPU (its
        twin: the same program alone on the CPU)."""
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        if not shutil.which("taskset"):
            self.skipTest("no taskset (util-linux)")
        app = self.write("contended.py", CONTENDED)
        os.chmod(app, 0o644)
        cpu0 = ["taskset", "-c", "0"]
        seen = {}
        for shared in (False, True):
            hog = subprocess.Popen(cpu0 + [py.path, "-c", HOG]) if shared else None
            try:
                p, out = self.record(["-r", "99"], cpu0 + [py.path, app, "3"])
            finally:
                if hog:
                    hog.kill()
                    hog.wait()
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            n = sum(n for s, n in stacks_of(out) if re.search(r"(^|;)spin \(", s))
            had = float(re.search(r"^cpu (\S+)$", p.stdout, re.M).group(1))
            seen[shared] = (n, had)
            self.assertGreater(n, 0.6 * 99 * had, p.stderr[-1000:])
            self.assertLess(n, 1.4 * 99 * had + 3, p.stderr[-1000:])
        note("one spinning thread, 3 s at 99 Hz: alone %d samples for %.2f s of CPU; sharing "
             "its CPU %d samples for %.2f s" % (seen[False] + seen[True]))
        # sharing, the thread waited for a CPU a good part of its 3 s (a
        # count of the reads that find it runnable would be ~297 samples)
        self.assertLess(seen[True][1], 0.8 * 3, seen)

    def test_a_child_python_is_read_too(self):
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        app = self.write("parent.py", CHILD)
        os.chmod(app, 0o644)
        p, out = self.record(["-v", "-r", "199"], [py.path, app])
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        stacks = stacks_of(out)
        child = sum(n for s, n in stacks if re.search(r"(^|;)child_work \(", s))
        self.assertGreater(child, 40, p.stderr[-2000:])
        self.assertIn("read 2 processes", p.stderr)

    def test_attach_needs_the_right_to_read_the_process(self):
        py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        app = self.write("fib.py", FIB)
        target = subprocess.Popen([py.path, app, "100000"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            p, out = self.record(["-p", str(target.pid), "-d", "1"], None)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("cannot read the memory of the process %d" % target.pid, p.stderr)
            self.assertFalse(os.path.exists(out))
            # the twin: the process's own user (root) may
            p, out = self.record(["-p", str(target.pid), "-d", "1"], None, as_nobody=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(any(WHOLE.match(s) for s, _ in stacks_of(out)), p.stderr)
        finally:
            target.kill()
            target.wait()
