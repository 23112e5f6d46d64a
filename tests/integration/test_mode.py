"""The default mode (`perfpy record -- python app.py`, no --mode): the best
this machine allows, said in the first line with the reason, before the
program starts. Root: sample mode. Root without CAP_BPF, CAP_PERFMON and
CAP_SYS_ADMIN (a container's: setpriv drops them from the bounding set), user nobody, a kernel without BTF:
read mode, not an error, the line naming what sample mode lacked. A
seccomp policy that forbids process_vm_readv on top: a hook mode, the line
naming that. Options that need perf's recording (-f perf): a hook mode.
`perfpy doctor` says the same for each kind of run.

The rest of the suite sets PERFPY_RECORD_MODE=hook (support.py): its
recordings are of the hook modes. These tests unset it.
"""
import os
import re
import shutil
import sys

from support import (BUILD, LIBDIR, PERFPY, ROOT, TempDirTest, interpreters, note,
                     others_can_reach, run, tree_for_others)

SAMPLER = os.path.join(BUILD, "perfpy-sample")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
# a container's root: CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN out of the
# bounding set, so the program it execs has none of them (capsh would do
# the same; setpriv is in both worlds)
NO_BPF = ["setpriv", "--bounding-set=-bpf,-perfmon,-sys_admin"]
DEFAULT = {"PERFPY_RECORD_MODE": None}
FIB = """import sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def main():
    for _ in range(int(sys.argv[1])):
        fib(20)
main()
sys.exit(3)
"""
# exec argv[1:] with process_vm_readv (310 on x86_64) failing with EPERM:
# a seccomp filter as a container runtime's profile might have
SECCOMP = r"""import ctypes, os, struct, sys
f = [(0x20, 0, 0, 0), (0x15, 0, 1, 310), (0x06, 0, 0, 0x00050000 | 1), (0x06, 0, 0, 0x7fff0000)]
prog = b"".join(struct.pack("HBBI", *i) for i in f)
buf = ctypes.create_string_buffer(prog)
fprog = struct.pack("HxxxxxxQ", len(f), ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.c_char_p(fprog), 0, 0) == 0, ctypes.get_errno()
os.execvp(sys.argv[1], sys.argv[1:])
"""


def first_line(stderr):
    return stderr.splitlines()[0] if stderr else ""


