"""Helpers of the reliability tests (tests/integration/test_reliability_*.py).

Each scenario runs a program of programs/rel_*.py on every interpreter in
BUILD/pythons.txt, in both modes (PERFPY=perf and PERFPY=jit with
PYTHONPATH=BUILD/lib and the dump directory in the test's own temporary
directory), in its own process group with a time limit (a hang is a
failure, and whatever it left running is killed). Then it checks what a
program that "never breaks" must show:

  - the program's exit status and its own "ok ..." line;
  - not one "perfpy:" line on stderr (perfpy did not turn itself off), no
    traceback, no "Fatal Python error";
  - the files: every map line in CPython's format, every dump accepted by
    `perfpy jitdump` with unwinding data for every code load;
  - the functions the scenario made are named, in the right process's file.

Measured results go to the test log ("(...)" lines) and, when
PERFPY_REL_RESULTS names a file, as JSON lines to it (docs/RELIABILITY.md's
table is made from them: python3 tests/integration/rel_table.py FILE).
"""
import json
import os
import re
import signal
import subprocess
import sys

import support
from support import LIBDIR, PERFPY, TempDirTest, interpreters, note

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
MODES = ("perf", "jit")
MAP_LINE = re.compile(r"^[0-9a-f]+ [0-9a-f]+ py::.+:.+$")
LIST_LINE = re.compile(r"^\s+\d+\s+0x[0-9a-f]+\s+\d+\s+py::(.+?)(?:  |$)")
STRESS = os.environ.get("PERFPY_STRESS") == "1"


def program(name):
    return os.path.join(PROGRAMS, name)


def record(scenario, py, mode, result, command=""):
    """A measured result, for the log and for docs/RELIABILITY.md."""
    label = py.label if py is not None else "-"
    note("%s %s %s: %s" % (scenario, label, mode, result))
    path = os.environ.get("PERFPY_REL_RESULTS")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"scenario": scenario, "python": label, "mode": mode,
                                "result": result, "command": command}) + "\n")


class Ran:
    """What a program did: status, output, the pids it printed."""

    def __init__(self, cmd, returncode, stdout, stderr, timed_out):
        self.cmd = cmd
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        self.pids = [int(x) for x in re.findall(r"^pid (\d+)$", stdout, re.M)]
        self.children = [int(x) for x in re.findall(r"^child (\d+)$", stdout, re.M)]
        # processes the program started that may have files of their own
        # (multiprocessing's resource tracker, forkserver, idle workers)
        self.helpers = [int(x) for x in re.findall(r"^helper (\d+)$", stdout, re.M)]

    def ok_line(self, scenario):
        m = re.search(r"^ok %s ?(.*)$" % re.escape(scenario), self.stdout, re.M)
        return m.group(1) if m else None

    def why(self):
        return "%s\nexit %s%s\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(self.cmd), self.returncode, " (timed out)" if self.timed_out else "",
            self.stdout[-3000:], self.stderr[-3000:])


def run_group(cmd, env=None, timeout=120, cwd=None):
    """Runs cmd in its own session; on a time limit, or when it leaves
    processes behind, the whole group is killed. Returns a Ran."""
    full = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, env=full, cwd=cwd,
                         start_new_session=True)
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return Ran(cmd, p.returncode, out, err, timed_out)


def engine_env(mode, dumpdir, extra=None):
    env = {"PYTHONPATH": LIBDIR, "PERFPY": mode, "PERFPY_JITDUMP_DIR": dumpdir,
           "PYTHONPERFSUPPORT": None, "PYTHON_PERF_JIT_SUPPORT": None,
           "PERFPY_LINES_DIR": None, "REL_SCALE": "10" if STRESS else "1"}
    env.update(extra or {})
    return env


def dump_names(path):
    """[(qualname, filename)] of `perfpy jitdump --list PATH`; raises
    AssertionError when perfpy jitdump rejects the file or finds its last
    record cut."""
    p = support.run([PERFPY, "jitdump", "--list", path])
    # whole: "valid jitdump" alone, not "... up to its last record, which is
    # cut" (a process that ends normally leaves no cut record)
    if p.returncode != 0 or "unwinding info: every code load has one" not in p.stdout \
            or "%s: valid jitdump\n" % path not in p.stdout:
        raise AssertionError("perfpy jitdump %s: exit %d\n%s%s" % (
            path, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    names = []
    for line in p.stdout.splitlines():
        m = LIST_LINE.match(line)
        if m:
            q, _, f = m.group(1).partition(":")
            names.append((q, f))
    return names


def map_names(pid):
    """[(qualname, filename)] of /tmp/perf-<pid>.map; raises AssertionError
    on a line not in CPython's format."""
    names = []
    for line in support.read_map(pid):
        if not MAP_LINE.match(line):
            raise AssertionError("map of %d: bad line %r" % (pid, line))
        q, _, f = line.split(" ", 2)[2][4:].partition(":")
        names.append((q, f))
    return names


class ReliabilityTest(TempDirTest):
    """A test that runs rel_* programs with the engine on."""

    def run_program(self, py, mode, args, timeout=120, env=None, files=True):
        """Runs PY PROGRAM ARGS with the engine in mode; checks status,
        stderr and (files=True) the files of every pid it printed."""
        r = run_group([py.path] + list(args), env=engine_env(mode, self.tmp, env),
                      timeout=timeout)
        self.own(*(r.pids + r.children + r.helpers))
        self.assertFalse(r.timed_out, "hang: " + r.why())
        self.assertEqual(r.returncode, 0, r.why())
        self.assert_quiet(r)
        if files:
            for pid in r.pids + r.children:
                self.names(mode, pid)
        return r

    def assert_quiet(self, r):
        for bad in ("perfpy:", "Traceback", "Fatal Python error", "Segmentation",
                    "AddressSanitizer", "runtime error:"):
            self.assertNotIn(bad, r.stderr, r.why())

    def names(self, mode, pid):
        """The (qualname, filename) pairs pid's file names; checks the file."""
        if mode == "perf":
            self.assertTrue(os.path.exists("/tmp/perf-%d.map" % pid), "no map for %d" % pid)
            return map_names(pid)
        return dump_names(os.path.join(self.tmp, "jit-%d.dump" % pid))

    def for_each(self, fn, modes=MODES, pythons=None):
        """fn(py, mode) for every interpreter and mode, as subtests."""
        for py in pythons or interpreters():
            for mode in modes:
                with self.subTest(py=py.label, mode=mode):
                    fn(py, mode)
