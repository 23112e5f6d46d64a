"""Perf-map mode on every interpreter: names, files, API, fork, threads,
chaining, startup switches, `perfpy run`, and real `perf record`.

Each check runs on every interpreter in BUILD/pythons.txt (subTest per
interpreter) and comes with its negative where one makes sense.
"""
import collections
import json
import os
import re
import subprocess
import sys
import unittest

import support
from support import (LIBDIR, PERFPY, ROOT, TempDirTest, interpreters, needs_perf,
                     read_map, run)

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
EXAMPLE = os.path.join(ROOT, "examples", "example.py")
LINE = re.compile(r"^[0-9a-f]+ [0-9a-f]+ py::.+:.+$")


def program(name):
    return os.path.join(PROGRAMS, name)


def pids_from(output, word="pid"):
    return [int(m) for m in re.findall(r"^%s (\d+)$" % word, output, re.M)]


def expected_qualnames(path):
    """co_qualname of every code object in path, as CPython 3.11 makes them."""
    ref = [i for i in interpreters() if i.version_info >= (3, 11)]
    ref.sort(key=lambda i: (i.version_info != (3, 11), i.version_info))
    if not ref:
        raise unittest.SkipTest("no CPython 3.11+ to compute reference qualnames")
    p = run([ref[0].path, program("qualnames_of.py"), path], check=True)
    return set(p.stdout.split())


def map_names(pid, filename):
    names = set()
    for line in read_map(pid):
        m = support.MAP_LINE.match(line)
        if m and m.group(4) == filename:
            names.add(m.group(3))
    return names


