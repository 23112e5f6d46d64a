"""`perfpy record -a`: every CPython process of the host, those running
when it begins and those that start while it records (a container's too),
each under a root naming its command line; and `--every`: one pprof per
interval, in the shape a profile store ingests (sample types, period,
time, duration, labels on every sample), read by two consumers (the npm
`pprof-format` decoder and Google's protobuf runtime), none of the
samples lost at a boundary, the directory kept within --keep, a full disk
survived."""

import glob
import json
import math
import os
import re
import shutil
import subprocess
import time
import unittest

import pprof_decode
import support
from support import BUILD, PERFPY, TempDirTest, interpreters, note, run
from test_report import collapsed_counts

SAMPLER = os.path.join(BUILD, "perfpy-sample")
SIDROOT = os.path.join(support.ROOT, "scripts", "sidroot")
JS = os.path.join(support.ROOT, "tests", "js")

# a service that computes until told: its stacks <module> -> serve -> handler -> leaf
SERVICE = """\
import sys, time
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def handler(n):
    return leaf(n)
def serve(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        handler(2000)
serve(float(sys.argv[1]))
"""
CHAIN = re.compile(r"<module> \([^;]*service\.py:13\);serve \([^;]*service\.py:1[12]\);"
                   r"handler \([^;]*service\.py:8\);leaf \([^;]*service\.py:[3-6]\)")


def python_of(label):
    return [p for p in interpreters() if p.label == label]


class HostTest(TempDirTest):
    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        if os.geteuid() != 0:
            self.skipTest("record -a needs root (or CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE)")
        self.script = self.write("service.py", SERVICE)
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, 9)
                except ProcessLookupError:
                    pass
            p.wait()
        super().tearDown()

    def service(self, python, seconds, tag):
        p = subprocess.Popen([python, self.script, str(seconds), tag], start_new_session=True)
        self.procs.append(p)
        return p

    def record(self, *args, timeout=300):
        return run([PERFPY, "record", "-a"] + list(args), timeout=timeout)


def roots(stacks):
    """{root: samples} of a collapsed -a profile (a container's first)."""
    out = {}
    for s, n in stacks.items():
        parts = s.split(";")
        root = parts[0] if not parts[0].startswith("[container ") else \
            parts[0] + ";" + parts[1]
        out[root] = out.get(root, 0) + n
    return out


