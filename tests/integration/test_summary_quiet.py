"""A quiet summary: by default `perfpy record` says the mode, the totals,
the table and the file written; the accounting notes (children followed,
the processes, switches seen, how long the profile took to make, code
objects freed) come with -v. A loss or gap that moves a figure by 1% or
more still gets one line.

Before: a wall-clock recording printed five "perfpy:" notes before its
table ("the kernel did not report 1 of the switches ... 0.0 ms ...
missing"), and a program started through pyenv's shim a block for each of
its 28 processes.
"""
import os
import re

from support import PERFPY, interpreters, needs_perf, note, run
from test_first_use import can_sample
from test_record import PROGRAMS, RecordTest, SAMPLER

# two threads, one computing and one asleep, joined by the main thread: a
# wall-clock profile with a table of 10 rows
THREADS = """\
import threading, time
def spin():
    t = time.time()
    while time.time() - t < 0.6:
        pass
def nap():
    time.sleep(0.6)
ts = [threading.Thread(target=f) for f in (spin, nap)]
[t.start() for t in ts]
[t.join() for t in ts]
"""

# each line a quiet summary may hold, by its kind
QUIET = [
    ("mode", r"perfpy: (?:recording .* in \w+ mode \(.*|sample mode, the best here: .*|"
             r"read mode: .*|making the profile \(.*\) \.\.\.)$"),
    ("totals", r"perfpy: \d+ samples (?:of [\d.]+ ms )?\(.*\), \d+ lost events, [\d.]+% of "
               r"stacks truncated(?:, [\d.]+ s recorded)?$"),
    # a loss or gap of 1% or more: each of the lines pp_note_said lets through
    ("gap", r"perfpy: .*(?:could not name in|-v says why|many stacks are cut|charged to "
            r"none|samples lost \(the ring|were left out \(--all|taken before their|"
            r"/proc account failed|threads not followed).*$"),
    ("split", r"perfpy: wall time: on-CPU [\d.]+%, off-CPU [\d.]+%: .*$"),
    ("table", r"perfpy: top Python functions by (?:own|total) time.*:$"),
    ("header", r"\s+own\s+total\s.*function$"),
    ("row", r"\s+[\d.]+%\s+[\d.]+%\s+.*$"),
    ("wrote", r"perfpy: wrote .*$"),
]
# what only -v says (one of them at least in each mode's -v run)
NOTES = {
    "sample-idle": r"perfpy: wall clock: the program's threads stopped running \d+ times",
    "sample": r"perfpy: the profile took [\d.]+ s to make after the recording ended",
    "read-idle": r"perfpy: top Python functions by own time",
    "jit": r"perfpy: the profile took [\d.]+ s to make: perf inject --jit",
}
VERBOSE_ONLY = re.compile(r"followed \d+ child|stopped running|the profile took|"
                          r"^perfpy: \d+ processes:|^perfpy: truncated:|code objects were "
                          r"freed|CPython processes seen", re.M)
# 2 mode lines, the totals, 2 gaps, the wall-time split and its table of
# 2 + 10 lines, the file written; a CPU profile: two tables (own, total)
MOST_LINES = {"wall": 19, "cpu": 31}


def kinds(stderr):
    """Each stderr line's kind, or ("?", line) for one a quiet summary
    does not hold."""
    out = []
    for line in stderr.splitlines():
        kind = next((k for k, rx in QUIET if re.match(rx, line)), None)
        out.append(kind or ("?", line))
    return out


