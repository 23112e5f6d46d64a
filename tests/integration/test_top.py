"""perfpy top: a live view of a running program, in a real terminal.

In tmux (80x24 and 200x50): `perfpy top -p PID` of a program whose main
thread burns its CPU in hot_function shows hot_function first within 3 s,
the keys change the view (threads, total), q quits within 1 s, the terminal
is as before (`stty -a` the same, the normal screen back), and the program
goes on (its own count advancing). Ctrl-C and SIGTERM restore the terminal
too; a terminal too small gets what fits. Not a terminal: one plain table
per interval, on every interpreter of the world. With -- PROGRAM, top
started the program and ends it when it quits. Bad input: a pid that does
not exist.
"""
import os
import re
import select
import shutil
import signal
import subprocess
import time

from support import (BUILD, LIBDIR, PERFPY, ROOT, TempDirTest, interpreters, note,
                     others_can_reach, run, tree_for_others)

SAMPLER = os.path.join(BUILD, "perfpy-sample")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
TARGET = os.path.join(ROOT, "tests", "integration", "programs", "top_target.py")
PARTS = os.path.join(ROOT, "tests", "integration", "programs", "wall_parts.py")
# a row of the functions table: "  97.0%  100.0%       24       24  hot_function (...)"
HOW = {"sample": "sample mode (BPF, 99 Hz", "read": "read mode (no root"}
ROW = re.compile(r"^ *([\d.]+)% +([\d.]+)% +(\d+) +(\d+)  (.*)$")


def sample_mode_here():
    return os.geteuid() == 0 and run([SAMPLER, "--check"]).returncode == 0


class TopTest(TempDirTest):

    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("perfpy top is in perfpy-sample, not built here (clang, bpftool, "
                          "libbpf-dev, libdw-dev)")
        if not sample_mode_here():
            self.skipTest("perfpy top samples in sample mode: needs root and BPF here")
        self.targets = []

    def tearDown(self):
        for p in self.targets:
            if p.poll() is None:
                p.kill()
            p.wait()
        super().tearDown()

    def target(self, py=None):
        py = py or interpreters()[-1]
        status = os.path.join(self.tmp, "status-%d" % len(self.targets))
        p = subprocess.Popen([py.path, TARGET, status], stdout=subprocess.DEVNULL)
        self.targets.append(p)
        self.count(status)
        return p, status

    def count(self, status, after=-1, wait=10):
        end = time.monotonic() + wait
        while time.monotonic() < end:
            try:
                with open(status) as f:
                    n = int(f.read())
                if n > after:
                    return n
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(0.05)
        raise AssertionError("the program's count did not pass %d in %s s" % (after, wait))


class Tmux:
    """A tmux server of our own (its own socket) with one window of the
    given size running perfpy top under sh, which records `stty -a` before
    and after, top's pid and its exit status."""

    made = 0

    def __init__(self, test, cols, rows, args, prefix=(), perfpy=PERFPY):
        Tmux.made += 1
        self.dir = os.path.join(test.tmp, "tmux-%d" % Tmux.made)
        os.makedirs(self.dir)
        self.socket = "pptest-%d-%d" % (os.getpid(), Tmux.made)
        script = os.path.join(self.dir, "run.sh")
        with open(script, "w") as f:
            # the shell outlives a Ctrl-C (its trap runs once top has ended)
            f.write("#!/bin/sh\ncd %s\ntrap true INT\nstty -a > before\n"
                    "sh -c 'echo $$ > pid; exec \"$@\"' sh %s top %s\n"
                    "echo $? > rc.new; mv rc.new rc\nstty -a > after\nsleep 600\n"
                    % (self.dir, " ".join(list(prefix) + [perfpy]), " ".join(args)))
        os.chmod(script, 0o755)
        self.t0 = time.monotonic()
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "top", "-x", str(cols),
                  "-y", str(rows), script)

    def tmux(self, *args):
        return run(["tmux", "-L", self.socket] + list(args), check=True, timeout=30).stdout

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "top").rstrip("\n").split("\n")

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "top", *keys)

    def alternate(self):
        return self.tmux("display-message", "-p", "-t", "top", "#{alternate_on}").strip()

    def file(self, name):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return f.read()
        except FileNotFoundError:
            return None

    def wait_for(self, check, wait, what):
        end = time.monotonic() + wait
        while time.monotonic() < end:
            got = check()
            if got:
                return got
            time.sleep(0.05)
        raise AssertionError("%s: not within %s s; the screen:\n%s"
                             % (what, wait, "\n".join(self.screen())))

    def ended(self, wait):
        """top's exit status, once it wrote it (and stty's after)."""
        t0 = time.monotonic()
        self.wait_for(lambda: self.file("rc") is not None and self.file("after"), wait,
                      "perfpy top ended")
        return int(self.file("rc")), time.monotonic() - t0

    def close(self):
        run(["tmux", "-L", self.socket, "kill-server"], timeout=30)

    def quit(self, test, wait=5):
        """q: top ends with status 0 within wait s, the terminal as before."""
        self.keys("q")
        rc, took = self.ended(wait)
        test.assertEqual(rc, 0)
        test.assertEqual(self.file("after"), self.file("before"))
        return took


