"""Sample mode's stacks as a new user's programs make them: deep chains of
Python calls made through C (numpy, pandas), C extensions imported in the
middle of the run, interpreter start-up. Each stack whole (its Python chain
read to its first frame, whatever the native unwind reached) and each
library's frames named, on every interpreter."""
import os
import re

from support import interpreters, needs_perf, note
from test_record import PROGRAMS, SAMPLER, RecordTest
from test_report import collapsed_counts

PYFRAME = re.compile(r"(^|;)[^;]+ \([^;()]*:\d+\)(;|$)")


class SampleStacks(RecordTest):

    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (clang, bpftool, libbpf-dev)")
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root (or CAP_BPF and CAP_PERFMON)")

    def sample(self, name, program):
        out = self.out(name)
        p = self.record(["--mode", "sample", "-f", "collapsed", "-o", out], program)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return collapsed_counts(out), p

    @needs_perf
    def test_deep_stacks_through_c_and_fresh_imports_are_whole(self):
        """deep_mixed.py: about 200 Python frames with C frames between them
        (sorted's key, map), deeper than the 68 KiB of stack the collector
        copies; fifteen C extensions imported mid-run, each busy at once.
        No stack with a Python frame [truncated] (start-up included), and the samples under
        busy() name their library's frames: at most 3% hold a bare
        [unknown] (stale maps had left 104 of 187 so on 3.12, 19 of 208 on
        Debian's 3.11)."""
        for py in interpreters():
            with self.subTest(py=py.label):
                stacks, p = self.sample("mixed-%s.txt" % py.label,
                                        [py.path, os.path.join(PROGRAMS, "deep_mixed.py"),
                                         "0.5"])
                total = sum(stacks.values())
                cut = sum(n for s_, n in stacks.items() if s_.startswith("[truncated]"))
                deep = sum(n for s_, n in stacks.items()
                           if s_.count("through_c (") >= 90 and s_.startswith("<module> ("))
                busy = {s_: n for s_, n in stacks.items() if "busy (" in s_}
                unknown = sum(n for s_, n in busy.items() if "[unknown]" in s_.split(";"))
                note("%s: %d of %d stacks [truncated], %d whole 90+ levels deep; %d of %d "
                     "samples in fresh C extensions with an unnamed frame"
                     % (py.label, cut, total, deep, unknown, sum(busy.values())))
                self.assertGreater(total, 100, p.stderr[-2000:])
                # the only cut stacks allowed have no Python frame: ld.so
                # running a library's _init before main, code without
                # unwinding data (1 sample in about 16 runs)
                self.assertEqual([s_[:300] for s_ in stacks if s_.startswith("[truncated]")
                                  and PYFRAME.search(s_)], [])
                self.assertLessEqual(cut, 2)
                self.assertGreater(deep * 2, total)
                self.assertGreater(sum(busy.values()), 20)
                self.assertLessEqual(unknown * 100, sum(busy.values()) * 3,
                                     [s_[-300:] for s_ in busy if "[unknown]" in s_][:3])
