"""Shared helpers for perfpy's integration tests.

The tests run the real thing: the built `perfpy` command, the built module in
every interpreter listed in BUILD/pythons.txt, and the real `perf`. Helpers
here find those, run them with time limits, and clean up only the files the
test itself created (a test never deletes another process's perf map).

Environment (set by tests/integration/run.py):
  PERFPY_TEST_BUILD      the build directory (default: build)
  PERFPY_TEST_SANITIZER  address|undefined when running under a sanitizer

Under `make asan` the module is built with AddressSanitizer, whose runtime
must be the first library of the process: each interpreter is then run
through a wrapper (BUILD/sanitizer-python/, see sanitized()) that preloads
it, with LeakSanitizer on and CPython's own leaks at exit suppressed
(lsan-cpython.supp). Interpreter.path is the wrapper, .real the interpreter.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

# A suite started in the background by a shell without job control (CI's
# `bash .ci/run &`) inherits SIGINT ignored, and every program a test starts
# would too: the Ctrl-C tests' programs never saw their Ctrl-C (perf then
# SIGTERMed them after --grace). The tests play a terminal's Ctrl-C, whose
# programs have SIGINT's default; a handler here is reset to it at exec.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("PERFPY_TEST_BUILD", "build"))
PERFPY = os.path.join(BUILD, "perfpy")
LIBDIR = os.path.join(BUILD, "lib")
EXAMPLES = os.path.join(ROOT, "examples")
DATA = os.path.join(ROOT, "tests", "data")
SANITIZER = os.environ.get("PERFPY_TEST_SANITIZER", "")


class Interpreter:
    """One CPython from BUILD/pythons.txt."""

    def __init__(self, path, version):
        self.real = unwrapped(path)
        self.path = sanitized(self.real) if SANITIZER == "address" else path
        self.version = version
        self.version_info = tuple(int(x) for x in version.split(".")[:2])

    @property
    def label(self):
        kind = "debian" if self.real.startswith("/usr/") else "pyenv"
        return "%s-%s" % (self.version, kind)

    def __repr__(self):
        return "<Interpreter %s %s>" % (self.version, self.path)


def sanitized(python):
    """A wrapper running python with the ASan runtime preloaded (the
    module's runtime must come first), leaks reported, CPython's own
    suppressed; exported, so the interpreter's Python children get it too."""
    out = os.path.join(BUILD, "sanitizer-python")
    wrapper = os.path.join(out, os.path.basename(python))
    if python in _wrappers:
        return _wrappers[python]
    if os.path.dirname(os.path.abspath(python)) == out:
        return python    # a wrapper already (a test ran make with PYTHONS=<wrapper>)
    cc = os.environ.get("CC", "gcc")
    runtime = subprocess.run([cc, "-print-file-name=libasan.so"], stdout=subprocess.PIPE,
                             universal_newlines=True, check=True).stdout.strip()
    text = ("#!/bin/sh\n# tests/integration/support.py: %s with AddressSanitizer\n"
            'export LD_PRELOAD="%s${LD_PRELOAD:+:$LD_PRELOAD}"\n'
            'export ASAN_OPTIONS="detect_leaks=${PERFPY_TEST_DETECT_LEAKS:-1}:abort_on_error=1'
            ':malloc_context_size=2"\n'
            'export LSAN_OPTIONS="suppressions=%s"\n'
            'exec "%s" "$@"\n' % (python, runtime, os.path.join(
                os.path.dirname(os.path.abspath(__file__)), "lsan-cpython.supp"), python))
    os.makedirs(out, exist_ok=True)
    tmp = "%s.%d" % (wrapper, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, wrapper)
    _wrappers[python] = wrapper
    return wrapper


_wrappers = {}


def unwrapped(python):
    """The interpreter a sanitized() wrapper runs (python if it is none)."""
    if os.path.basename(os.path.dirname(python)) != "sanitizer-python":
        return python
    with open(python) as f:
        m = re.search(r'^exec "([^"]+)"', f.read(), re.M)
    return m.group(1) if m else python


def interpreters():
    """Every interpreter the build made a module for."""
    found = []
    try:
        with open(os.path.join(BUILD, "pythons.txt")) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    found.append(Interpreter(parts[0], parts[1]))
    except FileNotFoundError:
        pass
    only = os.environ.get("PERFPY_TEST_PYTHONS")
    if only:
        found = [i for i in found if i.real in only.split()]
    return found


# The suite's tests of the hook modes start programs with `perfpy record`
# and no --mode: they get the hook modes (perf or jit as the interpreter
# allows), what every such recording got before the default became the best
# mode here (sample as root, read without). The tests of that default
# (test_mode.py) unset it.
os.environ.setdefault("PERFPY_RECORD_MODE", "hook")


def recorded(cmd):
    """Whether cmd samples its program: perfpy record, or perf record."""
    words = [os.path.basename(str(w)) for w in cmd[:2]]
    return words in (["perfpy", "record"], ["perf", "record"])


def run(cmd, timeout=300, env=None, check=False, **kw):
    """subprocess.run with text output captured and a time limit.

    Under make asan, a program that is recorded runs without LeakSanitizer:
    its check at exit runs in a tracer that is a process of its own (a
    clone without CLONE_THREAD), which perf samples, so a one-process
    program would read as two (a root per process). Leaks are still
    checked in every test that runs the interpreter directly."""
    full_env = dict(os.environ)
    if SANITIZER == "address" and recorded(cmd):
        full_env["PERFPY_TEST_DETECT_LEAKS"] = "0"
    if env:
        for k, v in env.items():
            if v is None:
                full_env.pop(k, None)
            else:
                full_env[k] = v
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout, env=full_env,
                       **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s exited %d\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(cmd), p.returncode, p.stdout[-4000:], p.stderr[-4000:]))
    return p