class AllProcesses(HostTest):
    def container_python(self):
        """(suite, python) of a root scripts/sidroot can run, or None."""
        if os.environ.get("PERFPY_WORLD"):
            return None                    # containers are run from the host world
        for suite, py in (("sid", "python3.14"), ("trixie", "python3.13")):
            env = dict(os.environ, PERFPY_ROOT_SUITE=suite)
            p = run([SIDROOT, "path"], env=env)
            root = p.stdout.strip()
            if p.returncode == 0 and os.path.exists(os.path.join(root, "usr/bin", py)):
                return suite, py, root
        return None

    def in_container(self, where, seconds, tag):
        suite, py, root = where
        rel = "/opt/%s" % os.path.basename(self.tmp)
        os.makedirs(root + rel)
        self.addCleanup(shutil.rmtree, root + rel, True)
        shutil.copy(self.script, root + rel + "/service.py")
        p = subprocess.Popen([SIDROOT, "container", py, rel + "/service.py", str(seconds), tag],
                             env=dict(os.environ, PERFPY_ROOT_SUITE=suite),
                             start_new_session=True)
        self.procs.append(p)
        return p

    def test_processes_before_and_during_each_a_root_with_whole_stacks(self):
        """Five CPython processes of different versions started before
        `record -a`, three during it (one in a container root when one can
        be run): every one has a root naming its command line (its tag, the
        script) and pid, a container's under [container ROOT] with its pid
        there, and its stacks in leaf whole (<module> -> serve -> handler ->
        leaf) for >= 99% of them. Mutation: no host_decide at an exec (the
        process left with p->python = 0) -> red: the three started during it
        have no root."""
        by_version = {}
        for p in interpreters():
            by_version.setdefault(p.version, p)          # 3.11.2 (Debian), 3.11.7 (pyenv)
        versions = [by_version[v] for v in sorted(by_version, key=lambda v: tuple(
            int(x) for x in v.split(".")))]
        where = self.container_python()
        if len(versions) < 7 and not (len(versions) >= 6 and where):
            self.skipTest("fewer than 7 CPython versions here (%d)" % len(versions))
        before, during = versions[:5], versions[5:7 if where else 8]
        tags = {}
        for i, py in enumerate(before):
            tag = "before-%d-%s" % (i, py.version)
            tags[tag] = self.service(py.path, 14, tag)
        time.sleep(1)
        out = os.path.join(self.tmp, "host.txt")
        rec = subprocess.Popen([PERFPY, "record", "-a", "-r", "99", "-d", "10", "-f",
                                "collapsed", "-o", out], stderr=subprocess.PIPE,
                               universal_newlines=True)
        time.sleep(2)
        for i, py in enumerate(during):
            tag = "during-%d-%s" % (i, py.version)
            tags[tag] = self.service(py.path, 8, tag)
        if where:
            tags["during-container-%s" % where[1]] = self.in_container(
                where, 8, "during-container-%s" % where[1])
        err = rec.communicate(timeout=300)[1]
        self.assertEqual(rec.returncode, 0, err[-3000:])
        stacks = collapsed_counts(out)
        found = roots(stacks)
        self.assertEqual(len(tags), 8)
        for tag in tags:
            with self.subTest(process=tag):
                mine = [r for r in found if " %s " % tag in r + " " and "service.py" in r]
                self.assertEqual(len(mine), 1, "no single root for %s among %s" %
                                 (tag, sorted(found)[:20]))
                root = mine[0]
                self.assertRegex(root, r"service\.py [\d.]+ %s \(pid \d+" % re.escape(tag))
                if "container" in tag:
                    self.assertRegex(root, r"^\[container [^\]]+\];.*\(pid \d+, \d+ in the "
                                           r"container\)$")
                leafs = sum(n for s, n in stacks.items() if s.startswith(root + ";") and
                            re.search(r";leaf \(", s))
                whole = sum(n for s, n in stacks.items() if s.startswith(root + ";") and
                            CHAIN.search(s))
                note("%s: %d samples under %r, %d in leaf, %d of those whole" %
                     (tag, found[root], root[-90:], leafs, whole))
                self.assertGreater(leafs, 10)
                self.assertGreaterEqual(whole * 100, leafs * 99)

    def test_non_python_processes_left_out_unless_asked(self):
        """A busy shell loop is left out of -a's profile, and is in it with
        --all-processes (its root, C frames only); the CPython beside it is
        in both. Mutation: host_decide keeps every process (p->python = 1)
        -> red: 97 samples of the shell without --all-processes. (The BPF
        program sampling every process whatever pp_host says is caught by
        nothing: user space leaves them out too.)"""
        py = interpreters()[0]
        self.service(py.path, 8, "beside-the-shell")
        shell = subprocess.Popen(["/bin/sh", "-c", "while :; do :; done", "sh-loop-tag"],
                                 start_new_session=True)
        self.procs.append(shell)
        results = {}
        for extra in ([], ["--all-processes"]):
            out = os.path.join(self.tmp, "left%d.txt" % len(extra))
            p = self.record("-r", "99", "-d", "3", "-f", "collapsed", "-o", out, *extra)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            found = roots(collapsed_counts(out))
            results[bool(extra)] = (
                sum(n for r, n in found.items() if "(pid %d)" % shell.pid in r),
                sum(n for r, n in found.items() if "beside-the-shell" in r))
        note("shell loop: %d samples without --all-processes, %d with; the CPython: %d, %d"
             % (results[False][0], results[True][0], results[False][1], results[True][1]))
        self.assertEqual(results[False][0], 0)
        self.assertGreater(results[True][0], 20)
        self.assertGreater(results[False][1], 20)
        self.assertGreater(results[True][1], 20)

    def test_a_python_perfpy_cannot_read_is_listed_once_with_native_frames(self):
        """CPython 3.7 (pyenv's, when here): listed once on stderr with the
        reason (its version), its root in the profile with native frames
        only; the twin, a 3.8 beside it, read whole. Mutation: say_refused
        prints at every look -> red: the line more than once."""
        old = glob.glob("/root/.pyenv/versions/3.7.*/bin/python3.7")
        if not old:
            self.skipTest("no CPython 3.7 here (pyenv's)")
        old_p = self.service(old[0], 8, "too-old")
        self.service(interpreters()[0].path, 8, "readable")
        out = os.path.join(self.tmp, "old.txt")
        p = self.record("-r", "99", "-d", "4", "-f", "collapsed", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        lines = [l for l in p.stderr.splitlines() if "the process %d " % old_p.pid in l]
        note("said of 3.7: %s" % lines)
        self.assertEqual(len(lines), 1, p.stderr[-3000:])
        self.assertIn("3.7", lines[0])
        self.assertIn("its Python frames are not read (its native frames are)", lines[0])
        found = roots(collapsed_counts(out))
        stacks = collapsed_counts(out)
        old_root = [r for r in found if "too-old" in r]
        self.assertEqual(len(old_root), 1, sorted(found))
        self.assertGreater(found[old_root[0]], 20)
        self.assertFalse([s for s in stacks if s.startswith(old_root[0] + ";") and
                          "service.py" in s.split(";", 1)[1]])
        self.assertTrue([s for s in stacks if "readable" in s.split(";")[0] and CHAIN.search(s)])


class NoPrivilege(HostTest):
    def test_one_message_exit_1(self):
        """As user nobody: one line saying what -a needs, exit 1, nothing
        written. The twin (root) is every other test here. Mutation: the
        message of --mode sample (which points to the trampoline modes) ->
        red."""
        base = support.tree_for_others(self.tmp, "build/perfpy", "build/perfpy-sample")
        out = os.path.join(self.tmp, "out")
        os.chmod(self.tmp, 0o777)
        p = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 os.path.join(base, "build", "perfpy"), "record", "-a", "-d", "1",
                 "-o", out])
        note("as nobody: exit %d, %r" % (p.returncode, p.stderr.strip()))
        self.assertEqual(p.returncode, 1)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("record -a cannot sample here", p.stderr)
        self.assertIn("root", p.stderr)
        self.assertFalse(os.path.exists(out))