class PerfMapTest(TempDirTest):

    def run_checked(self, py, args, **kw):
        p = self.perfpy_run(py, args, **kw)
        self.own(*pids_from(p.stdout))
        return p

    def test_qualnames_equal_cpython_311_on_every_version(self):
        path = program("names.py")
        expected = expected_qualnames(path)
        inlined = {q for q in expected if re.search(r"<(list|dict|set)comp>$", q)}
        for py in interpreters():
            with self.subTest(py=py.label):
                p = run([PERFPY, "run", "--", py.path, "-c",
                         "import os, runpy; print('pid', os.getpid(), flush=True);"
                         "runpy.run_path(%r, run_name='__main__')" % path])
                self.own(*pids_from(p.stdout))
                self.assertEqual(p.returncode, 0, p.stderr)
                got = map_names(pids_from(p.stdout)[0], path)
                want = expected - inlined if py.version_info >= (3, 12) else expected
                self.assertEqual(got, want)
                self.assertIn("Shape.area.<locals>.inner", got)

    def test_every_map_line_has_cpython_format(self):
        for py in interpreters():
            with self.subTest(py=py.label):
                p = self.run_checked(py, [program("api.py"), "threads"])
                self.assertEqual(p.returncode, 0, p.stderr)
                lines = read_map(pids_from(p.stdout)[0])
                self.assertGreater(len(lines), 4000)
                bad = [l for l in lines if not LINE.match(l)]
                self.assertEqual(bad, [])
                st = os.stat("/tmp/perf-%d.map" % pids_from(p.stdout)[0])
                self.assertEqual(st.st_mode & 0o777, 0o600)

    def test_without_perfpy_no_map_is_written(self):
        for py in interpreters():
            with self.subTest(py=py.label):
                p = run([py.path, "-c", "import os; print('pid', os.getpid())"])
                pid = pids_from(p.stdout)[0]
                self.assertFalse(os.path.exists("/tmp/perf-%d.map" % pid))

    def test_fork_child_names_its_own_functions(self):
        for py in interpreters():
            for how in ("os.fork", "mp"):
                with self.subTest(py=py.label, how=how):
                    p = self.perfpy_run(py, [program("forking.py")] +
                                        (["mp"] if how == "mp" else []))
                    parent = pids_from(p.stdout, "parent")
                    child = pids_from(p.stdout, "child")
                    self.own(*(parent + child))
                    self.assertEqual(p.returncode, 0, p.stderr)
                    prog = program("forking.py")
                    pnames = map_names(parent[0], prog)
                    cnames = map_names(child[0], prog)
                    self.assertIn("child_only", cnames)
                    self.assertIn("common", cnames)       # inherited entry copied
                    self.assertNotIn("parent_only", cnames)
                    self.assertNotIn("child_only", pnames)
                    self.assertIn("parent_only", pnames)

    def test_api(self):
        for py in interpreters():
            for check in ("invalid", "toggle", "inactive_makes_nothing", "threads",
                          "switch_backend", "generators_and_throw"):
                with self.subTest(py=py.label, check=check):
                    p = run([py.path, program("api.py"), check],
                            env={"PYTHONPATH": LIBDIR, "PERFPY": None,
                                 "PYTHONPERFSUPPORT": None,
                                 "PYTHON_PERF_JIT_SUPPORT": None})
                    self.own(*pids_from(p.stdout))
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    self.assertIn("ok " + check, p.stdout)

    def build_otherhook(self, py):
        info = run([py.path, "-c", "import sysconfig as s; print(s.get_config_var("
                    "'EXT_SUFFIX'), s.get_config_var('INCLUDEPY'))"], check=True)
        suffix, inc = info.stdout.split()
        out = os.path.join(self.tmp, py.label)
        os.makedirs(out, exist_ok=True)
        run(["gcc", "-shared", "-fPIC", "-O1", "-I", os.path.join(ROOT, "src", "python"),
             "-isystem", inc, program("otherhook.c"), "-o",
             os.path.join(out, "otherhook" + suffix)], check=True)
        return out

    def test_chains_to_a_hook_installed_before_or_after(self):
        for py in interpreters():
            hookdir = self.build_otherhook(py)
            for order in ("before", "after"):
                with self.subTest(py=py.label, order=order):
                    p = run([py.path, program("chain.py"), order],
                            env={"PYTHONPATH": hookdir + ":" + LIBDIR, "PERFPY": None})
                    self.own(*pids_from(p.stdout))
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    names = map_names(pids_from(p.stdout)[0], program("chain.py"))
                    self.assertIn("work_one", names)
                    self.assertNotIn("work_two", names)

    def startup_state(self, py, args=(), env=None):
        full = {"PYTHONPATH": LIBDIR, "PERFPY": None, "PYTHONPERFSUPPORT": None,
                "PYTHON_PERF_JIT_SUPPORT": None, "PERFPY_JITDUMP_DIR": self.tmp}
        full.update(env or {})
        p = run([py.path] + list(args) + [program("startup.py")], env=full)
        self.assertEqual(p.returncode, 0, p.stderr)
        state = json.loads(p.stdout.strip().splitlines()[-1])
        self.own(state["pid"])
        state["stderr"] = p.stderr
        state["map"] = os.path.exists("/tmp/perf-%d.map" % state["pid"])
        # perfpy writes its dump where PERFPY_JITDUMP_DIR says; CPython 3.13
        # always in /tmp
        state["dump"] = (os.path.exists(os.path.join(self.tmp, "jit-%d.dump" % state["pid"])) or
                         os.path.exists("/tmp/jit-%d.dump" % state["pid"]))
        return state

    def test_startup_switches_and_precedence(self):
        for py in interpreters():
            v = py.version_info
            own_perf = v >= (3, 12)       # CPython handles perf itself
            with self.subTest(py=py.label, case="no switch"):
                s = self.startup_state(py)
                self.assertEqual((s["perfpy"], s["map"]), (None, False))
            with self.subTest(py=py.label, case="PYTHONPERFSUPPORT=1"):
                s = self.startup_state(py, env={"PYTHONPERFSUPPORT": "1"})
                self.assertTrue(s["map"])
                self.assertEqual(s["perfpy"], None if own_perf else "perf")
                if own_perf:
                    self.assertTrue(s["cpython"])
            with self.subTest(py=py.label, case="PYTHONPERFSUPPORT=0"):
                s = self.startup_state(py, env={"PYTHONPERFSUPPORT": "0"})
                self.assertEqual((s["perfpy"], s["map"]), (None, False))
            with self.subTest(py=py.label, case="-X perf"):
                s = self.startup_state(py, ["-X", "perf"])
                self.assertTrue(s["map"])
                self.assertEqual(s["perfpy"], None if own_perf else "perf")
            with self.subTest(py=py.label, case="PERFPY=perf on any version"):
                s = self.startup_state(py, env={"PERFPY": "perf"})
                self.assertEqual(s["perfpy"], "perf")
                self.assertTrue(s["map"])
                if v >= (3, 12):
                    self.assertFalse(s["cpython"], "one hook, not two")
                    self.assertTrue(s["sys"], "sys answers for perfpy's engine")
            with self.subTest(py=py.label, case="PERFPY=perf beats CPython's own"):
                s = self.startup_state(py, env={"PERFPY": "perf", "PYTHONPERFSUPPORT": "1"})
                self.assertEqual(s["perfpy"], "perf")
                if v >= (3, 12):
                    self.assertFalse(s["cpython"], "one hook, not two")
            with self.subTest(py=py.label, case="bad PERFPY"):
                s = self.startup_state(py, env={"PERFPY": "bogus"})
                self.assertEqual(s["perfpy"], None)
                self.assertIn("PERFPY=bogus", s["stderr"])
            own_jit = v >= (3, 13)        # CPython handles perf_jit itself
            for case, args, env in (("PYTHON_PERF_JIT_SUPPORT=1", [], {"PYTHON_PERF_JIT_SUPPORT": "1"}),
                                    ("-X perf_jit", ["-X", "perf_jit"], {}),
                                    ("PERFPY=jit", [], {"PERFPY": "jit"}),
                                    # CPython 3.13's order: jit beats map, whatever the source
                                    ("-X perf + PYTHON_PERF_JIT_SUPPORT=1", ["-X", "perf"],
                                     {"PYTHON_PERF_JIT_SUPPORT": "1"}),
                                    ("PYTHONPERFSUPPORT=1 + -X perf_jit", ["-X", "perf_jit"],
                                     {"PYTHONPERFSUPPORT": "1"})):
                with self.subTest(py=py.label, case=case):
                    s = self.startup_state(py, args, env)
                    self.assertTrue(s["dump"], s)
                    if case == "PERFPY=jit" or not own_jit:
                        self.assertEqual(s["perfpy"], "perf_jit")
                        if v >= (3, 12):
                            self.assertFalse(s["cpython"], "one hook, not two")
                            self.assertTrue(s["sys"], "sys answers for perfpy's engine")
                    else:
                        self.assertEqual(s["perfpy"], None)
                        self.assertTrue(s["cpython"])
            with self.subTest(py=py.label, case="-X perf beats PYTHONPERFSUPPORT=0"):
                s = self.startup_state(py, ["-X", "perf"], env={"PYTHONPERFSUPPORT": "0"})
                self.assertTrue(s["map"])
                self.assertEqual(s["perfpy"], None if own_perf else "perf")

    def test_api_beats_startup_switch(self):
        for py in interpreters():
            if py.version_info >= (3, 12):
                continue   # there -X perf is CPython's own, and sys's API rules
            with self.subTest(py=py.label):
                p = run([py.path, "-X", "perf", "-c",
                         "import perfpy, os; print('pid', os.getpid());"
                         "assert perfpy.is_stack_trampoline_active();"
                         "perfpy.deactivate_stack_trampoline();"
                         "assert not perfpy.is_stack_trampoline_active(); print('ok')"],
                        env={"PYTHONPATH": LIBDIR, "PERFPY": None})
                self.own(*pids_from(p.stdout))
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("ok", p.stdout)