_perf_state = None


def assert_split(test, program, profile, busy, lost, what=""):
    """A profile's split of CPU time (percent in one part) against the
    program's own measurement of it with its thread's CPU clock: within 2
    points when the program ran freely, 4 when it had less than 90% of a
    CPU (busy: its CPU time over its wall time) or samples were lost.
    Samples are taken in the program's CPU time (per-thread events), so
    other load tilts them little, but a program kept off its CPU while
    other tests run beside it, or a recorder starved into losing samples,
    makes the comparison coarser: the bound widens, never goes away (a
    profiler that slows calls, or names the wrong frame, is off by more)."""
    bound = 2.0 if busy >= 0.9 and not lost else 4.0
    note("%s: profile %.1f%% vs program %.1f%% (bound %.0f points: %.0f%% of a CPU, %d lost)"
         % (test.id().rsplit(".", 1)[-1], profile, program, bound, 100 * busy, lost))
    test.assertLess(abs(program - profile), bound,
                    "%sthe program had %.0f%% of a CPU, %d samples lost: profile %.1f%% vs "
                    "program %.1f%%" % (what, 100 * busy, lost, profile, program))


def lost_samples(stderr):
    """The samples perfpy said it lost (sample mode's "N samples lost", a
    perf recording's "N lost events"), 0 when it said none."""
    m = re.search(r"(\d+) (?:samples lost|lost events)", stderr)
    return int(m.group(1)) if m else 0


def perf_problem():
    """None if `perf record` works here, else why not (for skip messages)."""
    global _perf_state
    if _perf_state is None:
        if not shutil.which("perf"):
            _perf_state = "perf is not installed (apt-get install linux-perf)"
        else:
            d = tempfile.mkdtemp(prefix="perfpy-probe-")
            try:
                p = run(["perf", "record", "-q", "-o", os.path.join(d, "p.data"),
                         "--", "true"], timeout=60)
                _perf_state = "" if p.returncode == 0 else (
                    "perf record does not work here: " + p.stderr.strip()[-300:])
            finally:
                shutil.rmtree(d, ignore_errors=True)
    return _perf_state or None


