"""Processes: fork (parent and every child name their own functions, in
their own files), many children at once, multiprocessing with fork, spawn
and forkserver, on every interpreter in both modes; and Python
subprocesses started by the program under `perfpy record`, in both modes
(test_record.py covers one child of each kind in the default mode; here
four at once plus a fork, on the oldest and newest interpreter).
"""
import glob
import os
import re
import unittest

import support
from rel_support import MODES, ReliabilityTest, program, record
from support import PERFPY, interpreters, needs_perf

PROG = program("rel_processes.py")


def ours(path):
    """path exists and names this program's functions (pids are reused:
    another test's process may have the same pid by now)."""
    try:
        with open(path) as f:
            return "/rel/procs/" in f.read()
    except FileNotFoundError:
        return False


class Processes(ReliabilityTest):

    def test_many_children_forked_at_once(self):
        def one(py, mode):
            r = self.run_program(py, mode, [PROG, "many_forks"])
            self.assertEqual(len(r.children), 12, r.why())
            parent = {q for q, f in self.names(mode, r.pids[0])}
            self.assertTrue({"common_0", "parent_0"} <= parent)
            self.assertFalse(any(q.startswith("only") for q in parent))
            owners = set()
            for pid in r.children:
                mine = {q for q, f in self.names(mode, pid)}
                only = {q.split("_")[0] for q in mine if q.startswith("only")}
                self.assertEqual(len(only), 1, (pid, only))        # its own, no sibling's
                self.assertEqual(len([q for q in mine if q.startswith("only")]), 30)
                self.assertIn("common_0", mine)                    # inherited, named
                self.assertFalse(any(q.startswith("parent") for q in mine))
                owners |= only
            self.assertEqual(len(owners), 12)
            record("processes/many_forks", py, mode,
                   "12 children: each file names its own 30 functions and the 20 "
                   "inherited ones, no sibling's; the parent's none of theirs",
                   "PYTHONPATH=build/lib PERFPY=%s %s %s many_forks" % (mode, py.path, PROG))
        self.for_each(one)

    def pool(self, method):
        def one(py, mode):
            r = self.run_program(py, mode, [PROG, "pool_" + method], timeout=240)
            self.assertGreaterEqual(len(r.children), 1, r.why())
            tasks = set()
            for pid in r.children:
                tasks |= {q.split("_")[0] for q, f in self.names(mode, pid)
                          if f == "/rel/procs/tasks.py" and q.startswith("task")}
            self.assertEqual(tasks, {"task%d" % n for n in range(40)})
            parent = {q for q, f in self.names(mode, r.pids[0])}
            self.assertFalse(any(q.startswith("task") for q in parent))
            record("processes/pool_" + method, py, mode,
                   "the workers (%s here) name all 40 tasks' functions, each in its own "
                   "file; the parent none" % "1-4",
                   "PYTHONPATH=build/lib PERFPY=%s %s %s pool_%s" % (mode, py.path, PROG, method))
        self.for_each(one)

    def test_multiprocessing_fork(self):
        self.pool("fork")

    def test_multiprocessing_spawn(self):
        self.pool("spawn")

    def test_multiprocessing_forkserver(self):
        self.pool("forkserver")


class SubprocessesUnderRecord(ReliabilityTest):

    @needs_perf
    def test_concurrent_subprocesses_are_profiled_in_both_modes(self):
        pys = interpreters()
        rectmp = os.path.join(self.tmp, "rec")
        os.mkdir(rectmp)
        for py in {pys[0].path: pys[0], pys[-1].path: pys[-1]}.values():
            for mode in MODES:
                with self.subTest(py=py.label, mode=mode):
                    why = mode == "perf" and support.perf_map_mode_names_nothing(py, fp_callgraph=True)
                    if why:
                        self.skipTest(why)
                    out = os.path.join(self.tmp, "sub-%s-%s.txt" % (py.label, mode))
                    cmd = [PERFPY, "record", "--mode", mode, "-r", "999", "-f", "collapsed",
                           "-o", out, "--", py.path, PROG, "subprocesses"]
                    p = support.run(cmd, env={"TMPDIR": rectmp, "PERFPY": None}, timeout=600)
                    pids = [int(x) for x in re.findall(r"^pid (\d+)$", p.stdout, re.M)]
                    self.own(*pids)
                    self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                    self.assertEqual(len(pids), 5, p.stdout)
                    with open(out) as f:
                        text = f.read()
                    found = sorted(set(re.findall(r"(sub\d_work|forked_work)_0 \(", text)))
                    self.assertEqual(found, ["forked_work"] + ["sub%d_work" % i for i in range(4)])
                    self.assertEqual(os.listdir(rectmp), [], "recording directory left")
                    for pid in pids:
                        self.assertFalse(ours("/tmp/perf-%d.map" % pid), "map left behind")
                        self.assertEqual(glob.glob("/tmp/jitted-%d-*.so" % pid), [])
                    record("processes/subprocesses_under_record", py, mode,
                           "4 subprocesses + 1 fork: all 5 named in the profile, "
                           "nothing left in /tmp", " ".join(cmd[:-3]) + " -- python "
                           "tests/integration/programs/rel_processes.py subprocesses")


if __name__ == "__main__":
    unittest.main()
