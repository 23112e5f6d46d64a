"""perfpy dump PID: what every thread of a running program is doing now.

What a user sees, on every interpreter of the world, read every way the
machine allows (sample mode, as root: BPF, never stopped, C and kernel
frames; read mode: ptrace, every thread stopped together for the time it
says, C frames included; read mode --nonblocking: never stopped, Python and
kernel frames):
a deadlock (two threads each holding one lock and waiting for the other, the
main thread sleeping) shows the three threads by threading's names, the two
waiting in the futex system call with the kernel's futex frames above their
Python line, the main thread in its sleep; the program goes on afterwards
exactly as before (its own status file: its count advancing, its threads
alive, both locks held). A thread waiting in os.read on a pipe shows the
read in the kernel. --locals shows an int, a str and a list (by its type).
Bad input, one test each: a pid that does not exist, a program that is not
Python, a Python older than 3.8, another user's process without the right
to read it (and its twin: the same user's own), a process that ends during
the dump: one line, exit 1, the target unharmed. 100 dumps in a row of a
busy server whose threads check their own answers: none fails, each dump
within a second, the server runs on.
"""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import time

from support import (BUILD, LIBDIR, PERFPY, ROOT, TempDirTest, interpreters, note,
                     others_can_reach, run, tree_for_others)

SAMPLER = os.path.join(BUILD, "perfpy-sample")
PROGRAMS = os.path.join(ROOT, "tests", "integration", "programs")
DEADLOCK = os.path.join(PROGRAMS, "deadlock.py")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def line_of(path, marker):
    with open(path) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise AssertionError("no line marked %r in %s" % (marker, path))


class DumpTest(TempDirTest):

    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("perfpy dump is in perfpy-sample, not built here (libbpf-dev, "
                          "libdw-dev)")
        self.targets = []

    def tearDown(self):
        for p in self.targets:
            if p.poll() is None:
                p.kill()
            p.wait()
        super().tearDown()

    def start(self, argv, preexec=None, **kw):
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=preexec, **kw)
        self.targets.append(p)
        return p

    def dump(self, pid, *args, prefix=(), timeout=60):
        p = run(list(prefix) + [PERFPY, "dump", "--json"] + list(args) + [str(pid)],
                timeout=timeout)
        doc = json.loads(p.stdout) if p.returncode == 0 else None
        return p, doc

    def status(self, path, after=None, wait=10):
        """The deadlock program's status line (count, alive, a, b); with
        after, the first one whose count is past it."""
        end = time.monotonic() + wait
        while time.monotonic() < end:
            try:
                with open(path) as f:
                    words = f.read().split()
                if len(words) == 4 and (after is None or int(words[0]) > after):
                    return int(words[0]), words[1:]
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        raise AssertionError("the program wrote no status in %s s" % wait)


def sample_mode_here():
    return os.geteuid() == 0 and run([SAMPLER, "--check"]).returncode == 0


def modes():
    """The ways perfpy dump reads: sample mode where BPF loads (never
    stopped), ptrace (every thread stopped together for the time it says)
    and --nonblocking (never stopped, no C frames)."""
    return (["sample"] if sample_mode_here() else []) + ["ptrace", "nonblocking"]


def mode_args(mode):
    return {"sample": ["--mode", "sample"], "ptrace": ["--mode", "read"],
            "nonblocking": ["--mode", "read", "--nonblocking"]}[mode]


def threads_by_name(proc):
    return {t["name"]: t for t in proc["threads"]}


def python_frames(t):
    return [f for f in t["frames"] if f["kind"] == "python"]


