"""Coexistence: another frame-evaluation hook installed before or after
perfpy (both keep working, in both modes; test_perfmap covers perf mode
with its own program), CPython's own trampoline on 3.12+ (-X perf at start,
sys.activate/deactivate_stack_trampoline while perfpy is on, -X perf_jit
on 3.13 writing the same jit-<pid>.dump path), and subinterpreters
(isolated ones refuse perfpy's single-phase module with CPython's clear
ImportError; legacy ones get a clear RuntimeError from activation; the
main interpreter keeps working, also after they are destroyed).
"""
import os
import unittest

import support
from rel_support import ReliabilityTest, dump_names, engine_env, map_names, program, record, run_group
from support import LIBDIR, ROOT, interpreters

PROG = program("rel_coexist.py")
BACKEND = {"perf": "perf", "jit": "perf_jit"}


class Coexistence(ReliabilityTest):

    def build_otherhook(self, py):
        info = support.run([py.path, "-c", "import sysconfig as s; print(s.get_config_var("
                            "'EXT_SUFFIX'), s.get_config_var('INCLUDEPY'))"], check=True)
        suffix, inc = info.stdout.split()
        out = os.path.join(self.tmp, "hook-" + py.label)
        os.makedirs(out, exist_ok=True)
        support.run(["gcc", "-shared", "-fPIC", "-O1", "-I", os.path.join(ROOT, "src", "python"),
                     "-isystem", inc, program("otherhook.c"), "-o",
                     os.path.join(out, "otherhook" + suffix)], check=True)
        return out

    def functions_named(self, mode, pid):
        return {q for q, f in self.names(mode, pid) if f == PROG}

    def test_another_hook_before_or_after(self):
        hooks = {}

        def one(py, mode):
            if py.path not in hooks:
                hooks[py.path] = self.build_otherhook(py)
            for order in ("hook_before", "hook_after"):
                r = self.run_program(py, mode, [PROG, order, BACKEND[mode]],
                                     env={"PERFPY": None,
                                          "PYTHONPATH": hooks[py.path] + ":" + LIBDIR})
                named = self.functions_named(mode, r.pids[0])
                self.assertTrue({"work_on_1", "work_on_2"} <= named, named)
                self.assertNotIn("work_off_1", named)
                record("coexist/other_hook_" + order[5:], py, mode,
                       "both hooks run (other hook's frame count grows through perfpy's "
                       "trampolines); named while on, not while off",
                       "PYTHONPATH=<otherhook>:build/lib %s %s %s %s"
                       % (py.path, "tests/integration/programs/rel_coexist.py", order,
                          BACKEND[mode]))
        self.for_each(one)

    def test_cpython_own_trampoline_on_312_and_later(self):
        pys = [py for py in interpreters() if py.version_info >= (3, 12)]
        if not pys:
            self.skipTest("no CPython 3.12+ here")

        def one(py, mode):
            r = self.run_program(py, mode, ["-X", "perf", PROG, "cpython", BACKEND[mode]],
                                 env={"PERFPY": None})
            pid = r.pids[0]
            self.assertIn("note: CPython's trampoline on at start: True", r.stdout)
            self.assertIn("sys.activate_stack_trampoline while perfpy is active: "
                          "Trampoline cannot be initialized", r.stdout)
            mine = self.functions_named(mode, pid)
            self.assertTrue({"work_on_1", "work_on_2", "work_on_3"} <= mine, mine)
            cpythons = {q for q, f in map_names(pid) if f == PROG}
            self.assertIn("work_off_1", cpythons)          # CPython's own, while perfpy was off
            if mode == "jit":
                self.assertNotIn("work_off_1", mine)
            record("coexist/cpython_X_perf", py, mode,
                   "perfpy takes over CPython's -X perf (one hook); sys.activate/"
                   "deactivate_stack_trampoline raise CPython's RuntimeError while perfpy "
                   "is on; CPython's own works again after perfpy is off, and back",
                   "PYTHONPATH=build/lib %s -X perf %s cpython %s"
                   % (py.path, "tests/integration/programs/rel_coexist.py", BACKEND[mode]))
        self.for_each(one, pythons=pys)

    def test_cpython_own_perf_jit_dump_is_never_shared(self):
        pys = [py for py in interpreters() if py.version_info >= (3, 13)]
        if not pys:
            self.skipTest("no CPython 3.13+ here")
        code = ("import os, perfpy, sys\nprint('pid', os.getpid(), flush=True)\n"
                "def work_on_1():\n    return 1\nwork_on_1()\n"
                "print('perfpy', perfpy.is_stack_trampoline_active(),"
                " 'cpython', sys.is_stack_trampoline_active())\n")
        for py in pys:
            with self.subTest(py=py.label, dump_dir="/tmp, as CPython's"):
                env = engine_env("jit", self.tmp, {"PERFPY_JITDUMP_DIR": None})
                r = run_group([py.path, "-X", "perf_jit", "-c", code], env=env)
                self.own(*r.pids)
                self.assertEqual(r.returncode, 0, r.why())
                self.assertIn("perfpy False cpython True", r.stdout)
                lines = [l for l in r.stderr.splitlines() if l.startswith("perfpy:")]
                self.assertEqual(len(lines), 1, r.why())
                self.assertIn("another jitdump writer of this process", lines[0])
                self.assertIn("CPython's own perf support stays on", lines[0])
                names = dump_names("/tmp/jit-%d.dump" % r.pids[0])   # CPython's, whole
                self.assertTrue(any(q == "work_on_1" for q, f in names))
                record("coexist/cpython_X_perf_jit_same_dump", py, "jit",
                       "perfpy refuses to share /tmp/jit-<pid>.dump with CPython's -X perf_jit "
                       "(one line); CPython's stays on and its dump is valid",
                       "PYTHONPATH=build/lib PERFPY=jit %s -X perf_jit -c ..." % py.path)
            with self.subTest(py=py.label, dump_dir="its own"):
                r = run_group([py.path, "-X", "perf_jit", "-c", code],
                              env=engine_env("jit", self.tmp))
                self.own(*r.pids)
                self.assertEqual(r.returncode, 0, r.why())
                self.assert_quiet(r)
                self.assertIn("perfpy True cpython False", r.stdout)
                dump_names("/tmp/jit-%d.dump" % r.pids[0])             # CPython's, valid
                mine = {q for q, f in self.names("jit", r.pids[0])}
                self.assertIn("work_on_1", mine)
                record("coexist/cpython_X_perf_jit_own_dir", py, "jit",
                       "perfpy takes over, its dump and CPython's both valid",
                       "PYTHONPATH=build/lib PERFPY=jit PERFPY_JITDUMP_DIR=DIR %s -X perf_jit "
                       "-c ..." % py.path)

    def test_subinterpreters(self):
        def one(py, mode):
            for kind in ("legacy", "isolated"):
                if kind == "isolated" and py.version_info < (3, 12):
                    continue
                for start in ("at start", "not started"):
                    env = {"PERFPY": None} if start == "not started" else {}
                    r = self.run_program(py, mode, [PROG, "subinterpreters", kind, BACKEND[mode]], env=env,
                                         files=start == "at start")
                    self.assertEqual(r.stdout.count("sub: fib 6765"), 3, r.why())
                    if kind == "isolated":
                        self.assertEqual(r.stdout.count("sub: import refused: module perfpy "
                                                        "does not support loading in "
                                                        "subinterpreters"), 3, r.why())
                        result = "import refused by CPython: 'module perfpy does not support " \
                                 "loading in subinterpreters'"
                    else:
                        self.assertEqual(r.stdout.count("sub: active here: False"), 3, r.why())
                        self.assertEqual(r.stdout.count(
                            "sub: activate refused: perfpy: only the main interpreter is "
                            "served"), 3, r.why())
                        result = "activation refused: 'only the main interpreter is served'"
                    record("coexist/subinterpreter_%s_%s" % (kind, start.replace(" ", "_")),
                           py, mode, result + "; their code runs; the main interpreter "
                           "toggles after they are destroyed",
                           "PYTHONPATH=build/lib PERFPY=%s %s %s subinterpreters %s" % (
                               mode if start == "at start" else "", py.path,
                               "tests/integration/programs/rel_coexist.py", kind))
        self.for_each(one)


if __name__ == "__main__":
    unittest.main()
