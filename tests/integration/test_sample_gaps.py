"""Sample mode and read mode where they used to stop short: -d with a
program perfpy starts (sample mode refused it), and an attach to a process
whose children already run (a multiprocessing pool's workers: sample mode's
fork tracepoint sees only children started after it). Each worker's frames
must be in the profile; the program stopped by -d ends as in the other
modes (SIGINT, exit status 0, "recording stopped")."""
import os
import re
import subprocess
import time

from support import BUILD, PERFPY, TempDirTest, interpreters, note, run

SAMPLER = os.path.join(BUILD, "perfpy-sample")
LONG = """import sys
def spin():
    x = 0
    while True:
        x += 1
spin()
"""
POOL = """import multiprocessing as mp, os, time
def work(i):
    end = time.time() + 60
    x = 0
    while time.time() < end:
        x += 1
    return x
if __name__ == "__main__":
    with mp.Pool(3) as p:
        r = p.map_async(work, range(3))
        time.sleep(1)
        print("pid", os.getpid(), " ".join(str(c.pid) for c in mp.active_children()),
              flush=True)
        r.wait()
"""


class SampleGaps(TempDirTest):

    def setUp(self):
        super().setUp()
        if not os.path.exists(SAMPLER):
            self.skipTest("sample and read modes are not built here")
        if os.geteuid() != 0:
            self.skipTest("sample mode needs root (or CAP_BPF and CAP_PERFMON)")
        self.py = interpreters()[-1]

    def test_duration_ends_a_started_program(self):
        app = self.write("long.py", LONG)
        for mode in ("sample", "read"):
            with self.subTest(mode=mode):
                out = os.path.join(self.tmp, "%s.txt" % mode)
                t0 = time.time()
                p = run([PERFPY, "record", "--mode", mode, "-d", "2", "-f", "collapsed", "-o",
                         out, "--", self.py.path, app], timeout=60)
                took = time.time() - t0
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                self.assertLess(took, 8, "the program ran on past -d 2")
                self.assertIn("KeyboardInterrupt", p.stderr)     # SIGINT, as Ctrl-C
                self.assertRegex(p.stderr, r"recording stopped after \d")
                with open(out) as f:
                    self.assertRegex(f.read(), r"(^|;)spin \(")

    def test_attach_to_a_pool_reads_every_worker(self):
        app = self.write("pool.py", POOL)
        for mode in ("sample", "read"):
            with self.subTest(mode=mode):
                target = subprocess.Popen([self.py.path, app], stdout=subprocess.PIPE,
                                          universal_newlines=True)
                try:
                    words = target.stdout.readline().split()
                    pid, workers = int(words[1]), [int(w) for w in words[2:]]
                    self.assertEqual(len(workers), 3, words)
                    out = os.path.join(self.tmp, "pool-%s.txt" % mode)
                    p = run([PERFPY, "record", "--mode", mode, "-p", str(pid), "-d", "2",
                             "-f", "collapsed", "-o", out], timeout=60)
                    self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                    with open(out) as f:
                        text = f.read()
                    per = {w: sum(int(l.rsplit(" ", 1)[1]) for l in text.splitlines()
                                  if re.match(r"[^;]*\(pid %d\);.*(^|;)work \(" % w, l))
                           for w in workers}
                    note("%s mode, attached to a running pool: work samples per worker %s"
                         % (mode, per))
                    for w in workers:
                        self.assertGreater(per[w], 20, "worker %d: no frames\n%s"
                                           % (w, p.stderr[-2000:]))
                finally:
                    target.kill()
                    target.wait()
                    for w in workers:
                        try:
                            os.kill(w, 9)
                        except ProcessLookupError:
                            pass