class Deadlock(DumpTest):

    def check_deadlock(self, py, mode, proc, path):
        label = "%s, %s" % (py.label, mode)
        names = threads_by_name(proc)
        self.assertEqual(sorted(n for n in names if n), ["MainThread", "first", "second"],
                         label)
        for name, marker, func in (("first", "waits for b", "first"),
                                   ("second", "waits for a", "second")):
            t = names[name]
            self.assertEqual(t["syscall"], "futex", (label, t))
            self.assertEqual(t["wait"], "lock", (label, t))      # a profile's reason
            self.assertNotEqual(t["state"], "R", (label, t))
            kernel = [f["name"] for f in t["frames"] if f["kind"] == "kernel"]
            self.assertTrue(any("futex" in k for k in kernel), (label, kernel))
            top = python_frames(t)[0]
            self.assertEqual((top["name"], top["line"]), (func, line_of(path, marker)),
                             (label, top))
            native = [f["name"] for f in t["frames"] if f["kind"] == "native"]
            if mode != "nonblocking":
                self.assertTrue(native, (label, t["frames"]))
            else:
                self.assertEqual(native, [], (label, t["frames"]))
        # all three wait: none holds the GIL (known: False, not None)
        self.assertEqual([t["gil"] for t in proc["threads"]], [False] * len(proc["threads"]),
                         label)
        main = names["MainThread"]
        # time.sleep: select() before 3.11 (glibc makes it pselect6), then clock_nanosleep
        sleep_calls = ("pselect6",) if py.version_info < (3, 11) else ("clock_nanosleep",)
        self.assertIn(main["syscall"], sleep_calls, (label, main))
        self.assertEqual(main["wait"], "sleep", (label, main))
        top = python_frames(main)[0]
        self.assertEqual((top["name"], top["line"]), ("main", line_of(path, "the main thread sleeps")),
                         (label, top))
        return names

    def test_deadlock_every_interpreter_both_ways(self):
        done = 0
        for py in interpreters():
            for mode in modes():
                with self.subTest(py=py.label, mode=mode):
                    status = os.path.join(self.tmp, "status-%s-%s" % (py.label, mode))
                    target = self.start([py.path, DEADLOCK, status])
                    # past its first sleep: the two threads, just through the
                    # barrier when it first writes, are in their waits by then
                    before, state = self.status(status, after=0)
                    p, doc = self.dump(target.pid, *mode_args(mode))
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(p.stderr, "")
                    proc = doc["processes"][0]
                    self.assertEqual(proc["engine"], mode)
                    self.check_deadlock(py, mode, proc, DEADLOCK)
                    # it goes on as before: counting, both threads alive, both locks held
                    after, state_after = self.status(status, after=before, wait=5)
                    self.assertEqual(state_after, ["True", "True", "True"], state_after)
                    self.assertIsNone(target.poll())
                    stopped = proc["stopped_ms"]
                    note("%s, %s: 3 threads; stopped %.2f ms; dump %.0f ms"
                         % (py.label, mode, stopped, proc["took_ms"]))
                    if mode != "ptrace":
                        self.assertEqual(stopped, 0.0)
                    else:
                        self.assertGreater(stopped, 0.0)
                    target.kill()
                    target.wait()
                    done += 1
        self.assertGreater(done, 0)

    def test_text_says_how_and_names_each_thread(self):
        py = interpreters()[-1]
        status = os.path.join(self.tmp, "status")
        target = self.start([py.path, DEADLOCK, status])
        self.status(status, after=0)
        p = run([PERFPY, "dump", str(target.pid)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"(?m)^Process %d: " % target.pid)
        # the best way here, by default
        self.assertRegex(p.stdout, r"Read with sample mode \(BPF\): the program was not "
                         r"stopped" if sample_mode_here() else
                         r"Read with ptrace: every thread stopped together for \d+\.\d+ ms")
        self.assertRegex(p.stdout, r'(?m)^Thread \d+ \(waiting in futex: lock\): "first"$')
        self.assertRegex(p.stdout, r'(?m)^    first \(%s:%d\)$'
                         % (re.escape(DEADLOCK), line_of(DEADLOCK, "waits for b")))

    def test_a_thread_reading_a_pipe_shows_the_read(self):
        py = interpreters()[-1]
        for mode in modes():
            with self.subTest(mode=mode):
                status = os.path.join(self.tmp, "status-" + mode)
                target = self.start([py.path, DEADLOCK, status, "pipe"])
                self.status(status)
                time.sleep(0.2)
                p, doc = self.dump(target.pid, *mode_args(mode))
                self.assertEqual(p.returncode, 0, p.stderr)
                t = threads_by_name(doc["processes"][0])["reader"]
                self.assertEqual(t["syscall"], "read", t)
                self.assertEqual(t["wait"], "I/O", t)
                kernel = [f["name"] for f in t["frames"] if f["kind"] == "kernel"]
                self.assertTrue(any(k in ("pipe_read", "ksys_read", "vfs_read") for k in kernel),
                                kernel)
                top = python_frames(t)[0]
                self.assertEqual((top["name"], top["line"]),
                                 ("reader", line_of(DEADLOCK, "waits in read")))
                target.kill()
                target.wait()

    def test_locals_int_str_and_list(self):
        for py, mode in [(py, mode) for py in interpreters() for mode in modes()]:
            with self.subTest(py=py.label, mode=mode):
                status = os.path.join(self.tmp, "status-%s-%s" % (py.label, mode))
                target = self.start([py.path, DEADLOCK, status])
                self.status(status)
                p, doc = self.dump(target.pid, "--locals", *mode_args(mode))
                self.assertEqual(p.returncode, 0, p.stderr)
                main = python_frames(threads_by_name(doc["processes"][0])["MainThread"])[0]
                loc = {l["name"]: l for l in main["locals"]}
                self.assertEqual(loc["label"], {"name": "label", "value": "'sleeping'"})
                self.assertEqual(loc["stamps"], {"name": "stamps", "type": "list"})
                self.assertRegex(loc["count"]["value"], r"^\d+$")
                self.assertEqual(loc["status"]["value"], repr(status))
                target.kill()
                target.wait()


class Gil(DumpTest):

    def test_the_busy_main_thread_holds_the_gil(self):
        """top_target.py's main thread computes without a pause, its other
        thread sleeps: in some of five dumps the main thread holds the GIL,
        in none the sleeper."""
        target_py = os.path.join(PROGRAMS, "top_target.py")
        for py in interpreters():
            with self.subTest(py=py.label):
                status = os.path.join(self.tmp, "gil-" + py.label)
                target = self.start([py.path, target_py, status])
                end = time.monotonic() + 10
                while not os.path.exists(status) and time.monotonic() < end:
                    time.sleep(0.05)
                held = []
                for _ in range(5):
                    p, doc = self.dump(target.pid)      # the best way here
                    self.assertEqual(p.returncode, 0, p.stderr)
                    names = threads_by_name(doc["processes"][0])
                    self.assertIs(names["napper"]["gil"], False)
                    held.append(names["MainThread"]["gil"])
                self.assertIn(True, held, held)
                note("%s: the main thread held the GIL in %d of 5 dumps" % (py.label,
                                                                          held.count(True)))
                target.kill()
                target.wait()


class BadInput(DumpTest):
    """Each: one line on stderr naming the problem, exit 1, nothing on stdout."""

    def one_line(self, p, pattern):
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertRegex(lines[0], "^perfpy: " + pattern)

    def test_a_pid_that_does_not_exist(self):
        pid = 4194304 - 7                   # above pid_max's default, never a process
        p = run([PERFPY, "dump", str(pid)])
        self.one_line(p, r"no process %d: it does not exist" % pid)

    def test_a_program_that_is_not_python(self):
        target = self.start(["sleep", "100"])
        time.sleep(0.2)
        p = run([PERFPY, "dump", str(target.pid)])
        self.one_line(p, r"the process %d \(/usr/bin/sleep\) is not a Python program"
                      % target.pid)
        self.assertIsNone(target.poll())

    def test_a_python_older_than_38(self):
        pyenv = os.path.expanduser("~/.pyenv/versions")
        olds = sorted(glob_old(pyenv))
        if not olds:
            self.skipTest("no Python older than 3.8 here (pyenv's 2.7, 3.6, 3.7)")
        for path, version in olds:
            with self.subTest(version=version):
                target = self.start([path, "-c", "import time; time.sleep(100)"])
                time.sleep(0.5)
                p = run([PERFPY, "dump", str(target.pid)])
                self.one_line(p, r"the process %d (runs Python %s \(|.*CPython %s.* not a "
                              r"version perfpy reads)" % (target.pid, re.escape(version),
                                                          re.escape(version)))
                self.assertIsNone(target.poll())

    def test_another_users_process_without_privilege_and_its_twin(self):
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root, to run as user nobody")
        # the interpreter itself (the target loads nothing of perfpy's: no
        # sanitizer wrapper, which user nobody may not reach)
        py = next((p.real for p in interpreters() if others_can_reach(p.real)), None)
        if not py:
            self.skipTest("no interpreter user nobody can run")
        clone = tree_for_others(self.tmp, os.path.relpath(PERFPY, ROOT),
                                os.path.relpath(SAMPLER, ROOT), os.path.relpath(LIBDIR, ROOT))
        perfpy = os.path.join(clone, os.path.relpath(PERFPY, ROOT))
        prog = self.write("sleeper.py", "import time\ndef nap():\n    time.sleep(100)\nnap()\n")
        os.chmod(prog, 0o644)
        os.chmod(self.tmp, 0o755)
        root_owned = self.start([py, prog])
        time.sleep(0.5)
        p = run(NOBODY + [perfpy, "dump", str(root_owned.pid)])
        self.one_line(p, r"cannot read the process %d .*not permitted" % root_owned.pid)
        self.assertIsNone(root_owned.poll())
        # the twin: nobody's own process, by nobody
        own = self.start(NOBODY + [py, prog])
        time.sleep(0.5)
        p = run(NOBODY + [perfpy, "dump", "--json", str(own.pid)])
        self.assertEqual(p.returncode, 0, p.stderr)
        proc = json.loads(p.stdout)["processes"][0]
        self.assertEqual(proc["engine"], "ptrace")
        self.assertEqual(python_frames(proc["threads"][0])[0]["name"], "nap")
        note("as nobody: its own process read with ptrace, stopped %.2f ms" % proc["stopped_ms"])
        # sample mode asked for where BPF is not allowed: refused in one line
        p = run(NOBODY + [perfpy, "dump", "--mode", "sample", str(own.pid)])
        self.one_line(p, r"sample mode cannot read here \(.*\): it needs root, or the "
                      r"capabilities CAP_BPF and CAP_PERFMON")
        self.assertIsNone(own.poll())

    def test_a_process_that_ends_during_the_dump(self):
        py = interpreters()[-1]
        for mode in modes():
            with self.subTest(mode=mode):
                # it lives 4 s from its start: found by the dump even under a
                # load of 44 (perfpy's start and sample mode's loading took
                # more than 0.5 s there), then ended while the dump waits
                # between finding the program and reading it
                target = subprocess.Popen([py.path, "-c", "import time; print('ready', "
                                           "flush=True); time.sleep(4.0)"],
                                          stdout=subprocess.PIPE, universal_newlines=True)
                self.targets.append(target)
                self.assertEqual(target.stdout.readline(), "ready\n")
                p = run([PERFPY, "dump"] + mode_args(mode) + [str(target.pid)],
                        env={"PERFPY_DUMP_TEST_PAUSE_MS": "5000"})
                self.one_line(p, r"the process %d ended during the dump" % target.pid)
                self.assertEqual(target.wait(), 0)


def glob_old(pyenv):
    for v in ("2.7", "3.6", "3.7"):
        for d in sorted(os.listdir(pyenv)) if os.path.isdir(pyenv) else []:
            path = os.path.join(pyenv, d, "bin", "python" + v)
            if d.startswith(v + ".") and os.path.exists(path):
                yield path, v


class BusyServer(DumpTest):

    def server_status(self, path, after=0, wait=10):
        """Its status once all its 52 threads run, with more answers than after."""
        end = time.monotonic() + wait
        while time.monotonic() < end:
            try:
                with open(path) as f:
                    v = [int(x) for x in f.read().split()]
                if len(v) == 5 and v[0] > after and v[4] == 52:
                    return v
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(0.05)
        raise AssertionError("the server wrote no status in %s s" % wait)

    def test_100_dumps_in_a_row(self):
        """Each dump within a second of its own CPU time (wall time on a
        shared machine is the load's); the server's own checks never fail."""
        py = interpreters()[-1]
        for mode in modes():
            with self.subTest(mode=mode):
                status = os.path.join(self.tmp, "server-" + mode)
                target = self.start([py.path, os.path.join(PROGRAMS, "busy_server.py"), status])
                first = self.server_status(status)
                self.assertEqual(first[4], 52)
                took, stopped, walls, cpus = [], [], [], []
                for i in range(100):
                    t0 = time.monotonic()
                    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    p, doc = self.dump(target.pid, *mode_args(mode))
                    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    walls.append(time.monotonic() - t0)
                    cpus.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    proc = doc["processes"][0]
                    self.assertEqual(len(proc["threads"]), 52)
                    took.append(proc["took_ms"])
                    stopped.append(proc["stopped_ms"])
                last = self.server_status(status, after=first[0])
                self.assertIsNone(target.poll())
                self.assertEqual((last[1], last[3]), (0, 0), last)   # no wrong answer, sum
                self.assertGreater(last[0], first[0])
                self.assertEqual(last[4], 52)
                for v in (took, stopped, walls, cpus):
                    v.sort()
                note("%s, %s: 100 dumps of 52 threads: its own CPU median %.0f ms, max %.0f "
                     "ms; wall median %.0f ms, max %.0f ms (load %.0f); stopped median %.2f "
                     "ms, max %.2f ms; server: %d answers, %d crunches, 0 wrong"
                     % (py.label, mode, cpus[50] * 1e3, cpus[-1] * 1e3, walls[50] * 1e3,
                        walls[-1] * 1e3, os.getloadavg()[0], stopped[50], stopped[-1],
                        last[0], last[2]))
                # the machine is shared: its own CPU time, not the wall's
                self.assertLess(cpus[-1], 1.0)
                target.kill()
                target.wait()


class ManyThreads(DumpTest):

    def test_600_threads_each_read_and_named(self):
        """More threads off the CPU than sample mode's ring holds at once
        (each record is about 90 KB of a 32 MB ring): the iterator's next
        passes take the rest, each thread once; the main thread, last in
        the interpreter's list, is found too."""
        py = interpreters()[-1]
        prog = self.write("many.py", "import threading, time\nev = threading.Event()\n"
                          "for i in range(600):\n    threading.Thread(target=ev.wait, "
                          "name='w%d' % i, daemon=True).start()\n"
                          "print('ready', flush=True)\ntime.sleep(100)\n")
        for mode in modes():
            with self.subTest(mode=mode):
                target = subprocess.Popen([py.path, prog], stdout=subprocess.PIPE,
                                          universal_newlines=True)
                self.targets.append(target)
                self.assertEqual(target.stdout.readline(), "ready\n")
                p, doc = self.dump(target.pid, *mode_args(mode))
                self.assertEqual(p.returncode, 0, p.stderr)
                proc = doc["processes"][0]
                threads = proc["threads"]
                self.assertEqual(len(threads), 601)
                self.assertEqual(sorted(t["name"] for t in threads),
                                 sorted(["MainThread"] + ["w%d" % i for i in range(600)]))
                native = mode != "nonblocking"
                short = [(t["name"], t["state"], t["syscall"], t["native"],
                          [f["name"] for f in t["frames"]][:12])
                         for t in threads if t["native"] != native or not python_frames(t)]
                self.assertEqual(short, [], mode)
                note("%s: 601 threads read and named in %.0f ms (stopped %.1f ms; load %.0f)"
                     % (mode, proc["took_ms"], proc["stopped_ms"], os.getloadavg()[0]))
                target.kill()
                target.wait()


class Subprocesses(DumpTest):

    def test_children_with_subprocesses(self):
        py = interpreters()[-1]
        prog = self.write("parent.py", "import subprocess, sys, time\n"
                          "child = subprocess.Popen([sys.executable, '-c', "
                          "'import time\\ndef in_child():\\n    time.sleep(100)\\nin_child()\\n'])\n"
                          "def in_parent():\n    time.sleep(100)\n"
                          "print('ready', flush=True)\nin_parent()\n")
        target = subprocess.Popen([py.path, prog], stdout=subprocess.PIPE,
                                  universal_newlines=True)
        self.targets.append(target)
        self.assertEqual(target.stdout.readline(), "ready\n")
        time.sleep(0.5)
        p, doc = self.dump(target.pid)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(doc["processes"]), 1)
        p, doc = self.dump(target.pid, "--subprocesses")
        self.assertEqual(p.returncode, 0, p.stderr)
        tops = [python_frames(proc["threads"][0])[0]["name"] for proc in doc["processes"]]
        self.assertEqual(tops, ["in_parent", "in_child"])
