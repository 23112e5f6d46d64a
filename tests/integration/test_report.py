"""`perfpy report`: real recordings of examples/example.py on every
interpreter, turned into every format and checked by the tools people use
to read them; a workload whose split of time is known; the error cases
(each with its positive twin).

Checks per format: collapsed (every line "stack count", counts add up to the
summary's samples, `foo (…example.py:1)` present), flamegraph (well-formed
XML for xml.etree), speedscope (valid against the schema shipped in the
`speedscope` npm package), pprof (decoded by `pprof-format`, non-zero
samples, a function `foo`), html (headless Chromium: no console error,
`foo` visible, zoom and search work), perf (a perf.data perf can read).

The node tools live in tests/js (installed by scripts/deps.sh with npm ci,
or by these tests when node_modules is missing); without node, npm or
Chromium these checks fail, never skip.
"""
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
import unittest
import xml.etree.ElementTree as ET

import support
from support import (def_lines, BUILD, EXAMPLES, PERFPY, ROOT, TempDirTest, interpreters,
                     needs_perf, run)

JS = os.path.join(ROOT, "tests", "js")
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
EXAMPLE = os.path.join(EXAMPLES, "example.py")
FORMATS = {"collapsed": "txt", "flamegraph": "svg", "speedscope": "speedscope.json",
           "pprof": "pb.gz", "html": "html", "perf": "data"}


JS_PACKAGES = ("ajv", "speedscope", "pprof-format", "playwright-core")