class NativeStackGuardTest(TempDirTest):
    """With a hook every Python call is a C call: where the plain interpreter
    survives a depth, perfpy survives it or raises RecursionError."""

    # (args, every interpreter survives it plainly): the second kind are
    # depths and stacks where even 3.8-3.10 survive without perfpy (measured:
    # plain 3.10 crashes at 30000 in the main thread and 1500 in 512 KiB,
    # survives 5000 and 600), so every interpreter is really compared.
    CASES = [(["30000"], False), (["200000"], False), (["50000", str(512 * 1024)], False),
             (["50000", str(4 * 1024 * 1024)], False),
             (["5000"], True), (["600", str(512 * 1024)], True),
             (["5000", str(4 * 1024 * 1024)], True)]

    def test_deep_recursion_never_crashes(self):
        compared = collections.Counter()
        for py in interpreters():
            for args, everywhere in self.CASES:
                with self.subTest(py=py.label, args=args):
                    plain = run([py.path, program("deep.py")] + args)
                    if plain.returncode != 0:
                        self.assertFalse(everywhere, "the plain interpreter crashed (exit %d) "
                                         "where every interpreter should survive: choose "
                                         "another depth" % plain.returncode)
                        continue     # the plain interpreter does not survive it either
                    p = self.perfpy_run(py, [program("deep.py")] + args)
                    self.own(*pids_from(p.stdout))
                    self.assertEqual(p.returncode, 0, "crashed: %d %s" % (p.returncode, p.stderr[-500:]))
                    self.assertRegex(p.stdout, r"(depth \d+|RecursionError)\n$")
                    compared[py.label] += 1
        # every interpreter was compared at least where all survive plainly;
        # 3.11+ recurse in Python without C recursion: there the plain
        # interpreter always survives, so the guard is always exercised.
        for py in interpreters():
            want = len(self.CASES) if py.version_info >= (3, 11) else \
                len([c for c in self.CASES if c[1]])
            self.assertGreaterEqual(compared[py.label], want, py.label)


