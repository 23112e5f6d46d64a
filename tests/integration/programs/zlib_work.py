"""Python over C: zlib doing the work, called through paths where the
interpreter's own C code sits between two Python functions (a class's
__init__, sorted() calling a key function, a generator, map()). On a
stripped interpreter (Debian's /usr/bin/python3.11) many of those C
functions have no name.

    python zlib_work.py [ROUNDS]                       -> prints a checksum
    python zlib_work.py --three [ROUNDS] PIDFILE       -> a Python parent, a
        multiprocessing spawn worker and a gzip child, their pids written to
        PIDFILE ("parent N", "worker N", "gzip N")
"""
import os
import subprocess
import sys
import zlib

DATA = bytes(range(256)) * 64 + b"perfpy" * 4096


class Packer:
    def __init__(self, level):
        self.blob = zlib.compress(DATA, level)


def packed_size(level):
    return len(Packer(level).blob)


def chunks(n):
    for i in range(n):
        yield zlib.decompress(zlib.compress(DATA[i % 64:], 6))


def work(rounds):
    total = 0
    for _ in range(rounds):
        total += sum(sorted(range(1, 10), key=packed_size))
        total += sum(map(len, chunks(4)))
    return total


def worker(path):
    print("pid %d" % os.getpid(), flush=True)
    with open(path, "a") as f:
        f.write("worker %d\n" % os.getpid())
    work(60)


def three(rounds, path):
    import multiprocessing as mp
    with open(path, "w") as f:
        f.write("parent %d\n" % os.getpid())
    p = mp.get_context("spawn").Process(target=worker, args=(path,))
    p.start()
    gz = subprocess.Popen(["gzip", "-6", "-c"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    with open(path, "a") as f:
        f.write("gzip %d\n" % gz.pid)
    gz.communicate(os.urandom(1 << 20) * 8)
    work(rounds)
    p.join()
    return gz.returncode or p.exitcode


if __name__ == "__main__":
    print("pid %d" % os.getpid(), flush=True)
    if sys.argv[1:2] == ["--three"]:
        sys.exit(three(int(sys.argv[2]), sys.argv[3]))
    print(work(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
