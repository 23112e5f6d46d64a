"""CPython's own Lib/test/test_perf_profiler.py as a peer suite.

Each interpreter's own copy of the file (its stdlib's test/ directory:
pyenv's lib/python3.X/test/, Debian's libpython3.X-testsuite) runs against
perfpy installed into a venv (scripts/install, what `make install
PYTHON=venv/bin/python` does; the venvs are kept in BUILD/peer/):

- 3.12+: first with CPython's own support alone (the interpreter itself,
  no perfpy: the reference), then in the venv with PERFPY=perf, with
  PERFPY=jit, and with no PERFPY (perfpy installed but not asked for).
  Every test that passes in the reference passes in each perfpy run; one
  the reference skips or fails is a counted skip saying so.
- 3.8-3.11 have no trampoline and no copy of the file: the file of the
  oldest 3.12+ interpreter here runs in the venv, where the file's own
  switches (-X perf) start perfpy, through a minimal shim (see
  programs/peer_runner.py: sysconfig's PY_HAVE_PERF_TRAMPOLINE, three
  test.support helpers these versions lack, and sys's three
  *_stack_trampoline functions bound to perfpy's in the venv's processes).

Each peer test is a counted subtest (interpreter, run, test). The file's
tearDown deletes every perf map in /tmp that its setUp did not see, so each
run gets a private /tmp: a tmpfs in a mount namespace of its own (unshare
-m; nothing mounted outside it, nothing to restore). perf's build-id cache
goes there too (PERF_BUILDID_DIR).
"""
import json
import os
import shutil
import unittest

import support
from support import BUILD, ROOT, interpreters, run

RUNNER = os.path.join(ROOT, "tests", "integration", "programs", "peer_runner.py")
PEER = os.path.join(BUILD, "peer")
CLEAN_ENV = {"PYTHONPATH": None, "PERFPY": None, "PYTHONPERFSUPPORT": None,
             "PYTHON_PERF_JIT_SUPPORT": None, "PERFPY_JITDUMP_DIR": None,
             "PERFPY_LINES_DIR": None, "PYTHONHOME": None,
             "PERF_BUILDID_DIR": "/tmp/.debug"}
PRIVATE_TMP = 'mount -t tmpfs -o mode=1777 perfpy-peer /tmp && cd / && exec "$@"'

# Peer tests whose premise a perfpy run negates: where one fails in that
# run it is a counted skip with its reason (they run, and pass, in the
# others; where the premise does not matter, e.g. perf-map names under DWARF
# unwinding, they pass and count as passes).
NEGATED = (
    # run prefix, class ("" for any), method prefix, reason
    ("PERFPY=", "", "test_python_calls_do_not_appear_in_the_stack",
     "it checks that nothing is named without a switch, and PERFPY is a switch "
     "(every process names its functions); it passes in the run without PERFPY"),
    ("PERFPY=perf", "TestPerfProfilerWithDwarf", "test_python_calls_appear_in_the_stack",
     "the program runs with -X perf_jit, and PERFPY=perf keeps perfpy's perf-map "
     "engine over CPython's jitdump (perfpy record --mode perf relies on it; it never "
     "writes two formats in one process); perf's DWARF unwinding names no frame in "
     "anonymous memory. It passes under PERFPY=jit"),
)

SHIM = '''"""perfpy's peer suite only (tests/integration/test_cpython_peer.py): on
CPython 3.8-3.11, which have no sys.*_stack_trampoline, those are perfpy's."""
import sys


def _perfpy(name):
    def call(*args):
        import perfpy
        return getattr(perfpy, name)(*args)
    call.__name__ = name
    return call


for _n in ("activate_stack_trampoline", "deactivate_stack_trampoline",
           "is_stack_trampoline_active"):
    if not hasattr(sys, _n):
        setattr(sys, _n, _perfpy(_n))
'''