class PerfRecordTest(TempDirTest):

    def record(self, cmd):
        data = os.path.join(self.tmp, "perf.data")
        p = run(["perf", "record", "-q", "--no-bpf-event", "-F", "999", "--call-graph", "dwarf",
                 "-o", data, "--"] + cmd, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = os.path.join(self.tmp, "script.txt")
        with open(out, "w") as f:
            s = subprocess.run(["perf", "script", "-i", data, "-F", "pid,tid,ip,sym"],
                               stdout=f, stderr=subprocess.PIPE, timeout=600)
        self.assertEqual(s.returncode, 0, s.stderr)
        with open(out) as f:
            text = f.read()
        self.own(*{int(m) for m in re.findall(r"^\s*(\d+)/\d+", text, re.M)})
        os.unlink(data)
        return support.perf_script_samples(text)

    @needs_perf
    def test_perf_names_foo_in_at_least_half_the_samples(self):
        if support.SANITIZER == "address":
            self.skipTest("shares of samples are measured by make test: under make asan the "
                          "ASan runtime's interceptors sit in the stacks")
        for py in interpreters():
            with self.subTest(py=py.label):
                samples = self.record([PERFPY, "run", "--mode", "perf", "--", py.path,
                                       EXAMPLE, "5000000"])
                py_samples = [s for s in samples if s[1]]
                with_foo = [s for s in py_samples
                            if any(support.strip_offset(f).startswith("py::foo:" + EXAMPLE)
                                   for f in s[1])]
                if support.perf_unwinder() == "libdw":
                    # libdw reports no frame in anonymous memory (docs/modes.md)
                    self.assertGreater(len(samples), 50)
                    self.assertEqual(with_foo, [], "libdw named foo: docs/modes.md says it cannot")
                    continue
                self.assertGreater(len(py_samples), 50)
                self.assertGreaterEqual(len(with_foo) / len(py_samples), 0.5,
                                        "%d of %d" % (len(with_foo), len(py_samples)))

    @needs_perf
    def test_without_perfpy_perf_sees_no_python_function(self):
        for py in interpreters():
            with self.subTest(py=py.label):
                old = os.environ.pop("PYTHONPERFSUPPORT", None)
                try:
                    samples = self.record([py.path, EXAMPLE, "2000000"])
                finally:
                    if old is not None:
                        os.environ["PYTHONPERFSUPPORT"] = old
                self.assertGreater(len(samples), 30)
                self.assertFalse(any(f.startswith("py::") for s in samples for f in s[1]))


class RunCommandTest(TempDirTest):

    def test_exit_status_is_passed_on(self):
        py = interpreters()[0]
        for code in (0, 3, 77):
            p = run([PERFPY, "run", "--", py.path, "-c",
                     "import os; print('pid', os.getpid()); raise SystemExit(%d)" % code])
            self.own(*pids_from(p.stdout))
            self.assertEqual(p.returncode, code)

    def test_program_inside_can_import_perfpy(self):
        for py in interpreters():
            with self.subTest(py=py.label):
                p = run([PERFPY, "run", "--", py.path, "-c",
                         "import perfpy, os; print('pid', os.getpid());"
                         "print(perfpy.is_stack_trampoline_active())"])
                self.own(*pids_from(p.stdout))
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertTrue(p.stdout.strip().endswith("True"), p.stdout)

    def test_help_and_version(self):
        p = run([PERFPY, "--help"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("run", p.stdout)
        p = run([PERFPY, "run", "--help"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("--mode", p.stdout)
        self.assertIn("default", p.stdout)
        p = run([PERFPY, "--version"])
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"^perfpy \d+\.\d+\.\d+\n$")

    def test_usage_errors_exit_2_with_a_message(self):
        for args, words in ((["nosuch"], "unknown command"),
                            (["run"], "no program"),
                            (["run", "--mode", "fast", "--", "python3"], "--mode must be"),
                            (["run", "--bogus"], "unknown option"),
                            ([], "usage")):
            with self.subTest(args=args):
                p = run([PERFPY] + args)
                self.assertEqual(p.returncode, 2)
                self.assertIn(words, p.stderr)

    def test_missing_program_is_named(self):
        p = run([PERFPY, "run", "--", "/nonexistent/python9.9", "x.py"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("/nonexistent/python9.9", p.stderr)

    def test_unsupported_interpreter_is_told(self):
        old = [v for v in ("3.7.16", "3.6.15")
               if os.path.exists(os.path.expanduser("~/.pyenv/versions/%s/bin/python3" % v))]
        if not old:
            self.skipTest("no CPython older than 3.8 on this machine")
        py = os.path.expanduser("~/.pyenv/versions/%s/bin/python3" % old[0])
        p = run([PERFPY, "run", "--", py, "-c", "print('still runs')"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("still runs", p.stdout)
        self.assertIn("no perfpy module for Python 3.", p.stderr)


def same_build():
    """make arguments that keep the build under test as it is."""
    return ["BUILD=" + support.BUILD,
            "PYTHONS=" + " ".join(i.path for i in support.interpreters())]


class InstallTest(TempDirTest):

    def test_make_install_into_a_venv(self):
        if support.SANITIZER == "address":
            self.skipTest("under make asan the venv's interpreter would need the ASan "
                          "runtime preloaded (support.py wraps only the build's interpreters)")
        for py in interpreters():
            with self.subTest(py=py.label):
                venv = os.path.join(self.tmp, "venv-" + py.label)
                run([py.path, "-m", "venv", "--without-pip", venv], check=True)
                vpy = os.path.join(venv, "bin", "python")
                p = run(["make", "-s", "-C", ROOT, "install", "PYTHON=" + vpy] +
                        same_build(), timeout=600)
                self.addCleanup(run, ["make", "-s", "-C", ROOT, "uninstall", "PYTHON=" + vpy]
                                + same_build())
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(venv, p.stdout, "installed into the venv, not the base")
                code = "import os; print('pid', os.getpid())"
                env = {"PERFPY": None, "PYTHONPATH": None, "PYTHONPERFSUPPORT": None}
                q = run([vpy, "-c", code], env=env, check=True)
                self.assertFalse(os.path.exists("/tmp/perf-%d.map" % pids_from(q.stdout)[0]))
                q = run([vpy, "-X", "perf", "-c", code], env=env, check=True)
                self.own(*pids_from(q.stdout))
                self.assertTrue(os.path.exists("/tmp/perf-%d.map" % pids_from(q.stdout)[0]))
                q = run([vpy, "-c", code], env=dict(env, PERFPY="perf"), check=True)
                self.own(*pids_from(q.stdout))
                self.assertTrue(os.path.exists("/tmp/perf-%d.map" % pids_from(q.stdout)[0]))
                # The base interpreter is untouched by a venv install.
                q = run([py.path, "-X", "perf", "-c", code + "; import sys; "
                         "print('perfpy' in sys.modules)"], env=env, check=True)
                self.own(*pids_from(q.stdout))
                self.assertIn("False", q.stdout)
                p = run(["make", "-s", "-C", ROOT, "uninstall", "PYTHON=" + vpy] +
                        same_build(), timeout=600)
                self.assertEqual(p.returncode, 0, p.stderr)
                q = run([vpy, "-c", code], env=dict(env, PERFPY="perf"), check=True)
                self.assertFalse(os.path.exists("/tmp/perf-%d.map" % pids_from(q.stdout)[0]))


if __name__ == "__main__":
    unittest.main()
