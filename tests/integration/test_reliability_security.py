"""Security, end to end from Python (unit tests cover the map writer alone):

- the map, the dump and the lines sidecar are created 0600;
- a symlink planted at their path (to a file of another user, to one of
  ours, or dangling), or another user's file sitting there, is refused with
  an OSError that names the path, and its target is untouched (content,
  owner, mode); the same at a forked child's path, where the child goes on
  without perfpy and says so once;
- a map left by a dead process whose pid is reused is started afresh;
- perfpy record and report make their temporary directories with mkdtemp
  (0700, random names) and never run a shell: under strace -f, with shell
  metacharacters in every user-supplied string, no sh/bash/dash is ever
  executed and nothing the strings "ask for" happens; the binaries import
  neither system() nor popen().
"""
import os
import re
import shutil
import subprocess
import unittest

import support
from rel_support import ReliabilityTest, engine_env, program, record, run_group
from support import LIBDIR, PERFPY, interpreters, needs_perf

PROG = program("rel_security.py")
BACKENDS = ("perf", "perf_jit", "lines")
OTHER = 65534


class PlantedFiles(ReliabilityTest):

    def victim(self, owner):
        path = os.path.join(self.tmp, "victim-%d" % owner)
        with open(path, "w") as f:
            f.write("precious data of user %d\n" % owner)
        os.chmod(path, 0o644)
        os.chown(path, owner, owner)
        return path, os.stat(path)

    def env(self):
        lines = os.path.join(self.tmp, "lines")
        os.makedirs(lines, exist_ok=True)
        return engine_env("perf", self.tmp, {"PERFPY": None, "PERFPY_LINES_DIR": lines})

    def assert_untouched(self, path, before):
        after = os.stat(path)
        with open(path) as f:
            self.assertEqual(f.read(), "precious data of user %d\n" % before.st_uid)
        self.assertEqual((after.st_uid, after.st_mode, after.st_size, after.st_mtime_ns),
                         (before.st_uid, before.st_mode, before.st_size, before.st_mtime_ns))

    def test_planted_symlinks_and_foreign_files_are_refused(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to make another user's file")
        for py in interpreters():
            for backend in BACKENDS:
                for kind, owner in (("symlink", OTHER), ("symlink", 0), ("dangling", OTHER),
                                    ("foreign", OTHER)):
                    with self.subTest(py=py.label, backend=backend, kind=kind, owner=owner):
                        target, before = self.victim(owner)
                        if kind == "dangling":
                            os.unlink(target)
                        r = run_group([py.path, PROG, "plant", kind, backend, target],
                                      env=self.env())
                        self.own(*r.pids)
                        self.assertEqual(r.returncode, 0, r.why())
                        m = re.search(r"^refused: (.*)$", r.stdout, re.M)
                        self.assertTrue(m, r.why())
                        self.assertRegex(m.group(1), r"cannot create \S*(perf-|jit-|perfpy-)%d"
                                         % r.pids[0])
                        self.assertIn("ok", r.stdout)
                        if kind == "dangling":
                            self.assertFalse(os.path.exists(target), "created through a symlink")
                        else:
                            self.assert_untouched(target, before)
                        said = re.sub(r"/tmp/perfpy-it-\w+", "DIR", m.group(1))
                        said = re.sub(r"-\d+\.", "-N.", said)
                        record("security/planted_%s%s" % (kind, "_other_user" if owner else ""),
                               py, backend, "OSError: %s; the target untouched (content, "
                               "owner, mode, mtime)%s" % (said.split(" (check")[0],
                                                          "; nothing created" if
                                                          kind == "dangling" else ""),
                               "PYTHONPATH=build/lib %s %s plant %s %s TARGET"
                               % (py.path, "tests/integration/programs/rel_security.py",
                                  kind, backend))

    def test_a_forked_childs_planted_path_is_refused(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to make another user's file")
        for py in interpreters():
            for backend in ("perf", "perf_jit"):
                with self.subTest(py=py.label, backend=backend):
                    target, before = self.victim(OTHER)
                    env = dict(self.env(), PERFPY_LINES_DIR=None)
                    r = run_group([py.path, "-S", PROG, "fork_plant", backend, target], env=env)
                    self.own(*(r.pids + r.children))
                    self.assertEqual(r.returncode, 0, r.why())
                    self.assertIn("child active: False", r.stdout)
                    said = [l for l in r.stderr.splitlines() if l.startswith("perfpy:")]
                    self.assertEqual(len(said), 1, r.why())
                    self.assertIn("this child process's own file", said[0])
                    self.assertIn("Too many levels of symbolic links", said[0])
                    self.assert_untouched(target, before)
                    record("security/planted_symlink_at_fork_child", py, backend,
                           "child refuses, runs on without perfpy, said once: "
                           + re.sub(r"-\d+\.", "-N.", re.sub(r"/tmp/perfpy-it-\w+", "DIR",
                                                             said[0].split(";")[0])),
                           "PYTHONPATH=build/lib %s -S %s fork_plant %s TARGET"
                           % (py.path, "tests/integration/programs/rel_security.py", backend))

    def test_files_are_0600_and_a_stale_map_is_started_afresh(self):
        for py in interpreters():
            for backend in ("perf", "perf_jit"):
                with self.subTest(py=py.label, backend=backend):
                    r = run_group([py.path, PROG, "modes", backend], env=self.env())
                    self.own(*r.pids)
                    self.assertEqual(r.returncode, 0, r.why())
                    modes = re.findall(r"^mode (\S+) (\d+)$", r.stdout, re.M)
                    self.assertEqual(len(modes), 2, r.why())
                    for path, mode in modes:
                        self.assertEqual(mode, "600", path)
                    record("security/file_modes", py, backend,
                           "map or dump, and lines: 0600", "PYTHONPATH=build/lib "
                           "PERFPY_LINES_DIR=DIR %s %s modes %s"
                           % (py.path, "tests/integration/programs/rel_security.py", backend))
            with self.subTest(py=py.label, check="stale map"):
                r = run_group([py.path, PROG, "stale", "perf"], env=self.env())
                self.own(*r.pids)
                self.assertEqual(r.returncode, 0, r.why())
                self.assertIn("stale line kept: False", r.stdout)
                record("security/stale_map_of_reused_pid", py, "perf",
                       "started afresh (no stale names for our addresses)",
                       "PYTHONPATH=build/lib %s %s stale perf"
                       % (py.path, "tests/integration/programs/rel_security.py"))


HOSTILE = "x;touch PWNED-1 $(touch PWNED-2) `touch PWNED-3` | touch PWNED-4 & '\"\n"


class NoShell(ReliabilityTest):

    def test_binaries_import_no_system_or_popen(self):
        mods = [os.path.join(LIBDIR, f) for f in os.listdir(LIBDIR) if f.endswith(".so")]
        for binary in [PERFPY] + mods:
            with self.subTest(binary=os.path.basename(binary)):
                p = support.run(["nm", "-D", "--undefined-only", binary], check=True)
                imported = set(re.findall(r"\bU (\w+)", p.stdout))
                self.assertEqual(imported & {"system", "popen", "wordexp", "posix_spawnp"},
                                 set(), binary)
        record("security/no_system_popen", None, "-", "perfpy and every perfpy*.so import "
               "none of system, popen, wordexp, posix_spawnp", "nm -D --undefined-only "
               "build/perfpy build/lib/perfpy*.so")

    @needs_perf
    def test_no_shell_runs_with_user_strings(self):
        if not shutil.which("strace"):
            self.skipTest("strace is not installed")
        py = interpreters()[-1]
        work = os.path.join(self.tmp, "work")
        os.mkdir(work)
        rec = os.path.join(work, "rec")
        os.mkdir(rec)
        script = os.path.join(work, HOSTILE.replace("\n", "").replace("/", "") + ".py")
        with open(script, "w") as f:
            f.write("import os, sys\nprint('pid', os.getpid())\n"
                    "def spin():\n    return sum(range(1000))\n"
                    "for i in range(3000): spin()\n")
        out = os.path.join(work, HOSTILE.replace("/", "") + ".txt")
        runs = [
            ("record", [PERFPY, "record", "-f", "collapsed", "-o", out, "--keep", "--",
                        py.path, script, HOSTILE]),
            ("report", [PERFPY, "report", "-f", "collapsed", "-o", out + "2", "--title",
                        HOSTILE, None]),
            ("doctor", [PERFPY, "doctor", "--dir", HOSTILE, "--", py.path + HOSTILE]),
            ("run", [PERFPY, "run", "--", py.path, script, HOSTILE]),
        ]
        kept = None
        for name, cmd in runs:
            with self.subTest(command=name):
                if name == "report":
                    self.assertIsNotNone(kept, "record kept no perf.data")
                    cmd[-1] = os.path.join(kept, "perf.data")
                trace = os.path.join(work, "trace-" + name)
                p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve,mkdir,mkdirat",
                                    "-o", trace] + cmd, cwd=work, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, universal_newlines=True,
                                   timeout=600, env=dict(os.environ, TMPDIR=rec, PERFPY="",
                                                         # (LeakSanitizer cannot run
                                                         # under ptrace: make asan)
                                                         PERFPY_TEST_DETECT_LEAKS="0",
                                                         ASAN_OPTIONS="detect_leaks=0"))
                self.own(*[int(x) for x in re.findall(r"^pid (\d+)$", p.stdout, re.M)])
                with open(trace) as f:
                    text = f.read()
                calls = re.findall(r'execve\("([^"]+)", \["[^"]*"(?:, "([^"]*)")?', text)
                execs = [e for e, _ in calls]
                # (under make asan the interpreter is support.py's sh wrapper)
                shells = [e for e, arg in calls if os.path.basename(e) in ("sh", "bash", "dash")
                          and "/sanitizer-python/" not in arg]
                self.assertEqual(shells, [], "a shell was run: %s" % execs)
                self.assertFalse([f for f in os.listdir(work) if f.startswith("PWNED")] +
                                 [f for f in os.listdir(rec) if f.startswith("PWNED")])
                for path, mode in re.findall(r'mkdir(?:at)?\((?:AT_FDCWD, )?"([^"]+)", (0\d+)\)',
                                             text):
                    if "perfpy-" in os.path.basename(path):
                        self.assertRegex(os.path.basename(path), r"-[A-Za-z0-9]{6}$", path)
                        self.assertEqual(mode, "0700", path)
                if name == "record":
                    self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                    m = re.search(r"kept in (\S+)", p.stderr)
                    kept = m.group(1) if m else None
                    self.assertEqual(os.stat(kept).st_mode & 0o777, 0o700)
                    self.assertRegex(os.path.basename(kept), r"^perfpy-record-[A-Za-z0-9]{6}$")
                record("security/no_shell_" + name, py, "-",
                       "%d programs run (%s), none a shell; every temporary directory "
                       "mkdtemp (0700, random suffix); no metacharacter acted on"
                       % (len(execs), ", ".join(sorted({os.path.basename(e) for e in execs
                                                         if ";" not in e}))),
                       "strace -f -e trace=execve,mkdir perfpy %s ... with shell "
                       "metacharacters in every argument" % name)


if __name__ == "__main__":
    unittest.main()
