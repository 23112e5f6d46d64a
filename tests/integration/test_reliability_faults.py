"""Resource faults: /tmp (perf mode) or the dump directory (jit mode)
missing, read-only or full. The program runs to its normal end with its
normal output (the same as without perfpy, a forked child included), and
perfpy says once what it could not write; a full disk leaves whole lines
and records. The faults are made in a private mount namespace (unshare
--mount --propagation private, as root): a tmpfs over /tmp or over the dump
directory, read-only or 64 KiB; "missing /tmp" is a chroot into a tree of
bind mounts without /tmp. Nothing outside the namespace changes. A clone
that lies in /tmp itself stays reachable: the tmpfs is made beside, the
clone bind-mounted into it at its own path, and only then is it made
read-only and moved over /tmp; in the chroot the clone is at /perfpy-clone.

Resource use: memory and descriptors stay flat over 20,000 toggles
(100,000 under make stress), and over 20,000 new functions (100,000) perfpy
adds no more than its arena slot per function, plus measurement noise:
slot + 128 bytes (slot + 32 under make stress).
"""
import os
import re
import shutil
import unittest

from rel_support import (STRESS, ReliabilityTest, engine_env, program,
                         record, run_group)
from support import LIBDIR, PERFPY, ROOT, interpreters, tmpfs_over

PROG = program("rel_faults.py")
WORK = "20000"
MEASURE_N = 100000 if STRESS else 20000
SLACK = 32 if STRESS else 128


def root_and_unshare():
    return os.geteuid() == 0 and shutil.which("unshare") and shutil.which("chroot")


# Where the clone is in the chroot without /tmp: not at its own path, which
# may be in /tmp (a clone in /tmp would bring /tmp back).
CHROOT_CLONE = "/perfpy-clone"


def chroot_setup(top):
    """Shell that builds a root without /tmp at top and chroots into it."""
    binds = [(b, b) for b in ("/usr", "/etc", "/dev", "/proc", "/root") if os.path.isdir(b)]
    binds.append((ROOT, CHROOT_CLONE))
    if not (ROOT + "/").startswith("/tmp/"):
        # at its own path too: what names it there (make asan's interpreter
        # wrapper, its LeakSanitizer suppressions) is found as outside
        binds.append((ROOT, ROOT))
    lines = ['R="%s"' % top, 'mkdir -p "$R"', 'mount -t tmpfs none "$R"']
    for b, at in binds:
        lines.append('mkdir -p "$R%s" && mount --rbind "%s" "$R%s"' % (at, b, at))
    for link in ("bin", "sbin", "lib", "lib64"):
        if os.path.islink("/" + link):
            lines.append('ln -s "%s" "$R/%s"' % (os.readlink("/" + link), link))
    return " && ".join(lines)


class ResourceFaults(ReliabilityTest):

    def setUp(self):
        if not root_and_unshare():      # (before: tearDown does not run after a skip here)
            self.skipTest("needs root, unshare and chroot for a private mount namespace")
        super().setUp()

    def in_namespace(self, py, mode, setup, files_dir, chroot=False):
        """Runs `py rel_faults.py work` after setup in a private mount
        namespace; then, still inside, prints what perfpy left in
        files_dir (map lines, or `perfpy jitdump` of the dump)."""
        after = ('echo "=== files"; for f in "%s"/perf-*.map; do [ -f "$f" ] && cat "$f"; done; '
                 'for f in "%s"/jit-*.dump; do [ -f "$f" ] && "%s" jitdump "$f"; done; exit $rc'
                 % (files_dir, files_dir, PERFPY))
        run = '"$@"; rc=$?; ' + after
        env = engine_env(mode, files_dir if mode == "jit" else self.tmp)
        prog = PROG
        if chroot:
            script = '%s && chroot "$R" sh -c \'%s\' sh "$@"' % (
                chroot_setup(os.path.join(self.tmp, "root")), run.replace("'", "'\\''"))
            prog = os.path.join(CHROOT_CLONE, os.path.relpath(PROG, ROOT))
            env["PYTHONPATH"] = os.path.join(CHROOT_CLONE, os.path.relpath(LIBDIR, ROOT))
        else:
            script = setup + " && " + run
        r = run_group(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                       "sh", py.path, prog, "work", WORK], env=env, timeout=300)
        self.own(*r.pids)
        out, _, files = r.stdout.partition("=== files\n")
        return r, out, files

    def reference(self, py):
        p = run_group([py.path, PROG, "work", WORK], env={"PYTHONPATH": None, "PERFPY": None})
        self.assertEqual(p.returncode, 0, p.why())
        return strip_pids(p.stdout)

    def check(self, py, mode, case, setup, files_dir, reason, chroot=False, wrote=False):
        """wrote: the fault comes after a first part was written (a full
        disk), which must be there and whole."""
        r, out, files = self.in_namespace(py, mode, setup, files_dir, chroot)
        self.assertFalse(r.timed_out, r.why())
        self.assertEqual(r.returncode, 0, r.why())
        self.assertEqual(strip_pids(out), self.reference(py), "the program's own output changed")
        said = [l for l in r.stderr.splitlines() if l.startswith("perfpy:")]
        self.assertEqual(len(said), 1, "perfpy must say it once: " + r.why())
        self.assertRegex(said[0], r"cannot (create|write) \S*(perf-\d+\.map|jit-\d+\.dump)")
        self.assertIn(reason, said[0])
        self.assertNotIn("Traceback", r.stderr)
        if wrote:
            self.assertTrue(files.strip(), "nothing written before the disk was full")
        if mode == "perf":
            bad = [l for l in files.splitlines() if not re.match(r"^[0-9a-f]+ [0-9a-f]+ py::.+:.+$", l)]
            self.assertEqual(bad, [], "half a line in the map")
        elif files.strip():
            # whole records only, also on a full disk: "valid jitdump", not
            # "valid jitdump up to its last record, which is cut"
            self.assertRegex(files, r": valid jitdump\n", files[-2000:])
        said_once = re.sub(r"/tmp/perfpy-it-\w+", "DIR", said[0]).split(" (")[0]
        record("faults/" + case, py, mode, "program output unchanged, exit 0; said once: "
               + re.sub(r"-\d+\.", "-N.", said_once) + ("; what it wrote is whole"
                                                       if files.strip() else ""),
               "unshare --mount --propagation private sh -c '%s && PERFPY=%s %s %s work %s'"
               % (setup if not chroot else "chroot into bind mounts without /tmp", mode, py.path,
                  "tests/integration/programs/rel_faults.py", WORK))

    def tmpfs(self, opts, where):
        """A tmpfs over where that keeps a clone beneath it reachable."""
        return tmpfs_over(opts, where, os.path.join(self.tmp, "tmpfs"))

    def dump_dir(self):
        d = os.path.join(self.tmp, "dumps")
        os.makedirs(d, exist_ok=True)
        return d

    def test_tmp_or_dump_directory_missing(self):
        for py in interpreters():
            with self.subTest(py=py.label, mode="perf"):
                self.check(py, "perf", "tmp-missing", "", "/tmp",
                           "No such file or directory", chroot=True)
            with self.subTest(py=py.label, mode="jit"):
                d = os.path.join(self.tmp, "no-such-dir")
                self.check(py, "jit", "dumpdir-missing", "true", d,
                           "No such file or directory")

    def test_tmp_or_dump_directory_read_only(self):
        for py in interpreters():
            with self.subTest(py=py.label, mode="perf"):
                self.check(py, "perf", "tmp-read-only",
                           self.tmpfs("ro", "/tmp"), "/tmp", "Read-only file system")
            with self.subTest(py=py.label, mode="jit"):
                d = self.dump_dir()
                self.check(py, "jit", "dumpdir-read-only",
                           self.tmpfs("ro", d), d, "Read-only file system")

    def test_tmp_or_dump_directory_full(self):
        for py in interpreters():
            with self.subTest(py=py.label, mode="perf"):
                self.check(py, "perf", "tmp-full",
                           self.tmpfs("size=64k", "/tmp"), "/tmp",
                           "No space left on device", wrote=True)
            with self.subTest(py=py.label, mode="jit"):
                d = self.dump_dir()
                self.check(py, "jit", "dumpdir-full",
                           self.tmpfs("size=64k", d), d,
                           "No space left on device", wrote=True)


