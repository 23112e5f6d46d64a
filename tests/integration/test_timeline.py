"""Time and threads in the profile: every sample keeps its thread and its
time, so a profile can have a root per thread (--threads split), named as
`threading` named the thread (sample mode reads the names in the process;
in the trampoline modes perfpy's startup hook writes them for the report:
CPython before 3.14 never gives them to the OS), on every interpreter, in
the trampoline modes and in sample mode; by default (--threads) threads
named alike share the root of their name's pattern ("worker-*")."""
import json
import os
import re
import textwrap

from support import interpreters, needs_perf, note, run
from test_record import PROGRAMS, SAMPLER, RecordTest
from test_report import JS, collapsed_counts, require_validators

THREADS3 = os.path.join(PROGRAMS, "threads3.py")
FUNCS = {"MainThread": "main_work", "worker-1": "work_one", "worker-2": "work_two"}
ROOT = re.compile(r"^(?:[^;]* \(pid \d+\);)?([^;]*) \(tid (\d+)\)(?:;|$)")
# --threads alone: the roots of threads3.py's threads, by their names' pattern
PATTERNS = {"MainThread": ["main_work"], "worker-*": ["work_one", "work_two"]}


class Threads(RecordTest):

    def roots(self, out):
        """{(name, tid): {function of threads3.py: samples}} of a collapsed
        profile whose stacks start with a thread root; stacks without one
        under (None, None)."""
        found = {}
        for stack, n in collapsed_counts(out).items():
            m = ROOT.match(stack)
            key = (m.group(1), int(m.group(2))) if m else (None, None)
            funcs = found.setdefault(key, {})
            for f in FUNCS.values():
                if re.search(r"(^|;)%s \(" % f, stack):
                    funcs[f] = funcs.get(f, 0) + n
        return found

    def check_roots(self, py, p, out, mode, functions=True):
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        tids = {m.group(1): int(m.group(2))
                for m in re.finditer(r"^tid (\S+) (\d+)$", p.stdout, re.M)}
        self.assertEqual(sorted(tids), sorted(FUNCS), p.stdout)
        roots = self.roots(out)
        note("%s, %s: %s" % (py.label, mode, ", ".join(
            "%s (tid %s): %s" % (k[0], k[1], sorted(v.items())) for k, v in sorted(
                roots.items(), key=lambda kv: kv[0][1] or 0))))
        self.assertNotIn((None, None), roots, "a stack without a thread root")
        # threading's names in every mode on every version: worker-2 by the
        # name it was given once running (3.14+ gave the OS its first one)
        for name, func in FUNCS.items():
            found = [k for k in roots if k[1] == tids[name]]
            self.assertEqual(len(found), 1, (name, tids[name], sorted(roots)))
            self.assertEqual(found[0][0], name)
            if not functions:
                continue
            funcs = roots[found[0]]
            # the thread's own function under its root, the others' not
            self.assertGreater(funcs.get(func, 0), 20, (name, funcs))
            self.assertEqual(sum(funcs.values()), funcs[func], (name, funcs))

    def check_patterns(self, py, p, out, mode):
        """--threads alone: a root per name pattern, "MainThread" over
        main_work alone, "worker-*" over both workers' functions; no root
        with a tid."""
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        found = {}
        for stack, n in collapsed_counts(out).items():
            root = stack.split(";")[0]
            for f in FUNCS.values():
                if re.search(r"(^|;)%s \(" % f, stack):
                    found.setdefault(root, {}).setdefault(f, 0)
                    found[root][f] += n
        note("%s, %s: %s" % (py.label, mode, sorted(found.items())))
        for root, funcs in PATTERNS.items():
            self.assertEqual(sorted(found.get(root, {})), funcs, (root, sorted(found)))
            for f in funcs:
                self.assertGreater(found[root][f], 10, (root, f, found[root]))
        self.assertEqual(sorted(r for r in found if r not in PATTERNS), [], sorted(found))

    @needs_perf
    def test_a_root_per_thread_named_as_threading_named_them(self):
        """Both trampoline modes: the names come from perfpy's startup hook
        (perfpy-<pid>.threads beside the def lines), not from perf; a root
        per thread with --threads split, per name pattern with --threads."""
        for py in interpreters():
            for mode in ("perf", "jit"):
                with self.subTest(py=py.label, mode=mode):
                    out = self.out("threads-%s-%s.txt" % (mode, py.label))
                    p = self.record(["--mode", mode, "--threads", "split", "-f", "collapsed",
                                     "-o", out], [py.path, THREADS3])
                    # perf mode without frame pointers names no Python
                    # function (--help): its threads are still named
                    dwarf = re.search(r"in perf mode \([^)]*DWARF", p.stderr)
                    self.check_roots(py, p, out, mode + " mode", functions=not dwarf)
                    pid = int(re.search(r"^pid (\d+)$", p.stdout, re.M).group(1))
                    self.assert_nothing_left([pid])
                    if dwarf:
                        continue
                    p = self.record(["--mode", mode, "--threads", "-f", "collapsed",
                                     "-o", out], [py.path, THREADS3])
                    self.check_patterns(py, p, out, mode + " mode, --threads")

    @needs_perf
    def test_sample_mode_a_root_per_thread(self):
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root (or CAP_BPF and CAP_PERFMON)")
        # --threads split reaches perfpy-sample in its request: a root per
        # thread; --threads alone, a root per name pattern
        for py in interpreters():
            with self.subTest(py=py.label):
                out = self.out("threads-sample-%s.txt" % py.label)
                p = self.record(["--mode", "sample", "--threads", "split", "-f", "collapsed",
                                 "-o", out], [py.path, THREADS3])
                self.check_roots(py, p, out, "sample mode, --threads split")
                p = self.record(["--mode", "sample", "--threads", "-f", "collapsed",
                                 "-o", out], [py.path, THREADS3])
                self.check_patterns(py, p, out, "sample mode")

    def timeline_names(self, fmt, out):
        """{tid: name} of a speedscope file's profiles ("worker-1 (tid
        4612)") or a Firefox file's tracks."""
        with open(out) as f:
            d = json.load(f)
        if fmt == "firefox":
            return {int(t["tid"]): t["name"] for t in d["threads"]}
        names = {}
        for prof in d["profiles"]:
            m = re.match(r"^(?:.* \(pid \d+\), )?(.*) \(tid (\d+)\)$", prof["name"])
            if m:
                names[int(m.group(2))] = m.group(1)
        return names

    @needs_perf
    def test_thread_names_without_threads(self):
        """Without --threads, speedscope's profiles and Firefox's tracks
        bear the names threading gave the threads (worker-2 the name it was
        renamed to), in sample and read mode (read from the process's
        memory) as in the hook mode (its startup hook); none is the
        interpreter's comm."""
        py = interpreters()[-1]
        modes = [("jit", ["--mode", "jit"]), ("read", ["--mode", "read"])]
        if os.path.exists(SAMPLER) and os.geteuid() == 0:
            modes.append(("sample", ["--mode", "sample"]))
        for mode, args in modes:
            for fmt, ext in (("speedscope", "speedscope.json"), ("firefox", "firefox.json")):
                with self.subTest(mode=mode, format=fmt):
                    out = self.out("names-%s.%s" % (mode, ext))
                    p = self.record(args + ["-f", fmt, "-o", out], [py.path, THREADS3, "0.6"])
                    self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                    tids = {int(m.group(2)): m.group(1)
                            for m in re.finditer(r"^tid (\S+) (\d+)$", p.stdout, re.M)}
                    names = self.timeline_names(fmt, out)
                    note("%s, %s mode, %s: %s" % (py.label, mode, fmt, sorted(names.values())))
                    self.assertEqual(sorted(tids.values()), sorted(FUNCS), p.stdout)
                    for tid, name in tids.items():
                        self.assertEqual(names.get(tid), name, (tid, names))

    @needs_perf
    def test_one_thread_split_is_no_error(self):
        """--threads split of a program with one thread: its one root, exit 0."""
        py = interpreters()[-1]
        out = self.out("one-thread.txt")
        p = self.record(["--threads", "split", "-f", "collapsed", "-o", out],
                        [py.path, "-c", "sum(range(3000000))"])
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        roots = {stack.split(";")[0] for stack in collapsed_counts(out)}
        self.assertEqual(len(roots), 1, roots)
        self.assertRegex(roots.pop(), r"^MainThread \(tid \d+\)$")

    @needs_perf
    def test_without_threads_no_thread_root(self):
        """The negative twin: the same program without --threads has no
        thread root, and its three functions are there."""
        py = interpreters()[-1]
        out = self.out("nothreads.txt")
        p = self.record(["-f", "collapsed", "-o", out], [py.path, THREADS3, "0.5"])
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        roots = self.roots(out)
        self.assertEqual(list(roots), [(None, None)], sorted(roots))
        self.assertEqual(sorted(roots[(None, None)]), sorted(FUNCS.values()))


