"""Runs CPython's own Lib/test/test_perf_profiler.py and prints its outcomes:
the child of the peer suite (tests/integration/test_cpython_peer.py), which
runs it in a private /tmp (the file's tearDown deletes every perf map it
did not see at setUp there).

    python peer_runner.py TEST_FILE [--shim]

The last line of stdout is "PEER-RESULTS " and a JSON list of
[test id, "pass" | "fail" | "skip", detail]; a module-level SkipTest is one
entry with the id "<module>".

--shim, for CPython 3.8-3.11, which have no perf trampoline of their own and
run the file of the oldest CPython that has one (3.12): the helpers that
file needs and these versions lack, nothing else:
  - sysconfig's PY_HAVE_PERF_TRAMPOLINE = 1 (the file skips itself without
    it; perfpy is the trampoline here);
  - test.support.has_subprocess_support (3.11+) = True,
    test.support.check_sanitizer (3.9+) answering False,
    test.support.os_helper (3.10+) with temp_dir from test.support;
  - in the processes the tests start, sys.activate_stack_trampoline,
    sys.deactivate_stack_trampoline and sys.is_stack_trampoline_active are
    perfpy's functions: the peer suite installs perfpy_peer_shim.pth into
    the venv (this runner does not).
"""
import importlib.util
import json
import os
import sys
import traceback
import types
import unittest


def shim():
    import sysconfig
    from test import support
    sysconfig.get_config_vars()["PY_HAVE_PERF_TRAMPOLINE"] = 1
    if not hasattr(support, "has_subprocess_support"):
        support.has_subprocess_support = True
    if not hasattr(support, "check_sanitizer"):
        support.check_sanitizer = lambda **kw: False
    try:
        from test.support import os_helper  # noqa: F401
    except ImportError:
        m = types.ModuleType("test.support.os_helper")
        m.temp_dir = support.temp_dir
        sys.modules["test.support.os_helper"] = m
        support.os_helper = m


class Result(unittest.TestResult):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.rows = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.rows.append([test.id(), "pass", ""])

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.rows.append([test.id(), "fail", self._exc_info_to_string(err, test)[-3000:]])

    def addError(self, test, err):
        super().addError(test, err)
        self.rows.append([test.id(), "fail", self._exc_info_to_string(err, test)[-3000:]])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.rows.append([test.id(), "skip", reason])

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.rows.append([test.id(), "pass", "expected failure"])

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.rows.append([test.id(), "fail", "unexpected success"])


def main():
    path = sys.argv[1]
    if "--shim" in sys.argv[2:]:
        shim()
    spec = importlib.util.spec_from_file_location("test_perf_profiler", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except unittest.SkipTest as e:
        rows = [["<module>", "skip", str(e)]]
    except Exception:
        rows = [["<module>", "fail", traceback.format_exc()[-3000:]]]
    else:
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)
        result = Result()
        suite.run(result)
        rows = result.rows
    sys.stdout.flush()
    os.write(1, ("\nPEER-RESULTS %s\n" % json.dumps(rows)).encode())


if __name__ == "__main__":
    main()