def strip_pids(text):
    return "\n".join(l for l in text.splitlines() if not l.startswith("pid "))


def usage(r):
    m = re.search(r"rss_kb=(\d+)/(\d+) fds=(\d+)/(\d+) trampolines=(\d+)/(\d+) n=(\d+) "
                  r"slot=(\d+)", r.stdout)
    if not m:
        raise AssertionError("no measurement: " + r.why())
    v = [int(x) for x in m.groups()]
    return {"rss": (v[1] - v[0]) * 1024, "fds": v[3] - v[2], "trampolines": v[5] - v[4],
            "n": v[6], "slot": v[7]}


class ResourceUse(ReliabilityTest):

    def measure(self, py, mode, what):
        if mode is None:
            r = run_group([py.path, PROG, what, str(MEASURE_N)],
                          env={"PYTHONPATH": None, "PERFPY": None})
            self.assertEqual(r.returncode, 0, r.why())
            return usage(r)
        return usage(self.run_program(py, mode, [PROG, what, str(MEASURE_N)], timeout=600))

    def test_toggles_leave_memory_and_descriptors_flat(self):
        def one(py, mode):
            u = self.measure(py, mode, "toggles")
            self.assertEqual(u["fds"], 0)
            self.assertEqual(u["trampolines"], 0)
            self.assertLessEqual(u["rss"], 256 * 1024, u)
            record("resources/toggles", py, mode, "%d toggles: RSS %+d KiB, fds %+d, "
                   "trampolines %+d" % (MEASURE_N, u["rss"] // 1024, u["fds"], u["trampolines"]),
                   "PYTHONPATH=build/lib PERFPY=%s %s %s toggles %d"
                   % (mode, py.path, "tests/integration/programs/rel_faults.py", MEASURE_N))
        self.for_each(one)

    def test_new_functions_cost_their_slot_and_no_more(self):
        def one(py, mode):
            base = self.measure(py, None, "functions")
            u = self.measure(py, mode, "functions")
            n = u["n"]
            self.assertEqual(u["fds"], 0)
            # one trampoline per function, and one per compiled batch of 500
            self.assertEqual(u["trampolines"], n + n // 500)
            extra = (u["rss"] - base["rss"]) / n
            self.assertLessEqual(extra, u["slot"] + SLACK,
                                 "%.0f bytes per function beyond the interpreter's own" % extra)
            record("resources/functions", py, mode, "%d new functions: %.0f B/function beyond "
                   "the plain interpreter's growth (arena slot %d B; bound slot + %d); fds %+d"
                   % (n, extra, u["slot"], SLACK, u["fds"]),
                   "PYTHONPATH=build/lib PERFPY=%s %s %s functions %d (and without perfpy)"
                   % (mode, py.path, "tests/integration/programs/rel_faults.py", MEASURE_N))
        self.for_each(one)


if __name__ == "__main__":
    unittest.main()
