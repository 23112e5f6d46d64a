"""What numpy/pandas programs do to a stack, in the standard library: deep
chains of Python calls made through C (sorted's key, map: C frames between
Python frames on every version, and about 200 Python frames in all), with
C extensions imported in the middle of the run, each then busy at once in
its own code (its library mapped milliseconds before: an unwinder with
stale maps cannot name it). deep_mixed.py [SECONDS] (CPU time, default 2)."""
import importlib
import sys
import time

WORK = [
    ("zlib", lambda m: m.compress(bytes(range(256)) * 400, 9)),
    ("_bz2", lambda m: m.BZ2Compressor(9).compress(bytes(range(256)) * 200)),
    ("_lzma", lambda m: m.LZMACompressor().compress(bytes(range(256)) * 100)),
    ("unicodedata", lambda m: [m.normalize("NFKD", "\u00e9\u00fc\u00f1" * 500) for _ in range(20)]),
    ("_decimal", lambda m: [m.Decimal(i).sqrt() for i in range(1, 3000)]),
    ("_json", lambda m: m.encode_basestring_ascii("\u00e9x" * 20000)),
    ("_pickle", lambda m: m.dumps([list(range(50))] * 3000)),
    ("_sha512", lambda m: m.sha512(b"x" * 1000000).digest()),
    ("_md5", lambda m: m.md5(b"x" * 2000000).digest()),
    ("array", lambda m: m.array("d", range(200000)).tobytes()),
    ("cmath", lambda m: [m.exp(complex(i % 50, i)) for i in range(60000)]),
    ("_struct", lambda m: [m.pack("<qd", i, i) for i in range(60000)]),
    ("binascii", lambda m: m.crc32(b"x" * 3000000)),
    ("_csv", lambda m: list(m.reader(["a,b,c"] * 30000))),
    ("pyexpat", lambda m: m.ParserCreate().Parse("<a>" + "<b>x</b>" * 20000 + "</a>", True)),
]


def busy(name, fn):
    """Imports name (a C extension not loaded before) and keeps its code
    busy for 50 ms of CPU time; a module the interpreter has built in, or
    lacks, is skipped."""
    try:
        m = importlib.import_module(name)
    except ImportError:
        return
    end = time.process_time() + 0.05
    while time.process_time() < end:
        fn(m)


def through_c(n, leaf):
    """n levels of Python -> C (sorted, map) -> Python, then leaf()."""
    if n == 0:
        return leaf()
    if n % 2:
        return sorted([0], key=lambda _: through_c(n - 1, leaf))
    return list(map(lambda _: through_c(n - 1, leaf), [0]))


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    for name, fn in WORK:
        through_c(95, lambda: busy(name, fn))
    end = time.process_time() + seconds
    while time.process_time() < end:
        through_c(95, lambda: sum(i * i for i in range(20000)))


main()
