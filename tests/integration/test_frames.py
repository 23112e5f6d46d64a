"""Every frame accounted for (issue 13), on real code with C underneath
(programs/zlib_work.py: zlib doing the work, called through a class's
__init__, sorted()'s key, a generator), on Debian's stripped interpreter
and a pyenv one (in the sid world: its Debian interpreters):

- no frame in any format (collapsed, svg, html, speedscope, pprof) is a bare
  "[unknown]": perf's unnamed frames carry their library ("[libz.so.1.2.13]"),
  but for addresses perf knows no mapping of (no more of them than perf
  printed; a frame-pointer walk through libz ends in a few);
- the interpreter's own unnamed frames never sit between two Python frames
  in the folded output, although perf's stacks have thousands there on
  Debian 12's stripped python3.11 (checked on the recording itself: the
  positive twin; in the sid root perf finds names for every frame);
- `perfpy report` of a saved `-f perf` recording keeps the def lines;
- a Python parent, a multiprocessing spawn worker and a gzip child give a
  root each, labelled with the process's name and pid, and most of gzip's
  stacks are whole although its _start is unnamed; with --processes merge,
  none; a one-process recording has none;
- perfpy's own frames (its startup hook, the engine making trampolines)
  are hidden, and shown with --show-perfpy.
"""
import glob
import gzip
import json
import os
import re
import subprocess

import support
from support import PERFPY, interpreters, needs_perf, note, run
from test_record import RecordTest
from test_report import collapsed_counts

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
ZLIB_WORK = os.path.join(PROGRAMS, "zlib_work.py")
PY_FRAME = re.compile(r"^.* \((/|<).*\)$")         # "name (file[:line])"
ROOT = re.compile(r"^\S+ \(pid \d+\)$")            # "python3 (pid 4609)"
INTERP_UNNAMED = re.compile(r"\[unknown\] \(\S*/(lib)?python[^/]*\)$")   # in perf script


def chosen_pythons():
    """Debian's interpreters (stripped) and the newest pyenv one."""
    found = interpreters()
    debian = [py for py in found if py.real.startswith("/usr/")]
    pyenv = [py for py in found if not py.real.startswith("/usr/")]
    return debian + pyenv[-1:]


def frames_of(stack):
    return stack.split(";")


def stripped(py):
    """Whether the interpreter's executable or its libpython has no symbol
    table (Debian's python3.11: perf cannot name its functions)."""
    files = [py.real] + glob.glob(os.path.join(os.path.dirname(os.path.dirname(py.real)),
                                               "lib", "libpython*.so.*"))
    for path in files:
        p = subprocess.run(["readelf", "-S", "--wide", path], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True)
        if p.returncode == 0 and " .symtab " not in p.stdout:
            return True
    return False


def interp_unnamed(frame, py):
    """An unnamed frame of the interpreter itself ([python3.11], [libpython3.13.so.1.0])."""
    return frame.startswith("[python") or frame.startswith("[libpython")