def note(text):
    """One line of numbers in the test log."""
    sys.stderr.write("      (%s)\n" % text)
    sys.stderr.flush()


MAX_STACK = "/proc/sys/kernel/perf_event_max_stack"
MAX_STACK_STATE = "/dev/shm/perfpy-max-stack"   # src/report/max_stack.h


def with_max_stack_lock(fn, create=True):
    """fn(fd) under perfpy's registry lock (src/report/max_stack.c takes it
    the same way: the file locked is still the one at the path, else try
    again), its result; None when the registry cannot be had (create False:
    it is not there)."""
    import fcntl
    for _ in range(10):
        try:
            fd = os.open(MAX_STACK_STATE, os.O_RDWR | os.O_NOFOLLOW |
                         (os.O_CREAT if create else 0), 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            a = os.fstat(fd)
            try:
                b = os.stat(MAX_STACK_STATE)
            except OSError:
                continue
            if (a.st_ino, a.st_dev) != (b.st_ino, b.st_dev):
                continue
            return fn(fd)
        finally:
            os.close(fd)
    return None


def max_stack_baseline():
    """The machine's own kernel.perf_event_max_stack: while recordings hold
    it raised (or a put-back waits for another perf session), the value
    perfpy's registry remembers; else the value in force. Read under the
    registry's lock, as perfpy does (src/report/max_stack.c), so that a
    recording raising it meanwhile is seen either way, never half."""
    def baseline(fd):
        text = os.pread(fd, 8192, 0).decode()
        m = re.search(r"^before (\d+)$", text, re.M)
        if m and re.search(r"^set \d+$", text, re.M):
            return int(m.group(1))
        os.unlink(MAX_STACK_STATE)
        return read_int_file(MAX_STACK)
    got = with_max_stack_lock(baseline)
    return got if got is not None else read_int_file(MAX_STACK)


def read_int_file(path):
    """The integer a /proc or /sys file holds, or None."""
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


_unwinder = None


def perf_unwinder():
    """What perf unwinds DWARF call graphs with: "libunwind", "libdw" or
    "none" (the rule of src/report/perf_probe.c: libunwind wins when both are
    built in). libdw takes perf inject's ELFs for JIT code only under
    /tmp/jitted-, and finds no frame in perf-map trampolines."""
    global _unwinder
    if _unwinder is None:
        p = run(["perf", "version", "--build-options"], timeout=60)
        text = p.stdout if p.returncode == 0 else ""
        on = lambda name: re.search(r"(^|\s)%s: \[ on" % re.escape(name), text, re.M)
        if not text:
            _unwinder = "libunwind"
        elif on("libunwind"):
            _unwinder = "libunwind"
        elif on("libdw-dwarf-unwind") or on("dwarf-unwind"):
            _unwinder = "libdw"
        else:
            _unwinder = "none"
    return _unwinder


def keeps_frame_pointers(py):
    """Whether the interpreter was built with -fno-omit-frame-pointer
    (perfpy record's own probe asks the same question)."""
    code = ("import sysconfig; print(int(any('-fno-omit-frame-pointer' in "
            "(sysconfig.get_config_var(k) or '') for k in ('CFLAGS', 'PY_CFLAGS', "
            "'PY_CFLAGS_NODIST', 'CONFIGURE_CFLAGS'))))")
    p = run([py.real, "-S", "-c", code], timeout=60)
    return p.stdout.strip() == "1"


def perf_map_mode_names_nothing(py, fp_callgraph=False):
    """Why perf-map mode cannot name Python functions here, or None: with a
    perf that unwinds with libdw, DWARF call graphs find no frame in the
    trampolines, so only frame-pointer call graphs (fp_callgraph: what
    perfpy record uses when the interpreter keeps frame pointers) on an
    interpreter built with them do (docs/modes.md)."""
    if perf_unwinder() == "libdw" and not (fp_callgraph and keeps_frame_pointers(py)):
        return ("perf-map mode names no Python function with perf's libdw unwinder "
                "on an interpreter without frame pointers (docs/modes.md)")
    return None


def jit_dump_dir(private):
    """Where a test's jit dumps go: its own directory, or /tmp itself with a
    perf that unwinds with libdw (what perfpy record does)."""
    return "/tmp" if perf_unwinder() == "libdw" else private


def remove_jit_files(lines_dir):
    """After a recording whose dumps went to /tmp: each process's dump and
    perf inject's ELFs, found by the pids of the engine's line sidecars
    (PERFPY_LINES_DIR=lines_dir), as perfpy record finds them."""
    for name in os.listdir(lines_dir) if os.path.isdir(lines_dir) else ():
        m = re.match(r"perfpy-(\d+)\.lines$", name)
        if not m:
            continue
        pid = m.group(1)
        for path in ["/tmp/jit-%s.dump" % pid] + glob.glob("/tmp/jitted-%s-*.so" % pid):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def tmpfs_over(opts, where, side):
    """Shell, for a private mount namespace, that mounts a tmpfs with opts
    (size=64k, ro, noexec...) over the directory where. When the clone lies
    beneath where (a clone in /tmp), the tmpfs is mounted at side (an empty
    directory to be, outside the clone) first, the clone is bind-mounted into
    it at its own path, then it is made read-only if asked and moved over
    where: the built perfpy, the module and the programs stay reachable."""
    plain = 'mount -t tmpfs -o %s none "%s"' % (opts, where)
    if not ROOT.startswith(where.rstrip("/") + "/"):
        return plain
    inside = side + "/" + os.path.relpath(ROOT, where)
    rw = ",".join(o for o in opts.split(",") if o != "ro") or "rw"
    steps = ['mkdir -p "%s"' % side, 'mount -t tmpfs -o %s none "%s"' % (rw, side),
             'mkdir -p "%s"' % inside, 'mount --bind "%s" "%s"' % (ROOT, inside)]
    if "ro" in opts.split(","):
        steps.append('mount -o remount,ro "%s"' % side)
    steps.append('mount --move "%s" "%s"' % (side, where))
    return " && ".join(steps)


def others_can_reach(path):
    """Whether another user may pass through every directory down to path
    (a clone under a home only its owner can enter: no)."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if not os.stat(d).st_mode & 0o001:
            return False
        if d == "/":
            return True
        d = os.path.dirname(d)


def tree_for_others(base, *parts, copy=False):
    """The clone's root, for what another user (nobody) runs from it: ROOT
    itself when they can reach it (and copy is false), else a copy of parts
    (paths relative to ROOT: files or directories) in base/clone (base: the
    test's own directory, removed with it, made 0755 here), readable by all.
    The copy keeps the clone's layout, so BUILD/perfpy finds BUILD/lib
    beside it. A test that changes the tree asks for the copy."""
    if not copy and others_can_reach(ROOT):
        return ROOT
    os.chmod(base, 0o755)
    dest = os.path.join(base, "clone")
    if not others_can_reach(dest):
        raise unittest.SkipTest("another user can reach neither the clone (%s) nor %s"
                                % (ROOT, base))
    for part in parts:
        src, dst = os.path.join(ROOT, part), os.path.join(dest, part)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)
    for top, dirs, files in os.walk(dest):
        os.chmod(top, 0o755)
        for f in files:
            f = os.path.join(top, f)
            os.chmod(f, 0o755 if os.stat(f).st_mode & 0o100 else 0o644)
    return dest


# hidden(cmd, paths): cmd with each path hidden in a private mount namespace
# (a directory under an empty tmpfs, a file under /dev/null), as on a
# machine without what it is; nothing outside the namespace changes (root)
_HIDE = r"""set -e
while [ "$1" != -- ]; do
    if [ -d "$1" ]; then mount -t tmpfs none "$1"; else mount --bind /dev/null "$1"; fi
    shift
done
shift
exec "$@"
"""


def hidden(cmd, paths, env=None, timeout=900):
    return run(["unshare", "-m", "--propagation", "private", "bash", "-c", _HIDE, "hide"]
               + list(paths) + ["--"] + list(cmd), env=env, timeout=timeout)


def needs_perf(test):
    """Decorator: fail loudly in CI if perf is broken, skip elsewhere."""
    def wrapper(self, *a, **kw):
        why = perf_problem()
        if why:
            if os.environ.get("CI"):
                self.fail("perf must work in CI: " + why)
            self.skipTest(why)
        return test(self, *a, **kw)
    wrapper.__name__ = test.__name__
    wrapper.__doc__ = test.__doc__
    return wrapper


class TempDirTest(unittest.TestCase):
    """A test with its own temporary directory, removed afterwards, and a
    record of the pids whose /tmp files it may delete."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="perfpy-it-")
        # also when a subclass's setUp skips or fails after this (tearDown
        # does not run then: 27 empty perfpy-it-* were left in /tmp)
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self._own_pids = set()

    def tearDown(self):
        for pid in self._own_pids:
            for pattern in ("/tmp/perf-%d.map", "/tmp/jit-%d.dump",
                            "/tmp/perfpy-%d.lines"):
                try:
                    os.unlink(pattern % pid)
                except FileNotFoundError:
                    pass
            for path in glob.glob("/tmp/jitted-%d-*.so" % pid):   # libdw: jit_dump_dir
                os.unlink(path)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def own(self, *pids):
        """Mark pids whose /tmp files this test created (removed in tearDown)."""
        self._own_pids.update(int(p) for p in pids)

    def own_jitted(self, data):
        """Own every process whose jitted ELFs an injected perf.data names in
        /tmp (with libdw they live there, and a -f perf recording keeps them
        for perf report), the children the program never printed too (such
        as multiprocessing's resource tracker: its 457 ELFs were left behind
        and, with pids wrapping at 32768, later read as another test's)."""
        p = subprocess.run(["perf", "script", "--show-mmap-events", "-F", "pid", "-i", data],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True, timeout=300)
        self.own(*{int(x) for x in re.findall(r" /tmp/jitted-(\d+)-\d+\.so$", p.stdout, re.M)})

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def perfpy_run(self, py, script_args, mode="perf", env=None, timeout=300):
        """`perfpy run --mode MODE -- PY ARGS...`; returns CompletedProcess."""
        return run([PERFPY, "run", "--mode", mode, "--", py.path] + list(script_args),
                   env=env, timeout=timeout)


MAP_LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) py::(.+):(.+)$")


def read_map(pid):
    """Lines of /tmp/perf-<pid>.map (empty list if absent)."""
    try:
        with open("/tmp/perf-%d.map" % pid, encoding="utf-8",
                  errors="surrogateescape") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def perf_script_samples(text):
    """Splits `perf script` output into samples: (header, [frame symbols])."""
    samples = []
    for block in text.split("\n\n"):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        frames = []
        for l in lines[1:]:
            parts = l.strip().split(None, 1)
            if len(parts) == 2:
                sym = parts[1]
                cut = sym.rfind(" (")
                frames.append(sym[:cut] if cut >= 0 else sym)
        samples.append((lines[0], frames))
    return samples


def strip_offset(sym):
    """'py::foo:/x.py+0x9' -> 'py::foo:/x.py'."""
    return re.sub(r"\+0x[0-9a-f]+$", "", sym)


def def_lines(path):
    """{function name: line of its def} of a Python file, and <module>: 1."""
    found = {"<module>": 1}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"def (\w+)", line)
            if m:
                found[m.group(1)] = n
    return found
