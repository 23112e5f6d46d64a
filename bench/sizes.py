#!/usr/bin/python3
"""How big each of perfpy's formats is, and how fast its pages open, beside
py-spy's for the same program: a threaded web server under load
(bench/workloads/server_threads.py: a thread per request, sqlite, 8 client
threads, 900 requests), wall-clock with every thread (`--idle --threads`).

    bench/sizes.py [--build DIR] [--python PATH] [--rate HZ] [--scale S] [--write-docs]

perfpy records the server once into its own file (-f perfpy) and writes
every format from it (perfpy report FILE -f FORMAT); again without
--threads (the default flame graph), and with --no-native (what py-spy
records: Python frames only). py-spy (from PyPI, in BUILD/bench-venv, as
bench/sample_cost.py installs it) records the same program four times:
`record --idle --threads` as SVG, as speedscope and raw (collapsed stacks),
and `record --idle`; the last column is perfpy's size over py-spy's, both
with --threads. Each
SVG and HTML page is opened in headless Chromium (tests/js/check-render.js:
from the navigation to the first frame after the load). Both at --rate
(default 100, py-spy's default; perfpy's own default is 399).

--scale S runs the server S times as long (900 x S requests; the table says
how long the recording took: 3 s at 0.1 here). speedscope's files are
opened in speedscope itself (the npm release, tests/js/check-speedscope.js
--open-only: from the navigation to its first profile painted).

--write-docs puts the table in docs/PERFORMANCE.md between
<!-- bench:sizes:begin --> and <!-- bench:sizes:end -->.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import sample_cost  # noqa: E402  (py-spy's venv, the docs block)

SERVER = os.path.join(HERE, "workloads", "server_threads.py")
EXT = {"flamegraph": "svg", "html": "html", "speedscope": "speedscope.json",
       "firefox": "firefox.json", "pprof": "pb.gz", "collapsed": "txt",
       "heatmap": "heatmap.html", "table": "table.txt", "perfpy": "perfpy.gz"}
PAGES = ("flamegraph", "html", "heatmap")


def drawn_ms(path):
    """Milliseconds Chromium took to draw path, or None."""
    p = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "check-render.js"), path,
                        "--timeout", "200000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=600)
    try:
        return json.loads(p.stdout)["ms"]
    except (ValueError, KeyError):
        return None


def speedscope_ms(path):
    """Milliseconds speedscope took to open path, or None."""
    p = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "check-speedscope.js"), path,
                        "--open-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=600)
    try:
        return json.loads(p.stdout)["open_ms"]
    except (ValueError, KeyError):
        return None


def perfpy_files(perfpy, py, rate, tmp, extra, name, scale):
    """{format: path}: the server recorded once with extra, every format
    written from perfpy's own file; "seconds": how long the recording took."""
    own = os.path.join(tmp, name + ".perfpy.gz")
    t0 = time.monotonic()
    subprocess.run([perfpy, "record", "-r", str(rate), "--idle"] + extra +
                   ["-f", "perfpy", "-o", own, "--", py, SERVER, str(scale)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=600)
    outs = {"perfpy": own, "seconds": time.monotonic() - t0}
    for fmt, ext in EXT.items():
        if fmt != "perfpy":
            outs[fmt] = os.path.join(tmp, "%s.%s" % (name, ext))
            subprocess.run([perfpy, "report", "-q", own, "-f", fmt, "-o", outs[fmt]],
                           check=True, timeout=600)
    return outs


def spy_files(spy, py, rate, tmp, scale):
    outs = {}
    for key, extra, ext in (("svg --threads", ["--threads"], "svg"),
                            ("speedscope --threads", ["--threads", "-f", "speedscope"], "json"),
                            ("raw --threads", ["--threads", "-f", "raw"], "txt"),
                            ("svg", [], "svg")):
        outs[key] = os.path.join(tmp, "spy-%s.%s" % (key.replace(" ", "").replace("-", ""), ext))
        subprocess.run([spy, "record", "-r", str(rate), "--idle"] + extra + ["-o", outs[key],
                        "--", py, SERVER, str(scale)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True, timeout=600)
    return outs


def kb(path):
    return os.path.getsize(path) / 1024.0


def table(runs, spy, rate, scale, seconds):
    lines = ["The server (bench/workloads/server_threads.py %s: %.0f s recorded), `--idle` at "
             "%d Hz; sizes in KB, Chromium's time to draw in ms, speedscope's to open "
             "(bench/sizes.py)." % (scale, seconds, rate), "",
             "| format | perfpy --threads | perfpy | perfpy --no-native --threads "
             "| py-spy --threads | py-spy | perfpy / py-spy, --threads |",
             "|---|---|---|---|---|---|---|"]
    for fmt in EXT:
        cells = []
        for name in ("threads", "default", "python"):
            path = runs[name][fmt]
            cell = "%.0f" % kb(path)
            if fmt in PAGES or fmt == "speedscope":
                ms = drawn_ms(path) if fmt in PAGES else speedscope_ms(path)
                cell += " (%s ms)" % ("?" if ms is None else ms)
            cells.append(cell)
        mine = {"flamegraph": ("svg --threads", "svg"),
                "speedscope": ("speedscope --threads", None),
                "collapsed": ("raw --threads", None)}.get(fmt, (None, None))
        for key in mine:
            if key and spy:
                cell = "%.0f" % kb(spy[key])
                if key.startswith("svg") or key.startswith("speedscope"):
                    ms = drawn_ms(spy[key]) if key.startswith("svg") else speedscope_ms(spy[key])
                    cell += " (%s ms)" % ("?" if ms is None else ms)
                cells.append(cell)
            else:
                cells.append("")
        theirs = spy and mine[0] and spy[mine[0]]
        cells.append("%.2fx" % (kb(runs["threads"][fmt]) / kb(theirs)) if theirs else "")
        lines.append("| %s | %s |" % (fmt, " | ".join(cells)))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args()
    perfpy = os.path.join(a.build, "perfpy")
    spy = sample_cost.py_spy(a.build)
    if not spy:
        print("py-spy could not be installed: its columns stay empty", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="perfpy-bench-sizes-") as tmp:
        runs = {"threads": perfpy_files(perfpy, a.python, a.rate, tmp, ["--threads"], "threads",
                                        a.scale)}
        seconds = runs["threads"]["seconds"]
        runs["default"] = perfpy_files(perfpy, a.python, a.rate, tmp, [], "default", a.scale)
        runs["python"] = perfpy_files(perfpy, a.python, a.rate, tmp,
                                      ["--no-native", "--threads"], "python", a.scale)
        spy_outs = spy_files(spy, a.python, a.rate, tmp, a.scale) if spy else None
        text = table(runs, spy_outs, a.rate, "%g" % a.scale, seconds)
    print(text)
    if a.write_docs:
        sample_cost.write_docs(text, "sizes", "## Sizes of the formats beside py-spy's")


if __name__ == "__main__":
    main()
