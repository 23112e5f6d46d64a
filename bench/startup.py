"""Cost of perfpy's installed startup hook when no switch is set.

    python3 bench/startup.py [--runs N] [--build DIR]

For each interpreter the build made a module for: makes a throw-away venv,
times `python -c pass` with and without perfpy installed in it (runs
interleaved, medians of wall time), and prints a Markdown table. The hook is
one line in perfpy-startup.pth that imports nothing unless PERFPY, -X perf,
-X perf_jit, PYTHONPERFSUPPORT or PYTHON_PERF_JIT_SUPPORT is set.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def interpreters(build):
    with open(os.path.join(build, "pythons.txt")) as f:
        return [line.split()[:2] for line in f if line.strip()]


def once(py, env):
    t = time.perf_counter()
    subprocess.run([py, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PERFPY", "PYTHONPERFSUPPORT", "PYTHON_PERF_JIT_SUPPORT",
                        "PYTHONPATH")}
    print("| interpreter | `python -c pass` without perfpy (ms) | with perfpy installed (ms) | added (ms) |")
    print("|---|---|---|---|")
    for path, version in interpreters(a.build):
        tmp = tempfile.mkdtemp(prefix="perfpy-bench-startup-")
        try:
            plain, hooked = os.path.join(tmp, "plain"), os.path.join(tmp, "hooked")
            for v in (plain, hooked):
                subprocess.run([path, "-m", "venv", "--without-pip", v], check=True)
            subprocess.run([os.path.join(ROOT, "scripts", "install"), "", "/usr/local",
                            os.path.join(hooked, "bin", "python"), a.build],
                           check=True, stdout=subprocess.DEVNULL)
            p, h = os.path.join(plain, "bin", "python"), os.path.join(hooked, "bin", "python")
            for _ in range(3):          # warm the page cache
                once(p, env), once(h, env)
            tp, th = [], []
            for _ in range(a.runs):     # interleaved
                tp.append(once(p, env))
                th.append(once(h, env))
            mp, mh = statistics.median(tp) * 1e3, statistics.median(th) * 1e3
            print("| %s (%s) | %.2f | %.2f | %+.2f |" % (version, path, mp, mh, mh - mp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
