"""Waiting for a child process, in a wall-clock profile (`perfpy record
--idle`): its own reason, [off-CPU: child process], and its share of its
own process's time.

A thread blocked in wait4 or waitid waits for a child; so does one asleep
or polling in subprocess's own code (Popen.wait with a timeout sleeps in a
loop on 3.8-3.14 and polls a pidfd on 3.15; communicate() polls the
child's pipes). Those stretches were [off-CPU: other], and the summary's
shares were of every process's time together: a program waiting 98% of
its time for `sleep` read about half that, the child's own sleep added to
the whole. Now each process has a block of its own in the summary.
Negative twins: the program's own time.sleep stays a sleep, and the child
(not Python) takes no share from its parent.
"""
import re
import textwrap

from support import interpreters, needs_perf, note
from test_record import WallTest
from test_report import collapsed_counts
from test_wall import in_function

CHILD = "[off-CPU: child process]"
OTHER = "[off-CPU: other]"
SLEEP = "[off-CPU: sleep]"
CPU_WAIT = "[off-CPU: waiting for a CPU]"

# one wait of 2 s for a child that is not Python: the acceptance program
ONE_WAIT = """\
import subprocess
def wait_for_child():
    subprocess.run(["sleep", "2"])
wait_for_child()
"""

# each of subprocess's ways to wait, and a sleep of the program's own
EVERY_WAY = """\
import subprocess, time
def plain_wait():
    subprocess.run(["sleep", "0.6"])
def wait_with_timeout():
    subprocess.run(["sleep", "0.6"], timeout=60)
def capture_output():
    subprocess.run(["sh", "-c", "sleep 0.6; echo done"], capture_output=True)
def own_nap():
    time.sleep(0.6)
plain_wait(); wait_with_timeout(); capture_output(); own_nap()
"""


def process_blocks(stderr):
    """The summary's blocks, one per process: {header: text}."""
    parts = re.split(r"^perfpy: process ", stderr, flags=re.M)[1:]
    return {p.split("\n", 1)[0]: p for p in parts}


def row(block, function):
    """A function's row of a block's table: {column: percent}."""
    head = re.search(r"^\s+own\s+total((?:\s+\S+(?: wait)?)+?)\s+function$", block, re.M)
    line = re.search(r"^\s+([\d.]+)%\s+([\d.]+)%((?:\s+\d+%)+)\s+" + re.escape(function) +
                     r" \(", block, re.M)
    if not head or not line:
        return None
    names = re.findall(r"CPU wait|\S+", head.group(1))
    shares = [float(x) for x in re.findall(r"(\d+)%", line.group(3))]
    got = dict(zip(names, shares))
    got["own"], got["total"] = float(line.group(1)), float(line.group(2))
    return got


