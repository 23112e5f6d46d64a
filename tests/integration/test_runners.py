"""The two runners count what they run, each outcome once: a test that
cannot fail is a defect, and so is a runner that turns a failure into a
pass. Each is run here on tests of this file's making whose outcomes are
known (a pass, a failure, an error, an error in setUp and in setUpClass, a
skip, subtests; a C test that fails, crashes, skips), and its closing line
is compared with them."""
import os
import shutil
import subprocess
import sys

from support import ROOT, TempDirTest, run

HERE = os.path.dirname(os.path.abspath(__file__))

FAKE_PY = '''import unittest

class Outcomes(unittest.TestCase):
    def test_passes(self):
        pass

    def test_fails(self):
        self.assertEqual(1, 2)

    def test_raises(self):
        raise RuntimeError("an error, not a failed assertion")

    def test_skips(self):
        self.skipTest("cannot run here")

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 2)


class SetUpRaises(unittest.TestCase):
    def setUp(self):
        raise RuntimeError("setUp")

    def test_never_runs(self):
        pass


class SetUpClassRaises(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("setUpClass")

    def test_never_runs(self):
        pass
'''

LEAKS = '''import os
import unittest

class Leaks(unittest.TestCase):
    def test_cleans(self):
        self.addCleanup(os.unlink, "%(path)s")
        open("%(path)s", "w").close()

    def test_leaves(self):
        open("%(path)s", "w").close()
'''

FAKE_C = '''#include "test.h"
#include <signal.h>

TEST(fake_passes) { ASSERT_EQ_INT(1, 1); }
TEST(fake_fails) { ASSERT_EQ_INT(1, 2); }
TEST(fake_crashes) { raise(SIGSEGV); }
TEST(fake_skips) { TEST_SKIP("cannot run here"); }
'''


class Runners(TempDirTest):

    def integration(self, text, *args, env=None):
        where = os.path.join(self.tmp, "it%d" % len(os.listdir(self.tmp)))
        os.mkdir(where)
        with open(os.path.join(where, "test_fake.py"), "w") as f:
            f.write(text)
        return run([sys.executable, os.path.join(HERE, "run.py"), "--tests", where, "-j", "1"]
                   + list(args), env=env)

    def test_integration_runner_counts_errors_as_failures(self):
        """passed: test_passes and two subtests; failed: test_fails, the
        error, the third subtest, setUp's and setUpClass's errors; skipped
        one. (Mutation: addError not counted -> "3 passed, 2 failed".)"""
        p = self.integration(FAKE_PY)
        self.assertEqual(p.stdout.splitlines()[-1], "3 passed, 5 failed, 1 skipped", p.stdout)
        self.assertEqual(p.returncode, 1)
        self.assertIn("ERROR test_fake.SetUpRaises.test_never_runs", p.stdout)
        # the twin: only what passes, exit 0
        p = self.integration(FAKE_PY, "-k", "test_passes")
        self.assertEqual(p.stdout.splitlines()[-1], "1 passed, 0 failed, 0 skipped", p.stdout)
        self.assertEqual(p.returncode, 0)
        # a pattern that matches nothing is a failure
        p = self.integration(FAKE_PY, "-k", "no_such_test")
        self.assertEqual(p.stdout.splitlines()[-1], "0 passed, 1 failed, 0 skipped", p.stdout)
        self.assertEqual(p.returncode, 1)

    def test_integration_runner_names_the_test_that_left_files(self):
        """A test that leaves a jitted ELF of an ended process in /tmp is
        named after it (the stage's /tmp verdict alone named 73 files of
        pid 28572 and no test); its twin, which removes its file in
        tearDown, is not. (Mutation: stopTest's check skipped -> red: no
        "after" line.)"""
        dead = subprocess.Popen(["true"])
        dead.wait()
        # a place of its own: the suite's other modules, running beside
        # this one, make files of their processes in /tmp
        watched = os.path.join(self.tmp, "watched")
        os.mkdir(watched)
        path = os.path.join(watched, "jitted-%d-0.so" % dead.pid)
        text = LEAKS % {"path": path}
        p = self.integration(text, env={"PERFPY_TEST_LEFTOVER_DIRS": watched})
        self.assertEqual(p.stdout.splitlines()[-1], "2 passed, 0 failed, 0 skipped", p.stdout)
        self.assertIn("(after test_fake.Leaks.test_leaves: 1 new files of ended processes in "
                      "/tmp, e.g. %s)" % path, p.stdout)
        os.unlink(path)
        self.assertNotIn("test_cleans", p.stdout.split("(after", 1)[-1].split("\n")[0])
        self.assertEqual(p.stdout.count("(after "), 1, p.stdout)

    def test_unit_runner_counts_skips_as_skips(self):
        """tests/unit/runner.c on four tests: one passes, one fails, one
        crashes, one calls TEST_SKIP: "1 passed, 2 failed, 1 skipped", exit
        1, the skip's reason printed. (Mutation: TEST_SKIP's exit counted as
        a pass -> "2 passed, 2 failed, 0 skipped".)"""
        cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
        self.assertTrue(cc, "no C compiler: the unit tests could not have been built either")
        src = os.path.join(self.tmp, "fake.c")
        with open(src, "w") as f:
            f.write(FAKE_C)
        exe = os.path.join(self.tmp, "fake-tests")
        unit = os.path.join(ROOT, "tests", "unit")
        run([cc, "-std=gnu11", "-D_GNU_SOURCE", "-I", unit, os.path.join(unit, "runner.c"),
             src, "-o", exe], check=True)
        p = run([exe])
        self.assertEqual(p.stdout.splitlines()[-1], "1 passed, 2 failed, 1 skipped", p.stdout)
        self.assertEqual(p.returncode, 1)
        self.assertIn("skipped: cannot run here", p.stdout)
        self.assertRegex(p.stdout, r"FAIL  fake_crashes .*signal 11")
        p = run([exe, "fake_passes"])
        self.assertEqual(p.stdout.splitlines()[-1], "1 passed, 0 failed, 0 skipped", p.stdout)
        self.assertEqual(p.returncode, 0)