def js_problem():
    """None if the node validators can run, else why not. Missing node
    packages are installed here (npm ci in tests/js, as scripts/deps.sh does
    for make test), once, under a lock: two test modules may ask at once."""
    if not shutil.which("node"):
        return "node is not installed (scripts/deps.sh installs it)"
    def missing():
        return [p for p in JS_PACKAGES if not os.path.isdir(os.path.join(JS, "node_modules", p))]
    if missing():
        if not shutil.which("npm"):
            return "tests/js/node_modules is missing and npm is not installed " \
                   "(scripts/deps.sh installs it)"
        with open(os.path.join(JS, ".npm-ci.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if missing():
                p = run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                        cwd=JS, timeout=600)
                if p.returncode != 0:
                    return "npm ci in tests/js failed: " + p.stderr[-1000:]
        if missing():
            return "tests/js/node_modules/%s is missing after npm ci" % missing()[0]
    return None


def chromium_problem():
    path = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    return None if os.access(path, os.X_OK) else "chromium is not installed (apt-get install chromium)"


def require_validators(test, chromium=False):
    """The format validators run, or the test fails: never a skip that turns
    every speedscope, pprof or HTML check off."""
    why = js_problem() or (chromium_problem() if chromium else None)
    if why:
        test.fail("the output-format validators cannot run: " + why)


def record(test, py, args, mode=None, env=None, freq=999, timeout=300):
    """perf record (DWARF call graphs) around `perfpy run`; returns (perf.data
    path, run result). mode None: perf-map mode where it names Python
    functions under DWARF (perf with libunwind), else jit. Marks the recorded
    pids as the test's own (their /tmp files go in tearDown)."""
    if mode is None:
        mode = "jit" if support.perf_map_mode_names_nothing(py) else "perf"
    data = os.path.join(test.tmp, "perf-%s.data" % mode)
    full_env = {"PERFPY_LINES_DIR": test.tmp,
                "PERFPY_JITDUMP_DIR": support.jit_dump_dir(test.tmp)}
    full_env.update(env or {})
    p = run(["perf", "record", "-q", "--no-bpf-event", "-k", "1", "-F", str(freq),
             "--call-graph", "dwarf,16384", "-o", data, "--",
             PERFPY, "run", "--mode", mode, "--", py.path] + list(args),
            env=full_env, timeout=timeout)
    pids = [int(m.group(1)) for f in os.listdir(test.tmp)
            for m in [re.match(r"perfpy-(\d+)\.lines$", f)] if m]
    test.own(*pids)
    test.assertEqual(p.returncode, 0, "perf record failed:\n" + p.stderr[-3000:])
    test.assertTrue(os.path.getsize(data) > 0)
    return data, p


def report(data, fmt, out, *extra, timeout=300):
    return run([PERFPY, "report", "-f", fmt, "-o", out] + list(extra) + [data], timeout=timeout)


def summary_samples(stderr):
    m = re.search(r"perfpy: (\d+) samples", stderr)
    return int(m.group(1)) if m else None


def collapsed_counts(path):
    """{stack: count} of a collapsed file; asserts every line's shape."""
    stacks = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^(.+) (\d+)\n$", line)
            assert m, "bad collapsed line: %r" % line
            stacks[m.group(1)] = stacks.get(m.group(1), 0) + int(m.group(2))
    return stacks


class ReportFormats(TempDirTest):
    """Every format from one real recording, per interpreter."""

    def check_formats(self, py):
        data, _ = record(self, py, [EXAMPLE, "2000000"])
        outs = {}
        for fmt, ext in FORMATS.items():
            out = os.path.join(self.tmp, "out." + ext)
            p = report(data, fmt, out)
            self.assertEqual(p.returncode, 0, "%s: %s" % (fmt, p.stderr[-2000:]))
            self.assertIn("wrote " + out, p.stderr)
            self.assertTrue(os.path.getsize(out) > 0, fmt)
            outs[fmt] = (out, p)
        # collapsed: shape, totals, foo with its def line
        out, p = outs["collapsed"]
        stacks = collapsed_counts(out)
        self.assertEqual(sum(stacks.values()), summary_samples(p.stderr))
        foo = sum(c for s, c in stacks.items() if re.search(r"(^|;)foo \([^;]*example\.py:1\)", s))
        self.assertGreater(foo, 0, "no sample in foo (example.py:1):\n%s" % "\n".join(list(stacks)[:20]))
        self.assertRegex(p.stderr, r"top Python functions by own time")
        self.assertRegex(p.stderr, r"\d+\.\d%\s+\d+\.\d%\s+foo \(")
        # flamegraph: well-formed XML whose box labels name foo (its file
        # below the script's directory; the full path is the tooltip's)
        root = ET.parse(outs["flamegraph"][0]).getroot()
        self.assertTrue(root.tag.endswith("svg"))
        texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
        self.assertTrue(any(t.startswith("foo (example.py:1)") for t in texts), texts[:40])
        # perf: a perf.data file perf itself reads
        with open(outs["perf"][0], "rb") as f:
            self.assertEqual(f.read(8), b"PERFILE2")
        # node checks
        require_validators(self)
        v = run(["node", os.path.join(JS, "validate-speedscope.js"), outs["speedscope"][0],
                 "--expect-frame", "foo"], timeout=120)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        d = run(["node", os.path.join(JS, "decode-pprof.js"), outs["pprof"][0],
                 "--expect-function", "foo"], timeout=120)
        self.assertEqual(d.returncode, 0, d.stdout + d.stderr)
        self.assertRegex(d.stdout, r'"count":[1-9]')
        require_validators(self, chromium=True)
        h = run(["node", os.path.join(JS, "check-html.js"), outs["html"][0], "--expect", "foo"],
                timeout=180)
        self.assertEqual(h.returncode, 0, h.stdout + h.stderr)
        # the tooltip: the full path
        self.assertIn("foo (%s:1) (" % EXAMPLE, json.loads(h.stdout)["tip"])


class ReadableDeep(TempDirTest):
    """A deep profile (200 Python frames) in headless Chromium at 1400x900,
    a laptop's window: the flame graph's labels keep a readable size in the
    SVG and in the HTML report (they scroll). Twin: the same SVG without its
    height, as perfpy wrote it before, shrinks its text to fit the window."""

    DEPTH = 200
    MIN_PX = 9.0        # the labels are 12 px text: about 14 px boxes

    def deep_script(self):
        text = os.path.join(self.tmp, "deep.script.txt")
        frames = ["\t%16x py::f%d:/app/deep.py (/tmp/perf-4242.map)\n" % (0x7f0000001000 + 16 * i, i)
                  for i in range(self.DEPTH)]
        frames.append("\t%16x _start (/usr/bin/python3)\n" % 0x401000)
        with open(text, "w") as f:
            for n in range(50):
                f.write("python3  4242/4242  %d.%06d:    1001001 cpu-clock:ppp:\n" % (100 + n, 0))
                f.writelines(frames[n % 7:])
                f.write("\n")
        return text

    def measure(self, page):
        shot = page + ".png"
        p = run(["node", os.path.join(support.ROOT, "scripts", "screenshot.js"), page, shot,
                 "1400", "900"], env={"PERFPY_MEASURE": "1"}, timeout=180)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        m = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertGreater(m["labels"], 10, m)
        return m["text_px"]

    def test_deep_flame_graph_text_stays_readable(self):
        require_validators(self, chromium=True)
        text = self.deep_script()
        sizes = {}
        for fmt, ext in (("flamegraph", "svg"), ("html", "html")):
            out = os.path.join(self.tmp, "deep." + ext)
            p = run([PERFPY, "report", "--from-script", "-f", fmt, "-o", out, text])
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            sizes[fmt] = self.measure(out)
        with open(os.path.join(self.tmp, "deep.svg")) as f:
            svg = f.read()
        old = os.path.join(self.tmp, "deep-no-height.svg")
        with open(old, "w") as f:
            f.write(re.sub(r'(<svg [^>]*?) height="\d+"', r"\1", svg, count=1))
        sizes["svg without height"] = self.measure(old)
        support.note("label height at 1400x900, %d frames deep: %s" % (
            self.DEPTH, ", ".join("%s %.1f px" % kv for kv in sizes.items())))
        self.assertGreaterEqual(sizes["flamegraph"], self.MIN_PX)
        self.assertGreaterEqual(sizes["html"], self.MIN_PX)
        self.assertLess(sizes["svg without height"], self.MIN_PX)


def _add_format_tests():
    for py in interpreters():
        def test(self, py=py):
            self.check_formats(py)
        test = needs_perf(test)
        name = "test_report_formats_" + py.label.replace(".", "_").replace("-", "_")
        test.__name__ = name
        setattr(ReportFormats, name, test)


_add_format_tests()


class ManyProcesses(TempDirTest):
    """No silent cap on processes: 200 forked children in jit mode, each
    with its own dump, all used (their frames keep their def lines) and all
    their jitted ELFs removed by the report (a cap of 64 dumps left the rest
    in /tmp and their frames without lines)."""

    @needs_perf
    def test_two_hundred_processes_each_dump_used_and_cleaned(self):
        py = interpreters()[-1]
        data, p = record(self, py, [os.path.join(PROGRAMS, "many_children.py"), "200"],
                         mode="jit", env={"PERFPY_JITDUMP_DIR": "/tmp"})
        pids = [int(x) for x in re.findall(r"^pid (\d+)$", p.stdout, re.M)]
        self.own(*pids)
        self.assertEqual(len(pids), 201)
        # files an earlier process with the same pid left (pids wrap at
        # 32768): one inject writes over is inject's now and goes; one it
        # does not write is not the report's to remove
        stale = ["/tmp/jitted-%d-0.so" % pids[0], "/tmp/jitted-%d-999999.so" % pids[1]]
        for path in stale:
            with open(path, "wb") as f:
                f.write(b"left by an earlier process")
            os.utime(path, (time.time() - 3600, time.time() - 3600))
        out = os.path.join(self.tmp, "many.txt")
        r = report(data, "collapsed", out)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        stacks = collapsed_counts(out)
        work = sum(c for s_, c in stacks.items() if re.search(r"(^|;)work \(", s_))
        with_line = sum(c for s_, c in stacks.items()
                        if re.search(r"(^|;)work \([^;]*many_children\.py:8\)", s_))
        self.assertGreater(work, 100, r.stderr[-2000:])
        self.assertEqual(with_line, work, "frames without their def line")
        left = [f for pid in pids for f in glob.glob("/tmp/jitted-%d-*.so" % pid)]
        self.assertEqual(left, [stale[1]], "%d jitted ELFs left" % len(left))


class JittedFiles(TempDirTest):
    """The jitted ELFs a -f perf report keeps for its perf.data stay when
    another report of the same recording runs inject again (it writes the
    same bytes over them: they are the first report's, left alone); a file
    of the same name with other bytes was left by an earlier process with
    the same pid, and goes (ManyProcesses)."""

    @needs_perf
    def test_a_second_report_leaves_the_first_ones_elves(self):
        py = interpreters()[-1]
        data, p = record(self, py, [EXAMPLE, "300000"], mode="jit")
        fixed = os.path.join(self.tmp, "fixed.data")
        self.assertEqual(report(data, "perf", fixed).returncode, 0)
        r = report(data, "collapsed", os.path.join(self.tmp, "a.txt"))
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        mm = subprocess.run(["perf", "script", "--show-mmap-events", "-F", "pid", "-i", fixed],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            universal_newlines=True, timeout=300).stdout
        elves = set(re.findall(r" (/\S+/jitted-\d+-\d+\.so)$", mm, re.M))
        self.assertGreater(len(elves), 10)
        self.assertEqual([f for f in sorted(elves) if not os.path.exists(f)], [])


class ReportSplit(TempDirTest):
    """The profile's split of time matches the program's own measurement."""

    @needs_perf
    def test_report_split_matches_program_measurement(self):
        pys = interpreters()
        if not pys:
            self.skipTest("no interpreter built")
        for py in {pys[0].path: pys[0], pys[-1].path: pys[-1]}.values():
            with self.subTest(py=py.label):
                data, p = record(self, py, [os.path.join(PROGRAMS, "report_split.py"), "6"],
                                 freq=999)
                m = re.search(r"SPLIT ([\d.]+) ([\d.]+) ([\d.]+)", p.stdout)
                self.assertTrue(m, p.stdout + p.stderr[-2000:])
                a, b, wall = (float(x) for x in m.groups())
                out = os.path.join(self.tmp, "split.txt")
                r = report(data, "collapsed", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                stacks = collapsed_counts(out)
                sa = sum(c for s, c in stacks.items() if "work_a (" in s)
                sb = sum(c for s, c in stacks.items() if "work_b (" in s)
                self.assertGreater(sa + sb, 2000, "too few samples to judge")
                support.assert_split(self, 100.0 * a / (a + b), 100.0 * sa / (sa + sb),
                                     (a + b) / wall, support.lost_samples(p.stderr),
                                     "work_a in %d of %d samples; " % (sa, sa + sb))


class ReportJit(TempDirTest):
    """Jitdump recordings: inject, whole stacks, and cleanup of jitted-*.so."""

    @needs_perf
    def test_report_jit_whole_stacks_and_cleanup(self):
        pys = interpreters()
        if not pys:
            self.skipTest("no interpreter built")
        dumpdir = support.jit_dump_dir(self.tmp)
        seen = set()
        for py in pys:
            with self.subTest(py=py.label):
                data, _ = record(self, py, [EXAMPLE, "2000000"], mode="jit")
                # jit mode wrote a jitdump (not a perf map) for the program
                pids = [m.group(1) for f in os.listdir(self.tmp)
                        for m in [re.match(r"perfpy-(\d+)\.lines$", f)] if m]
                pids = sorted(set(pids) - seen)
                seen.update(pids)
                self.assertTrue([p for p in pids
                                 if os.path.exists(os.path.join(dumpdir, "jit-%s.dump" % p))],
                                "perfpy run --mode jit wrote no jitdump in %s (pids %s)"
                                % (dumpdir, pids))
                for f in glob.glob(os.path.join(self.tmp, "jit-*.dump")):
                    self.own(int(re.search(r"jit-(\d+)\.dump", f).group(1)))
                before = set(glob.glob(os.path.join(self.tmp, "jitted-*.so")))
                out = os.path.join(self.tmp, "jit.txt")
                r = report(data, "collapsed", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                # the jitted-*.so files perf inject made are gone again
                self.assertEqual(set(glob.glob(os.path.join(self.tmp, "jitted-*.so"))), before)
                stacks = collapsed_counts(out)
                with_foo = {s: c for s, c in stacks.items() if re.search(r"(^|;)foo \(", s)}
                total = sum(with_foo.values())
                self.assertGreater(total, 0)
                lines = def_lines(EXAMPLE)
                want = re.compile(r"^<module> \([^;]*example\.py:1\);baz \([^;]*:%d\);"
                                  r"bar \([^;]*:%d\);foo \([^;]*:%d\)(;|$)"
                                  % (lines["baz"], lines["bar"], lines["foo"]))
                whole = sum(c for s, c in with_foo.items() if want.match(s))
                self.assertGreaterEqual(whole / total, 0.95,
                                        "%d of %d samples in foo have the whole stack:\n%s"
                                        % (whole, total, "\n".join(list(with_foo)[:10])))
                # --keep keeps them, and names the directory
                k = report(data, "collapsed", out, "--keep")
                self.assertEqual(k.returncode, 0, k.stderr)
                kept = re.search(r"kept intermediate files in (\S+)", k.stderr)
                self.assertTrue(kept, k.stderr)
                self.assertTrue(os.path.exists(os.path.join(kept.group(1), "injected.data")))
                shutil.rmtree(kept.group(1))
                for f in set(glob.glob(os.path.join(self.tmp, "jitted-*.so"))) - before:
                    os.unlink(f)


class ReportErrors(TempDirTest):
    """Each error: exit status, a message naming the problem and the fix,
    and its positive twin."""

    def recording(self):
        pys = interpreters()
        if not pys:
            self.skipTest("no interpreter built")
        data, _ = record(self, pys[-1], [EXAMPLE, "300000"])
        return data

    def test_report_unknown_format_is_a_usage_error(self):
        p = run([PERFPY, "report", "-f", "svgz", "x.data"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown format 'svgz'", p.stderr)
        self.assertIn("flamegraph", p.stderr)

    def test_report_bad_number_is_a_usage_error(self):
        p = run([PERFPY, "report", "--top", "ten", "x.data"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("--top needs a number", p.stderr)
        p = run([PERFPY, "report"])
        self.assertEqual(p.returncode, 2)
        p = run([PERFPY, "report", "--help"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("-f, --format FORMAT", p.stdout)

    def test_report_missing_input(self):
        missing = os.path.join(self.tmp, "nope.data")
        p = run([PERFPY, "report", missing])
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot read %s: no such file" % missing, p.stderr)
        self.assertIn("perfpy record", p.stderr)

    def test_report_not_a_perf_data(self):
        bad = self.write("bad.data", "hello, I am text\n" * 10)
        p = run([PERFPY, "report", bad])
        self.assertEqual(p.returncode, 1)
        self.assertIn("is not a perf.data file", p.stderr)

    def test_report_unreadable_input(self):
        """As this user, or (root reads every file) as user nobody."""
        prefix = []
        if os.getuid() == 0:
            if not shutil.which("setpriv"):
                self.skipTest("root reads every file, and setpriv to run as nobody is missing")
            d = PERFPY
            while d != "/":
                d = os.path.dirname(d)
                if not os.stat(d).st_mode & 0o001:
                    self.skipTest("user nobody cannot reach %s" % PERFPY)
            os.chmod(self.tmp, 0o755)
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        data = self.write("locked.data", "PERFILE2")
        os.chmod(data, 0)
        p = run(prefix + [PERFPY, "report", data])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("cannot read %s: permission denied" % data, p.stderr)
        # the positive twin: readable, the same file is read (and refused
        # for what it holds, not for its permissions)
        os.chmod(data, 0o644)
        p = run(prefix + [PERFPY, "report", data])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("permission denied", p.stderr)

    @needs_perf
    def test_report_perf_missing_then_present(self):
        data = self.recording()
        out = os.path.join(self.tmp, "o.txt")
        p = run([PERFPY, "report", "-f", "collapsed", "-o", out, data],
                env={"PATH": "/nonexistent"})
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot find perf", p.stderr)
        self.assertIn("apt-get install linux-perf", p.stderr)
        self.assertFalse(os.path.exists(out))
        p = run([PERFPY, "report", "-f", "collapsed", "-o", out, data],
                env={"PERF": shutil.which("perf")})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.getsize(out) > 0)

    @needs_perf
    def test_report_no_samples(self):
        empty = os.path.join(self.tmp, "empty.data")
        p = run(["perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock", "-c", "100000000000",
                 "-o", empty, "--", "true"])
        self.assertEqual(p.returncode, 0, p.stderr)
        r = run([PERFPY, "report", "-o", os.path.join(self.tmp, "e.svg"), empty])
        self.assertEqual(r.returncode, 1)
        self.assertIn("holds no samples", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "e.svg")))

    @needs_perf
    def test_report_recording_of_a_newer_perf_names_both_versions(self):
        """A perf.data written by a newer perf (the sid root's) read with an
        older one (this machine's): perf only says "incompatible file format";
        perfpy names both versions and the fix. The twin: the same perfpy on
        a recording of this machine's perf says nothing of versions."""
        sidroot = os.path.join(ROOT, "scripts", "sidroot")
        root = run([sidroot, "path"], check=True).stdout.strip()
        if not os.path.isdir(root):
            self.skipTest("no sid root at %s (scripts/sidroot make makes one)" % root)
        if not os.path.realpath(self.tmp).startswith("/tmp/"):
            self.skipTest("the test directory %s is not under /tmp, which the sid root "
                          "shares" % self.tmp)
        theirs = run([sidroot, "run", "perf", "version"])
        if theirs.returncode != 0:
            self.skipTest("cannot run the sid root's perf: " + theirs.stderr.strip()[-300:])
        theirs = theirs.stdout.split()[-1]
        mine = run(["perf", "version"], check=True).stdout.split()[-1]
        if tuple(map(int, re.findall(r"\d+", theirs)[:3])) <= \
                tuple(map(int, re.findall(r"\d+", mine)[:3])):
            self.skipTest("the sid root's perf (%s) is not newer than this one (%s)"
                          % (theirs, mine))
        data = os.path.join(self.tmp, "newer.data")
        rec = run([sidroot, "run", "perf", "record", "-q", "--no-bpf-event", "-e", "cpu-clock",
                   "-o", data, "--", "python3", "-c", "sum(range(3000000))"])
        self.assertEqual(rec.returncode, 0, rec.stderr)
        out = os.path.join(self.tmp, "newer.txt")
        p = run([PERFPY, "report", "-f", "collapsed", "-o", out, data])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("recorded by perf %s" % theirs, p.stderr)
        self.assertIn("is %s" % mine, p.stderr)
        self.assertIn("on the machine that recorded it", p.stderr)
        self.assertIn("install perf %s or newer" % theirs, p.stderr)
        self.assertFalse(os.path.exists(out))
        # the twin: this machine's recording, no word of versions
        data = self.recording()
        p = run([PERFPY, "report", "-f", "collapsed", "-o", out, data])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("recorded by perf", p.stderr)

    @needs_perf
    def test_report_disk_full_leaves_input_untouched(self):
        data = self.recording()
        with open(data, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        for fmt in ("flamegraph", "pprof", "perf"):
            p = report(data, fmt, "/dev/full")
            self.assertEqual(p.returncode, 1, fmt)
            self.assertIn("No space left on device", p.stderr)
        with open(data, "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), digest)
        # a directory that does not exist: an error, nothing created
        bad = os.path.join(self.tmp, "no", "such", "out.svg")
        p = report(data, "flamegraph", bad)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot write " + bad, p.stderr)
        self.assertFalse(os.path.exists(os.path.dirname(bad)))
        # the output may not be the input
        p = report(data, "perf", data)
        self.assertEqual(p.returncode, 1)
        self.assertIn("is the input itself", p.stderr)
        # and the positive twin: a writable place works; no temporary is left
        ok = os.path.join(self.tmp, "ok.svg")
        p = report(data, "flamegraph", ok)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith(".perfpy-out-")], [])
        with open(data, "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), digest)

    @needs_perf
    def test_report_from_script_text_matches_perf_data(self):
        # perfpy runs perf script with --no-inline unless asked for --inline:
        # the text made the same way folds to the same profile, both ways.
        # The text is made from the perf.data perfpy reads (-f perf: the
        # recording with its exec'ing children marked, see perf_data_fix.c);
        # perf script on the raw recording unwinds the child differently in
        # about half the runs.
        data = self.recording()
        a = os.path.join(self.tmp, "a.txt")
        b = os.path.join(self.tmp, "b.txt")
        fixed = os.path.join(self.tmp, "fixed.data")
        self.assertEqual(report(data, "perf", fixed).returncode, 0)
        for inline in (False, True):
            text = os.path.join(self.tmp, "script.txt")
            with open(text, "w") as f:
                subprocess.run(["perf", "script", "-i", fixed, "-F",
                                "comm,pid,tid,time,period,event,ip,sym,dso", "--max-stack",
                                "4096"] + ([] if inline else ["--no-inline"]),
                               stdout=f, stderr=subprocess.DEVNULL, check=True, timeout=300)
            self.assertEqual(report(data, "collapsed", a,
                                    *(["--inline"] if inline else [])).returncode, 0)
            p = run([PERFPY, "report", "--from-script", "-f", "collapsed", "-o", b, text])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(collapsed_counts(a), collapsed_counts(b))
        p = run([PERFPY, "report", "--from-script", "-f", "perf", "-o", b, text])
        self.assertEqual(p.returncode, 1)
        self.assertIn("needs a perf.data input", p.stderr)


if __name__ == "__main__":
    unittest.main()