class QuietSummary(RecordTest):

    def modes(self):
        """(name, record's options) of each mode this build can record in."""
        got = []
        if can_sample():
            got += [("sample-idle", ["--idle"]), ("sample", ["--mode", "sample"])]
        if os.path.exists(SAMPLER):
            got.append(("read-idle", ["--mode", "read", "--idle"]))
        got.append(("jit", ["--mode", "jit"]))
        return got

    @needs_perf
    def test_the_mode_the_totals_the_table_and_the_file(self):
        """A program of two threads on every interpreter, in every mode
        built here: without -v every stderr line is a mode line, the
        totals, a gap of 1% or more, the wall-time split, a table or the
        file written, at most MOST_LINES of them, none of -v's notes; with
        -v more lines, and the mode's accounting note among them."""
        prog = self.out("two_threads.py")
        with open(prog, "w") as f:
            f.write(THREADS)
        said = []
        for py in interpreters():
            for mode, opts in self.modes():
                with self.subTest(py=py.label, mode=mode):
                    out = self.out("q-%s-%s.txt" % (py.label, mode))
                    p = self.record(opts + ["-f", "collapsed", "-o", out], [py.path, prog])
                    self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                    got = kinds(p.stderr)
                    odd = [k for k in got if isinstance(k, tuple)]
                    self.assertEqual(odd, [], p.stderr)
                    self.assertLessEqual(len(got), MOST_LINES["wall" if "idle" in mode
                                                              else "cpu"], p.stderr)
                    self.assertEqual(got.count("table"), 1 if "idle" in mode else 2,
                                     p.stderr)
                    self.assertIn("totals", got, p.stderr)
                    # jit mode: a note on the stacks cut may follow the file
                    self.assertIn(got[-1], ("wrote", "gap") if mode == "jit" else ("wrote",),
                                  p.stderr)
                    self.assertEqual(got.count("wrote"), 1, p.stderr)
                    self.assertIsNone(VERBOSE_ONLY.search(p.stderr), p.stderr)
                    v = self.record(["-v"] + opts + ["-f", "collapsed", "-o", out],
                                    [py.path, prog])
                    self.assertEqual(v.returncode, 0, v.stderr[-3000:])
                    self.assertRegex(v.stderr, NOTES[mode])
                    said.append("%s %s: %d lines, -v %d" % (
                        py.label, mode, len(got), len(v.stderr.splitlines())))
        note("; ".join(said))

    @needs_perf
    def test_a_loss_of_one_percent_is_one_line(self):
        """busy_threads.py, 8 threads for 2 s at 1999 Hz into a ring of 256
        KiB (stacks off the CPU lost, far more than 1% of the time): without
        -v one line says the time missing and its share (>= 1%), and it
        agrees with the totals' lost events; with -v the notes say each
        kind of loss (the ring's, with the time it stood for)."""
        if not can_sample():
            self.skipTest("sample mode cannot record here (BPF)")
        py = interpreters()[-1]
        out = self.out("lossy.txt")
        env = {"PERFPY_SAMPLE_RING_BYTES": "262144"}
        prog = [py.path, os.path.join(PROGRAMS, "busy_threads.py"), "8", "2"]
        p = self.record(["--idle", "-r", "1999", "-f", "collapsed", "-o", out], prog, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        lost = int(re.search(r", (\d+) lost events", p.stderr).group(1))
        lines = re.findall(r"^perfpy: wall clock: ([\d.]+) ms off the CPU, ([\d.]+)% of the "
                           r"profile's time, have no stack and are missing \(-v says why\)$",
                           p.stderr, re.M)
        note("%s: %d lost events; quiet: %s" % (py.label, lost, lines))
        self.assertGreater(lost, 0, p.stderr)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertGreaterEqual(float(lines[0][1]), 1.0, p.stderr)
        self.assertNotIn("stood for", p.stderr)
        self.assertIsNone(VERBOSE_ONLY.search(p.stderr), p.stderr)
        v = self.record(["-v", "--idle", "-r", "1999", "-f", "collapsed", "-o", out], prog,
                        env=env)
        self.assertEqual(v.returncode, 0, v.stderr[-3000:])
        self.assertRegex(v.stderr, r"the stacks and ends the ring buffer lost stood for")
        self.assertRegex(v.stderr, r"stopped running \d+ times")
        self.assertNotIn("-v says why", v.stderr)

    @needs_perf
    def test_report_quiet_and_verbose(self):
        """`perfpy report` of a lossless file: the totals, table and file
        without -v; with -v how long the profile took to make too."""
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here")
        py = interpreters()[-1]
        prog = self.out("two_threads.py")
        with open(prog, "w") as f:
            f.write(THREADS)
        kept = self.out("two.perfpy.gz")
        mode = ["--idle"] if can_sample() else ["--mode", "read", "--idle"]
        p = self.record(mode + ["-f", "perfpy", "-o", kept], [py.path, prog])
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        q = run([PERFPY, "report", "-f", "collapsed", "-o", self.out("r.txt"), kept])
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertEqual([k for k in kinds(q.stderr) if isinstance(k, tuple)], [], q.stderr)
        self.assertNotIn("the profile took", q.stderr)
        v = run([PERFPY, "report", "-v", "-f", "collapsed", "-o", self.out("r.txt"), kept])
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertIn("the profile took", v.stderr)
