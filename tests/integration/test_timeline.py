"""Time and threads in the profile: every sample keeps its thread and its
time, so a profile can have a root per thread (--threads), named as
`threading` named the thread where the system knows it (CPython 3.14+ gives
each thread but the main one its Thread.name as OS name; the main thread of
a Python process is MainThread), on every interpreter, in the trampoline
modes and in sample mode."""
import os
import re

from support import interpreters, needs_perf, note
from test_record import PROGRAMS, SAMPLER, RecordTest
from test_report import collapsed_counts

THREADS3 = os.path.join(PROGRAMS, "threads3.py")
FUNCS = {"MainThread": "main_work", "worker-1": "work_one", "worker-2": "work_two"}
ROOT = re.compile(r"^(?:[^;]* \(pid \d+\);)?([^;]*) \(tid (\d+)\)(?:;|$)")


class Threads(RecordTest):

    def roots(self, out):
        """{(name, tid): {function of threads3.py: samples}} of a collapsed
        profile whose stacks start with a thread root; stacks without one
        under (None, None)."""
        found = {}
        for stack, n in collapsed_counts(out).items():
            m = ROOT.match(stack)
            key = (m.group(1), int(m.group(2))) if m else (None, None)
            funcs = found.setdefault(key, {})
            for f in FUNCS.values():
                if re.search(r"(^|;)%s \(" % f, stack):
                    funcs[f] = funcs.get(f, 0) + n
        return found

    def check_roots(self, py, p, out, mode):
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        tids = {m.group(1): int(m.group(2))
                for m in re.finditer(r"^tid (\S+) (\d+)$", p.stdout, re.M)}
        self.assertEqual(sorted(tids), sorted(FUNCS), p.stdout)
        roots = self.roots(out)
        note("%s, %s: %s" % (py.label, mode, ", ".join(
            "%s (tid %s): %s" % (k[0], k[1], sorted(v.items())) for k, v in sorted(
                roots.items(), key=lambda kv: kv[0][1] or 0))))
        self.assertNotIn((None, None), roots, "a stack without a thread root")
        named = py.version_info >= (3, 14)
        for name, func in FUNCS.items():
            want = name if named or name == "MainThread" else None
            found = [k for k in roots if k[1] == tids[name]]
            self.assertEqual(len(found), 1, (name, tids[name], sorted(roots)))
            if want:
                self.assertEqual(found[0][0], want)
            else:   # 3.8-3.13: the OS name is the process's (python3.12)
                self.assertTrue(found[0][0].startswith("python"), found[0])
            funcs = roots[found[0]]
            # the thread's own function under its root, the others' not
            self.assertGreater(funcs.get(func, 0), 20, (name, funcs))
            self.assertEqual(sum(funcs.values()), funcs[func], (name, funcs))

    @needs_perf
    def test_a_root_per_thread_named_as_threading_named_them(self):
        for py in interpreters():
            with self.subTest(py=py.label):
                out = self.out("threads-%s.txt" % py.label)
                p = self.record(["--threads", "-f", "collapsed", "-o", out],
                                [py.path, THREADS3])
                self.check_roots(py, p, out, "default mode")
                pid = int(re.search(r"^pid (\d+)$", p.stdout, re.M).group(1))
                self.assert_nothing_left([pid])

    @needs_perf
    def test_sample_mode_a_root_per_thread(self):
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (clang, bpftool, libbpf-dev)")
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root (or CAP_BPF and CAP_PERFMON)")
        for py in interpreters():
            with self.subTest(py=py.label):
                out = self.out("threads-sample-%s.txt" % py.label)
                p = self.record(["--mode", "sample", "--threads", "-f", "collapsed",
                                 "-o", out], [py.path, THREADS3])
                self.check_roots(py, p, out, "sample mode")

    @needs_perf
    def test_without_threads_no_thread_root(self):
        """The negative twin: the same program without --threads has no
        thread root, and its three functions are there."""
        py = interpreters()[-1]
        out = self.out("nothreads.txt")
        p = self.record(["-f", "collapsed", "-o", out], [py.path, THREADS3, "0.5"])
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        roots = self.roots(out)
        self.assertEqual(list(roots), [(None, None)], sorted(roots))
        self.assertEqual(sorted(roots[(None, None)]), sorted(FUNCS.values()))
