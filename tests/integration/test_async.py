"""asyncio as its authors see it: `perfpy record --async` and `perfpy dump
--async` on an asyncio server (programs/async_server.py: serve() accepts
connections and runs each request as a task of its TaskGroup, handler-N,
which awaits helper, which awaits a sleep and then hashes half a MiB in C)
under 200 requests at once (programs/async_client.py).

CPython 3.14+ publish where a thread's running task, a task's name,
coroutine and awaiters are (_asyncio's debug offsets): there a sample in a
task reads as the chain of tasks awaiting it, serve -> handler -> helper,
above the native and kernel frames of what runs; before 3.14 one line says
the tasks are not read and the stacks are the threads'.
"""
import os
import re
import signal
import subprocess
import sys
import time

from support import interpreters, needs_perf, note
from test_record import PROGRAMS, SAMPLER, RecordTest
from test_report import collapsed_counts

SERVER = os.path.join(PROGRAMS, "async_server.py")
CLIENT = os.path.join(PROGRAMS, "async_client.py")
# serve's task (asyncio.run's, Task-1), serve's coroutines, a handler's task
# and its coroutines, root first
# the event loop's frames: rootward of every task's coroutine without --async
LOOP = ("BaseEventLoop.run_forever", "BaseEventLoop._run_once", "Handle._run")
CHAIN = re.compile(r"^<task 'Task-1'>;serve \([^;]*\);(?:[^;]*;)*?<task 'handler-\d+'>;"
                   r"handler \([^;]*\);helper \(")


def async_pythons():
    return [py for py in interpreters() if py.version_info >= (3, 14)]


# the line of helper's C work (the concatenation and the hash)
with open(SERVER) as _f:
    HASH_LINE = next(i for i, line in enumerate(_f, 1) if "hashlib.sha256(" in line)


def request_path(stacks):
    """Of the samples in helper (the request's work), how many carry the
    whole chain, and of those whose innermost Python frame is helper at the
    line of its C work (the concatenation, the hash), how many show a
    native frame below it. (Not every sample whose innermost frame is
    helper: at its other lines it runs its bytecode, with no C below: one
    run failed on 2 of 39 such samples; in the next, those with no frame
    below were at lines 38, 43 and 48, and one at the hash's line, of
    about 1,800 there.)"""
    helper = chain = own = native = 0
    for stack, n in stacks.items():
        frames = stack.split(";")
        names = [f.split(" (")[0] for f in frames]
        if "helper" not in names:
            continue
        helper += n
        chain += n if CHAIN.match(stack) else 0
        at = len(names) - 1 - names[::-1].index("helper")
        below = frames[at + 1:]
        if (frames[at].endswith(":%d)" % HASH_LINE) and
                not any(re.search(r" \([^;()]*:\d+\)$", f) for f in below)):
            own += n
            native += n if below else 0
    return helper, chain, own, native