def hot_first(screen, name="hot_function "):
    """The first row of the functions table, when it is hot_function's."""
    rows = [ROW.match(l) for l in screen]
    rows = [m for m in rows if m]
    return rows[0] if rows and rows[0].group(5).startswith(name) else None


class Terminal(TopTest):

    def setUp(self):
        super().setUp()
        if not shutil.which("tmux"):
            self.fail("tmux is missing (scripts/deps.sh --tests installs it)")

    def test_q_at_80x24_and_200x50(self):
        for cols, rows, mode in ((80, 24, "sample"), (200, 50, "sample"), (80, 24, "read")):
            with self.subTest(size="%dx%d" % (cols, rows), mode=mode):
                target, status = self.target()
                t = Tmux(self, cols, rows, ["--mode", mode, "-p", str(target.pid)])
                try:
                    t.wait_for(lambda: hot_first(t.screen()), 3, "hot_function first")
                    shown = time.monotonic() - t.t0
                    screen = t.screen()
                    self.assertLessEqual(len(screen), rows)
                    self.assertTrue(all(len(l) <= cols for l in screen), screen)
                    self.assertTrue(screen[0].startswith("perfpy top: process %d: "
                                                         % target.pid), screen)
                    self.assertTrue(screen[1].startswith(HOW[mode]), screen)
                    self.assertRegex(screen[2], r"samples \(\d+/s\), \d+ lost; 1 process, "
                                     r"2 threads")
                    self.assertEqual(t.alternate(), "1")
                    # the threads view: MainThread, busiest, in hot_function
                    t.keys("h")
                    t.wait_for(lambda: any(re.search(r"MainThread +hot_function", l)
                                           for l in t.screen()), 3, "the threads view")
                    t.keys("h", "t")
                    t.wait_for(lambda: any(l.lstrip().startswith("own%  TOTAL%")
                                           for l in t.screen()), 3, "sorted by total")
                    before = self.count(status)
                    t.keys("q")
                    rc, took = t.ended(5)
                    self.assertEqual(rc, 0)
                    self.assertLess(took, 1.0)
                    self.assertEqual(t.file("after"), t.file("before"))
                    self.assertEqual(t.alternate(), "0")
                    self.assertIsNone(target.poll())
                    self.count(status, after=before)
                    note("%dx%d, %s mode: hot_function first %.1f s after start; q ended top "
                         "in %.2f s; stty -a the same" % (cols, rows, mode, shown, took))
                finally:
                    t.close()
                target.kill()
                target.wait()

    def test_ctrl_c_and_sigterm_restore_the_terminal(self):
        for how in ("C-c", "SIGTERM"):
            with self.subTest(how=how):
                target, status = self.target()
                t = Tmux(self, 80, 24, ["-p", str(target.pid)])
                try:
                    t.wait_for(lambda: hot_first(t.screen()), 10, "hot_function first")
                    if how == "C-c":
                        t.keys("C-c")
                    else:
                        os.kill(int(t.file("pid")), signal.SIGTERM)
                    rc, took = t.ended(5)
                    self.assertEqual(rc, 0)
                    self.assertEqual(t.file("after"), t.file("before"))
                    self.assertEqual(t.alternate(), "0")
                    self.assertIsNone(target.poll())
                finally:
                    t.close()
                target.kill()
                target.wait()

    def test_a_terminal_too_small_gets_what_fits(self):
        target, status = self.target()
        t = Tmux(self, 40, 8, ["-p", str(target.pid)])
        try:
            # the function's name cut at the width: "hot_f"
            t.wait_for(lambda: hot_first(t.screen(), "hot_f"), 10, "hot_function first")
            screen = t.screen()
            self.assertLessEqual(len(screen), 8)
            self.assertTrue(all(len(l) <= 40 for l in screen), screen)
            self.assertTrue(screen[0].startswith("perfpy top: process"), screen)
            t.quit(self)
        finally:
            t.close()


