"""Tooling faults under `perfpy record`, each with a clear message and what
was recorded kept, in both modes:

- perf killed (SIGKILL) mid-record: the program goes on to its normal end
  (perfpy is its subreaper), its exit status is passed on, and the profile
  is made from what perf wrote (perfpy finishes the perf.data perf left);
- the program killed by SIGKILL: said, status 137, profile written;
- Ctrl-C while recording (test_record: default mode, newest interpreter;
  here both modes on the oldest), and a second Ctrl-C while the profile is
  being made: the recording is kept and the command that finishes it is
  printed (and works);
- perf refused to a user (setpriv --reuid=65534 with the seccomp wrapper
  programs/deny_perf.c): exit 1 and what to do; its positive twin: that
  user records when the kernel lets users profile their own processes.
perf missing: test_record.Errors, test_doctor, test_report.ReportErrors.
"""
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

import support
from rel_support import MODES, ReliabilityTest, program, record
from support import PERFPY, interpreters, needs_perf

PROG = program("rel_tooling.py")


def children_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class RecordFaults(ReliabilityTest):

    def setUp(self):
        super().setUp()
        self.rec = os.path.join(self.tmp, "rec")
        os.mkdir(self.rec)

    def pick(self, mode):
        """The oldest interpreter on which the mode names Python functions
        (perf-map mode under perf 7's libdw: one with frame pointers)."""
        pys = [i for i in interpreters() if mode == "jit" or
               not support.perf_map_mode_names_nothing(i, fp_callgraph=True)]
        if not pys:
            self.skipTest(support.perf_map_mode_names_nothing(interpreters()[0], True))
        return pys[0]

    def start(self, mode, args, out, perf=None):
        py = self.pick(mode)
        self.before = set(os.listdir(self.rec))   # a kept recording is not this one
        self.enough = self.enough_for(mode, py)
        cmd = [PERFPY, "record", "--mode", mode, "-f", "collapsed", "-o", out,
               "--", py.path, PROG] + args
        env = dict(os.environ, TMPDIR=self.rec, PERFPY="")
        if perf:
            env["PERF"] = perf
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, start_new_session=True, env=env)
        return py, p

    def enough_for(self, mode, py=None):
        """Bytes of perf.data to wait for: frame-pointer call graphs
        (perf-map mode on an interpreter with frame pointers) copy no stack,
        about 40 times less data per sample than DWARF."""
        py = py or self.pick(mode)
        fp = mode == "perf" and support.keeps_frame_pointers(py)
        return 100000 if fp else 4000000

    def wait_for_data(self, p, size=None):
        """Until perf has written size bytes (perf.data in the recording dir;
        default: about a second of samples in the mode start() used)."""
        size = size or self.enough
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None:
            for d in set(os.listdir(self.rec)) - self.before:
                data = os.path.join(self.rec, d, "perf.data")
                if os.path.exists(data) and os.path.getsize(data) > size:
                    return
            time.sleep(0.1)
        self.fail("perf wrote nothing")

    def finish(self, p, timeout=300):
        out, err = p.communicate(timeout=timeout)
        self.own(*[int(x) for x in re.findall(r"^pid (\d+)$", out, re.M)])
        return out, err

    def spins(self, path):
        with open(path) as f:
            return sum(int(l.rsplit(" ", 1)[1]) for l in f if "spin (" in l)

    @needs_perf
    def test_perf_killed_mid_record(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                out = os.path.join(self.tmp, "killed-%s.txt" % mode)
                # frame-pointer samples are small: perf's first write comes
                # after seconds, so the program must run long enough to
                # outlive the kill
                long = self.enough_for(mode) < 1000000
                py, p = self.start(mode, ["spin", "20" if long else "8", "5"], out)
                self.wait_for_data(p)
                perf = [c for c in children_of(p.pid) if open("/proc/%d/comm" % c).read().strip() == "perf"]
                self.assertEqual(len(perf), 1, "perf not found")
                os.kill(perf[0], signal.SIGKILL)
                stdout, stderr = self.finish(p)
                self.assertEqual(p.returncode, 5, stderr[-3000:])
                self.assertIn("program finished normally", stdout)
                self.assertIn("perf was killed while recording (signal 9", stderr)
                self.assertIn("goes on and perfpy waits for it", stderr)
                self.assertIn("whole records are used as they are", stderr)
                self.assertGreater(self.spins(out), 20)
                self.assertEqual(os.listdir(self.rec), [])
                record("tooling/perf_killed_mid_record", py, mode,
                       "program ran to its end (exit 5 passed on); profile written from "
                       "what perf recorded (%d samples in spin); said: perf was killed "
                       "while recording (signal 9, Killed); the program goes on" % self.spins(out),
                       "perfpy record --mode %s -- %s %s spin 8 5 & kill -9 <perf>"
                       % (mode, py.path, "tests/integration/programs/rel_tooling.py"))

    @needs_perf
    def test_program_killed_by_sigkill(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                out = os.path.join(self.tmp, "selfkill-%s.txt" % mode)
                py, p = self.start(mode, ["selfkill"], out)
                stdout, stderr = self.finish(p)
                self.assertEqual(p.returncode, 128 + signal.SIGKILL, stderr[-3000:])
                self.assertIn("the program was killed by signal 9", stderr)
                self.assertGreater(self.spins(out), 20)
                self.assertEqual(os.listdir(self.rec), [])
                record("tooling/program_sigkill", py, mode,
                       "exit 137; said: the program was killed by signal 9; profile written "
                       "(%d samples in spin)" % self.spins(out),
                       "perfpy record --mode %s -- %s %s selfkill"
                       % (mode, py.path, "tests/integration/programs/rel_tooling.py"))

    @needs_perf
    def test_ctrl_c_then_ctrl_c_again_while_the_profile_is_made(self):
        for mode in MODES:
            with self.subTest(mode=mode, ctrl_c="once"):
                out = os.path.join(self.tmp, "int-%s.txt" % mode)
                py, p = self.start(mode, ["spin", "60", "0"], out)
                self.wait_for_data(p)
                os.killpg(p.pid, signal.SIGINT)
                stdout, stderr = self.finish(p)
                # the program's own status, as without perfpy: Python dies of
                # the SIGINT its KeyboardInterrupt ends with (128 + 2)
                self.assertEqual(p.returncode, 130, stderr[-3000:])
                self.assertIn("recording stopped after", stderr)
                self.assertGreater(self.spins(out), 20)
                record("tooling/ctrl_c", py, mode, "stopped, the program's exit 130 passed on, "
                       "profile written "
                       "(%d samples in spin)" % self.spins(out),
                       "perfpy record --mode %s -- %s %s spin 60 0, then Ctrl-C"
                       % (mode, py.path, "tests/integration/programs/rel_tooling.py"))
            with self.subTest(mode=mode, ctrl_c="twice"):
                out = os.path.join(self.tmp, "int2-%s.txt" % mode)
                # a perf whose post-processing steps start late, so that the
                # second Ctrl-C surely comes while the profile is being made,
                # and that then goes on and ends well, as perf script and
                # perf inject do on a Ctrl-C (they stop early, exit 0)
                slow = os.path.join(self.tmp, "slow-perf")
                started = os.path.join(self.tmp, "post-processing-%s" % mode)
                with open(slow, "w") as f:
                    # (record and version -- perfpy asks perf which unwinder it
                    # has -- run at once)
                    f.write('#!/bin/sh\ncase "$1" in record|version) ;; *) trap : INT; '
                            'touch "%s"; sleep 3 ;; esac\n'
                            'exec %s "$@"\n' % (started, shutil.which("perf")))
                os.chmod(slow, 0o755)
                py, p = self.start(mode, ["spin", "60", "0"], out, perf=slow)
                self.wait_for_data(p)
                os.killpg(p.pid, signal.SIGINT)
                seen = []
                for line in p.stderr:
                    seen.append(line)
                    if "recording stopped after" in line:
                        break
                while not os.path.exists(started) and p.poll() is None:
                    time.sleep(0.05)
                os.killpg(p.pid, signal.SIGINT)      # while the profile is made
                stdout, rest = self.finish(p)
                stderr = "".join(seen) + rest
                self.assertEqual(p.returncode, 1, stderr[-3000:])
                self.assertIn("interrupted while making the profile: %s is not written"
                              % out, stderr)
                self.assertFalse(os.path.exists(out), "a profile of part of the recording")
                m = re.search(r"the recording is kept: (\S+)", stderr)
                self.assertTrue(m, stderr[-3000:])
                cmd = re.search(r"^  (perfpy report .*)$", stderr, re.M).group(1).split()
                fixed = support.run([PERFPY] + cmd[1:], timeout=300)
                self.assertEqual(fixed.returncode, 0, fixed.stderr[-2000:])
                self.assertGreater(self.spins(out), 20)
                shutil.rmtree(m.group(1), ignore_errors=True)
                record("tooling/ctrl_c_twice", py, mode, "second Ctrl-C while the profile "
                       "is made: exit 1, 'interrupted while making the profile', no partial "
                       "profile, the recording kept; the printed `perfpy report` command "
                       "writes it (%d samples in spin)" % self.spins(out),
                       "perfpy record --mode %s -- ... spin 60 0, Ctrl-C, Ctrl-C" % mode)


class UserFaults(ReliabilityTest):

    def setUp(self):
        # (skips first: tearDown does not run after a setUp that raised)
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to run as another user")
        self.py = next((i for i in interpreters() if i.path.startswith("/usr/")), None)
        if not self.py:
            self.skipTest("no interpreter outside root's home for another user to run")
        super().setUp()
        os.chmod(self.tmp, 0o755)
        self.rec = os.path.join(self.tmp, "rec")
        os.mkdir(self.rec)
        os.chmod(self.rec, 0o777)
        # perfpy, its module directory and the program where user nobody can
        # reach them (copies here when the clone is out of their reach)
        rel = [os.path.relpath(p, support.ROOT) for p in (PERFPY, support.LIBDIR, PROG)]
        root = support.tree_for_others(self.tmp, rel[0], rel[1], os.path.dirname(rel[2]))
        self.perfpy, self.prog = (os.path.join(root, r) for r in (rel[0], rel[2]))

    def as_nobody(self, wrapper, out):
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + wrapper + \
              [self.perfpy, "record", "-f", "collapsed", "-o", out, "--", self.py.path,
               self.prog, "spin", "1", "0"]
        p = support.run(cmd, env={"TMPDIR": self.rec, "PERFPY": None, "HOME": self.rec},
                        timeout=300)
        self.own(*[int(x) for x in re.findall(r"^pid (\d+)$", p.stdout, re.M)])
        return p

    @needs_perf
    def test_perf_refused_to_a_user_says_what_to_do(self):
        deny = os.path.join(self.tmp, "deny_perf")
        support.run(["gcc", "-O1", program("deny_perf.c"), "-o", deny], check=True)
        os.chmod(deny, 0o755)
        p = self.as_nobody([deny], os.path.join(self.rec, "refused.txt"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("perf is not permitted to record", p.stderr)
        self.assertIn("perf_event_paranoid", p.stderr)
        self.assertIn("Run as root", p.stderr)
        self.assertEqual(os.listdir(self.rec), [])
        record("tooling/perf_refused_to_a_user", self.py, "auto",
               "exit 1: " + re.search(r"perfpy: (perf is not permitted.*?) Check with",
                                      p.stderr, re.S).group(1).replace("\n", " "),
               "setpriv --reuid=65534 ... deny_perf perfpy record -- python ...")

    @needs_perf
    def test_a_user_records_where_the_kernel_allows_it(self):
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            if int(f.read()) > 2:
                self.skipTest("users may not use perf on this system")
        out = os.path.join(self.rec, "user.txt")
        p = self.as_nobody([], out)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        with open(out) as f:
            self.assertIn("spin (", f.read())
        os.unlink(out)
        self.assertEqual(os.listdir(self.rec), [])
        record("tooling/user_permitted", self.py, "auto", "as user 65534 (paranoid <= 2): "
               "profile written, Python frames named",
               "setpriv --reuid=65534 ... perfpy record -- python ...")


if __name__ == "__main__":
    unittest.main()
