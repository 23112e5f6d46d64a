"""Record once, render many: perfpy's own profile file (-f perfpy,
.perfpy.gz) keeps all of a profile, so `perfpy report FILE -f FORMAT` writes
any format later with the numbers of a direct recording, and `perfpy diff`
compares such files. One perf.data written directly in every format and
through the file: the same bytes (so the same samples and totals); sample
mode's own file (the mode perfpy-sample writes in) in every format with the
recording's sample count; a file cut short, of another version or not
perfpy's: one line naming what is wrong, exit 1, nothing written."""
import gzip
import json
import os
import re

from support import PERFPY, interpreters, needs_perf, note, run
from test_record import PROGRAMS, SAMPLER, RecordTest
from test_report import JS, collapsed_counts, require_validators

THREADS3 = os.path.join(PROGRAMS, "threads3.py")
FORMATS = {"flamegraph": "svg", "html": "html", "speedscope": "speedscope.json",
           "firefox": "firefox.json", "pprof": "pb.gz", "collapsed": "txt",
           "heatmap": "heatmap.html", "table": "table.txt"}


def report(*args):
    return run([PERFPY, "report", "-q"] + list(args), timeout=300)


def pprof_total(test, path):
    """The samples of a gzipped pprof, as the npm pprof-format decoder reads
    them (value 0 of every sample)."""
    require_validators(test)
    d = run(["node", os.path.join(JS, "decode-pprof.js"), path], timeout=120)
    test.assertEqual(d.returncode, 0, d.stdout + d.stderr)
    return json.loads(d.stdout)["count"]


class Lossless(RecordTest):

    @needs_perf
    def test_every_format_through_the_file_is_the_direct_one(self):
        """A trampoline-mode perf.data (threads, def lines, markers of
        process starts and ends) written in each format by `perfpy report`,
        and written as -f perfpy then that file in each format: byte for
        byte the same file."""
        py = interpreters()[-1]
        data = self.out("rec.data")
        p = self.record(["--threads", "-f", "perf", "-o", data], [py.path, THREADS3, "0.6"])
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.own_jitted(data)
        mid = self.out("rec.perfpy.gz")
        r = report("--threads", "-f", "perfpy", "-o", mid, data)
        self.assertEqual(r.returncode, 0, r.stderr)
        note("%s: perf.data %d KB, perfpy's file %d KB" % (
            py.label, os.path.getsize(data) // 1024, os.path.getsize(mid) // 1024))
        for fmt, ext in FORMATS.items():
            with self.subTest(fmt=fmt):
                direct, later = self.out("direct." + ext), self.out("later." + ext)
                a = report("--threads", "-f", fmt, "-o", direct, data)
                b = report("-f", fmt, "-o", later, mid)
                self.assertEqual(a.returncode, 0, a.stderr)
                self.assertEqual(b.returncode, 0, b.stderr)
                with open(direct, "rb") as x, open(later, "rb") as y:
                    self.assertTrue(x.read() == y.read(), "%s differs" % fmt)

    @needs_perf
    def test_sample_modes_file_in_every_format(self):
        """Sample mode (the default as root) writes the file too: each
        format from it holds the recording's samples (collapsed, pprof,
        table, the summary of the report), and the file written again from
        itself is the same bytes."""
        if not os.path.exists(SAMPLER) or os.geteuid() != 0:
            self.skipTest("sample mode needs root and perfpy-sample")
        py = interpreters()[-1]
        mid = self.out("recorded.perfpy.gz")
        p = self.record(["--mode", "sample", "--threads", "-f", "perfpy", "-o", mid],
                        [py.path, THREADS3, "0.6"])
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        samples = int(re.search(r"perfpy: (\d+) samples", p.stderr).group(1))
        outs = {}
        for fmt, ext in list(FORMATS.items()) + [("perfpy", "perfpy.gz")]:
            outs[fmt] = self.out("s." + ext)
            r = report("-f", fmt, "-o", outs[fmt], mid)
            self.assertEqual(r.returncode, 0, "%s: %s" % (fmt, r.stderr))
        r = run([PERFPY, "report", "-f", "table", "-o", self.out("t2.txt"), mid], timeout=300)
        self.assertRegex(r.stderr, r"perfpy: %d samples" % samples)
        self.assertEqual(sum(collapsed_counts(outs["collapsed"]).values()), samples)
        self.assertEqual(pprof_total(self, outs["pprof"]), samples)
        with open(outs["table"]) as f:
            self.assertRegex(f.readline(), r", %d samples \(cpu-clock\)" % samples)
        with open(outs["perfpy"], "rb") as x, open(mid, "rb") as y:
            self.assertTrue(x.read() == y.read())
        # perfpy diff reads it: against itself nothing changed
        d = run([PERFPY, "diff", "-f", "table", "-q", mid, outs["perfpy"]], timeout=300)
        self.assertEqual(d.returncode, 0, d.stderr)
        changes = [float(m.group(1)) for m in re.finditer(r"^\s*([+-][0-9.]+)\s", d.stdout, re.M)]
        self.assertTrue(changes and all(c == 0 for c in changes), d.stdout[:2000])

    def test_bad_files_one_line_exit_1_nothing_written(self):
        """A file cut short, of another version, not perfpy's (named as one,
        or another gzip): exit 1, one line naming what is wrong, no output.
        Twin: the whole file is written."""
        py = interpreters()[-1]
        mid = self.out("ok.perfpy.gz")
        p = self.record(["-f", "perfpy", "-o", mid], [py.path, "-c", "sum(range(3000000))"])
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        with open(mid, "rb") as f:
            whole = f.read()
        raw = gzip.decompress(whole)
        bad = {"cut": (whole[:len(whole) // 2], "is a perfpy profile cut short"),
               "version": (gzip.compress(raw[:8] + b"\x02" + raw[9:]),
                           "is a perfpy profile of version 2, and this perfpy reads version 1"),
               "text": (b"not a profile at all\n", "is not a perfpy profile"),
               "gzip": (gzip.compress(b"\x89PNG\r\n\x1a\nnot ours"),
                        "is not a profile perfpy can read")}
        for name, (content, says) in bad.items():
            with self.subTest(file=name):
                path, out = self.out(name + ".perfpy.gz"), self.out(name + ".svg")
                with open(path, "wb") as f:
                    f.write(content)
                r = report("-o", out, path)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertRegex(r.stderr, r"^perfpy: %s%s" % (re.escape(path), re.escape(" " + says)))
                self.assertFalse(os.path.exists(out))
                self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith(".perfpy-out")], [])
        out = self.out("ok.svg")
        r = report("-o", out, mid)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.getsize(out) > 0)

    def test_help_says_so(self):
        for cmd in ("record", "report"):
            h = run([PERFPY, cmd, "--help"])
            self.assertEqual(h.returncode, 0)
            self.assertRegex(h.stdout, r"perfpy\s+\(\.perfpy\.gz, perfpy's own")
        h = run([PERFPY, "report", "--help"]).stdout
        self.assertIn("perfpy report [-f FORMAT] [-o FILE] PROFILE.perfpy.gz", h)
        self.assertIn("record once, render many", h)
        self.assertIn("-f perfpy", run([PERFPY, "diff", "--help"]).stdout)
