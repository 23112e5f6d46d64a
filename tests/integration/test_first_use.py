"""What a new user tries first and must not trip on: attaching to a process
started without perfpy, option combinations that cannot work, a process
that used no CPU, the summary of sample mode (functions, not lines; its
own words), and nothing written into the user's home. Each refusal comes
before anything runs, in one line, with nothing left behind; each has its
positive twin."""
import glob
import os
import re
import subprocess
import time

import support
from support import LIBDIR, PERFPY, interpreters, needs_perf, note, run
from test_record import SAMPLER, RecordTest
from test_report import collapsed_counts

# idle sleeps in one call: a wake-up every 0.2 s cost CPU enough for a
# sample of cpu-clock now and then on a loaded machine (2 in a CI run)
BUSY = ("import os, sys, time\nprint('pid', os.getpid(), flush=True)\n"
        "def spinning():\n    return sum(i * i for i in range(2000))\n"
        "end = time.time() + 60\n"
        "while sys.argv[1] == 'busy' and time.time() < end:\n"
        "    spinning()\n"
        "time.sleep(60)\n")
# split is hot at two lines: sample mode labels frames with the executing line
TWO_LINES = """import os
print('pid', os.getpid(), flush=True)
def split(n):
    a = sum(i * i for i in range(n))
    b = sum(i * 3 for i in range(n))
    return a + b
for _ in range(40):
    split(100000)
"""


def can_sample():
    return os.geteuid() == 0 and os.path.exists(SAMPLER)


