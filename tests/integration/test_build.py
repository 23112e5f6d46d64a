"""The build asks the machine what it has in one place (scripts/probe), and
a new user's `pip install .` gives the whole tool or says exactly what it
lacks.

Each probe with exactly its dependency removed (hidden in a private mount
namespace: a directory under an empty tmpfs, a file under /dev/null):
`make`, and the build pip runs (scripts/perfpy_build.py, the PEP 517
backend), stop before compiling anything, with one message naming the
package for Debian/Ubuntu and for Fedora; never a compiler error. The
tools only the BPF program's remaking needs (clang, bpftool, the kernel's
BTF) are no longer needed to build sample mode: hidden, the build makes it
from the compiled program in the tree, and scripts/gen-bpf names them.
PERFPY_NO_SAMPLE=1 builds the rest (read mode included), and root with
neither sample mode nor perf then gets read mode, said in the first line.

A new user's machine: Debian 12 and 13 roots as debootstrap makes them,
with only python3-venv, python3-dev, gcc, make, git and zlib1g-dev
(scripts/sidroot, suites bookworm-bare and trixie-bare; GNU Make 4.3 and
4.4). Each gets `pip install .` in a fresh venv three times, in an overlay
so that the cached root stays bare: with none of the BPF and unwinder
packages (the one message, nothing installed), with all of them but
libdw-dev (the message names libdw-dev alone), and with all of them (sample
mode by default as root, said in the first line, and --idle works).
"""
import glob
import os
import re
import shutil
import sys

from support import BUILD, ROOT, SANITIZER, TempDirTest, hidden, interpreters, note, run

PROBE = os.path.join(ROOT, "scripts", "probe")
GEN_BPF = os.path.join(ROOT, "scripts", "gen-bpf")
SIDROOT = os.path.join(ROOT, "scripts", "sidroot")
BACKEND = os.path.join(ROOT, "scripts", "perfpy_build.py")

# name: (what hiding removes it, its Debian package, its Fedora package)
LIBRARIES = {
    "zlib": (["/usr/include/zlib.h"], "zlib1g-dev", "zlib-devel"),
    "libelf": (["/usr/include/libelf.h", "/usr/include/gelf.h"], "libelf-dev",
               "elfutils-libelf-devel"),
    "libdw": (["/usr/include/elfutils"], "libdw-dev", "elfutils-devel"),
    "libbpf": (["/usr/include/bpf"], "libbpf-dev", "libbpf-devel"),
}
# what a compiler or linker says (pip's own "error: subprocess-exited-with-error" is not)
COMPILER_ERROR = re.compile(r"(fatal error:|\.[ch]:\d+(:\d+)?: error:|undefined reference|ld: )")

WALL_APP = """import os, threading, time
def crunch(seconds):
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += 1
    return n
def doze(seconds):
    time.sleep(seconds)
def main():
    crunch(1.0)
    doze(1.0)
main()
"""


def real_compiler():
    """The file the C compiler `cc` runs, to hide it."""
    p = run(["cc", "-print-prog-name=cc1"])
    path = os.path.realpath(shutil.which("cc") or "/usr/bin/cc")
    return path if p.returncode == 0 else None


class BuildTest(TempDirTest):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("hiding a dependency needs root (a private mount namespace)")
        if SANITIZER:
            self.skipTest("the build's own checks are not sanitizer tests")

    def make(self, hide, *goals, env=None):
        build = os.path.join(self.tmp, "build")
        return build, hidden(["make", "-C", ROOT, "--no-print-directory", "BUILD=" + build]
                             + list(goals or ["all"]), hide, env=env)

    def assert_named(self, p, debian, fedora, what):
        text = p.stdout + p.stderr
        self.assertNotEqual(p.returncode, 0, text[-3000:])
        self.assertRegex(text, r"Debian/Ubuntu: (sudo )?apt-get install -y [^\n]*\b%s\b"
                         % re.escape(debian), what)
        self.assertRegex(text, r"Fedora: +(sudo )?dnf install -y [^\n]*\b%s\b"
                         % re.escape(fedora), what)
        self.assertIsNone(COMPILER_ERROR.search(text), "%s: a compiler error, not the message:"
                          "\n%s" % (what, text[-3000:]))


