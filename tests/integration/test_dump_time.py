"""perfpy dump's time on a 10-thread process, and the work behind it.

A dump took 230-600 ms (py-spy dump: 15): it read /proc/kallsyms whole
(5.4 MB the kernel writes out) to name a few dozen kernel addresses,
loaded the recording's BPF programs (the verifier's time), made a 32 MiB
ring, and libdw loaded a debuginfod client (30 libraries). The wall time
of a shared machine spreads too much to judge 50 ms here
(bench/dump_time.py measures it beside py-spy, docs/PERFORMANCE.md), so
the bound on the time is generous and the work is counted: with strace,
what each mode opens and which BPF programs and rings it makes.
"""
import os
import re
import resource
import shutil
import statistics
import subprocess
import time

from support import PERFPY, ROOT, TempDirTest, interpreters, note

SAMPLER = os.path.join(os.path.dirname(PERFPY), "perfpy-sample")
WORKLOAD = os.path.join(ROOT, "bench", "workloads", "dump10.py")
RUNS = 5
BOUND_MS = 500                  # the median; before: 565-1245 (sample), 299-559 (read) at load 10
DUMP_PROGRAMS = {"pp_on_sample", "pp_iter_snapsho", "pp_ksym_names"}   # (15 characters kept)


class DumpTime(TempDirTest):

    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("perfpy dump is in perfpy-sample, not built here")
        if os.geteuid() != 0:
            self.skipTest("sample mode's dump needs root")
        self.target = subprocess.Popen([interpreters()[-1].path, WORKLOAD, "600"],
                                       stdout=subprocess.PIPE, universal_newlines=True)
        self.pid = int(self.target.stdout.readline().split()[1])
        time.sleep(0.3)                         # every thread where it stays

    def tearDown(self):
        self.target.kill()
        self.target.wait()
        super().tearDown()

    def dump(self, mode, wrap=()):
        t0 = time.perf_counter()
        p = subprocess.run(list(wrap) + [PERFPY, "dump", "--mode", mode, str(self.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        ms = (time.perf_counter() - t0) * 1e3
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(len(re.findall(r"^Thread \d+ ", p.stdout, re.M)), 10, p.stdout)
        return ms

    def test_each_mode_in_its_bound_and_doing_only_its_work(self):
        """Five dumps of each mode, interleaved: every thread shown, the
        median wall time within BOUND_MS. Under strace, sample mode loads
        its three programs and no others, makes a ring of at most 4 MiB,
        opens neither /proc/kallsyms nor a debuginfod client; read mode
        loads no BPF program and opens neither. (The dump naming kernel
        frames from /proc/kallsyms again -> red: it is opened; the build
        before -> red: sample mode's median 710 ms.)"""
        times = {"sample": [], "read": []}
        for _ in range(RUNS):
            for mode in times:
                times[mode].append(self.dump(mode))
        said = "; ".join("%s median %.0f ms (%s)" % (m, statistics.median(v),
                                                     " ".join("%.0f" % x for x in v))
                         for m, v in times.items())
        note("%s, load %.1f: %s" % (interpreters()[-1].label, os.getloadavg()[0], said))
        for mode, v in times.items():
            self.assertLess(statistics.median(v), BOUND_MS, said)
        if not shutil.which("strace"):
            self.skipTest("strace is not installed: the work is counted with it")
        for mode in times:
            log = os.path.join(self.tmp, "strace-%s.txt" % mode)
            self.dump(mode, ["strace", "-f", "-qq", "-s", "64", "-e", "trace=bpf,openat",
                             "-o", log])
            with open(log) as f:
                text = f.read()
            loaded = set(re.findall(r'BPF_PROG_LOAD.*?prog_name="(pp_[a-z_]*)"', text))
            rings = [int(x) for x in re.findall(
                r"map_type=BPF_MAP_TYPE_RINGBUF, key_size=\d+, value_size=\d+, "
                r"max_entries=(\d+)", text)]
            opened = re.findall(r'openat\([^,]*, "([^"]*)"', text)
            note("%s mode: programs %s, rings %s, %d files opened" % (
                mode, sorted(loaded), rings, len(opened)))
            self.assertFalse([o for o in opened if o == "/proc/kallsyms"], mode)
            self.assertFalse([o for o in opened if "libdebuginfod" in o or "libcurl" in o],
                             mode)
            if mode == "sample":
                self.assertEqual(loaded, DUMP_PROGRAMS)
                self.assertTrue(rings and max(rings) <= 4 << 20, rings)
            else:
                self.assertEqual(loaded, set())
                self.assertNotIn("BPF_PROG_LOAD", text)

    def test_the_kernels_btf_is_read_into_huge_pages(self):
        """libbpf's copies of the kernel's BTF (5.5 MB read from sysfs, a
        copy, its index) were a dump's largest allocations, faulted in 4 KiB
        pages: 3,700 page faults a dump, a tenth of its time. Sample mode's
        dump grows its heap once in 2 MiB pages: under 2,000 faults (about
        1,000 here). (The heap left as it was -> red: 3,682.) Where the
        kernel gives no huge page on request (transparent_hugepage
        `never`), there is nothing to count."""
        try:
            with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
                thp = f.read()
        except OSError:
            thp = "[never]"
        if "[never]" in thp:
            self.skipTest("transparent huge pages are off here: %s" % thp.strip())
        faults = []
        for _ in range(3):
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
            self.dump("sample")
            faults.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before)
        note("%s: sample mode's dump, page faults %s" % (interpreters()[-1].label, faults))
        self.assertLess(statistics.median(faults), 2000, faults)