def decode_js(path):
    d = run(["node", os.path.join(JS, "decode-pprof.js"), path])
    assert d.returncode == 0, d.stderr
    return json.loads(d.stdout)


class Every(HostTest):
    def every(self, out, seconds, *extra):
        p = self.record("--every", "1", "-d", str(seconds), "-r", "99", "-o", out, *extra)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p, sorted(glob.glob(os.path.join(out, "perfpy-*.pb.gz")))

    def test_one_pprof_a_second_labelled_read_by_two_consumers(self):
        """--every 1 -d 6 with --label: six files named by time, each
        decoded by pprof-format and by protobuf alike: cpu/nanoseconds
        sample type and period (1e9/99 ns), time_nanos one second apart,
        duration 1 s, every sample labelled service, pid, tid, thread and
        env; their samples add up to the samples perfpy took from the BPF
        ring (none lost at a boundary). Mutation: on_sample returns after
        rotate() (the sample that crosses a boundary dropped) -> red: 611
        taken, 606 in the files."""
        if not os.path.isdir(os.path.join(JS, "node_modules", "pprof-format")):
            self.assertEqual(run(["npm", "ci", "--silent"], cwd=JS, timeout=600).returncode, 0)
        py = interpreters()[0]
        svc = self.service(py.path, 9, "labelled")
        out = os.path.join(self.tmp, "profiles")
        p, files = self.every(out, 6, "--label", "env=ci")
        m = re.search(r"(\d+) samples taken, (\d+) profiles of (\d+) samples written",
                      p.stderr)
        said = int(m.group(1))
        self.assertEqual(int(m.group(3)), said)
        self.assertEqual(len(files), 6, files)
        self.assertTrue(all(re.match(r"perfpy-\d{8}T\d{6}Z\.pb\.gz$", os.path.basename(f))
                            for f in files), files)
        ours = pprof_decode.decode(BUILD, files)
        total_js = total_pb = 0
        times = []
        for f in files:
            js, pb = decode_js(f), ours[f]
            self.assertEqual(js["sampleTypes"], ["samples/count", "cpu/nanoseconds"])
            self.assertEqual(pb["sample_types"], ["samples/count", "cpu/nanoseconds"])
            self.assertEqual(pb["period_type"], "cpu/nanoseconds")
            self.assertEqual(pb["period"], round(1e9 / 99))
            self.assertEqual(pb["duration_nanos"], 1000000000)
            self.assertEqual(js["count"], sum(s["values"][0] for s in pb["samples"]))
            total_js += js["count"]
            total_pb += sum(s["values"][0] for s in pb["samples"])
            times.append(pb["time_nanos"])
            for s in pb["samples"]:
                self.assertTrue({"service", "pid", "tid", "thread", "env"} <= set(s["labels"]),
                                s["labels"])
                self.assertEqual(s["labels"]["env"], "ci")
        mine = [s for f in files for s in ours[f]["samples"]
                if s["labels"]["pid"] == str(svc.pid)]
        note("6 files: %d samples by pprof-format, %d by protobuf, %d taken by perfpy; "
             "the service's labels: %s" % (total_js, total_pb, said,
                                          mine[0]["labels"] if mine else None))
        self.assertEqual(total_js, said)
        self.assertEqual(total_pb, said)
        self.assertEqual([t - times[0] for t in times], [i * 1000000000 for i in range(6)])
        self.assertTrue(mine)
        self.assertEqual(mine[0]["labels"]["service"], "service")
        self.assertTrue(any("handler" in s["stack"] for s in mine))

    def test_intervals_add_up_to_one_recording_of_the_same_load(self):
        """--every 1 for 12 s and a plain 12 s recording side by side, of
        the same two busy CPython processes: 12 files whose samples of the
        two add up to those of the one recording within 5%, or within three
        standard deviations of the difference of two samplings where that is
        more. The two recorders sample at different instants: each of their
        ticks hits the two processes with probability p (the one recording's
        share of its ticks), so the difference has variance 2 N (1 - p) for
        N samples; on an idle machine p is near 1 and the bound is 5%, while
        under other engineers' load (p 0.2-0.3) the two differed by 6% and
        11%. bench/every_sum.py runs the 60 s --every 5 version. Mutation:
        each sample of each interval's first quarter folded twice -> red: 169
        more samples in the files than in the one recording, bound 98;
        reverted, green."""
        pys = interpreters()
        svcs = [self.service(pys[i % len(pys)].path, 16, "sum-%d" % i) for i in range(2)]
        pids = {str(s.pid) for s in svcs}
        out = os.path.join(self.tmp, "profiles")
        one = os.path.join(self.tmp, "one.pb.gz")
        single = subprocess.Popen([PERFPY, "record", "-a", "-r", "99", "-d", "12", "-f",
                                   "pprof", "-o", one], stderr=subprocess.PIPE,
                                  universal_newlines=True)
        p, files = self.every(out, 12)
        self.assertEqual(single.wait(timeout=300), 0, single.stderr.read()[-2000:])
        self.assertEqual(len(files), 12, files)
        dec = pprof_decode.decode(BUILD, files + [one])
        split = sum(s["values"][0] for f in files for s in dec[f]["samples"]
                    if s["labels"]["pid"] in pids)
        whole = sum(s["values"][0] for s in dec[one]["samples"] if s["labels"]["pid"] in pids)
        ticks = (os.cpu_count() or 1) * 99 * 12
        p = min(1.0, whole / ticks)
        bound = max(0.05 * whole, 3 * math.sqrt(2 * whole * (1 - p)))
        note("two busy processes, 12 s: %d samples in 12 files, %d in one recording (%+.1f%%; "
             "their share of the ticks %.2f, bound %.1f%%)" % (
                 split, whole, 100.0 * (split - whole) / whole if whole else 0, p,
                 100.0 * bound / whole if whole else 0))
        self.assertGreater(whole, 300)
        self.assertLessEqual(abs(split - whole), bound)

    def test_keep_bounds_the_directory(self):
        """--keep 2 leaves the two newest files, --keep 1K the newest
        alone (the bound never removes the interval just written); without
        --keep all stay (the twin of both)."""
        self.service(interpreters()[0].path, 20, "kept")
        counts = {}
        for keep in (None, "2", "1K"):
            out = os.path.join(self.tmp, "keep-%s" % keep)
            p, files = self.every(out, 4, *(["--keep", keep] if keep else []))
            counts[keep] = [os.path.basename(f) for f in files]
            if keep:
                self.assertIn("older ones removed (--keep)", p.stderr)
        note("files kept: %s" % {k: len(v) for k, v in counts.items()})
        self.assertEqual(len(counts[None]), 4)
        self.assertEqual(len(counts["2"]), 2)
        self.assertEqual(len(counts["1K"]), 1)

    def full_disk(self, free_after):
        """--every 1 -d 5 into a 4 MiB tmpfs filled up (a private mount
        namespace), freed after free_after seconds (None: never): what
        perfpy said, its exit status, the files there at the end."""
        self.service(interpreters()[0].path, 12, "full-disk")
        d, keep = os.path.join(self.tmp, "small"), os.path.join(self.tmp, "seen")
        os.makedirs(d)
        os.makedirs(keep)
        free = "(sleep %s; rm -f %s/fill) &" % (free_after, d) if free_after else ""
        script = ("%s && head -c 8M /dev/zero > %s/fill 2>/dev/null; %s "
                  "%s record -a --every 1 -d 5 -r 99 -o %s; echo $? > %s/status; "
                  "cp %s/perfpy-* %s/ 2>/dev/null; exit 0"
                  % (support.tmpfs_over("size=4m", d, d + "-side"), d, free, PERFPY, d,
                     keep, d, keep))
        p = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                timeout=300)
        with open(os.path.join(keep, "status")) as f:
            status = int(f.read())
        return p.stderr, status, sorted(glob.glob(os.path.join(keep, "perfpy-*.pb.gz")))

    def test_full_disk_holds_intervals_until_written(self):
        """The disk full for 2.5 s: the intervals of that time are kept in
        memory (said once) and written once there is room, all five files
        in the end, exit 0."""
        err, status, files = self.full_disk(2.5)
        note("full for 2.5 s: exit %d, %d files; said: %s" % (
            status, len(files), [l for l in err.splitlines() if "kept in memory" in l]))
        self.assertEqual(status, 0, err[-3000:])
        self.assertEqual(len([l for l in err.splitlines()
                              if "is kept in memory and written when" in l]), 1, err)
        self.assertIn("written again", err)
        self.assertEqual(len(files), 5, files)

    def test_full_disk_to_the_end_drops_with_a_count(self):
        """The disk full throughout: every interval held, none written, the
        count of dropped intervals and their samples said, exit 1, no crash
        (no signal)."""
        err, status, files = self.full_disk(None)
        note("full throughout: exit %d, said: %s" % (
            status, [l for l in err.splitlines() if "dropped" in l][-1:]))
        self.assertEqual(status, 1, err[-3000:])
        self.assertRegex(err, r"perfpy: 5 intervals \(\d+ samples\) could not be written "
                              r"and were dropped")
        self.assertEqual(files, [])


class Usage(unittest.TestCase):
    def test_impossible_sets_refused_before_recording(self):
        """Each option of -a's family alone where it cannot work: exit 2,
        one line naming it; the twin (-a --every 1 --keep 3 --label k=v,
        parsed) is the Every tests'."""
        cases = [(["--every", "5", "--", "python3", "-c", "1"], "--every"),
                 (["-a", "--keep", "5"], "--keep N or SIZE"),
                 (["-a", "--label", "service=x"], "--label service"),
                 (["-a", "--label", "1bad=x"], "KEY=VALUE"),
                 (["-a", "--every", "0.5"], "--every takes"),
                 (["-a", "--mode", "jit"], "--mode jit"),
                 (["-a", "--", "python3", "-c", "1"], "give no program"),
                 (["-a", "--every", "5", "-o", "-"], "give -o DIR")]
        for args, said in cases:
            with self.subTest(args=args):
                p = run([PERFPY, "record"] + args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(said, p.stderr)


if __name__ == "__main__":
    unittest.main()