def own_file(py):
    """The interpreter's own test_perf_profiler.py (it may be absent)."""
    p = run([py.real, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
            check=True, env=CLEAN_ENV)
    return os.path.join(p.stdout.strip(), "test", "test_perf_profiler.py")


class PeerSuite(unittest.TestCase):

    def venv(self, py):
        """BUILD/peer/venv-<label>/bin/python with this build's perfpy
        installed (and, before 3.12, the shim's .pth)."""
        home = os.path.join(PEER, "venv-" + py.label)
        vpy = os.path.join(home, "bin", "python")
        if not os.path.exists(vpy):
            shutil.rmtree(home, ignore_errors=True)
            run([py.real, "-m", "venv", "--without-pip", home], check=True, env=CLEAN_ENV)
        run([os.path.join(ROOT, "scripts", "install"), "", "/usr/local", vpy, BUILD],
            check=True)
        site = run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                   check=True, env=CLEAN_ENV).stdout.strip()
        shim_py = os.path.join(site, "perfpy_peer_shim.py")
        shim_pth = os.path.join(site, "perfpy_peer_shim.pth")
        if py.version_info < (3, 12):
            with open(shim_py, "w") as f:
                f.write(SHIM)
            with open(shim_pth, "w") as f:
                f.write("import perfpy_peer_shim\n")
        return vpy

    def run_file(self, python, test_file, env, shim=False):
        """{test id: (outcome, detail)} of one run in a private /tmp."""
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", PRIVATE_TMP, "sh",
               python, RUNNER, test_file] + (["--shim"] if shim else [])
        full = dict(CLEAN_ENV)
        full.update(env)
        p = run(cmd, env=full, timeout=1800)
        line = [l for l in p.stdout.splitlines() if l.startswith("PEER-RESULTS ")]
        self.assertTrue(line, "%s exited %d without results\nstdout:\n%s\nstderr:\n%s"
                        % (" ".join(cmd), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
        rows = json.loads(line[-1][len("PEER-RESULTS "):])
        self.assertTrue(rows, "no test ran")
        return {tid: (outcome, detail) for tid, outcome, detail in rows}

    def short(self, tid):
        return tid.replace("test_perf_profiler.", "")

    def test_cpython_test_perf_profiler(self):
        if support.SANITIZER:
            self.skipTest("under %s the module needs its runtime preloaded, which a "
                          "venv's interpreter does not do" % support.SANITIZER)
        if os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("needs root and unshare for a private /tmp (the file's "
                          "tearDown deletes every new perf map in /tmp)")
        pys = interpreters()
        own = [(py, own_file(py)) for py in pys if py.version_info >= (3, 12)]
        own_files = [(py, f) for py, f in own if os.path.exists(f)]
        oldest = min(own_files, key=lambda pf: pf[0].version_info, default=(None, None))[1]
        os.makedirs(PEER, exist_ok=True)
        for py in pys:
            if py.version_info >= (3, 12):
                self.check_own(py, own_file(py))
            else:
                self.check_old(py, oldest)

    def check_own(self, py, test_file):
        if not os.path.exists(test_file):
            with self.subTest(py=py.label):
                self.skipTest("no %s: CPython's test suite is not installed (Debian: "
                              "libpython%d.%d-testsuite)" % ((test_file,) + py.version_info))
            return
        ref = self.run_file(py.real, test_file, {})
        vpy = self.venv(py)
        for run_name, env in (("PERFPY=perf", {"PERFPY": "perf"}),
                              ("PERFPY=jit", {"PERFPY": "jit"}),
                              ("installed, no PERFPY", {})):
            got = self.run_file(vpy, test_file, env)
            for tid in sorted(set(ref) | set(got)):
                with self.subTest(py=py.label, run=run_name, test=self.short(tid)):
                    r_out, r_detail = ref.get(tid, ("absent", ""))
                    g_out, g_detail = got.get(tid, ("absent", ""))
                    if r_out == "skip":
                        self.skipTest("CPython's own support skips it here: " + r_detail)
                    if r_out != "pass":
                        self.skipTest("fails with CPython's own support here too: %s"
                                      % (r_detail.strip().splitlines() or ["?"])[-1])
                    cls, _, method = self.short(tid).rpartition(".")
                    for run_prefix, cls_name, method_prefix, reason in NEGATED:
                        if run_name.startswith(run_prefix) and cls_name in ("", cls) and \
                                method.startswith(method_prefix):
                            if g_out != "pass":
                                self.skipTest("negated by %s: %s" % (run_name, reason))
                    self.assertEqual(g_out, "pass", "passes with CPython's own support, "
                                     "%s with perfpy (%s):\n%s" % (g_out, run_name, g_detail))

    def check_old(self, py, test_file):
        if not test_file:
            with self.subTest(py=py.label):
                self.skipTest("no CPython 3.12+ with its test_perf_profiler.py here to "
                              "take the file from")
            return
        vpy = self.venv(py)
        got = self.run_file(vpy, test_file, {}, shim=True)
        for tid in sorted(got):
            with self.subTest(py=py.label, run="installed, 3.12's file", test=self.short(tid)):
                outcome, detail = got[tid]
                if outcome == "skip":
                    self.skipTest(detail)
                self.assertEqual(outcome, "pass", detail)


if __name__ == "__main__":
    unittest.main()