PHASES = os.path.join(PROGRAMS, "phases.py")
PHASE_FUNCS = ("startup", "crunch", "finish")


def speedscope_phases(path):
    """{tid: {function: [start_ns, end_ns, ns]}} of a per-thread speedscope
    file: where each thread's runs in each phase function begin and end,
    each profile's samples laid end to end from its startValue, and the
    time they weigh."""
    with open(path) as f:
        d = json.load(f)
    frames = d["shared"]["frames"]
    found = {}
    for p in d["profiles"]:
        tid = int(re.search(r"\(tid (\d+)\)", p["name"]).group(1))
        self_ = found.setdefault(tid, {})
        k = {"nanoseconds": 1, "microseconds": 1000}[p["unit"]]
        at = p["startValue"] * k
        for stack, w in ((s, w * k) for s, w in zip(p["samples"], p["weights"])):
            names = {frames[i]["name"] for i in stack}
            for fn in PHASE_FUNCS:
                if fn in names:
                    span = self_.setdefault(fn, [at, at + w, 0])
                    span[0], span[1] = min(span[0], at), max(span[1], at + w)
                    span[2] += w
            at += w
        assert at == p["endValue"] * k, (p["name"], at, p["endValue"] * k)
    return found


def firefox_phases(path):
    """The same of a Firefox Profiler file: a sample lasts until the next,
    and weighs its weight in periods (meta.interval)."""
    with open(path) as f:
        d = json.load(f)
    sh = d["shared"]
    strings, st, fr, fn = sh["stringArray"], sh["stackTable"], sh["frameTable"], sh["funcTable"]
    names = []
    for i in range(st["length"]):
        prefix = st["prefix"][i]
        here = strings[fn["name"][fr["func"][st["frame"][i]]]]
        names.append((names[prefix] if prefix is not None else set()) | {here})
    found = {}
    period = d["meta"]["interval"] * 1e6
    for t in d["threads"]:
        self_ = found.setdefault(t["tid"], {})
        times, stacks = t["samples"]["time"], t["samples"]["stack"]
        weights = t["samples"]["weight"]
        for i, s in enumerate(stacks[:-1]):
            if s is None:
                continue
            a, b = times[i] * 1e6, times[i + 1] * 1e6
            for f in PHASE_FUNCS:
                if f in names[s]:
                    span = self_.setdefault(f, [a, b, 0])
                    span[0], span[1] = min(span[0], a), max(span[1], b)
                    span[2] += weights[i] * period
    return found