class AsyncServer(RecordTest):

    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root (or CAP_BPF and CAP_PERFMON)")
        self.procs = []
        self.addCleanup(self.stop_all)

    def stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()

    def server(self, py, sleep="0.005", hold=False):
        """The server, once it listens: (its Popen, its port)."""
        portfile = os.path.join(self.tmp, "port-%d" % len(self.procs))
        p = subprocess.Popen([py.path, SERVER, portfile, sleep, "1" if hold else "0"],
                             stdout=subprocess.PIPE, universal_newlines=True)
        self.procs.append(p)
        for _ in range(300):
            if os.path.exists(portfile):
                with open(portfile) as f:
                    return p, int(f.read())
            self.assertIsNone(p.poll(), "the server ended before it listened")
            time.sleep(0.05)
        self.fail("the server did not listen within 15 s")

    def client(self, port, conns, seconds):
        p = subprocess.Popen([sys.executable, CLIENT, str(port), str(conns), str(seconds)],
                             stdout=subprocess.PIPE, universal_newlines=True)
        self.procs.append(p)
        return p

    def answered(self, server):
        """SIGTERM: the server's own CPU time and requests answered."""
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=30)
        m = re.search(r"^cpu ([\d.]+) answered (\d+)$", out, re.M)
        self.assertTrue(m, out)
        return float(m.group(1)), int(m.group(2))

    def profile(self, py, name, args, seconds=3):
        """200 requests in flight while `perfpy record -p` records the
        server for `seconds`: its stacks, perfpy's stderr."""
        server, port = self.server(py)
        load = self.client(port, 200, seconds + 3)
        time.sleep(1)
        out = self.out(name)
        p = self.record_pid(["--mode", "sample", "-d", str(seconds), "-f", "collapsed",
                             "-o", out] + args, server.pid)
        load.wait(timeout=60)
        self.answered(server)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return collapsed_counts(out), p.stderr

    def record_pid(self, args, pid):
        from support import PERFPY, run
        return run([PERFPY, "record"] + args + ["-p", str(pid)],
                   env={"TMPDIR": self.rectmp}, timeout=120)

    @needs_perf
    def test_async_stacks_carry_the_chain_of_tasks_and_native_frames(self):
        """--async on 3.14+: of the samples in helper, at least 95% carry
        <task 'Task-1'>;serve;...;<task 'handler-N'>;handler;helper, root
        first, with no event-loop frame above; of those in helper's own C
        work, at least 95% show its native frames (sha256, the
        concatenation). The twin without --async: the same server's helper
        samples sit under the event loop (run_forever), none under a task.
        (Mutation: the BPF program's running task read at another offset of
        the thread state -> red: 0 of 719 samples in helper with the chain on 3.14, 0 of 636 on 3.15.)"""
        pys = async_pythons()
        if not pys:
            self.skipTest("no CPython 3.14 or newer here (the sid world has them)")
        for py in pys:
            with self.subTest(py=py.label):
                stacks, err = self.profile(py, "async-%s.txt" % py.label, ["--async"])
                helper, chain, own, native = request_path(stacks)
                loop = sum(n for s_, n in stacks.items()
                           if "helper (" in s_ and "run_forever (" in s_)
                note("%s --async: %d of %d samples in helper carry the chain (%.1f%%); %d of "
                     "%d in its C work show native frames; %d under the event loop"
                     % (py.label, chain, helper, 100.0 * chain / max(helper, 1), native, own,
                        loop))
                self.assertGreater(helper, 100, err[-2000:])
                self.assertGreaterEqual(chain * 100, helper * 95)
                self.assertGreater(own, 50)
                self.assertGreaterEqual(native * 100, own * 95)
                self.assertNotIn("--async:", err)       # nothing to say on 3.14+
            with self.subTest(py=py.label, twin="no --async"):
                stacks, err = self.profile(py, "plain-%s.txt" % py.label, [])
                helper, chain, _, _ = request_path(stacks)
                loop = sum(n for s_, n in stacks.items()
                           if "helper (" in s_ and "run_forever (" in s_)
                self.assertGreater(helper, 100, err[-2000:])
                self.assertEqual(chain, 0)
                self.assertFalse([s_ for s_ in stacks if "<task '" in s_][:3])
                self.assertGreaterEqual(loop * 100, helper * 95)

    def own_split(self, server):
        """SIGUSR1: the server's own measure (programs/async_server.py):
        (its perf_counter now, the integral of its requests in the sleep's
        await, its seconds in the hash)."""
        server.send_signal(signal.SIGUSR1)
        while True:
            line = server.stdout.readline()
            if not line:
                self.fail("the server ended (status %s)" % server.wait(timeout=30))
            if line.startswith("split "):
                return [float(x) for x in line.split()[1:]]

    @needs_perf
    def test_wall_async_waiting_tasks_hold_their_share_of_the_wall_time(self):
        """--wall --async on 3.14+: the tasks that wait are stacks of their
        own under their chain of awaiters, what they await at the leaf,
        each weighing the time it waited. Judged against the server's own
        measure over the recording (SIGUSR1 before and after), under 200
        requests at once, twice: a busy loop (helper sleeps 5 ms: the loop
        runs nearly all the time) and an idle one (helper sleeps 2 s: the
        loop waits in epoll most of the time, the tasks' time then comes
        from its stretches off the CPU). The number of requests inside
        helper's await of the sleep, on average (its integral over time /
        the time), is the profile's time in helper's sleep / the seconds
        recorded, within 15%; the loop's share of the time in the hash (the
        running task's samples at its line), the same within 25% (or three
        times 1/sqrt(its samples) when more: the idle loop hashes ~40 times
        in 3 s); >= 95%
        of the time in helper carries the chain serve -> handler -> helper,
        the hash's own samples its native frames (>= 80% in the idle loop,
        whose few samples weigh several periods each). The summary says the
        tasks' time apart from the threads', which stay the recording's.
        (Mutations: each waiting task chosen weighed its record's time
        alone, not scaled by those waiting / those chosen -> red: 3.4
        requests in the sleep where the server measured 95.5 (3.14), 3.4 for
        99.3 (3.15); the waiting tasks of a stretch off the CPU weighed one
        period, not the stretch -> red: 6.7 for 175.3 on 3.15's idle loop,
        3.14's idle and busy loops red too.)"""
        pys = async_pythons()
        if not pys:
            self.skipTest("no CPython 3.14 or newer here (the sid world has them)")
        for py in pys:
            for load_name, sleep in (("busy", "0.005"), ("idle", "2")):
                with self.subTest(py=py.label, loop=load_name):
                    self.judge_wall_async(py, load_name, sleep)

    def record_split(self, server, args):
        """`perfpy record -p` of the server, its own measure taken as the
        recording begins (perfpy says so once attached) and as it stops:
        (perfpy's Popen, its stderr, the seconds it recorded, the server's
        requests in the sleep on average, its share of time in the hash)."""
        from support import PERFPY
        p = subprocess.Popen([PERFPY, "record"] + args + ["-p", str(server.pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, env=dict(os.environ, TMPDIR=self.rectmp))
        self.procs.append(p)
        err, begun = [], None
        for line in p.stderr:
            err.append(line)
            if line.startswith("perfpy: recording the process "):
                begun = self.own_split(server)
            elif line.startswith("perfpy: recording stopped after ") and begun:
                ended = self.own_split(server)
        err.append(p.stderr.read())
        p.wait(timeout=60)
        err = "".join(err)
        self.assertEqual(p.returncode, 0, err[-3000:])
        seconds = float(re.search(r"recording stopped after ([\d.]+) s", err).group(1))
        span = ended[0] - begun[0]
        return err, seconds, (ended[1] - begun[1]) / span, (ended[2] - begun[2]) / span

    def judge_wall_async(self, py, load_name, sleep):
        server, port = self.server(py, sleep)
        load = self.client(port, 200, 8)
        time.sleep(1.5)
        out = self.out("wall-%s-%s.txt" % (load_name, py.label))
        err, seconds, *mine = self.record_split(server, [
            "--mode", "sample", "--wall", "--async", "-d", "3", "-f", "collapsed", "-o", out])
        load.wait(timeout=60)
        self.answered(server)
        period = float(re.search(r" samples of ([\d.]+) ms \(wall-clock\)", err).group(1)) / 1e3
        with open(SERVER) as f:
            line = [i for i, l in enumerate(f, 1) if "hashlib.sha256(" in l][-1]
        stacks = collapsed_counts(out)
        asleep = sum(n for s_, n in stacks.items() if re.search(
            r";helper \([^;]*\);sleep \([^;]*asyncio/tasks\.py:\d+\);", s_))
        hashing = sum(n for s_, n in stacks.items()
                      if re.search(r";helper \([^;]*async_server\.py:%d\)" % line, s_))
        waiting = sum(n for s_, n in stacks.items() if s_.endswith(";[awaiting Future]"))
        helper, chain, own, native = request_path(stacks)
        theirs = asleep * period / seconds, hashing * period / seconds
        note("%s --wall --async, %s loop: requests in the sleep's await, on average: %.1f "
             "(the server's own measure: %.1f); the loop's share in the hash %.3f "
             "(its own: %.3f); tasks awaiting a Future %.0f s of %.0f s; the chain on "
             "%d of %d in helper (%.1f%%), native frames on %d of %d in its C work"
             % (py.label, load_name, theirs[0], mine[0], theirs[1], mine[1], waiting * period,
                sum(stacks.values()) * period, chain, helper,
                100.0 * chain / max(helper, 1), native, own))
        self.assertGreater(mine[0], 20)           # the load was there
        self.assertLess(abs(theirs[0] - mine[0]), 0.15 * mine[0])
        # a count of n samples is known to 1/sqrt(n): 3 of those, or 25%
        self.assertLess(abs(theirs[1] - mine[1]), max(0.25, 3 / max(hashing, 1) ** 0.5) * mine[1])
        self.assertGreaterEqual(chain * 100, helper * 95)
        self.assertGreater(own, 15)
        # A sample in the line's own bytecode has no C below it: about 1 in
        # 900 periods of the busy loop's (918 of 919, 927 of 928 in two
        # runs). The idle loop runs briefly every few ms, so each of its
        # samples weighs its CPU time since the last one, often several
        # periods: one such sample among its ~30 periods failed 95% (28 of
        # 30, a CI run on sid 3.15).
        self.assertGreaterEqual(native * 100, own * (95 if load_name == "busy" else 80))
        # the summary: the tasks' time said apart, the split the thread's
        m = re.search(r"asyncio tasks waiting \(--async\): ([\d.]+) s of their own "
                      r"time, beside the threads' ([\d.]+) s", err)
        self.assertTrue(m, err[-3000:])
        self.assertLess(abs(float(m.group(2)) - seconds), 0.1 * seconds)
        self.assertGreater(float(m.group(1)), 0.8 * mine[0] * seconds)

    @needs_perf
    def test_wall_async_a_loop_blocked_all_along_still_has_its_tasks(self):
        """The server holding 200 requests (each handler-N in helper's
        Event.wait, the loop blocked in epoll from before perfpy attaches
        to after it stops): its only stretch is captured from outside, by
        the task iterator, at attach and at the end; the tasks are read
        there too. Each of the 201 tasks (serve's and 200 handlers) waits
        the whole recording: the tasks' time is 201 times the loop's, within
        10%, the handlers' under serve -> handler -> helper -> Event.wait.
        (Mutation: the iterator's captures read no tasks -> red: no task
        time at all, the summary's line for it missing, on 3.14 and 3.15.)"""
        pys = async_pythons()
        if not pys:
            self.skipTest("no CPython 3.14 or newer here (the sid world has them)")
        for py in pys:
            with self.subTest(py=py.label):
                server, _ = self.held(py)
                out = self.out("blocked-%s.txt" % py.label)
                p = self.record_pid(["--mode", "sample", "--wall", "--async", "-d", "2", "-f",
                                     "collapsed", "-o", out], server.pid)
                self.assertEqual(p.returncode, 0, p.stderr[-3000:])
                m = re.search(r"asyncio tasks waiting \(--async\): ([\d.]+) s of their own "
                              r"time, beside the threads' ([\d.]+) s", p.stderr)
                self.assertTrue(m, p.stderr[-3000:])
                tasks, threads = float(m.group(1)), float(m.group(2))
                stacks = collapsed_counts(out)
                held = sum(n for s_, n in stacks.items() if CHAIN.match(s_) and
                           ";Event.wait (" in s_ and s_.endswith(";[awaiting Future]"))
                note("%s --wall --async, a loop blocked all along: the tasks' %.1f s beside "
                     "the loop's %.2f s (%.1f tasks on average; 201 wait); %d of %d periods "
                     "in handler -> helper -> Event.wait" % (py.label, tasks, threads,
                                                             tasks / threads, held,
                                                             sum(stacks.values())))
                self.assertGreater(threads, 1.5)
                self.assertLess(abs(tasks / threads - 201), 20.1)
                others = sorted(((n, s_) for s_, n in stacks.items()
                                 if not (CHAIN.match(s_) and ";Event.wait (" in s_ and
                                         s_.endswith(";[awaiting Future]"))), reverse=True)
                self.assertGreater(held * 100, sum(stacks.values()) * 90,
                                   "the stacks outside the chain, most first:\n" +
                                   "\n".join("%d %s" % o for o in others[:8]))

    def top(self, py, args):
        """`perfpy top ARGS -i 1 --rows 0 -p PID` of the server under 200
        requests, its output piped (one plain table per interval, every
        function in it) until it holds 3: the rows of the 2nd and 3rd,
        {function: total%} each in the table's order (by own share). Not the
        first 20 only: handler, serve and the task own no sample (helper, the
        loop's callbacks do), so they rank last, and a busy interval's
        callbacks pushed handler past the 20th row."""
        from support import PERFPY
        from test_top import Plain, tables
        server, port = self.server(py)
        self.client(port, 200, 8)
        time.sleep(1)
        p = subprocess.Popen([PERFPY, "top"] + args + ["-i", "1", "--rows", "0",
                                                        "-p", str(server.pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.procs.append(p)
        text = Plain.read_tables(self, p, 3)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
        self.assertEqual(p.returncode, 0, err[-2000:])
        got = tables(text + out.decode(errors="replace"))
        self.assertGreaterEqual(len(got), 3, text[-2000:])
        return [{r.group(5).split(" (")[0]: float(r.group(2)) for r in rows}
                for _, rows in got[1:3]], err.decode(errors="replace")

    @needs_perf
    def test_top_async_ranks_the_tasks_in_place_of_the_event_loop(self):
        """perfpy top --async on 3.14+: each full interval's table ranks
        <task 'Task-1'> (serve's task, awaiting every handler) at >= 50% of
        the total, serve and handler with it, and the event loop's frames
        (run_forever, _run_once, Handle._run: its own work only) under 50%;
        the twin without --async: an event-loop frame at >= 50% and no task.
        (Mutation: top's CLOCK without ",async" -> red: no task in the
        tables on 3.14 and 3.15, Handle._run at 100%.)"""
        pys = async_pythons()
        if not pys:
            self.skipTest("no CPython 3.14 or newer here (the sid world has them)")
        for py in pys:
            with self.subTest(py=py.label):
                intervals, err = self.top(py, ["--async"])
                note("%s top --async: <task 'Task-1'> %s%% of the 2nd and 3rd intervals; "
                     "handler %s%%, its row %s of %s" % (
                         py.label, [t.get("<task 'Task-1'>") for t in intervals],
                         [t.get("handler") for t in intervals],
                         [list(t).index("handler") + 1 if "handler" in t else None
                          for t in intervals], [len(t) for t in intervals]))
                self.assertNotIn("--async:", err)
                for t in intervals:
                    self.assertGreaterEqual(t.get("<task 'Task-1'>", 0), 50, t)
                    self.assertIn("serve", t)
                    self.assertIn("handler", t)
                    self.assertLess(max(t.get(f, 0) for f in LOOP), 50, t)
            with self.subTest(py=py.label, twin="no --async"):
                intervals, _ = self.top(py, [])
                for t in intervals:
                    self.assertGreaterEqual(max(t.get(f, 0) for f in LOOP), 50, t)
                    self.assertFalse([f for f in t if f.startswith("<task '")], t)

    @needs_perf
    def test_before_3_14_async_says_the_tasks_are_not_read(self):
        """--async on a CPython before 3.14: one line says its tasks are not
        read and why, and the profile is the threads' stacks, whole."""
        pys = [py for py in interpreters() if (3, 11) <= py.version_info < (3, 14)]
        if not pys:
            self.skipTest("no CPython 3.11-3.13 here")
        for py in pys:
            with self.subTest(py=py.label):
                stacks, err = self.profile(py, "old-%s.txt" % py.label, ["--async"], 2)
                self.assertIn("whose tasks are not read (asyncio's task graph is published "
                              "from 3.14 on)", err)
                self.assertEqual(err.count("--async:"), 1)
                self.assertFalse([s_ for s_ in stacks if "<task '" in s_][:3])
                self.assertGreater(sum(n for s_, n in stacks.items() if "helper (" in s_), 50)

    def dump_async(self, pid):
        """`perfpy dump --async PID`: the threads (the loop's with its native
        and kernel frames), then the task tree: its header line, the tree."""
        from support import PERFPY, run
        p = run([PERFPY, "dump", "--async", str(pid)], timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        threads, sep, rest = p.stdout.partition("\nProcess %d: CPython " % pid)
        self.assertTrue(sep, p.stdout[-2000:])
        head, _, tree = rest.partition("\n")
        return threads, head, tree

    def held(self, py):
        """The server holding 200 requests, once every one is in helper's
        Event.wait and the loop idle: (its Popen, its dump_async)."""
        server, port = self.server(py, hold=True)
        load = self.client(port, 200, 0)
        self.assertEqual(load.stdout.readline().strip(), "held 200")
        for _ in range(100):
            dumped = self.dump_async(server.pid)
            if dumped[2].count("Event.wait") == 200 and "(waiting in" in dumped[0]:
                break
            time.sleep(0.1)
        return server, dumped

    def test_dump_async_lists_every_task_as_asyncio_pstree_does(self):
        """The server holding 200 requests (each handler-N in helper,
        awaiting an Event: a graph that stands still): perfpy's task tree
        is the one `python3.X -m asyncio pstree PID` prints, line for line
        (every task under its awaiter, each coroutine at its line), read
        once while nothing ran. (Mutation: a task's one awaiter, kept
        without a set, left out -> red: the 200 handlers drawn as roots.)"""
        pys = async_pythons()
        if not pys:
            self.skipTest("no CPython 3.14 or newer here (the sid world has them)")
        for py in pys:
            with self.subTest(py=py.label):
                server, (threads, head, tree) = self.held(py)
                from support import run
                theirs = run([py.path, "-m", "asyncio", "pstree", str(server.pid)], timeout=60)
                self.assertEqual(theirs.returncode, 0, theirs.stderr)
                note("%s: %s; %d lines, %d tasks" % (py.label, head, len(tree.splitlines()),
                                                     tree.count("(T) ")))
                self.assertIn("201 asyncio tasks", head)   # serve and 200 handlers
                self.assertIn("read while none of its threads ran", head)
                self.assertEqual(tree.count("(T) handler-"), 200)
                self.assertEqual(tree, theirs.stdout)
                # the loop's thread above it, idle: its selector's wait in C and
                # in the kernel
                self.assertIn("BaseEventLoop._run_once (", threads)
                self.assertIn("epoll_wait (", threads)
                self.assertIn(" [kernel]\n", threads)

    def test_dump_async_before_3_14_says_the_tasks_are_not_read(self):
        """The negative twin: on 3.11-3.13 `perfpy dump --async` still prints
        the threads (the loop's stack), then one line says why the tasks are
        not read, and the exit status is 1."""
        pys = [py for py in interpreters() if (3, 11) <= py.version_info < (3, 14)]
        if not pys:
            self.skipTest("no CPython 3.11-3.13 here")
        from support import PERFPY, run
        for py in pys:
            with self.subTest(py=py.label):
                server, _ = self.server(py, hold=True)
                p = run([PERFPY, "dump", "--async", str(server.pid)], timeout=60)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("_run_once (", p.stdout)
                self.assertIn("the .AsyncioDebug section of CPython 3.14+", p.stderr)
                self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
                self.assertNotIn("(T) ", p.stdout)