class Probes(BuildTest):
    def test_every_probe_answers_yes_where_all_is_there(self):
        """The positive twin: nothing missing on the machine that built
        sample mode here (exit 0, nothing said)."""
        py = interpreters()[-1].path
        p = run([PROBE, "cc", "make", "zlib", "libelf", "libdw", "libbpf", "python:" + py])
        self.assertEqual((p.returncode, p.stdout), (0, ""), p.stderr)
        self.assertTrue(os.path.exists(os.path.join(BUILD, "perfpy-sample")))

    def test_make_stops_naming_each_library_hidden_alone(self):
        """Mutation: the old probe (`echo '\\#include <elfutils/libdwfl.h>' |
        cc -E`) -> red: libdw hidden, the build went on and died in
        modsyms.h's #include."""
        for name, (hide, debian, fedora) in LIBRARIES.items():
            with self.subTest(name):
                build, p = self.make(hide)
                self.assert_named(p, debian, fedora, "make, %s hidden" % name)
                self.assertFalse(os.path.exists(os.path.join(build, "obj")),
                                 "something was compiled before the stop")
                if name != "zlib":
                    self.assertIn("PERFPY_NO_SAMPLE=1", p.stderr)

    def test_pip_build_stops_naming_libdw_and_says_the_opt_out(self):
        """What pip runs (build_wheel) with libdw hidden: the one message,
        no wheel; the user's case."""
        hide, debian, fedora = LIBRARIES["libdw"]
        out = os.path.join(self.tmp, "dist")
        p = hidden([sys.executable, BACKEND, "wheel", out], hide)
        self.assert_named(p, debian, fedora, "pip's build, libdw hidden")
        self.assertIn("PERFPY_NO_SAMPLE=1 pip install .", p.stderr)
        self.assertEqual(glob.glob(os.path.join(out, "*.whl")), [])

    def test_compiler_hidden_is_named(self):
        cc = real_compiler()
        if not cc:
            self.skipTest("no cc here")
        _, p = self.make([cc])
        self.assert_named(p, "gcc", "gcc", "make, no compiler")
        p = hidden([sys.executable, BACKEND, "wheel", os.path.join(self.tmp, "dist")], [cc])
        self.assert_named(p, "gcc", "gcc", "pip's build, no compiler")

    def test_python_headers_hidden_are_named(self):
        """The interpreter running pip must have its headers: hidden, its
        -dev package is named (Debian's python3.X, whose headers are a
        package of their own); make skips it with the same note."""
        debs = [py for py in interpreters() if py.path.startswith("/usr/bin/")]
        if not debs:
            self.skipTest("no Debian interpreter here")
        py = debs[-1]
        inc = run([py.path, "-c", "import sysconfig; print(sysconfig.get_config_var('INCLUDEPY'))"],
                  check=True).stdout.strip()
        minor = ".".join(py.version.split(".")[:2])
        p = hidden([py.path, BACKEND, "wheel", os.path.join(self.tmp, "dist")], [inc])
        self.assert_named(p, "python%s-dev" % minor, "python3-devel", "pip's build, no headers")
        p = hidden([os.path.join(ROOT, "scripts", "find-pythons")], [inc],
                   env={"PYTHONS": py.path})
        self.assertEqual(p.stdout, "")
        self.assertIn("install python%s-dev" % minor, p.stderr)

    def test_bpf_tools_are_not_needed_to_build_sample_mode(self):
        """clang, bpftool and the kernel's BTF hidden: perfpy-sample is
        built (the BPF program compiled in the tree) and loads; each,
        hidden alone, is named by scripts/gen-bpf, the one thing that
        needs it."""
        tools = [f for f in (shutil.which("clang"), run([PROBE, "--bpftool-path"]).stdout.strip())
                 if f]
        if len(tools) < 2:
            self.skipTest("clang or bpftool is not here: nothing to hide")
        btf = ["/sys/kernel/btf/vmlinux"]
        for name, hide in (("clang", [tools[0]]), ("bpftool", [tools[1]]), ("btf", btf)):
            with self.subTest(name):
                p = hidden([GEN_BPF, "--check"], hide)
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn("missing: ", p.stderr)
                self.assertIn("BTF" if name == "btf" else name, p.stderr.split("missing: ")[1])
        build, p = self.make(tools + btf, "PYTHONS=" + interpreters()[-1].path, "all")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertTrue(os.path.exists(os.path.join(build, "perfpy-sample")))
        p = run([os.path.join(build, "perfpy-sample"), "--check"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_committed_bpf_program_is_a_fresh_compile_of_its_sources(self):
        """src/collect/sample.skel.h against clang's compile of the sources
        now: byte for byte where the tools of its stamp are (the host), else
        program for program and map for map (sid's clang); and its hash
        names today's sources (mutation: a line added to wall.bpf.c ->
        red: "the BPF sources changed")."""
        if not shutil.which("clang"):
            self.skipTest("no clang here")
        p = run([GEN_BPF, "--check"], timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        note(p.stdout.strip())


class OptOut(BuildTest):
    def test_without_sample_mode_root_without_perf_gets_read_mode(self):
        """PERFPY_NO_SAMPLE=1 with libbpf hidden: the build goes on, makes
        perfpy-sample without its BPF collector, and says so; as root with
        no perf on PATH, `perfpy record` takes read mode, says why in its
        first line, and writes the profile; doctor says what to run."""
        hide = LIBRARIES["libbpf"][0]
        py = interpreters()[-1]
        build, p = self.make(hide, "PYTHONS=" + py.path, "all",
                             env={"PERFPY_NO_SAMPLE": "1"})
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertIn("sample mode is not in this build: built with PERFPY_NO_SAMPLE=1",
                      p.stderr)
        sampler = os.path.join(build, "perfpy-sample")
        p = run([sampler, "--check"])
        self.assertEqual(p.returncode, 3, p.stdout)
        app = self.write("app.py", WALL_APP)
        out = os.path.join(self.tmp, "out.txt")
        bindir = os.path.join(self.tmp, "bin")             # a PATH with python, not perf
        os.makedirs(bindir)
        os.symlink(py.path, os.path.join(bindir, "python3"))
        env = {"PATH": bindir, "PERFPY_RECORD_MODE": None}
        p = run([os.path.join(build, "perfpy"), "record", "-f", "collapsed", "-o", out, "--",
                 "python3", app], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        first = p.stderr.splitlines()[0]
        self.assertRegex(first, r"^perfpy: read mode, which needs no privilege: sample mode "
                         r"is not in this perfpy: built with PERFPY_NO_SAMPLE=1")
        with open(out) as f:
            crunch = sum(int(l.rsplit(" ", 1)[1]) for l in f if "crunch (" in l)
        self.assertGreater(crunch, 100)
        p = run([os.path.join(build, "perfpy"), "doctor"], env=env)
        self.assertIn("sample mode is not in this perfpy: built with PERFPY_NO_SAMPLE=1; "
                      "missing: libbpf; Debian/Ubuntu: apt-get install -y libbpf-dev; Fedora: "
                      "dnf install -y libbpf-devel. To have it, install what is named, then "
                      "build perfpy again from its source, without PERFPY_NO_SAMPLE: pip "
                      "install . (or make); until then read mode and the trampoline modes "
                      "work", p.stdout)
        self.assertRegex(p.stdout, r"warn +perf +not found on PATH")
        self.assertIn("recording will work", p.stdout)


class NewUserRoots(BuildTest):
    """pip install . in Debian 12 and 13 as a new user's machine is."""

    def root(self, suite):
        if os.environ.get("PERFPY_WORLD"):
            self.skipTest("the roots are made and entered from the host world")
        env = dict(os.environ, PERFPY_ROOT_SUITE=suite)
        p = run([SIDROOT, "make"], env=env, timeout=1800)
        if p.returncode == 3:
            if os.environ.get("CI"):
                self.fail("the %s root cannot be made in CI: %s" % (suite, p.stderr[-2000:]))
            self.skipTest(p.stderr.strip().splitlines()[-1])
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return env

    def in_root(self, env, upper, script, timeout=1800):
        return run([SIDROOT, "overlay", upper, "/bin/bash", "-c", script], env=env,
                   timeout=timeout)

    def three_installs(self, suite):
        env = self.root(suite)
        all_debs = ["clang", "bpftool", "libbpf-dev", "libdw-dev", "libelf-dev"]
        cases = [("none", []), ("all but libdw-dev", [d for d in all_debs if d != "libdw-dev"]),
                 ("all", all_debs)]
        app = self.write("app.py", WALL_APP)
        for i, (what, debs) in enumerate(cases):
            with self.subTest("%s: %s" % (suite, what)):
                upper = os.path.join(self.tmp, "overlay-%d" % i)
                venv = os.path.join(self.tmp, "venv-%d" % i)
                # the cached root's own files never change; what the case
                # installs goes to its overlay (apt: from the root's cache)
                install = ("DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-download "
                           "--no-install-recommends %s >/dev/null && " % " ".join(debs)
                           if debs else "")
                script = (install + "make --version | head -n 1 && python3 -m venv %s && "
                          "cd %s && %s/bin/pip --disable-pip-version-check install --no-index ."
                          % (venv, ROOT, venv))
                p = self.in_root(env, upper, script)
                text = p.stdout + p.stderr
                if what != "all":
                    missing = [d for d in ("libdw-dev", "libbpf-dev") if d not in debs]
                    self.assertNotEqual(p.returncode, 0, text[-3000:])
                    self.assertRegex(text, r"Debian/Ubuntu: apt-get install -y %s\n"
                                     % " ".join(["libelf-dev"] * ("libelf-dev" not in debs)
                                                + missing))
                    self.assertIn("PERFPY_NO_SAMPLE=1 pip install .", text)
                    self.assertIsNone(COMPILER_ERROR.search(text), text[-3000:])
                    self.assertFalse(os.path.exists(os.path.join(venv, "bin", "perfpy")))
                    note("%s, %s: pip install stopped naming %s (%s)"
                         % (suite, what, ", ".join(missing), p.stdout.splitlines()[0]))
                    continue
                self.assertEqual(p.returncode, 0, text[-3000:])
                out = os.path.join(self.tmp, "idle-%s.txt" % suite)
                for idle in ("", "--idle "):
                    p = self.in_root(env, upper, "%s/bin/perfpy record %s-f collapsed -o %s -- "
                                     "%s/bin/python %s" % (venv, idle, out, venv, app),
                                     timeout=600)
                    self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                    first = p.stderr.splitlines()[0]
                    self.assertRegex(first, r"^perfpy: (sample mode, the best here|recording "
                                     r"\S+ in sample mode \(BPF, wall clock)", p.stderr)
                # doze sleeps 1 s: that many periods asleep, whatever the
                # load did to crunch's wall time
                period = float(re.search(r"samples of ([\d.]+) ms \(wall-clock\)",
                                         p.stderr).group(1)) / 1000
                with open(out) as f:
                    stacks = [l.rsplit(" ", 1) for l in f.read().splitlines()]
                doze = sum(int(n) for s, n in stacks if "doze (" in s and "[off-CPU: sleep]" in s)
                note("%s, all: %s; --idle: doze asleep in %d samples of %.2f ms (1 s)"
                     % (suite, first, doze, period * 1000))
                self.assertAlmostEqual(doze * period, 1.0, delta=0.1)

    def test_debian_12_pip_install_three_times(self):
        self.three_installs("bookworm-bare")

    def test_debian_13_pip_install_three_times(self):
        self.three_installs("trixie-bare")