class Timelines(RecordTest):
    """A program of three phases (0.5 s of imports, 1 s of crunch() on two
    threads, 0.5 s of finish()): in the per-thread speedscope file and the
    Firefox Profiler file each phase is on its thread, in order, and lasts
    what the program measured itself (within 5%, and the time the program
    says its thread was off a CPU then: a loaded machine preempts it, and
    no sample is taken off a CPU), and each crunch thread's
    samples weigh its own CPU time there (within 10%: the threads share the
    GIL, so time on a thread's track is not its CPU; a period of cpu-clock
    is time current on a CPU, which on a virtual machine includes what the
    host took for another guest, steal, that the thread's thread_time
    lacks: sample mode weighs a sample by the CPU time the thread was
    charged, its periods came out 10-20% over on a busy host; a Firefox
    file's weights count samples, and may be over by the time perfpy says
    the host took); speedscope shows the
    runs where the file puts them (check-speedscope.js) and the Firefox
    file holds to the format (check-firefox.js)."""
    verbose = True   # the tests read the accounting notes (-v)

    def check_phases(self, py, mode, fmt, p, phases):
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        own = {m.group(1): float(m.group(2)) * 1e9
               for m in re.finditer(r"^phase (\w+) ([0-9.]+)$", p.stdout, re.M)}
        tids = {m.group(1): int(m.group(2))
                for m in re.finditer(r"^tid (\S+) (\d+)$", p.stdout, re.M)}
        main = phases[tids["MainThread"]]
        workers = [phases[tids["cruncher-%d" % i]] for i in (1, 2)]
        seen = {"startup": main["startup"], "finish": main["finish"],
                "crunch": [min(w["crunch"][0] for w in workers), max(w["crunch"][1] for w in workers)]}
        note("%s, %s, %s: %s" % (py.label, mode, fmt, ", ".join(
            "%s %.3f s (program %.3f)" % (f, (seen[f][1] - seen[f][0]) / 1e9, own[f] / 1e9)
            for f in PHASE_FUNCS)))
        cpu = {m.group(1): float(m.group(2)) * 1e9
               for m in re.finditer(r"^cpu (\S+) ([0-9.]+)$", p.stdout, re.M)}
        stolen = re.search(r"([0-9.]+) ms of the threads' time on a CPU was charged to none",
                           p.stderr)
        note("%s, %s, %s: crunch threads weigh %s s (their CPU %s s; %s ms stolen)" % (
            py.label, mode, fmt, " and ".join("%.3f" % (w["crunch"][2] / 1e9) for w in workers),
            " and ".join("%.3f" % (cpu["cruncher-%d" % i] / 1e9) for i in (1, 2)),
            stolen.group(1) if stolen else "0"))
        # a phase's samples span it while its thread is on a CPU: time it
        # was not (preempted on a loaded machine, or waiting for a file),
        # which can fall at either edge, is allowed beside the 5%
        off = {"startup": own["startup"] - cpu["MainThread-startup"],
               "finish": own["finish"] - cpu["MainThread-finish"],
               "crunch": own["crunch"] - cpu["cruncher-1"] - cpu["cruncher-2"]}
        for f in PHASE_FUNCS:
            slack = max(0.0, off[f])
            if slack > 0.05 * own[f]:
                note("%s: %.3f s of the program's %.3f s off a CPU, allowed" % (
                    f, slack / 1e9, own[f] / 1e9))
            self.assertAlmostEqual(seen[f][1] - seen[f][0], own[f],
                                   delta=0.05 * own[f] + slack, msg=f)
        # samples perf lost (its ring full on a loaded machine) are missing
        # from some thread's weight: each may be a period of any thread's
        summary = re.findall(r"^perfpy: \d+ samples.*$", p.stderr, re.M)
        lost = sum(int(n) for n in re.findall(r"(\d+) lost events", " ".join(summary)))
        # a Firefox file's weights count samples, whole periods of cpu-clock
        # (speedscope's are each sample's CPU time): the time a virtual
        # machine's host took from the threads as they ran is in them, as
        # much as perfpy says (any thread's)
        extra = float(stolen.group(1)) * 1e6 if stolen and fmt == "firefox" else 0.0
        for i, w in enumerate(workers, 1):
            mine = cpu["cruncher-%d" % i]
            self.assertAlmostEqual(w["crunch"][2], mine,
                                   delta=0.1 * mine + lost * 1e9 / 999 + extra,
                                   msg="cruncher-%d (%s)" % (i, summary))
        # in order on each thread: no crunch on the main thread, no startup
        # or finish on the workers, and the workers' crunch between them
        self.assertNotIn("crunch", main)
        for w in workers:
            self.assertEqual(sorted(w), ["crunch"])
            self.assertGreaterEqual(w["crunch"][0], main["startup"][1] - 0.01e9)
            self.assertLessEqual(w["crunch"][1], main["finish"][0] + 0.01e9)
        self.assertLess(main["startup"][1], main["finish"][0])

    def check_markers(self, p, threads, mode):
        """The process's end on its main thread's track, and in sample mode
        (which starts the program itself) its start; perf mode marks the
        threads' starts and ends."""
        tids = {m.group(1): int(m.group(2))
                for m in re.finditer(r"^tid (\S+) (\d+)$", p.stdout, re.M)}
        marks = {t["tid"]: t["markers"] for t in threads}
        self.assertIn("process exit", marks[tids["MainThread"]])
        if mode == "sample mode":
            self.assertIn("process start", marks[tids["MainThread"]])
        else:
            self.assertEqual(marks[tids["cruncher-1"]], ["thread start", "thread exit"])

    def run_phases(self, mode_args, mode):
        pys = interpreters()
        for py in pys:
            for fmt, ext in (("speedscope", "speedscope.json"), ("firefox", "firefox.json")):
                with self.subTest(py=py.label, format=fmt):
                    out = self.out("phases-%s.%s" % (py.label, ext))
                    mods = os.path.join(self.tmp, "mods-%s-%s" % (py.label, fmt))
                    os.mkdir(mods)
                    p = self.record(mode_args + ["-r", "999", "-f", fmt, "-o", out],
                                    [py.path, PHASES, mods])
                    phases = (speedscope_phases if fmt == "speedscope" else firefox_phases)(out)
                    self.check_phases(py, mode, fmt, p, phases)
                    if fmt == "firefox":
                        v = run(["node", os.path.join(JS, "check-firefox.js"), out])
                        self.assertEqual(v.returncode, 0, v.stderr + v.stdout[-2000:])
                        self.check_markers(p, json.loads(v.stdout)["threads"], mode)
                    elif py is pys[-1]:
                        v = run(["node", os.path.join(JS, "check-speedscope.js"), out],
                                timeout=300)
                        self.assertEqual(v.returncode, 0, v.stderr + v.stdout[-3000:])
                        checked = json.loads(v.stdout)["profiles"]
                        note("%s, %s: speedscope shows %d profiles, %d runs and gaps where "
                             "the file puts them" % (py.label, mode, len(checked),
                                                     sum(c["runs"] for c in checked)))

    @needs_perf
    def test_phases_in_order_on_each_thread(self):
        require_validators(self, chromium=True)
        self.run_phases([], "default mode")

    @needs_perf
    def test_sample_mode_phases_in_order_on_each_thread(self):
        require_validators(self, chromium=True)
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root (or CAP_BPF and CAP_PERFMON)")
        self.run_phases(["--mode", "sample"], "sample mode")


