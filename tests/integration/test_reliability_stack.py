"""The C stack: with perfpy's hook every Python call is also a C call, so a
recursion the plain interpreter survives could overflow the native stack.
Wherever the plain interpreter survives (same program, same depth, same
thread stack, recursion limit raised to 10**6), perfpy survives too or
raises RecursionError: never a crash. In both modes, on every interpreter:
plain recursion, generators (yield from), coroutines (await), recursion
through C functions, a program that catches RecursionError at the bottom,
in the main thread and in threads with 32 KiB to 1 MiB stacks.
(test_perfmap.NativeStackGuardTest: perf mode, main thread and 512 KiB /
4 MiB threads, plain recursion.)
"""
import collections
import unittest

from rel_support import MODES, ReliabilityTest, STRESS, engine_env, program, record, run_group
from support import interpreters

PROG = program("rel_stack.py")
CASES = [
    ("plain", 100000, None), ("generator", 20000, None), ("coroutine", 20000, None),
    ("c_mediated", 20000, None), ("catch", 0, None),
    ("plain", 5000, 32768), ("plain", 5000, 131072), ("plain", 5000, 1 << 20),
    ("generator", 2000, 65536), ("coroutine", 2000, 65536), ("c_mediated", 2000, 262144),
    ("catch", 0, 65536),
]
# Depths and stacks every interpreter survives plainly (measured: 3.8-3.10
# crash on most cases above, 3.10 on all of them), so that perfpy is
# compared with the plain interpreter on every version, not on 3.11+ alone.
EVERYWHERE = [
    ("plain", 5000, None), ("generator", 3000, None), ("coroutine", 3000, None),
    ("c_mediated", 3000, None), ("plain", 1500, 1 << 20), ("plain", 500, 262144),
    ("generator", 500, 1 << 20), ("coroutine", 500, 1 << 20), ("c_mediated", 500, 1 << 20),
]
CASES += EVERYWHERE
if STRESS:
    CASES += [(k, d, s) for k in ("plain", "generator", "coroutine", "c_mediated")
              for d in (100, 1000, 10000) for s in (32768, 65536, 131072, 262144, 1 << 20)]


def outcome(r):
    lines = r.stdout.strip().splitlines()
    if r.returncode == 0 and lines:
        return lines[-1]
    return "crashes (exit %d)" % r.returncode


class NativeStack(ReliabilityTest):

    def test_never_a_crash_where_the_plain_interpreter_survives(self):
        outcomes = collections.Counter()
        compared = collections.Counter()
        for py in interpreters():
            for kind, depth, stack in CASES:
                args = [PROG, kind, str(depth)] + ([str(stack)] if stack else [])
                plain = run_group([py.path] + args, env={"PYTHONPATH": None, "PERFPY": None},
                                  timeout=300)
                survived = plain.returncode == 0
                for mode in MODES:
                    with self.subTest(py=py.label, mode=mode, kind=kind, depth=depth, stack=stack):
                        r = run_group([py.path] + args, env=engine_env(mode, self.tmp),
                                      timeout=300)
                        self.own(*r.pids)
                        self.assertFalse(r.timed_out, r.why())
                        where = "%s%s" % ("" if kind == "catch" else "%d-" % depth,
                                          "main" if not stack else "%dK" % (stack // 1024))
                        command = "PYTHONPATH=build/lib PERFPY=%s %s %s %s" % (
                            mode, py.path, "tests/integration/programs/rel_stack.py",
                            " ".join(args[1:]))
                        if not survived:
                            self.assertNotIn((kind, depth, stack), EVERYWHERE,
                                             "the plain interpreter crashed (exit %d) where "
                                             "every interpreter should survive: choose "
                                             "another depth" % plain.returncode)
                            outcomes["plain crashed"] += 1
                            record("stack/%s-%s" % (kind, where), py, mode,
                                   "plain crashes (exit %d); perfpy %s" % (
                                       plain.returncode, outcome(r)), command)
                            continue
                        self.assertEqual(r.returncode, 0, "crashed where the plain "
                                         "interpreter survives: " + r.why())
                        last = r.stdout.strip().splitlines()[-1]
                        self.assertRegex(last, r"^(depth \d+|RecursionError)$")
                        if kind != "catch" and last.startswith("depth"):
                            self.assertEqual(last, "depth %d" % depth)
                        self.assertNotIn("perfpy:", r.stderr, r.why())
                        outcomes[last.split()[0]] += 1
                        compared[py.label] += 1
                        record("stack/%s-%s" % (kind, where), py, mode,
                               "plain %s; perfpy %s" % (outcome(plain), last), command)
        # every interpreter was compared, at least where all survive plainly
        for py in interpreters():
            self.assertGreaterEqual(compared[py.label], len(EVERYWHERE) * len(MODES), py.label)
        # the guard was exercised: somewhere perfpy had to refuse a depth
        self.assertGreater(outcomes["RecursionError"], 0, outcomes)
        self.assertGreater(outcomes["depth"], 0, outcomes)


if __name__ == "__main__":
    unittest.main()