class DefaultMode(TempDirTest):

    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("sample and read modes are not built here (libbpf-dev, "
                          "libdw-dev)")
        if os.geteuid() != 0:
            self.skipTest("needs root (for the root case, and to become the others)")
        self.py = next((p for p in interpreters() if others_can_reach(p.path)), None)
        if not self.py:
            self.skipTest("no interpreter user nobody can run")
        os.chmod(self.tmp, 0o777)
        self.app = self.write("fib.py", FIB)
        os.chmod(self.app, 0o644)

    def record(self, prefix=(), args=(), perfpy=PERFPY):
        out = os.path.join(self.tmp, "out-%d" % len(os.listdir(self.tmp)))
        p = run(list(prefix) + [perfpy, "record", "-f", "collapsed", "-o", out] + list(args) +
                ["--", self.py.path, self.app, "200"], env=DEFAULT, timeout=300)
        return p, out

    def assert_fib_recorded(self, p, out):
        self.assertEqual(p.returncode, 3, p.stderr[-2000:])
        with open(out) as f:
            self.assertRegex(f.read(), r"(^|;)main \([^;]*fib\.py:6\);fib \(")

    def test_root_gets_sample_mode(self):
        p, out = self.record()
        self.assertRegex(first_line(p.stderr), r"^perfpy: sample mode, the best here: BPF "
                                               r"may be used")
        self.assertIn("in sample mode (BPF", p.stderr)
        self.assert_fib_recorded(p, out)

    def test_root_without_bpf_capabilities_gets_read_mode(self):
        """A container-like root (no CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN):
        read mode, and the line says why sample mode could not run."""
        p, out = self.record(NO_BPF)
        note("no BPF capabilities: " + first_line(p.stderr))
        self.assertRegex(first_line(p.stderr),
                         r"^perfpy: read mode, which needs no privilege: sample mode cannot "
                         r"run here \(loading the BPF program: Operation not permitted: it "
                         r"needs root, or CAP_BPF and CAP_PERFMON\)$")
        self.assertIn("in read mode", p.stderr)
        self.assert_fib_recorded(p, out)

    def test_user_nobody_gets_read_mode(self):
        root = tree_for_others(self.tmp, os.path.relpath(PERFPY, ROOT),
                               os.path.relpath(SAMPLER, ROOT), os.path.relpath(LIBDIR, ROOT))
        p, out = self.record(NOBODY, perfpy=os.path.join(root, os.path.relpath(PERFPY, ROOT)))
        self.assertRegex(first_line(p.stderr), r"^perfpy: read mode, which needs no privilege")
        self.assert_fib_recorded(p, out)

    def test_kernel_without_btf_gets_read_mode(self):
        if not shutil.which("unshare"):
            self.skipTest("needs unshare for a private mount namespace")
        p, out = self.record(["unshare", "-m", "--propagation", "private", "sh", "-c",
                              'mount --bind /dev/null /sys/kernel/btf/vmlinux && exec "$@"',
                              "sh"])
        self.assertRegex(first_line(p.stderr), r"^perfpy: read mode, which needs no privilege: "
                                               r"sample mode cannot run here \(the kernel has "
                                               r"no BTF \(/sys/kernel/btf/vmlinux\)")
        self.assert_fib_recorded(p, out)

    def test_seccomp_forbidding_reads_gets_a_hook_mode(self):
        """No BPF and no process_vm_readv: a hook mode, named with both
        reasons, before the program starts (whether perf may then record
        as a root without capabilities is perf's business, not checked)."""
        helper = self.write("seccomp.py", SECCOMP)
        p, _ = self.record(NO_BPF + [sys.executable, helper])
        note("no BPF, no process_vm_readv: " + first_line(p.stderr))
        self.assertRegex(first_line(p.stderr),
                         r"^perfpy: (jit|perf) mode: sample mode cannot run here \(loading the "
                         r"BPF program: Operation not permitted\), and read mode cannot read "
                         r"another process \(process_vm_readv Operation not permitted: a "
                         r"seccomp policy")

    def test_perf_data_gets_a_hook_mode(self):
        p, out = self.record(args=["-f", "perf"])
        # a -f perf recording keeps inject's ELFs for perf report, in /tmp
        # itself where perf unwinds with libdw: 73 of them were left by
        # each sid run (the program's first 73 code loads)
        if os.path.exists(out):
            self.own_jitted(out)
        self.assertRegex(first_line(p.stderr), r"^perfpy: (jit|perf) mode: -f perf \(a "
                                               r"perf.data for perf's own tools\) needs perf's "
                                               r"recording")

    def test_the_suites_setting_keeps_the_hook_modes(self):
        """PERFPY_RECORD_MODE=hook (what the rest of the suite runs with):
        no mode line, a hook mode; --mode beats it."""
        out = os.path.join(self.tmp, "hook.txt")
        p = run([PERFPY, "record", "-f", "collapsed", "-o", out, "--", self.py.path, self.app,
                 "50"], env={"PERFPY_RECORD_MODE": "hook"})
        self.assertRegex(first_line(p.stderr), r"^perfpy: recording .* in (jit|perf) mode")
        p = run([PERFPY, "record", "--mode", "read", "-f", "collapsed", "-o", out, "--",
                 self.py.path, self.app, "50"], env={"PERFPY_RECORD_MODE": "hook"})
        self.assertIn("in read mode", first_line(p.stderr))
        p = run([PERFPY, "record", "--", self.py.path, self.app],
                env={"PERFPY_RECORD_MODE": "fast"})
        self.assertEqual(p.returncode, 2)
        self.assertIn("PERFPY_RECORD_MODE", p.stderr)

    def test_doctor_says_which_mode_each_run_gets(self):
        p = run([PERFPY, "doctor", "--", self.py.path], env=DEFAULT)
        self.assertRegex(p.stdout, r"info\s+mode: record -- PYTHON\s+sample mode, the best here")
        self.assertRegex(p.stdout, r"info\s+mode: record -p PID\s+sample mode")
        self.assertRegex(p.stdout, r"info\s+mode: run, record -f perf (jit|perf) mode")
        p = run(NO_BPF + [PERFPY, "doctor", "--", self.py.path], env=DEFAULT)
        self.assertRegex(p.stdout, r"info\s+mode: record -- PYTHON\s+read mode")
