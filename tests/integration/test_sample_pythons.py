"""Sample mode on every CPython as it ships, with no perfpy module of its
version: the structure layout of each process comes from the tables
compiled into perfpy (3.8-3.12) or from its own _Py_DebugOffsets (3.13+),
checked, and refused with one sentence when it does not match (native
frames still recorded, no Python name made up)."""

import os
import re
import shutil
import subprocess
import unittest

import support
from support import BUILD, PERFPY, TempDirTest, interpreters, note, run
from test_report import collapsed_counts

SAMPLER = os.path.join(BUILD, "perfpy-sample")
PROGRAMS = os.path.join(support.ROOT, "tests", "integration", "programs")

BUSY = """\
import time
def foo():
    end = time.process_time() + 1.2
    n = 0
    while time.process_time() < end:
        n += 1
def bar():
    foo()
def baz():
    bar()
baz()
"""


def busy_whole(stacks):
    """Samples in foo, and those whole: foo <- bar <- baz <- <module>, each
    at a line of its body (the executing line, not the def line)."""
    foo = whole = 0
    chain = re.compile(r"(^|;)<module> \([^;]*busy\.py:11\);baz \([^;]*busy\.py:10\);"
                       r"bar \([^;]*busy\.py:8\);foo \([^;]*busy\.py:[3-6]\)")
    for s, n in stacks.items():
        if re.search(r"(^|;)foo \(", s):
            foo += n
            if chain.search(s):
                whole += n
    return foo, whole


