"""Writes tests/fuzz/corpus/options/: command lines for tests/fuzz/fuzz_options.c.

    python3 tests/fuzz/make_options_corpus.py tests/fuzz/corpus/options

Each file is one byte naming the subcommand (0 run, 1 record, 2 report,
3 jitdump, 4 doctor, 5 __exec, 6 dump, 7 top) and its arguments separated by NUL bytes:
the usual command lines, every option with good and bad values, missing
values, option groups, "--", and the ones that found bugs.
"""
import os
import sys

CMDS = {"run": 0, "record": 1, "report": 2, "jitdump": 3, "doctor": 4, "__exec": 5,
        "dump": 6, "top": 7}
LINES = {
    "run-plain": ("run", ["--", "python3", "app.py"]),
    "run-mode-jit": ("run", ["--mode", "jit", "--", "python3", "app.py", "-x"]),
    "run-mode-eq": ("run", ["--mode=perf_jit", "python3"]),
    "run-mode-bad": ("run", ["-m", "fast", "--", "python3"]),
    "run-mode-missing": ("run", ["--mode"]),
    "run-no-program": ("run", ["--"]),
    "run-unknown": ("run", ["--bogus", "python3"]),
    "run-help": ("run", ["-h"]),
    "record-plain": ("record", ["--", "python3", "app.py"]),
    "record-all": ("record", ["-o", "out.svg", "-f", "html", "-r", "999", "-d", "2.5",
                              "--mode", "jit", "--stack-size", "65528", "--no-native",
                              "--keep", "--inline", "--native", "--", "python3", "-m", "pkg"]),
    "record-pid": ("record", ["-p", "1234", "-d", "1"]),
    "record-pid-and-program": ("record", ["-p", "1", "python3"]),
    "record-neither": ("record", []),
    "record-rate-0": ("record", ["-r", "0", "--", "x"]),
    "record-rate-huge": ("record", ["--rate=99999999999999999999999", "--", "x"]),
    "record-duration-nan": ("record", ["-d", "nan", "--", "x"]),
    "record-duration-inf": ("record", ["-d", "inf", "--", "x"]),
    "record-duration-neg": ("record", ["--duration", "-1", "--", "x"]),
    "record-stack-odd": ("record", ["--stack-size", "100", "--", "x"]),
    "record-format-bad": ("record", ["-f", "png", "--", "x"]),
    "record-group-help": ("record", ["-hq"]),           # stopped inside a group
    "record-group-unknown": ("record", ["-qh", "--", "x"]),
    "record-missing-value": ("record", ["-o"]),
    "record-long-abbrev": ("record", ["--stack", "64", "--dur", "3", "--", "x"]),
    "record-ambiguous": ("record", ["--n", "--", "x"]),
    "record-empty-args": ("record", ["", "", ""]),
    "report-plain": ("report", ["perf.data"]),
    "report-all": ("report", ["-f", "speedscope", "-o", "-", "--no-native", "--keep",
                              "--lines-dir", "/tmp", "--title", "T", "--top", "0", "-q",
                              "--from-script", "--inline", "perf.data"]),
    "report-permuted": ("report", ["perf.data", "-f", "pprof", "--top=100000"]),
    "report-two-inputs": ("report", ["a", "b"]),
    "report-empty-output": ("report", ["-o", "", "perf.data"]),
    "report-top-bad": ("report", ["--top", "-5", "perf.data"]),
    "report-nothing": ("report", []),
    "report-dashdash": ("report", ["--", "-f"]),
    "jitdump-list": ("jitdump", ["--list", "/tmp/jit-1.dump"]),
    "jitdump-two": ("jitdump", ["a", "b"]),
    "jitdump-group": ("jitdump", ["-lh"]),
    "jitdump-unknown": ("jitdump", ["-x", "f"]),
    "doctor-plain": ("doctor", []),
    "doctor-dir": ("doctor", ["--dir", "/tmp", "--", "python3.11"]),
    "doctor-dir-missing": ("doctor", ["--dir"]),
    "exec-plain": ("__exec", ["--stderr-fd", "10", "--pid-fd", "11", "--", "python3"]),
    "exec-bad-fd": ("__exec", ["--stderr-fd", "2", "--", "python3"]),
    "exec-fd-junk": ("__exec", ["--pid-fd", "1x"]),
    "exec-nothing": ("__exec", ["--stderr-fd", "12"]),
    "dump-plain": ("dump", ["4242"]),
    "dump-all": ("dump", ["--json", "--locals", "-s", "--nonblocking", "--no-native",
                          "--mode", "read", "-p", "4242"]),
    "dump-twice": ("dump", ["-p", "1", "2"]),
    "dump-not-a-pid": ("dump", ["12x"]),
    "dump-mode-bad": ("dump", ["--mode", "fast", "1"]),
    "dump-async-json": ("dump", ["--async", "--json", "1"]),
    "dump-nothing": ("dump", []),
    "top-pid": ("top", ["-p", "4242", "-r", "199", "-i", "0.5", "--idle"]),
    "top-program": ("top", ["--mode", "read", "--", "python3", "-c", "pass"]),
    "top-both": ("top", ["-p", "1", "python3"]),
    "top-interval-bad": ("top", ["-i", "nan", "-p", "1"]),
    "top-rows": ("top", ["--rows", "0", "-p", "1"]),
    "top-rows-bad": ("top", ["--rows=-3", "-p", "1"]),
    "top-idle-read": ("top", ["--idle", "--mode", "read", "-p", "1"]),
    "top-nothing": ("top", []),
}


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, (cmd, args) in LINES.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([CMDS[cmd]]) + b"\0".join(a.encode() for a in args))


if __name__ == "__main__":
    main(sys.argv[1])