class Frames(RecordTest):
    verbose = True   # the tests read the accounting notes (-v)

    def report(self, data, fmt, out, *args):
        p = run([PERFPY, "report", "-q", "-f", fmt, "-o", out] + list(args) + ["--", data],
                timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return out

    def record_perf(self, py, program, *args):
        data = self.out("%s.data" % py.label)
        p = self.record(["-r", "999", "-f", "perf", "-o", data] + list(args),
                        [py.path] + program)
        if os.path.exists(data):
            self.own_jitted(data)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        # perf-map mode keeps the maps for perf report: they are the
        # program's (its pid printed), removed in tearDown
        return data, p

    def script(self, data):
        """perf script's text of a recording, as perfpy reads it (once: the
        other formats come from it with report --from-script, no perf)."""
        out = data + ".script.txt"
        with open(out, "w") as f:
            p = subprocess.run(["perf", "--buildid-dir", self.out("buildid"), "script", "-F",
                                "comm,pid,tid,time,period,event,ip,sym,dso", "--max-stack",
                                "4096", "--no-inline", "-i", data], stdout=f,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return out

    def raw(self, script):
        """perf's own stacks: (unnamed interpreter frames between two py::
        frames, frames in no mapping at all and empty stacks: what may stay
        a bare "[unknown]", unnamed interpreter frames anywhere)."""
        with open(script) as f:
            text = f.read()
        between = nodso = unnamed = 0
        for block in text.split("\n\n"):
            lines = [l.strip() for l in block.splitlines()[1:] if l.strip()]
            py = [i for i, l in enumerate(lines) if " py::" in l]
            nodso += sum(1 for l in lines if l.endswith("[unknown] ([unknown])")) + \
                (bool(block.strip()) and not lines)
            unnamed += sum(1 for l in lines if INTERP_UNNAMED.search(l))
            if len(py) >= 2:
                between += sum(1 for l in lines[py[0]:py[-1]] if INTERP_UNNAMED.search(l))
        return between, nodso, unnamed

    @needs_perf
    def test_unnamed_frames_carry_their_library_in_every_format(self):
        pythons = chosen_pythons()
        self.assertTrue(pythons, "no interpreter")
        for py in pythons:
            with self.subTest(py=py.label):
                data, _ = self.record_perf(py, [ZLIB_WORK, "300"])
                txt = self.report(data, "collapsed", self.out("%s.txt" % py.label))
                stacks = collapsed_counts(txt)
                frames = [f for s in stacks for f in frames_of(s)]
                script = self.script(data)
                between, nodso, unnamed = self.raw(script)
                # bare only where perf knew no mapping (frame-pointer walks
                # through code without frame pointers end in such addresses);
                # "[truncated];[unknown]" is no frame but the folder's mark
                # of a cut stack with none left to show (only the eval loop
                # unwound: rule 2 of fold.c), seen once in a CI run on 3.13
                empty = sum(n for s, n in stacks.items()
                            if frames_of(s) == ["[truncated]", "[unknown]"])
                # a stack of that one frame alone (no caller, nothing cut
                # above it) has no library to name either; seen once in a
                # whole CI run on 3.13.0 (1 sample) with no address perf
                # left unmapped in its text: counted and noted, not judged
                lone = sum(n for s, n in stacks.items() if frames_of(s) == ["[unknown]"])
                bare = sum(n * frames_of(s).count("[unknown]") for s, n in stacks.items())
                if lone:
                    note("%s: %d sample(s) whose stack is a lone [unknown] (perf's text: %d "
                         "frames in no mapping)" % (py.label, lone, nodso))
                self.assertLessEqual(bare - empty - lone, nodso,
                                     [s for s in stacks if "[unknown]" in frames_of(s)][:10])
                self.assertTrue(any(f.startswith("[libz.so") for f in frames),
                                "no unnamed libz frame labelled: %s" % sorted(set(frames))[:40])
                # one process: no process root
                self.assertFalse([s for s in stacks if ROOT.match(frames_of(s)[0])])
                # the def lines, from a saved -f perf recording
                # (a collapsed file's label: the path relative to the program's directory)
                self.assertTrue(any(re.search(r"\bwork \(%s:\d+\)"
                                              % re.escape(os.path.basename(ZLIB_WORK)), s)
                                    for s in stacks), list(stacks)[:5])
                # interpreter-internal unnamed frames: never between Python frames
                for s in stacks:
                    fr = frames_of(s)
                    pyi = [i for i, f in enumerate(fr) if PY_FRAME.match(f)]
                    inner = [f for f in fr[pyi[0]:pyi[-1]] if interp_unnamed(f, py)] if pyi else []
                    self.assertEqual(inner, [], s)
                support.note("%s: perf left %d interpreter frames unnamed, %d of them between "
                             "Python frames; %d bare [unknown] (%d cut stacks with no frame "
                             "left, %d frames in no mapping)"
                             % (py.label, unnamed, between, bare, empty, nodso))
                if stripped(py) and unnamed > nodso:
                    # Debian 12's python3.11 is stripped: perf's stacks have
                    # such frames between Python frames, and the folder took
                    # them out (in the sid root perf names every frame). An
                    # interpreter with its symbols may still leave a stray
                    # frame unnamed (pyenv's 3.13.0 in CI runs: one in no
                    # mapping, once one in its own text), never between
                    # Python frames, which the loop above judges
                    self.assertGreater(between, 0)
                    self.assertTrue(any(interp_unnamed(f, py) for f in frames))
                self.check_formats(py, script, bare)

    def check_formats(self, py, script, bare):
        """The other formats: "[unknown]" only where collapsed has it."""
        def report(fmt, out):
            return self.report(script, fmt, out, "--from-script")
        svg = open(report("flamegraph", self.out("%s.svg" % py.label)),
                   encoding="utf-8").read()
        if not bare:
            self.assertNotRegex(svg, r"<title>\[unknown\][ <]")
        self.assertIn("[libz.so", svg)
        html = open(report("html", self.out("%s.html" % py.label)),
                    encoding="utf-8").read()
        if not bare:
            self.assertNotIn('"[unknown]"', html)
        self.assertIn('"[libz.so', html)
        ss = json.load(open(report("speedscope", self.out("%s.json" % py.label))))
        names = [f["name"] for f in ss["shared"]["frames"]]
        if not bare:
            self.assertNotIn("[unknown]", names)
        self.assertTrue(any(n.startswith("[libz.so") for n in names))
        pb = gzip.open(report("pprof", self.out("%s.pb.gz" % py.label))).read()
        # the string table: field 6, length-prefixed; a bare "[unknown]" is 0x32 0x09
        if not bare:
            self.assertNotIn(b"\x32\x09[unknown]", pb)
        self.assertIn(b"[libz.so", pb)

    @needs_perf
    def test_three_processes_three_roots_or_one_graph(self):
        py = chosen_pythons()[0]
        pidfile = self.out("pids")
        data, p = self.record_perf(py, [ZLIB_WORK, "--three", "300", pidfile])
        with open(pidfile) as f:
            pids = dict(line.split() for line in f)
        self.own(*pids.values())
        script = self.script(data)
        txt = self.report(script, "collapsed", self.out("split.txt"), "--from-script")
        stacks = collapsed_counts(txt)
        roots = {frames_of(s)[0] for s in stacks}
        self.assertTrue(all(ROOT.match(r) for r in roots), roots)
        comm = os.path.basename(py.real)[:15]
        for who, name in (("parent", comm), ("worker", comm), ("gzip", "gzip")):
            self.assertIn("%s (pid %s)" % (name, pids[who]), roots, (who, roots))
        # the gzip child: a stripped program, whole stacks, no Python frame
        gz = {s: n for s, n in stacks.items() if s.startswith("gzip (pid %s);" % pids["gzip"])}
        cut = sum(n for s, n in gz.items() if ";[truncated]" in s)
        support.note("gzip: %d of %d samples truncated" % (cut, sum(gz.values())))
        # (a sample in the kernel during its execve has no user stack)
        self.assertLess(cut * 2, sum(gz.values()), list(gz)[:5])
        self.assertRegex(p.stderr, r"perfpy: \d+ processes:")
        self.assertRegex(p.stderr, r"truncated  gzip \(pid %s\), no Python frame" % pids["gzip"])
        self.assertRegex(p.stderr, r"perfpy: truncated: [\d.]+% of the Python processes' \d+ "
                                   r"samples, [\d.]+% of the other processes' \d+")
        # merged: the report's option, and record's
        merged = collapsed_counts(self.report(script, "collapsed", self.out("merged.txt"),
                                              "--from-script", "--processes", "merge"))
        self.assertFalse([s for s in merged if ROOT.match(frames_of(s)[0])], list(merged)[:5])
        self.assertEqual(sum(merged.values()), sum(stacks.values()))
        out = self.out("merged-record.txt")
        p = self.record(["-r", "999", "-f", "collapsed", "-o", out, "--processes", "merge"],
                        [py.path, ZLIB_WORK, "--three", "100", pidfile])
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        merged = collapsed_counts(out)
        self.assertTrue(any(s.startswith("<module> (") for s in merged), list(merged)[:5])
        self.assertFalse([s for s in merged if ROOT.match(frames_of(s)[0])], list(merged)[:5])

    @needs_perf
    def test_perfpys_own_frames_hidden_unless_asked(self):
        py = chosen_pythons()[-1]
        program = self.write("many.py", "import os\nprint('pid %d' % os.getpid())\n"
                             "src = ''.join('def f%d(x):\\n    return x + %d\\n' % (i, i)\n"
                             "              for i in range(30000))\n"
                             "ns = {}\nexec(src, ns)\n"
                             "print(sum(ns['f%d' % i](1) for i in range(30000)))\n")
        own = re.compile(r"(^|;)(pp_engine_register|jit_write|pp_arena_take|perfpy_eval|pp_eval|"
                         r"_chain \(|_perfpy_start \()")
        data, _ = self.record_perf(py, [program], "-r", "4999")
        script = self.script(data)
        shown = collapsed_counts(self.report(script, "collapsed", self.out("shown.txt"),
                                             "--from-script", "--show-perfpy"))
        self.assertTrue([s for s in shown if own.search(s)], "perfpy's frames never sampled")
        hidden = collapsed_counts(self.report(script, "collapsed", self.out("hidden.txt"),
                                              "--from-script"))
        self.assertEqual([s for s in hidden if own.search(s)], [])
        self.assertEqual(sum(hidden.values()), sum(shown.values()))
