"""`perfpy doctor` on this machine, with perf hidden from PATH, with perf
refused by the kernel (seccomp in this process tree, as on a strict system
or in a locked-down container), as a user without kernel access, and with a
missing or noexec dump directory. Nothing machine-wide is changed: the
noexec directory is a tmpfs in a private mount namespace."""
import os
import re
import shutil
import subprocess
import unittest

from support import (LIBDIR, PERFPY, ROOT, TempDirTest, interpreters, needs_perf, run,
                     tree_for_others)

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


class DoctorTest(TempDirTest):

    def python(self):
        return interpreters()[-1].path

    def python_for_others(self):
        """An interpreter another user can run (pyenv's live under /root)."""
        for py in interpreters():
            if py.path.startswith("/usr/"):
                return py.path
        self.skipTest("no interpreter outside root's home for another user to run")

    def perfpy_for_others(self):
        """The built perfpy, where another user can run it (a copy with its
        module directory when the clone is out of their reach)."""
        sampler = os.path.join(os.path.dirname(PERFPY), "perfpy-sample")
        parts = [os.path.relpath(p, ROOT) for p in (PERFPY, sampler, LIBDIR) if os.path.exists(p)]
        root = tree_for_others(self.tmp, *parts)
        return os.path.join(root, os.path.relpath(PERFPY, ROOT))

    def perf_level(self):
        """What doctor calls perf's own problems: a warning where
        perfpy-sample is beside perfpy (sample and read modes record
        without perf), else a failure."""
        if os.path.exists(os.path.join(os.path.dirname(PERFPY), "perfpy-sample")):
            return "warn", "recording will work"
        return "FAIL", "recording will not work"

    def deny_perf(self):
        exe = os.path.join(self.tmp, "deny_perf")
        run(["gcc", "-O1", os.path.join(PROGRAMS, "deny_perf.c"), "-o", exe], check=True)
        return exe

    @needs_perf
    def test_reports_recording_works_here(self):
        p = run([PERFPY, "doctor", "--", self.python()])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("recording will work", p.stdout)
        self.assertRegex(p.stdout, r"ok\s+perf record")
        self.assertRegex(p.stdout, r"ok\s+perfpy module")

    def test_stripped_interpreter_is_a_warning_with_the_way_to_names(self):
        """An interpreter stripped of its symbol table (a `strip` copy of
        one that keeps it) is a warning naming the debug-symbol path perf
        would read and the package; twin: the original is "ok symbols"."""
        real = interpreters()[-1].real
        if shutil.which("strip") is None:
            self.skipTest("no strip (binutils) here")
        with open(real, "rb") as f:
            if b"Py_BytesMain" not in f.read(1 << 20) and os.path.getsize(real) < 1 << 20:
                self.skipTest("%s is a launcher, not the interpreter" % real)
        p = run([PERFPY, "doctor", "--", real])
        line = [l for l in p.stdout.splitlines() if " symbols " in l]
        self.assertEqual(len(line), 1, p.stdout)
        if line[0].startswith("warn"):
            self.skipTest("%s itself is stripped here: %s" % (real, line[0]))
        self.assertRegex(line[0], r"^ok\s+symbols\s+.* (keeps its symbol table|debug symbols "
                         r"are installed)")
        copy = os.path.join(self.tmp, os.path.basename(real))
        # without its build id too: where its debug symbols would be found
        # (installed in the sid world) is then unknown
        run(["strip", "--remove-section=.note.gnu.build-id", "-o", copy, real], check=True)
        os.chmod(copy, 0o755)
        p = run([PERFPY, "doctor", "--", copy])
        self.assertIn("1 warning", p.stdout)
        self.assertRegex(p.stdout, r"warn\s+symbols\s+%s is stripped \(no \.symtab, no "
                         r"build id to find debug symbols by\).*python3\.\d+-dbg"
                         % re.escape(copy))

    def test_perf_missing_names_the_fix(self):
        """perf not on PATH: named with its package; a failure only where
        nothing records without it. With perfpy-sample (this build), a
        warning: sample and read modes record without perf; its twin, a
        copy of perfpy without perfpy-sample, fails."""
        level, verdict = self.perf_level()
        p = run([PERFPY, "doctor", "--", self.python()],
                env={"PATH": "/nonexistent", "PERF": None})
        self.assertEqual(p.returncode, 1 if level == "FAIL" else 0, p.stdout)
        self.assertRegex(p.stdout, r"%s\s+perf\s+not found" % level)
        self.assertIn("apt-get install linux-perf", p.stdout)
        self.assertIn(verdict, p.stdout)
        self.assertEqual(p.stderr, "", "one message, in the report")
        if level == "warn":
            self.assertIn("sample and read modes do not", p.stdout)
            bare = os.path.join(self.tmp, "bare")
            os.mkdir(bare)
            os.chmod(self.tmp, 0o755)
            root = tree_for_others(bare, os.path.relpath(PERFPY, ROOT),
                                   os.path.relpath(LIBDIR, ROOT), copy=True)
            p = run([os.path.join(root, os.path.relpath(PERFPY, ROOT)), "doctor", "--",
                     self.python()], env={"PATH": "/nonexistent", "PERF": None})
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertRegex(p.stdout, r"FAIL\s+perf\s+not found")
            self.assertIn("recording will not work", p.stdout)

    def test_perf_variable_pointing_nowhere_names_it(self):
        level, verdict = self.perf_level()
        p = run([PERFPY, "doctor", "--", self.python()], env={"PERF": "/nonexistent/perf"})
        self.assertEqual(p.returncode, 1 if level == "FAIL" else 0, p.stdout)
        self.assertRegex(p.stdout, r"%s\s+perf\s+PERF=/nonexistent/perf is not an executable"
                         % level)

    @needs_perf
    def test_perf_refused_names_the_fix(self):
        level, verdict = self.perf_level()
        p = run([self.deny_perf(), PERFPY, "doctor", "--", self.python()])
        self.assertEqual(p.returncode, 1 if level == "FAIL" else 0, p.stdout)
        self.assertRegex(p.stdout, r"%s\s+perf record\s+not permitted" % level)
        self.assertIn(verdict, p.stdout)
        self.assertIn("perf_event_paranoid", p.stdout)
        if os.geteuid() == 0:   # refused to root: a container's policy, and its fix
            self.assertIn("seccomp", p.stdout)
            self.assertIn("--cap-add PERFMON", p.stdout)
        self.assertEqual(p.stderr, "", "doctor speaks on stdout only")

    def as_nobody_refused(self, paranoid=None):
        """doctor run as user nobody with perf_event_open refused; with
        paranoid, /proc/sys/kernel/perf_event_paranoid reads that value (a
        bind mount in a private mount namespace: the kernel's setting is
        untouched)."""
        if os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("unshare"):
            self.skipTest("needs root, setpriv and unshare to run as another user")
        os.chmod(self.tmp, 0o755)
        deny = self.deny_perf()
        os.chmod(deny, 0o755)
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
               deny, self.perfpy_for_others(), "doctor", "--", self.python_for_others()]
        if paranoid is not None:
            fake = self.write("paranoid", "%d\n" % paranoid)
            os.chmod(fake, 0o644)
            cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   'mount --bind "$0" /proc/sys/kernel/perf_event_paranoid && exec "$@"',
                   fake] + cmd
        return run(cmd)

    @needs_perf
    def test_perf_refused_to_a_user_on_a_strict_system_says_what_to_set(self):
        level, verdict = self.perf_level()
        p = self.as_nobody_refused(paranoid=3)
        self.assertEqual(p.returncode, 1 if level == "FAIL" else 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, level + r"\s+perf record\s+not permitted: "
                                   r"kernel.perf_event_paranoid=3 lets only root use perf")
        self.assertIn("sudo sysctl kernel.perf_event_paranoid=2", p.stdout)
        self.assertIn("Run as root", p.stdout)

    @needs_perf
    def test_perf_refused_to_a_user_by_a_sandbox_says_so(self):
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            if int(f.read()) > 2:
                self.skipTest("this system refuses perf to users anyway")
        level, verdict = self.perf_level()
        p = self.as_nobody_refused()
        self.assertEqual(p.returncode, 1 if level == "FAIL" else 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, level + r"\s+perf record\s+not permitted")
        self.assertIn("seccomp", p.stdout)
        self.assertNotIn("sysctl kernel.perf_event_paranoid=2", p.stdout,
                         "the setting already allows it: do not send the user there")

    @needs_perf
    def test_user_without_kernel_access_gets_a_warning_not_a_failure(self):
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to run as another user")
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            if int(f.read()) < 2:
                self.skipTest("this system lets users profile the kernel")
        p = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 self.perfpy_for_others(), "doctor", "--", self.python_for_others()])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"warn\s+kernel frames\s+not permitted")

    def test_sample_mode_can_sample_here_as_root(self):
        """Root, with perfpy-sample built: its BPF program loads and
        attaches (asked of perfpy-sample --check)."""
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root here")
        if not os.path.exists(os.path.join(os.path.dirname(PERFPY), "perfpy-sample")):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        p = run([PERFPY, "doctor", "--", self.python()])
        self.assertRegex(p.stdout, r"ok\s+sample mode\s+the BPF program loads and attaches")

    def test_sample_mode_without_privileges_or_not_built_is_a_warning(self):
        """As user nobody: a warning naming what sample mode needs and that
        the trampoline modes work without it, not a failure; without
        perfpy-sample beside perfpy: a warning saying how to build it, or
        what its build lacked when the build said."""
        sampler = os.path.join(os.path.dirname(PERFPY), "perfpy-sample")
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to run as another user")
        if not os.path.exists(sampler):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        root = tree_for_others(self.tmp, os.path.relpath(PERFPY, ROOT),
                               os.path.relpath(sampler, ROOT), os.path.relpath(LIBDIR, ROOT))
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        p = run(nobody + [os.path.join(root, os.path.relpath(PERFPY, ROOT)), "doctor", "--",
                          self.python_for_others()])
        self.assertRegex(p.stdout, r"warn\s+sample mode\s+cannot sample here \(loading the "
                                   r"BPF program: Operation not permitted\)")
        self.assertIn("CAP_BPF and CAP_PERFMON", p.stdout)
        self.assertIn("the trampoline modes work without them", p.stdout)
        self.assertNotRegex(p.stdout, r"FAIL\s+sample mode")
        # a copy without perfpy-sample (never the clone's own build)
        bare = os.path.join(self.tmp, "bare")
        os.mkdir(bare)
        os.chmod(self.tmp, 0o755)
        root = tree_for_others(bare, os.path.relpath(PERFPY, ROOT),
                               os.path.relpath(LIBDIR, ROOT), copy=True)
        self.assertFalse(os.path.exists(os.path.join(root, os.path.relpath(sampler, ROOT))))
        p = run(nobody + [os.path.join(root, os.path.relpath(PERFPY, ROOT)), "doctor", "--",
                          self.python_for_others()])
        self.assertRegex(p.stdout, r"warn\s+sample mode\s+sample mode is not in this perfpy")
        self.assertIn("build perfpy again from its source (pip install ., or make), which "
                      "names what to install", p.stdout)
        # a build that said why (the Makefile's sample-missing, as an
        # opt-out build that lacked libdw writes it): that, and only that
        with open(os.path.join(root, os.path.relpath(LIBDIR, ROOT), "sample-missing"), "w") as f:
            f.write("built with PERFPY_NO_SAMPLE=1\nmissing: libdw\n"
                    "  Debian/Ubuntu: apt-get install -y libdw-dev\n"
                    "  Fedora:        dnf install -y elfutils-devel\n")
        p = run(nobody + [os.path.join(root, os.path.relpath(PERFPY, ROOT)), "doctor", "--",
                          self.python_for_others()])
        self.assertIn("sample mode is not in this perfpy: built with PERFPY_NO_SAMPLE=1; "
                      "missing: libdw; Debian/Ubuntu: apt-get install -y libdw-dev; Fedora: "
                      "dnf install -y elfutils-devel. To have it, install what is named, then "
                      "build perfpy again from its source, without PERFPY_NO_SAMPLE: pip "
                      "install . (or make)", p.stdout)
        self.assertNotIn("libbpf", p.stdout)

    def test_missing_dump_directory(self):
        missing = os.path.join(self.tmp, "no-such-dir")
        p = run([PERFPY, "doctor", "--dir", missing, "--", self.python()])
        self.assertEqual(p.returncode, 1)
        self.assertIn("%s does not exist" % missing, p.stdout)

    def test_noexec_dump_directory(self):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("needs root and unshare for a private mount namespace")
        mnt = os.path.join(self.tmp, "noexec")
        os.mkdir(mnt)
        p = run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                 'mount -t tmpfs -o noexec,size=1m none "$1" && "$2" doctor --dir "$1" -- "$3"',
                 "sh", mnt, PERFPY, self.python()])
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("noexec", p.stdout)

    def test_unsupported_interpreter(self):
        old = [v for v in ("2.7.18", "3.6.15", "3.7.16")
               if os.path.exists(os.path.expanduser("~/.pyenv/versions/%s/bin/python" % v))]
        if not old:
            self.skipTest("no CPython older than 3.8 here")
        for v in old:
            with self.subTest(python=v):
                p = run([PERFPY, "doctor", "--",
                         os.path.expanduser("~/.pyenv/versions/%s/bin/python" % v)])
                self.assertEqual(p.returncode, 1)
                self.assertIn("CPython %s is not supported: perfpy needs CPython 3.8 or newer"
                              % v[:3], p.stdout)

    def test_help_and_usage(self):
        p = run([PERFPY, "doctor", "--help"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("exit status", p.stdout)
        p = run([PERFPY, "doctor", "--bogus"])
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
