"""Runs perfpy's integration tests and ends with "N passed, N failed".

    python3 tests/integration/run.py [--build DIR] [-k PATTERN] [-j JOBS]
                                     [--sanitizer address|undefined] [--tests DIR]

--tests runs the test_*.py of another directory (test_runners.py checks
this runner's counting on modules of its own making).

Test modules (tests/integration/test_*.py) run in parallel worker processes
(-j, default: the number of CPUs); tests inside one module run in order.
Skips are counted and listed but are neither passes nor failures.
"""
import argparse
import io
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import tmp_check  # noqa: E402  (tests/tmp_check.py: what counts as ours)


def run_module(args):
    name, pattern, where = args
    sys.path.insert(0, HERE)
    if where != HERE:
        sys.path.insert(0, where)
    loader = unittest.TestLoader()
    if pattern:
        loader.testNamePatterns = ["*%s*" % pattern]
    out = io.StringIO()
    t0 = time.time()
    try:
        suite = loader.loadTestsFromName(name)
    except Exception as e:  # a module that does not import is a failure
        return name, 0, 1, 0, "FAIL  %s (import): %s\n" % (name, e), 0.0

    class Result(unittest.TextTestResult):
        """Counts units: a test without subtests is one, a test with
        subtests is one per subtest; each unit passes, fails or is skipped
        exactly once."""
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        with_subtests = set()
        before = set()

        # run-all judges what a stage leaves in /tmp, but a stage is a
        # thousand tests: each test's own leftovers (files of its ended
        # processes still there after its tearDown) are named here, so
        # that the stage's verdict points at a test (modules run in
        # parallel: a name may be another module's, said as a hint)
        # (PERFPY_TEST_LEFTOVER_DIRS: other places to watch, for the
        # runner's own test, which must not see the suite's other files)
        places = tuple(d for d in os.environ.get("PERFPY_TEST_LEFTOVER_DIRS", "").split(":")
                       if d) or tmp_check.PLACES

        def startTest(self, test):
            super().startTest(test)
            self.before = tmp_check.listing(self.places)

        def stopTest(self, test):
            super().stopTest(test)
            new = [p for p in tmp_check.left(self.before, self.places)
                   if tmp_check.PID_NAMED.match(os.path.basename(p))]
            if new:
                out.write("      (after %s: %d new files of ended processes in /tmp, "
                          "e.g. %s)\n" % (test.id(), len(new), new[0]))

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            self.with_subtests.add(test.id())
            if err is None:
                self.counts["passed"] += 1
            else:
                self.counts["failed"] += 1
                out.write("FAIL  %s\n%s\n" % (subtest.id(),
                                               self._exc_info_to_string(err, test)))

        def addSuccess(self, test):
            super().addSuccess(test)
            if test.id() not in self.with_subtests:
                self.counts["passed"] += 1
                out.write("ok    %s\n" % test.id())

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self.counts["failed"] += 1
            out.write("FAIL  %s\n%s\n" % (test.id(), self._exc_info_to_string(err, test)))

        def addError(self, test, err):
            super().addError(test, err)
            self.counts["failed"] += 1
            out.write("ERROR %s\n%s\n" % (test.id(), self._exc_info_to_string(err, test)))

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            parent = getattr(test, "test_case", None)
            if parent is not None:
                self.with_subtests.add(parent.id())
            self.counts["skipped"] += 1
            out.write("skip  %s: %s\n" % (test.id(), reason))

    runner = unittest.TextTestRunner(stream=io.StringIO(), resultclass=Result,
                                     verbosity=0)
    runner.run(suite)
    c = Result.counts
    return (name, c["passed"], c["failed"], c["skipped"], out.getvalue(), time.time() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("-k", dest="pattern", default=None)
    ap.add_argument("-j", dest="jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sanitizer", default="")
    ap.add_argument("--tests", default=HERE)
    a = ap.parse_args()
    a.tests = os.path.abspath(a.tests)
    os.environ["PERFPY_TEST_BUILD"] = a.build
    if a.sanitizer:
        os.environ["PERFPY_TEST_SANITIZER"] = a.sanitizer
    modules = sorted(f[:-3] for f in os.listdir(a.tests)
                     if f.startswith("test_") and f.endswith(".py"))
    # perf's build-id cache is ~/.debug unless perf's configuration says
    # otherwise, and the tests' own `perf record` (without -B) and `perf
    # inject` (without --buildid-dir) add every library they sample to it: a
    # test run used to leave copies of build/lib/perfpy*.so in the user's
    # ~/.debug. The whole run gets a configuration of its own (PERF_CONFIG:
    # perf then reads only that file; PERF_BUILDID_DIR is not read by perf
    # 6.1, it only sets it for its scripts) with a private cache, removed at
    # the end.
    buildids = tempfile.mkdtemp(prefix="perfpy-test-perf-")
    os.chmod(buildids, 0o755)           # tests run perf as user nobody too
    with open(os.path.join(buildids, "perfconfig"), "w") as f:
        f.write("[buildid]\n\tdir = %s\n" % os.path.join(buildids, "cache"))
    os.environ["PERF_CONFIG"] = os.path.join(buildids, "perfconfig")
    try:
        passed, failed, skipped = run_all(modules, a)
    finally:
        shutil.rmtree(buildids, ignore_errors=True)
    if passed + failed + skipped == 0:
        print("no test ran%s: counted as a failure" %
              (" (nothing matches -k %s)" % a.pattern if a.pattern else ""))
        failed = 1
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


def run_all(modules, a):
    passed = failed = skipped = 0
    with multiprocessing.Pool(max(1, a.jobs)) as pool:
        for name, p, f, s, text, secs in pool.imap_unordered(
                run_module, [(m, a.pattern, a.tests) for m in modules]):
            sys.stdout.write(text)
            # (when it ran: the stage's verdict on /tmp names a file's time)
            end = time.time()
            sys.stdout.write("      (%s: %d passed, %d failed, %d skipped, %.1fs, %s-%s UTC)\n"
                             % (name, p, f, s, secs,
                                time.strftime("%H:%M:%S", time.gmtime(end - secs)),
                                time.strftime("%H:%M:%S", time.gmtime(end))))
            sys.stdout.flush()
            passed += p
            failed += f
            skipped += s
    return passed, failed, skipped


if __name__ == "__main__":
    sys.exit(main())