def seconds(counts):
    """The interval's length its counts line gives ("1.0 s: 97 samples ...")."""
    m = re.match(r"^(\d+\.\d) s: \d+ samples", counts)
    assert m, counts
    return float(m.group(1))


def tables(text):
    """The plain tables: [(counts line, [rows])]."""
    out = []
    for block in text.split("\n\n"):
        lines = block.strip("\n").split("\n")
        if len(lines) >= 3 and lines[0].startswith("perfpy top: "):
            out.append((lines[1], [ROW.match(l) for l in lines[3:] if ROW.match(l)]))
    return out


class Plain(TopTest):

    def watch(self, argv, want, prefix=(), perfpy=PERFPY):
        """perfpy top (argv after it) piped until want tables, then SIGTERM:
        its exit status, stderr, and the tables' text."""
        p = subprocess.Popen(list(prefix) + [perfpy, "top"] + argv, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.targets.append(p)
        text = Plain.read_tables(self, p, want)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
        return p.returncode, err.decode(errors="replace"), text + out.decode(errors="replace")

    def read_tables(self, p, want, wait=30):
        """What p wrote once it holds want tables (p.stdout a pipe of bytes)."""
        data, end = b"", time.monotonic() + wait
        while time.monotonic() < end and len(tables(data.decode(errors="replace"))) < want:
            ready, _, _ = select.select([p.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(p.stdout.fileno(), 65536)
                if not chunk:
                    break
                data += chunk
        return data.decode(errors="replace")

    def test_one_table_per_interval_every_interpreter_both_modes(self):
        done = 0
        for py, mode in [(py, mode) for py in interpreters() for mode in ("sample", "read")]:
            with self.subTest(py=py.label, mode=mode):
                target, status = self.target(py)
                p = subprocess.Popen([PERFPY, "top", "--mode", mode, "-p", str(target.pid)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                text = self.read_tables(p, 3)
                p.send_signal(signal.SIGTERM)
                out, err = p.communicate(timeout=10)
                text += out.decode(errors="replace")
                err = err.decode(errors="replace")
                self.assertEqual(p.returncode, 0, err)
                self.assertEqual(err, "")
                self.assertNotIn("\x1b", text)
                got = tables(text)
                self.assertGreaterEqual(len(got), 3, text)
                self.assertIn("(" + HOW[mode], text.split("\n")[0])
                # every full interval: hot_function first, most of the own share
                for counts, rows in got[1:3]:
                    # an interval ending on the 1 s grid, as the loaded machine let
                    # it (one after a late end is that much shorter)
                    self.assertTrue(0.1 <= seconds(counts) <= 3.0, counts)
                    self.assertTrue(rows[0].group(5).startswith("hot_function (%s)" % TARGET),
                                    rows[0].group(0))
                    self.assertGreater(float(rows[0].group(1)), 50.0, rows[0].group(0))
                    self.assertLessEqual(len(rows), 20)
                self.assertIsNone(target.poll())
                note("%s, %s mode: hot_function %s%% own in the second interval" %
                     (py.label, mode, got[1][1][0].group(1)))
                target.kill()
                target.wait()
                done += 1
        self.assertGreater(done, 0)

    def test_rows_cuts_each_table_and_says_how_many_are_left(self):
        """--rows N: each plain table holds the first N functions, then one
        line counts those left out; --rows 0 holds them all, with no such
        line. (Mutations: --rows not passed on -> red: 20 rows, not 2; the
        count line left out -> red.)"""
        for mode in ("sample", "read"):
            with self.subTest(mode=mode):
                target, _ = self.target()
                cut = {}
                for rows in ("2", "0"):
                    rc, err, text = self.watch(["--mode", mode, "--rows", rows,
                                                "-p", str(target.pid)], 3)
                    self.assertEqual(rc, 0, err)
                    got = tables(text)
                    self.assertGreaterEqual(len(got), 3, text)
                    blocks = [b for b in text.split("\n\n") if b.startswith("perfpy top: ")]
                    for (counts, found), block in zip(got[1:3], blocks[1:3]):
                        left = re.findall(r"^\((\d+) more functions? not shown: --rows 0 "
                                          r"shows all\)$", block, re.M)
                        if rows == "2":
                            # hot_function, main and <module> at least
                            self.assertEqual(len(found), 2, block)
                            self.assertEqual(len(left), 1, block)
                            self.assertGreaterEqual(int(left[0]), 1, block)
                            cut[rows] = int(left[0])
                        else:
                            self.assertGreaterEqual(len(found), 3, block)
                            self.assertEqual(left, [], block)
                            cut[rows] = len(found)
                note("top --rows, %s mode: --rows 2 left %d out; --rows 0 showed %d" %
                     (mode, cut["2"], cut["0"]))
                target.kill()
                target.wait()

    def test_a_program_it_starts_ends_with_it(self):
        status = os.path.join(self.tmp, "status")
        p = subprocess.Popen([PERFPY, "top", "-i", "0.5", "--", interpreters()[-1].path,
                              TARGET, status], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.targets.append(p)
        text = self.read_tables(p, 3)
        self.assertTrue(0.05 <= seconds(tables(text)[1][0]) <= 1.5, tables(text)[1][0])
        self.assertTrue(tables(text)[1][1][0].group(5).startswith("hot_function "), text)
        child = [int(x) for x in run(["pgrep", "-P", str(p.pid)]).stdout.split()]
        self.assertEqual(len(child), 1)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
        err = err.decode(errors="replace")
        self.assertEqual(p.returncode, 0, err)
        # it was sent SIGINT: KeyboardInterrupt, the program gone
        self.assertIn("KeyboardInterrupt", err)
        self.assertFalse(os.path.exists("/proc/%d" % child[0]))

    def test_idle_ranks_the_waits_by_their_reason(self):
        # wall_parts' main thread dozes (time.sleep), drains (a pipe's read) and
        # waits for a lock, 30-40 ms each per round of about 160 ms: with --idle
        # those functions hold a share of the time and their reasons are
        # there; the twin without it (CPU time) gives doze none
        prog = os.path.join(ROOT, "tests", "integration", "programs", "wall_parts.py")
        shares = {}
        for idle in (True, False):
            # at 499 Hz: at top's 99, the CPU-time twin's intervals held 5-13
            # samples each (wall_parts mostly waits), so that one sample in
            # doze's own brief CPU was 2-3% of the three
            _, _, text = self.watch((["--idle"] if idle else []) +
                                    ["-r", "499", "--rows", "0", "--", interpreters()[-1].path,
                                     prog, "100000"], 4)
            got = tables(text)
            self.assertGreaterEqual(len(got), 4, text)
            self.assertEqual("wall clock" in text.split("\n")[0], idle, text.split("\n")[0])
            # each function's own share of the three intervals together,
            # from the own counts: the mean of the three shares counted an
            # interval without samples as 0% of everything (a CI run at 99
            # Hz: 66.7 for all)
            own, total = {}, 0
            for _, rows in got[1:4]:
                for r in rows:
                    name = r.group(5).split(" (")[0]
                    own[name] = own.get(name, 0) + int(r.group(3))
                    total += int(r.group(3))
            self.assertGreater(total, 0, text)
            shares[idle] = {name: 100.0 * n / total for name, n in own.items()}
            # every row (--rows 0): the reasons are there with --idle, and
            # first in each table (a reason owns no sample of its own: by own
            # share it ranked below every function, off the first screen)
            reasons = [r.group(5) for _, rows in got[1:4] for r in rows
                       if r.group(5).startswith("[off-CPU: ")]
            self.assertEqual(bool(reasons), idle, text)
            for _, rows in got[1:4]:
                kinds = [r.group(5).startswith("[off-CPU: ") for r in rows]
                self.assertEqual(kinds, sorted(kinds, reverse=True),
                                 [r.group(0) for r in rows][:30])
        note("wall_parts, own share over 3 intervals, --idle: doze %.1f%%, drain %.1f%%, "
             "queue_wait %.1f%%, crunch %.1f%%; CPU time: doze %.1f%%, crunch %.1f%%" %
             (shares[True].get("doze", 0), shares[True].get("drain", 0),
              shares[True].get("queue_wait", 0), shares[True].get("crunch", 0),
              shares[False].get("doze", 0), shares[False].get("crunch", 0)))
        # each wait about 30-40 ms of a 160 ms round of the main thread (of
        # two threads: 10-12%); on a loaded machine the main thread's wake-up
        # from held.wait() comes late and the lock's wait left is shorter
        # (queue_wait 3.8% at a load of 6): 2% for it, 5% for the others
        for f, least in (("doze", 5.0), ("drain", 5.0), ("queue_wait", 2.0)):
            self.assertGreater(shares[True].get(f, 0), least, (f, shares[True]))
        self.assertLess(shares[False].get("doze", 0), 2.0, shares[False])
        # the CPU part: crunch and the generator it sums (crunch's own share
        # alone is about 30%: the final CI had 29.3, a bound of 30 on it)
        self.assertGreater(shares[False].get("crunch", 0) +
                           shares[False].get("crunch.<locals>.<genexpr>", 0), 80.0,
                           shares[False])

    def test_idle_shows_a_wait_longer_than_the_interval(self):
        # top_target's napper sleeps 60 s at a time: with --idle its sleep is
        # half of each interval's time (two threads), cut at each interval's
        # end, not said once when it ends
        target, _ = self.target()
        rc, err, text = self.watch(["--idle", "-p", str(target.pid)], 4)
        self.assertEqual(rc, 0, err)
        got = tables(text)
        self.assertGreaterEqual(len(got), 4, text)
        for counts, rows in got[1:4]:
            share = {r.group(5).split(" (")[0]: r for r in rows}
            self.assertIn("napper", share, (counts, [r.group(0) for r in rows]))
            self.assertTrue(35.0 <= float(share["napper"].group(1)) <= 65.0,
                            share["napper"].group(0))
            self.assertTrue(35.0 <= float(share["[off-CPU: sleep]"].group(2)) <= 65.0,
                            share["[off-CPU: sleep]"].group(0))
        note("top --idle of top_target: napper (60 s sleeps) %s of the intervals 2-4" %
             ", ".join(share_of(rows, "napper") for _, rows in got[1:4]))
        self.assertIsNone(target.poll())


def share_of(rows, name):
    return next(r.group(1) + "%" for r in rows if r.group(5).startswith(name + " ("))


class BadInput(TopTest):

    def test_a_pid_that_does_not_exist(self):
        pid = 4194304 - 7
        p = run([PERFPY, "top", "-p", str(pid)])
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.splitlines(),
                         ["perfpy: no process %d: it does not exist (or has ended)" % pid])

    def test_nothing_to_watch(self):
        p = run([PERFPY, "top"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("nothing to watch", p.stderr)

    def test_rows_not_a_count(self):
        for bad in ("-1", "x", "1000001"):
            p = run([PERFPY, "top", "--rows", bad, "-p", str(os.getpid())])
            self.assertEqual(p.returncode, 2)
            self.assertEqual(p.stdout, "")
            self.assertEqual(p.stderr.splitlines()[0],
                             "perfpy top: --rows takes how many functions each plain table "
                             "shows (0: all; at most 1000000), not '%s'" % bad)

    def test_async_in_read_mode(self):
        """(--idle in read mode is watched: ReadModeWithoutRoot.)"""
        p = run([PERFPY, "top", "--async", "--mode", "read", "-p", str(os.getpid())])
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertIn("--async needs sample mode", p.stderr.splitlines()[0])


class ReadModeWithoutRoot(TempDirTest):
    """As user nobody: its own process is watched in read mode (auto), and
    root's process is refused in one line."""

    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("perfpy top is in perfpy-sample, not built here")
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root, to run as user nobody")
        # the interpreter itself (the target loads nothing of perfpy's: no
        # sanitizer wrapper, which user nobody may not reach)
        self.py = next((p.real for p in interpreters() if others_can_reach(p.real)), None)
        if not self.py:
            self.skipTest("no interpreter user nobody can run")
        clone = tree_for_others(self.tmp, os.path.relpath(PERFPY, ROOT),
                                os.path.relpath(SAMPLER, ROOT), os.path.relpath(LIBDIR, ROOT),
                                os.path.relpath(TARGET, ROOT), os.path.relpath(PARTS, ROOT))
        self.perfpy = os.path.join(clone, os.path.relpath(PERFPY, ROOT))
        self.prog = os.path.join(clone, os.path.relpath(TARGET, ROOT))
        self.parts = os.path.join(clone, os.path.relpath(PARTS, ROOT))
        os.chmod(self.tmp, 0o777)
        self.targets = []

    def tearDown(self):
        for p in self.targets:
            if p.poll() is None:
                p.kill()
            p.wait()
        super().tearDown()

    def test_own_process_in_read_mode_and_roots_refused(self):
        own = subprocess.Popen(NOBODY + [self.py, self.prog,
                                         os.path.join(self.tmp, "own")])
        roots = subprocess.Popen([self.py, self.prog, os.path.join(self.tmp, "root")])
        self.targets += [own, roots]
        time.sleep(1.0)
        rc, err, text = Plain.watch(self, ["-p", str(own.pid)], 3, NOBODY, self.perfpy)
        self.assertEqual(rc, 0, err)
        got = tables(text)
        self.assertGreaterEqual(len(got), 3, text)
        self.assertIn("(" + HOW["read"], text.split("\n")[0])
        self.assertTrue(got[1][1][0].group(5).startswith("hot_function "), text)
        self.refused_in_one_line([], roots.pid)
        self.assertIsNone(own.poll())
        self.assertIsNone(roots.poll())

    def refused_in_one_line(self, args, pid):
        """perfpy top ARGS -p PID as nobody, of root's process: one line."""
        p = run(NOBODY + [self.perfpy, "top"] + args + ["-p", str(pid)], timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertRegex(p.stderr, r"^perfpy: cannot read the memory of the process %d: not "
                         r"permitted" % pid)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)

    def test_idle_in_read_mode_its_own_process_and_roots_refused(self):
        """--idle without BPF: read mode (auto), said in the view's first
        line; top_target's napper sleeps 60 s at a time, so its sleep is in
        every interval. The twin: root's process, one line, exit 1."""
        own = subprocess.Popen(NOBODY + [self.py, self.prog, os.path.join(self.tmp, "own")])
        roots = subprocess.Popen([self.py, self.prog, os.path.join(self.tmp, "root")])
        self.targets += [own, roots]
        time.sleep(1.0)
        rc, err, text = Plain.watch(self, ["--idle", "-p", str(own.pid)], 3, NOBODY,
                                    self.perfpy)
        self.assertEqual(rc, 0, err)
        self.assertRegex(text.split("\n")[0], r"\(read mode \(no root.*wall clock")
        got = tables(text)
        self.assertGreaterEqual(len(got), 3, text)
        for counts, rows in got[1:3]:
            names = [r.group(5).split(" (")[0] for r in rows]
            self.assertIn("napper", names, text)
            self.assertIn("[off-CPU: sleep]", names, text)
        self.refused_in_one_line(["--idle"], roots.pid)
        self.assertIsNone(own.poll())
        self.assertIsNone(roots.poll())

    def test_idle_in_a_terminal_shows_each_reason(self):
        """In tmux (200x50), as nobody: top --idle of wall_parts (CPU work,
        a sleep, a pipe read, a lock wait, a helper waiting on a queue),
        sorted by total, shows each reason as a row; q ends it."""
        if not shutil.which("tmux"):
            self.fail("tmux is missing (scripts/deps.sh --tests installs it)")
        t = Tmux(self, 200, 50, ["--idle", "--", self.py, self.parts, "100000"], NOBODY,
                 self.perfpy)
        want = ("[off-CPU: sleep]", "[off-CPU: I/O]", "[off-CPU: lock]")
        try:
            t.wait_for(lambda: any(l.startswith(HOW["read"]) for l in t.screen()), 10,
                       "read mode's line")
            self.assertIn("wall clock", t.screen()[1])
            t.keys("t")
            screen = t.wait_for(lambda: (lambda s: s if all(any(l.endswith(w) for l in s)
                                                               for w in want) else None)(
                                             t.screen()), 10, "each reason a row")
            note("top --idle as nobody in tmux: %s" % "; ".join(
                l.strip() for l in screen if "[off-CPU" in l))
            t.quit(self)
        finally:
            t.close()