class WaitingForAChild(WallTest):

    def wall(self, py, name, text):
        prog = self.out(name + ".py")
        with open(prog, "w") as f:
            f.write(textwrap.dedent(text))
        out = self.out("%s-%s.txt" % (name, py.label))
        p = self.record(["--idle", "-f", "collapsed", "-o", out], [py.path, prog])
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p, collapsed_counts(out)

    @needs_perf
    def test_a_wait_for_a_child_is_its_reason_and_its_process_share(self):
        """subprocess.run(["sleep", "2"]) in wait_for_child: the function's
        time is >= 90% [off-CPU: child process] (the rest, waiting for a CPU
        once woken, and its start), none of it [off-CPU: other]; in the
        summary the Python process has its own block where wait_for_child
        is >= 85% of the process's time, its child column >= 90%, and the
        sleep child a block of its own, its sleep >= 90% of its time (its
        moments between vfork and exec, the parent's Python frames still
        on its stack, are its own: < 10% of its time in wait_for_child).
        (Before: other, and 47.7% of all processes' time.)"""
        for py in interpreters():
            with self.subTest(py=py.label):
                p, stacks = self.wall(py, "one_wait", ONE_WAIT)
                mine = {s: n for s, n in stacks.items() if in_function(s, "wait_for_child")}
                total = sum(mine.values())
                child = sum(n for s, n in mine.items() if s.endswith(";" + CHILD))
                other = sum(n for s, n in mine.items() if s.endswith(";" + OTHER))
                blocks = process_blocks(p.stderr)
                ours = [b for h, b in blocks.items()
                        if h.startswith("python") and "wait_for_child (" in b]
                got = row(ours[0], "wait_for_child") if ours else None
                kid = [b for h, b in blocks.items() if h.startswith("sleep (pid ")]
                note("%s: wait_for_child %d periods, %d of them %s, %d other; its row %s; "
                     "blocks %s" % (py.label, total, child, CHILD, other, got,
                                    sorted(blocks)))
                self.assertGreater(total, 0, sorted(stacks.items())[:20])
                self.assertGreaterEqual(child, 0.9 * total, sorted(mine.items()))
                self.assertEqual(other, 0, sorted(mine.items()))
                self.assertEqual(len(ours), 1, p.stderr[-3000:])
                self.assertIsNotNone(got, ours[0])
                self.assertGreaterEqual(got["total"], 85.0, ours[0])
                self.assertGreaterEqual(got["child"], 90.0, ours[0])
                self.assertEqual(len(kid), 1, p.stderr[-3000:])
                m = re.search(r"sleep ([\d.]+)%", kid[0])
                self.assertTrue(m and float(m.group(1)) >= 90.0, kid[0])
                in_kid = row(kid[0], "wait_for_child")
                self.assertTrue(in_kid is None or in_kid["total"] < 10.0, kid[0])

    @needs_perf
    def test_every_way_subprocess_waits_is_a_child_and_a_sleep_a_sleep(self):
        """Popen.wait with no timeout (wait4), with one (a sleep loop, or
        3.15's pidfd poll), and communicate() on the child's pipes: of each
        function's time blocked (off the CPU, not waiting for one) >= 95%
        [off-CPU: child process], none [off-CPU: other], and the child's
        >= 60% of all its time (the timeout loop wakes up to 20 times in
        0.6 s: its time on a CPU and waiting for one, once woken, are
        theirs, most on a busy machine); the program's own time.sleep
        (own_nap), judged alike, [off-CPU: sleep] and none of it a
        child's (woken on a busy machine it may wait 50 periods for a
        CPU: 3.14 in the sid world, 239 asleep of 291)."""
        for py in interpreters():
            with self.subTest(py=py.label):
                p, stacks = self.wall(py, "every_way", EVERY_WAY)
                seen = {}
                for fn in ("plain_wait", "wait_with_timeout", "capture_output", "own_nap"):
                    mine = {s: n for s, n in stacks.items() if in_function(s, fn)}
                    leaf = lambda m: sum(n for s, n in mine.items() if s.endswith(";" + m))
                    blocked = sum(n for s, n in mine.items() if s.endswith("]") and
                                  ";[off-CPU: " in s and not s.endswith(";" + CPU_WAIT))
                    seen[fn] = {"all": sum(mine.values()), "blocked": blocked,
                                "child": leaf(CHILD), "sleep": leaf(SLEEP),
                                "other": leaf(OTHER), "cpu wait": leaf(CPU_WAIT)}
                note("%s: periods %s" % (py.label, seen))
                for fn in ("plain_wait", "wait_with_timeout", "capture_output"):
                    got = seen[fn]
                    self.assertGreater(got["all"], 0, fn)
                    self.assertGreaterEqual(got["child"], 0.95 * got["blocked"], (fn, seen))
                    self.assertGreaterEqual(got["child"], 0.6 * got["all"], (fn, seen))
                    self.assertEqual(got["other"], 0, (fn, seen))
                got = seen["own_nap"]
                self.assertGreaterEqual(got["sleep"], 0.95 * got["blocked"], seen)
                self.assertGreaterEqual(got["sleep"], 0.6 * got["all"], seen)
                self.assertEqual(got["child"], 0, seen)