class FirstUse(RecordTest):
    verbose = True   # the tests read the accounting notes (-v)

    def start(self, how, env=None):
        """A Python process running BUSY (busy or idle), started plainly or
        under `perfpy run --mode jit`; its pid once it runs."""
        py = interpreters()[-1]
        cmd = [py.path, "-c", BUSY, how]
        full = {k: v for k, v in os.environ.items() if not k.startswith(("PERFPY", "PYTHON"))}
        full.update(env or {})
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, universal_newlines=True, env=full)
        self.addCleanup(lambda: (p.kill(), p.wait()))
        pid = int(p.stdout.readline().split()[1])
        self.own(pid)
        time.sleep(0.5)
        return pid

    def tmp_files(self, pid):
        return [f for f in ("/tmp/perf-%d.map" % pid, "/tmp/jit-%d.dump" % pid)
                if os.path.exists(f)] + glob.glob("/tmp/jitted-%d-*.so" % pid)

    def attach(self, pid, *args):
        return run([PERFPY, "record", "-p", str(pid)] + list(args),
                   env={"TMPDIR": self.rectmp}, timeout=120)

    @needs_perf
    def test_attach_to_a_process_started_without_perfpy(self):
        """-p PID on a CPython started plainly: perfpy knows before
        recording that no engine runs there. --mode auto attaches in sample
        mode (where it can sample); --mode jit or perf says in one line what
        to do, exit 1, nothing recorded, nothing left in /tmp. (Before: 4 s
        recorded, then "no Python function in the samples", exit 0.) The
        twin: a process started with the engine is recorded in jit mode."""
        pid = self.start("busy")
        for mode in ("jit", "perf"):
            with self.subTest(mode=mode):
                out = self.out("plain-%s.txt" % mode)
                t0 = time.time()
                p = self.attach(pid, "--mode", mode, "-d", "4", "-f", "collapsed", "-o", out)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertLess(time.time() - t0, 3.5, "refused only after recording")
                self.assertRegex(p.stderr, r"^perfpy: the process %d was not started with "
                                 r"perfpy's engine.*perfpy run --mode jit.*--mode read -p %d "
                                 r"\(no root\), --mode sample -p %d \(root\)\n$" % (pid, pid, pid))
                self.assertFalse(os.path.exists(out))
                self.assertEqual(os.listdir(self.rectmp), [])
                self.assertEqual(self.tmp_files(pid), [])
        if can_sample():
            out = self.out("plain-auto.txt")
            p = self.attach(pid, "-d", "2", "-f", "collapsed", "-o", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("was not started with perfpy's engine: attaching in sample mode",
                          p.stderr)
            self.assertTrue(any("spinning (" in s for s in collapsed_counts(out)))
        else:
            note("sample mode cannot sample here: --mode auto's fallback not run")
        self.assertEqual(self.tmp_files(pid), [])
        # the twin: the engine active, jit mode
        jitpid = self.start("busy", {"PYTHONPATH": LIBDIR, "PERFPY": "jit",
                                     "PERFPY_JITDUMP_DIR": support.jit_dump_dir(self.tmp)})
        out = self.out("engine.txt")
        p = self.attach(jitpid, "-d", "4", "-f", "collapsed", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn("in jit mode", p.stderr)
        self.assertTrue(any("spinning (" in s for s in collapsed_counts(out)))

    @needs_perf
    def test_a_process_that_used_no_cpu(self):
        """-p PID -d 2 on a process asleep the whole time: "no samples: the
        process PID used no CPU in the 2.0 s recorded", exit 1, no profile,
        no recording kept (before: jit mode blamed perf_event_paranoid and
        kept /tmp/perfpy-record-XXXX, exit 1; sample mode wrote an empty
        profile, exit 0). Twin: the same process busy is recorded."""
        engine = {"PYTHONPATH": LIBDIR, "PERFPY": "jit",
                  "PERFPY_JITDUMP_DIR": support.jit_dump_dir(self.tmp)}
        cases = [("jit", engine)] + ([("sample", None)] if can_sample() else [])
        for mode, env in cases:
            with self.subTest(mode=mode):
                pid = self.start("idle", env)
                out = self.out("idle-%s.txt" % mode)
                p = self.attach(pid, "--mode", mode, "-d", "2", "-f", "collapsed", "-o", out)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertRegex(p.stderr, r"perfpy: no samples: the process %d used no CPU in "
                                 r"the \d+\.\d s recorded; nothing is written" % pid)
                self.assertNotIn("perf_event_paranoid", p.stderr)
                self.assertNotIn("engine active", p.stderr)
                self.assertFalse(os.path.exists(out))
                self.assertEqual(os.listdir(self.rectmp), [])
                busy = self.start("busy", env)
                p = self.attach(busy, "--mode", mode, "-d", "4", "-f", "collapsed", "-o", out)
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                self.assertTrue(any("spinning (" in s for s in collapsed_counts(out)))

    def test_combinations_that_cannot_work_are_refused_first(self):
        """Each valid alone, not together: exit 2 and one sentence before the
        program starts (it would print and write a file), nothing made.
        (Before: --mode sample -f perf ran the program to its end, then
        "format perf is not written from a profile", exit 1.) Twin: the same
        options without the conflict are accepted."""
        py = interpreters()[-1]
        marker = self.out("ran")
        prog = [py.path, "-c", "open(%r, 'w').close(); print('the program ran')" % marker]
        refused = [
            (["--mode", "sample", "-f", "perf"], "-f perf cannot be written"),
            (["--mode", "sample", "--inline"], "--inline is not built in sample mode"),
            (["--mode", "sample", "--stack-size", "8192"], "--stack-size is perf's"),
            (["--mode", "sample", "--keep"], "sample mode makes none"),
            (["-f", "perf", "-o", "-"], "cannot go to standard output"),
        ]
        for args, words in refused:
            with self.subTest(args=" ".join(args)):
                p = run([PERFPY, "record"] + args + ["--"] + prog, env={"TMPDIR": self.rectmp},
                        cwd=self.tmp)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(words, p.stderr)
                self.assertEqual(p.stdout, "")
                self.assertFalse(os.path.exists(marker))
                self.assertEqual(os.listdir(self.rectmp), [])
        accepted = [["--inline"], ["--stack-size", "8192"], ["-d", "3"]]
        if can_sample():
            accepted += [["--mode", "sample"], ["--mode", "sample", "-d", "3"]]
        for args in accepted:
            with self.subTest(accepted=" ".join(args)):
                p = run([PERFPY, "record"] + args + ["-f", "collapsed", "-o", self.out("ok.txt"),
                                                     "--"] + prog, env={"TMPDIR": self.rectmp})
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                self.assertIn("the program ran", p.stdout)
                os.unlink(marker)
                for kept in os.listdir(self.rectmp):        # --keep's
                    support.shutil.rmtree(os.path.join(self.rectmp, kept))

    @needs_perf
    def test_sample_mode_summary_ranks_functions_and_speaks_for_itself(self):
        """split() is hot at two lines: the summary has one row for it (its
        share whole, not split between "split (x.py:4)" and "(x.py:5)"), the
        profile keeps both lines. Attached with -d: "recording stopped after
        N s", as the other modes say. On a stripped interpreter the summary
        names perfpy, not perf, as what could not name its code."""
        if not can_sample():
            self.skipTest("sample mode needs root and perfpy-sample")
        prog = self.write("two.py", TWO_LINES)
        for py in interpreters():
            with self.subTest(py=py.label):
                out = self.out("two-%s.txt" % py.label)
                p = self.record(["--mode", "sample", "-f", "collapsed", "-o", out],
                                [py.path, prog])
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                own = p.stderr.split("by own time")[1].split("by total time")[0]
                rows = [l for l in own.splitlines() if " split (" in l]
                self.assertEqual(len(rows), 1, own)
                self.assertRegex(rows[0], r"split \([^()]*two\.py\)$")
                lines = {m for s_ in collapsed_counts(out)
                         for m in re.findall(r"split \([^;]*two\.py:(\d+)\)", s_)}
                self.assertTrue({"4", "5"} <= lines, lines)
                self.assertNotIn("code perf could not name", p.stderr)
                if "could not name" in p.stderr:
                    self.assertIn("code perfpy could not name", p.stderr)
        pid = self.start("busy")
        p = self.attach(pid, "--mode", "sample", "-d", "1.5", "-f", "collapsed",
                        "-o", self.out("attached.txt"))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        # the attach itself (the process's maps, its threads) counts: it
        # took 0.5 s once under a load of 20 on 2 cores ("stopped after
        # 2.0 s", 1.92 s recorded)
        m = re.search(r"perfpy: recording stopped after (\d+\.\d) s\n", p.stderr)
        self.assertIsNotNone(m, p.stderr)
        self.assertGreaterEqual(float(m.group(1)), 1.5, p.stderr)
        self.assertLess(float(m.group(1)), 10, p.stderr)

    @needs_perf
    def test_nothing_written_into_home(self):
        """doctor and record (each trampoline mode, format perf) with HOME an
        empty directory and no perf configuration of the suite's: HOME stays
        empty (doctor's perf record copied kallsyms, the vDSO, libc and ld
        into ~/.debug)."""
        home = self.out("home")
        os.mkdir(home)
        env = {"HOME": home, "PERF_CONFIG": None, "TMPDIR": self.rectmp}
        py = interpreters()[-1]
        p = run([PERFPY, "doctor", "--", py.path], env=env)
        self.assertIn("perf record", p.stdout)
        self.assertEqual(os.listdir(home), [], "doctor")
        for args in (["--mode", "jit", "-f", "collapsed"], ["--mode", "perf", "-f", "collapsed"],
                     ["-f", "perf"]):
            with self.subTest(args=" ".join(args)):
                out = self.out("home-%d" % len(os.listdir(self.tmp)))
                p = run([PERFPY, "record"] + args + ["-o", out, "--", py.path, "-c",
                        "import os; print('pid', os.getpid(), flush=True); "
                        "sum(i * i for i in range(3000000))"], env=env)
                self.own(*[int(x) for x in re.findall(r"^pid (\d+)$", p.stdout, re.M)])
                if args == ["-f", "perf"]:
                    self.own_jitted(out)
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                self.assertEqual(os.listdir(home), [], p.stderr[-1000:])

    @needs_perf
    def test_cut_stacks_start_without_junk(self):
        """numpy_work.py in the default mode on each interpreter that has
        numpy (Debian's: the stripped 3.11 here, 3.13 in sid): a cut stack
        starts "[truncated];<module>", never "[truncated];[unknown];..." (a
        frame in no mapping, junk of the cut: 7 of 844 stacks before, on
        Debian's 3.11)."""
        pys = [py for py in interpreters()
               if run([py.path, "-c", "import numpy"]).returncode == 0]
        if not pys:
            self.assertEqual(run(["/usr/bin/python3", "-c", "import numpy"]).returncode, 0,
                             "Debian's python3 has no numpy: scripts/deps.sh installs "
                             "python3-numpy (the sid root has it too)")
            self.skipTest("no interpreter of this build imports numpy")
        for py in pys:
            with self.subTest(py=py.label):
                out = self.out("numpy-%s.txt" % py.label)
                p = self.record(["-f", "collapsed", "-o", out],
                                [py.path, os.path.join(support.ROOT, "tests", "integration",
                                                       "programs", "numpy_work.py"), "1.5"])
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                stacks = collapsed_counts(out)
                junk = {s_: n for s_, n in stacks.items()
                        if s_.startswith("[truncated];[unknown];")}
                cut = sum(n for s_, n in stacks.items() if s_.startswith("[truncated]"))
                note("%s: %d of %d stacks cut, %d of them starting with junk"
                     % (py.label, cut, sum(stacks.values()), sum(junk.values())))
                self.assertGreater(sum(stacks.values()), 100)
                self.assertEqual(junk, {})

    @needs_perf
    def test_one_function_one_name_or_the_docs_say_why(self):
        """json's JSONDecoder.raw_decode (Python code calling the C scanner)
        in the hook modes and in sample mode, on each interpreter: the
        hook modes name it JSONDecoder.raw_decode on every version; sample
        mode does too from 3.11 (co_qualname), and on 3.8-3.10 it is
        raw_decode, which docs/limitations.md and the man page say, with the
        reason (before: said nowhere)."""
        prog = self.write("decode.py", "import json\n"
                          "doc = json.dumps([{'k%d' % i: list(range(20))} for i in range(3000)])\n"
                          "for _ in range(60):\n    json.loads(doc)\n")
        with open(os.path.join(support.ROOT, "docs", "limitations.md")) as f:
            limitations = " ".join(f.read().split()).lower()
        with open(os.path.join(support.ROOT, "docs", "perfpy.1")) as f:
            man = " ".join(f.read().split())
        modes = ["hook"] + (["sample"] if can_sample() else [])
        for py in interpreters():
            for mode in modes:
                with self.subTest(py=py.label, mode=mode):
                    out = self.out("decode-%s-%s.txt" % (mode, py.label))
                    p = self.record(["--mode", mode, "-f", "collapsed", "-o", out],
                                    [py.path, prog])
                    self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                    names = {m for s_ in collapsed_counts(out)
                             for m in re.findall(r"(?:^|;)([\w.<>]*raw_decode) \(", s_)}
                    self.assertTrue(names, p.stderr[-1500:])
                    if mode == "sample" and py.version_info < (3, 11):
                        self.assertEqual(names, {"raw_decode"})
                        self.assertIn("on cpython 3.8 to 3.10 a function is named by its "
                                      "code object's `co_name` (`raw_decode`, where the "
                                      "trampoline modes say `jsondecoder.raw_decode`)",
                                      limitations)
                        self.assertIn("In sample mode on CPython 3.8 to 3.10 a function is "
                                      "named by its code object's co_name", man)
                    else:
                        self.assertEqual(names, {"JSONDecoder.raw_decode"})

    @needs_perf
    def test_the_wait_after_the_program_is_said_and_timed(self):
        """After the program ends: one line says the profile is being made
        (stderr not a terminal), and the summary (with -v) says how long it
        took and whose time it was, in every mode (before: nothing on the
        terminal for the 10-13 s after a sympy run)."""
        py = interpreters()[-1]
        prog = [py.path, "-c", "import os; print('pid', os.getpid(), flush=True); "
                "sum(i * i for i in range(3000000))"]
        modes = ["jit", "perf"] + (["sample"] if can_sample() else [])
        for mode in modes:
            with self.subTest(mode=mode):
                p = self.record(["--mode", mode, "-f", "collapsed", "-o",
                                 self.out("took-%s.txt" % mode)], prog)
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                if mode == "sample":
                    self.assertRegex(p.stderr, r"perfpy: the profile took \d+\.\d s to make "
                                     r"after the recording ended \(samples were folded as "
                                     r"they came: perfpy-sample's CPU, \d+\.\d s in all\)")
                    continue
                inject = "perf inject --jit, " if mode == "jit" else ""
                self.assertIn("perfpy: making the profile (%sperf script, folding) ...\n"
                              % inject, p.stderr)
                m = re.search(r"perfpy: the profile took ([\d.]+) s to make:(?: perf inject "
                              r"--jit ([\d.]+) s,)? perf script ([\d.]+) s \(perf's CPU "
                              r"([\d.]+) s in all\); perfpy's own CPU ([\d.]+) s\n", p.stderr)
                self.assertTrue(m, p.stderr[-2000:])
                total, inj, script = (float(m.group(1)), float(m.group(2) or 0),
                                      float(m.group(3)))
                self.assertEqual(m.group(2) is not None, mode == "jit")
                self.assertGreater(script, 0)
                self.assertLessEqual(inj + script, total + 0.11)

    @needs_perf
    def test_attach_without_sample_mode_says_what_to_do(self):
        """As user nobody (no BPF, so no sample mode): --mode auto -p PID on
        that user's plain CPython attaches in read mode (no privilege needed
        to read one's own process); with a perfpy that has no read mode
        either (no perfpy-sample), it says in one line, before recording,
        that the process was not started with perfpy and what to do; exit
        1, nothing written. (Before: recorded, then blamed
        perf_event_paranoid or wrote an empty profile.)"""
        import shutil
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to run as another user")
        pys = [py for py in interpreters() if py.path.startswith("/usr/")]
        if not pys:
            self.skipTest("no interpreter outside root's home for another user to run")
        os.chmod(self.tmp, 0o777)
        # a copy without perfpy-sample: no sample mode, no read mode
        root = support.tree_for_others(self.tmp, os.path.relpath(PERFPY, support.ROOT),
                                       os.path.relpath(LIBDIR, support.ROOT), copy=True)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        target = subprocess.Popen(nobody + [pys[-1].path, "-c", BUSY, "busy"],
                                  stdout=subprocess.PIPE, universal_newlines=True)
        self.addCleanup(lambda: (target.kill(), target.wait()))
        pid = int(target.stdout.readline().split()[1])
        out = os.path.join(self.tmp, "nobody.txt")
        t0 = time.time()
        p = run(nobody + [os.path.join(root, os.path.relpath(PERFPY, support.ROOT)), "record",
                          "-p", str(pid), "-d", "4", "-f", "collapsed", "-o", out],
                env={"TMPDIR": self.tmp, "HOME": self.tmp})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertLess(time.time() - t0, 3.5, "refused only after recording")
        self.assertRegex(p.stderr, r"^perfpy: the process %d was not started with perfpy's "
                         r"engine, so perf cannot name its Python functions: .*--mode read "
                         r"-p %d \(no root\)" % (pid, pid))
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertFalse(os.path.exists(out))
        if os.path.exists(SAMPLER):
            # the perfpy that has read mode attaches in it
            os.chmod(self.tmp, 0o777)          # tree_for_others made it 0755
            p = run(nobody + [PERFPY, "record", "-p", str(pid), "-d", "2", "-f", "collapsed",
                              "-o", out], env={"TMPDIR": self.tmp, "HOME": self.tmp})
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            self.assertIn("attaching in read mode", p.stderr.splitlines()[0])
            self.assertTrue(any("spinning (" in s for s in collapsed_counts(out)), p.stderr)