class WaitMarkers(RecordTest):
    """A wall-clock profile (--idle) in the Firefox Profiler's format: each
    wait of wall_parts.py a marker on its thread's track named for its
    reason (sleep, I/O, lock), about one per wait, the sleeps' markers
    lasting what the program slept; gil_threads.py's two compute-bound
    threads' GIL waits markers of the GIL category on their own tracks."""

    @needs_perf
    def test_each_wait_is_a_marker_named_for_its_reason(self):
        require_validators(self, chromium=False)
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        if os.geteuid() != 0:
            self.skipTest("wall-clock mode needs root (or CAP_BPF and CAP_PERFMON)")
        for py in interpreters():
            with self.subTest(py=py.label):
                out = self.out("waits-%s.firefox.json" % py.label)
                p = self.record(["--idle", "-f", "firefox", "-o", out],
                                [py.path, os.path.join(PROGRAMS, "wall_parts.py")])
                self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                v = run(["node", os.path.join(JS, "check-firefox.js"), out])
                self.assertEqual(v.returncode, 0, v.stderr + v.stdout[-2000:])
                with open(out) as f:
                    d = json.load(f)
                strings = d["shared"]["stringArray"]
                main = [t for t in d["threads"] if t["isMainThread"]][0]
                m = main["markers"]
                spans = {}
                for i in range(m["length"]):
                    name = strings[m["name"][i]]
                    if name.startswith("[off-CPU"):
                        spans.setdefault(name, []).append(m["endTime"][i] - m["startTime"][i])
                note("%s: main thread's wait markers %s" % (py.label, ", ".join(
                    "%s %d (%.0f ms)" % (k, len(v), sum(v)) for k, v in sorted(spans.items()))))
                # 12 rounds: each a sleep, a pipe read and a lock wait; a wait
                # is one marker (two where the machine preempted it between;
                # one fewer where the recorder missed a switch's end, as
                # test_wall's notes count)
                for name in ("[off-CPU: sleep]", "[off-CPU: I/O]", "[off-CPU: lock]"):
                    self.assertIn(name, spans, sorted(spans))
                    self.assertGreaterEqual(len(spans[name]), 10, (name, len(spans[name])))
                    self.assertLessEqual(len(spans[name]), 24, (name, len(spans[name])))
                # the sleeps' markers last what the program slept (12 x 40 ms),
                # no more
                slept = sum(spans["[off-CPU: sleep]"])
                self.assertGreater(slept, 0.8 * 12 * 40, slept)
                self.assertLess(slept, 1.1 * 12 * 40 + 5, slept)
                # two threads that only compute: their GIL waits are markers
                # of the GIL category on their own tracks
                out = self.out("gil-%s.firefox.json" % py.label)
                p = self.record(["--idle", "-f", "firefox", "-o", out],
                                [py.path, os.path.join(PROGRAMS, "gil_threads.py"), "1"])
                self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                with open(out) as f:
                    d = json.load(f)
                strings = d["shared"]["stringArray"]
                gil_cat = [c["name"] for c in d["meta"]["categories"]].index("GIL")
                per_thread = []
                for t in d["threads"]:
                    m = t["markers"]
                    gil = [m["endTime"][i] - m["startTime"][i] for i in range(m["length"])
                           if strings[m["name"][i]] == "[off-CPU: GIL]"]
                    self.assertTrue(all(m["category"][i] == gil_cat for i in range(m["length"])
                                        if strings[m["name"][i]] == "[off-CPU: GIL]"))
                    if not t["isMainThread"]:
                        per_thread.append((len(gil), sum(gil)))
                note("%s: gil_threads.py's threads' GIL markers (count, ms): %s"
                     % (py.label, per_thread))
                self.assertEqual(len(per_thread), 2, per_thread)
                for n, ms in per_thread:
                    self.assertGreater(n, 0, per_thread)