def build_kind(python):
    """How an interpreter is built, as far as a reader outside it cares:
    its runtime in a libpython3.X.so or in the executable (static), a PIE
    or not, frame pointers kept or not."""
    out = subprocess.run([python, "-S", "-c", "import sysconfig as s; print('libpython' in "
                          "open('/proc/self/maps').read(), '-fno-omit-frame-pointer' in ("
                          "s.get_config_var('CFLAGS') or ''))"], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout.split()
    with open(os.path.realpath(python), "rb") as f:
        pie = f.read(18)[16] == 3                     # ELF e_type: ET_DYN
    return ", ".join(["libpython3.X.so" if out[0] == "True" else "static",
                      "PIE" if pie else "not PIE",
                      "frame pointers" if out[1] == "True" else "no frame pointers"])


class SampleTest(TempDirTest):
    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root (or CAP_BPF and CAP_PERFMON)")


class NoModule(SampleTest):
    def test_each_interpreter_read_with_no_module_of_its_version(self):
        """perfpy and perfpy-sample copied beside a lib/ with no module at
        all: each interpreter's stacks whole (>= 99% of foo's samples) with
        executing lines. Mutation: pylayout_find refuses every version ->
        red: 0 samples in foo whole."""
        tree = os.path.join(self.tmp, "perfpy")
        os.makedirs(os.path.join(tree, "lib"))
        shutil.copy(PERFPY, tree)
        shutil.copy(SAMPLER, tree)
        shutil.copy(os.path.join(support.LIBDIR, "sitecustomize.py"), os.path.join(tree, "lib"))
        prog = os.path.join(self.tmp, "busy.py")
        with open(prog, "w") as f:
            f.write(BUSY)
        kinds = set()
        for py in interpreters():
            with self.subTest(py=py.label):
                out = os.path.join(self.tmp, "busy-%s.txt" % py.label)
                p = run([os.path.join(tree, "perfpy"), "record", "--mode", "sample", "-f",
                         "collapsed", "-o", out, "--", py.path, prog])
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                foo, whole = busy_whole(collapsed_counts(out))
                note("%s (%s), no module: %d of %d samples in foo whole with executing lines"
                     % (py.label, build_kind(py.real), whole, foo))
                self.assertGreater(foo, 200)
                self.assertGreaterEqual(whole * 100, foo * 99)
                kinds.add(build_kind(py.real))
        note("kinds of build read whole here: %s" % "; ".join(sorted(kinds)))


class SpoiledDebugOffsets(SampleTest):
    def test_a_layout_that_does_not_match_is_refused(self):
        """A 3.13+ process whose _Py_DebugOffsets it spoiled itself
        (spoiled_debug_offsets.py: the cookie, the version, the
        free-threaded flag), attached for 2 s: one line naming its version
        and why, its native frames recorded, not one Python frame (no name
        made up). The positive twin (nothing spoiled): spin's samples whole.
        Mutation: the cookie check dropped (the table used as is) -> red:
        Python frames in the cookie case."""
        pys = [p for p in interpreters() if p.version_info >= (3, 13)]
        if not pys:
            self.skipTest("no CPython 3.13+ in this build")
        says = {"cookie": "cookie", "version": "3.99.0", "free_threaded": "free-threaded",
                "none": None}
        for py in pys:
            for what, said in says.items():
                with self.subTest(py=py.label, what=what):
                    stacks, err = self.attach(py, what)
                    total = sum(stacks.values())
                    python = sum(n for s, n in stacks.items()
                                 if re.search(r"\((<frozen |[^;]*\.py:)", s))
                    spin = sum(n for s, n in stacks.items() if re.search(
                        r"<module> \([^;]*spoiled_debug_offsets\.py:\d+\);work \([^;]*\);"
                        r"spin \(", s))
                    note("%s, %s spoiled: %d samples, %d with Python frames%s"
                         % (py.label, what, total, python,
                            "" if said is None else "; said: " + "".join(
                                l for l in err.splitlines() if "are not read" in l)))
                    self.assertGreater(total, 50, err)
                    if said is None:
                        self.assertGreaterEqual(spin * 100, total * 95, err)
                        self.assertNotIn("are not read", err)
                        continue
                    self.assertEqual(python, 0, err)
                    self.assertRegex(err, r"perfpy: the process \d+ \([^)]*\): CPython 3\.%d\."
                                     % py.version_info[1] if what != "version" else
                                     r"perfpy: the process \d+ \(")
                    self.assertIn(said, err)
                    self.assertIn("its Python frames are not read (its native frames are)", err)

    def attach(self, py, what):
        target = subprocess.Popen([py.path, os.path.join(PROGRAMS, "spoiled_debug_offsets.py"),
                                   what], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  universal_newlines=True)
        try:
            self.assertEqual(target.stdout.readline().strip(), "ready")
            out = os.path.join(self.tmp, "spoiled-%s-%s.txt" % (py.label, what))
            p = run([PERFPY, "record", "--mode", "sample", "-p", str(target.pid), "-d", "2",
                     "-f", "collapsed", "-o", out])
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        finally:
            target.stdin.close()
            target.wait(timeout=60)
        self.assertEqual(target.returncode, 0)
        return collapsed_counts(out), p.stderr


if __name__ == "__main__":
    unittest.main()


SIDROOT = os.path.join(support.ROOT, "scripts", "sidroot")


class Containers(SampleTest):
    """A CPython in a container (scripts/sidroot container: its own PID and
    mount namespaces, chrooted into a Debian root) attached from the host:
    its ELF files read through /proc/PID/root, its stacks whole, the paths
    the program's own (/opt/..., not the host's view of its root), and in
    the whole-process view a root naming its container, its process root
    its pid there. The roots: Debian 13 (trixie: its python3, 3.13), made
    here by the set-up if missing; the sid root's 3.13, 3.14 and 3.15."""

    def setUp(self):
        super().setUp()
        if os.environ.get("PERFPY_WORLD"):
            self.skipTest("containers are attached from the host world (this is the %s "
                          "root)" % os.environ["PERFPY_WORLD"])

    def root(self, suite):
        env = dict(os.environ, PERFPY_ROOT_SUITE=suite)
        p = run([SIDROOT, "make"], env=env, timeout=1200)
        if p.returncode == 3:
            self.skipTest("the %s root cannot be made here: %s" % (suite, p.stderr.strip()))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return p.stdout.strip().splitlines()[-1]

    def attach_in(self, suite, python):
        root = self.root(suite)
        rel = "/opt/%s-%s" % (os.path.basename(self.tmp), python)   # the program's own path
        os.makedirs(root + rel)
        self.addCleanup(shutil.rmtree, root + rel, True)
        with open(root + rel + "/busy.py", "w") as f:
            f.write(BUSY.replace("1.2", "4"))
        env = dict(os.environ, PERFPY_ROOT_SUITE=suite)
        c = subprocess.Popen([SIDROOT, "container", python, rel + "/busy.py"], env=env,
                             start_new_session=True)
        self.addCleanup(lambda: c.poll() is None and os.killpg(c.pid, 9))
        pid = self.python_in(c.pid, python)
        out = os.path.join(self.tmp, "container-%s-%s.txt" % (suite, os.path.basename(python)))
        p = run([PERFPY, "record", "--mode", "sample", "--processes", "split", "-p", str(pid),
                 "-d", "2", "-f", "collapsed", "-o", out])
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        c.wait(timeout=120)
        stacks = collapsed_counts(out)
        foo, whole = busy_whole(stacks)
        roots = {s.split(";")[0] + ";" + s.split(";")[1] for s in stacks}
        note("%s root, %s: attached from the host: %d of %d samples in foo whole, roots %s"
             % (suite, python, whole, foo, sorted(roots)))
        self.assertGreater(foo, 100, p.stderr[-2000:])
        self.assertGreaterEqual(whole * 100, foo * 99)
        self.assertEqual(roots, {"[container %s];%s (pid %d, 1 in the container)"
                                 % (root, os.path.basename(python), pid)})
        # labelled by its path relative to the program's directory (a
        # collapsed file's labels): never the host's path of the root's file
        self.assertTrue(all("foo (busy.py:" in s for s in stacks if "foo (" in s))
        self.assertFalse([s for s in stacks if root in s.split(";", 1)[1]])

    def python_in(self, top, python, tries=200):
        """The pid (ours) of the container's python under the process top."""
        import time
        for _ in range(tries):
            for d in os.listdir("/proc"):
                if not d.isdigit():
                    continue
                try:
                    with open("/proc/%s/stat" % d) as f:
                        comm = f.read().split(")")[0].split("(", 1)[1]
                    with open("/proc/%s/status" % d) as f:
                        nspid = re.search(r"^NSpid:\s*(.*)$", f.read(), re.M).group(1).split()
                except (OSError, AttributeError, IndexError):
                    continue
                if comm == os.path.basename(python) and len(nspid) == 2 and nspid[1] == "1":
                    if self.descends(int(d), top):
                        return int(d)
            time.sleep(0.02)
        self.fail("no %s started in the container" % python)

    @staticmethod
    def descends(pid, top):
        while pid > 1:
            if pid == top:
                return True
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        return False

    def test_debian_13_container(self):
        self.attach_in("trixie", "python3")

    def test_record_a_container_launch(self):
        """record --mode sample -- scripts/sidroot container python3 ...: the
        launcher (bash, unshare, chroot) is recorded as a program that is no
        Python, and the CPython it starts in the container is read whole,
        under its container's root. Mutation: no _PyRuntime looked for in
        any process but the launcher -> red (no foo); reverted, green."""
        root = self.root("trixie")
        rel = "/opt/%s-record" % os.path.basename(self.tmp)
        os.makedirs(root + rel)
        self.addCleanup(shutil.rmtree, root + rel, True)
        with open(root + rel + "/busy.py", "w") as f:
            f.write(BUSY)
        out = os.path.join(self.tmp, "record-container.txt")
        p = run([PERFPY, "record", "--mode", "sample", "-f", "collapsed", "-o", out, "--",
                 SIDROOT, "container", "python3", rel + "/busy.py"],
                env=dict(os.environ, PERFPY_ROOT_SUITE="trixie"))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        stacks = collapsed_counts(out)
        foo, whole = busy_whole(stacks)
        roots = {s.split(";")[0] for s in stacks if "foo (" in s}
        note("trixie root, record of its launcher: %d of %d samples in foo whole, roots %s"
             % (whole, foo, sorted(roots)))
        self.assertGreater(foo, 200, p.stderr[-2000:])
        self.assertGreaterEqual(whole * 100, foo * 99)
        self.assertEqual(roots, {"[container %s]" % root})
        self.assertNotIn("are not read", p.stderr)

    def test_sid_containers(self):
        for v in ("3.13", "3.14", "3.15"):
            with self.subTest(python=v):
                self.attach_in("sid", "python" + v)