class WaitPlaces(RecordTest):
    """A wall-clock profile's waits are where they happened on the
    timeline: a program that computes 0.3 s, sleeps 0.5 s and computes
    0.3 s has an [off-CPU: sleep] marker of about 0.5 s, and none of its
    samples in the computing function falls inside it (a record off the
    CPU is stamped with its end, as a CPU sample is; stamped with its
    start, the marker covered the first 0.5 s, over the first part's
    samples). Mutation: the stamp left at the stretch's start -> red."""

    @needs_perf
    def test_a_sleep_is_placed_between_the_work_around_it(self):
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        if os.geteuid() != 0:
            self.skipTest("wall-clock mode needs root (or CAP_BPF and CAP_PERFMON)")
        prog = self.write("phases3.py", textwrap.dedent("""\
            import time
            def crunch(seconds):
                end = time.thread_time() + seconds
                while time.thread_time() < end:
                    pass
            def doze(seconds):
                time.sleep(seconds)
            crunch(0.3)
            doze(0.5)
            crunch(0.3)
            """))
        py = interpreters()[-1]
        out = self.out("places.firefox.json")
        p = self.record(["--idle", "-f", "firefox", "-o", out], [py.path, prog])
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        with open(out) as f:
            d = json.load(f)
        shared = d["shared"]
        strings = shared["stringArray"]
        main = [t for t in d["threads"] if t["isMainThread"]][0]
        m = main["markers"]
        sleeps = [(m["startTime"][i], m["endTime"][i]) for i in range(m["length"])
                  if strings[m["name"][i]] == "[off-CPU: sleep]"]
        # one marker (two where a switch's end went unreported between)
        self.assertTrue(1 <= len(sleeps) <= 2, sleeps)
        start, end = min(a for a, _ in sleeps), max(b for _, b in sleeps)
        self.assertTrue(450 <= sum(b - a for a, b in sleeps) <= 600, sleeps)

        def functions(stack):
            while stack is not None:
                frame = shared["stackTable"]["frame"][stack]
                yield strings[shared["funcTable"]["name"][shared["frameTable"]["func"][frame]]]
                stack = shared["stackTable"]["prefix"][stack]

        s = main["samples"]
        crunching = [s["time"][i] for i in range(s["length"])
                     if s["stack"][i] is not None and any(
                         f.startswith("crunch") for f in functions(s["stack"][i]))]
        period = 1000.0 / 399
        inside = [t for t in crunching if start + 2 * period < t < end - 2 * period]
        note("%s: --idle, the sleep marker %.0f-%.0f ms; crunch's samples %d, from %.0f to "
             "%.0f ms, %d inside the sleep" % (py.label, start, end, len(crunching),
                                              min(crunching), max(crunching), len(inside)))
        self.assertGreater(len(crunching), 100)
        self.assertEqual(inside, [])
        self.assertTrue(min(crunching) < start < end < max(crunching), (start, end))
