"""Regenerates tests/fuzz/corpus/jitdump/ from one dump perfpy wrote.

    PERFPY_JITDUMP_DIR=/tmp/d build/perfpy run --mode jit -- python3 -c pass
    python3 tests/fuzz/make_jitdump_corpus.py /tmp/d/jit-<pid>.dump \
        tests/fuzz/corpus/jitdump [cpython-313-dump]

Keeps the first three trampolines (unwinding, debug, code load each) of the
seed and writes: valid dumps (1 and 3 entries, byte-swapped), truncations
inside each record, and one corruption per reader check. Each file is a
few hundred bytes. The optional third argument adds the first two entries
of a dump written by CPython 3.13's own -X perf_jit (another writer).
"""
import os
import struct
import sys

HDR = 40
LOAD, MOVE, DEBUG, CLOSE, UNWIND = 0, 1, 2, 3, 4


def records(data, start=HDR):
    """(offset, id, size) of each record."""
    out, pos = [], start
    while pos + 16 <= len(data):
        rid, size = struct.unpack_from("<II", data, pos)
        if size < 16 or pos + size > len(data):
            break
        out.append((pos, rid, size))
        pos += size
    return out


def first_entries(data, n):
    """The header and the records up to the n-th code load."""
    end, loads = HDR, 0
    for off, rid, size in records(data):
        end = off + size
        if rid == LOAD:
            loads += 1
            if loads == n:
                break
    return bytearray(data[:end])


def swapped(data):
    """The same dump as a big-endian writer would have written it."""
    out = bytearray(data)

    def sw(fmt, at):
        vals = struct.unpack_from("<" + fmt, out, at)
        struct.pack_into(">" + fmt, out, at, *vals)

    sw("IIIIIIQQ", 0)
    for off, rid, size in records(data):
        sw("IIQ", off)
        if rid == LOAD:
            sw("IIQQQQ", off + 16)
        elif rid == DEBUG:
            _, nr = struct.unpack_from("<QQ", data, off + 16)
            sw("QQ", off + 16)
            pos = off + 32
            for _ in range(nr):
                sw("Qii", pos)
                pos = data.index(b"\0", pos + 16) + 1
        elif rid == UNWIND:
            sw("QQQ", off + 16)
    return out


def main():
    seed = open(sys.argv[1], "rb").read()
    outdir = sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    three = first_entries(seed, 3)
    recs = records(three)
    unw, dbg, load = recs[0][0], recs[1][0], recs[2][0]
    files = {}

    def variant(name, data):
        files[name] = bytes(data)

    def patched(fmt, at, value, base=three):
        d = bytearray(base)
        struct.pack_into("<" + fmt, d, at, value)
        return d

    variant("valid-writer-3.dump", three)
    variant("valid-writer-1.dump", first_entries(seed, 1))
    variant("valid-swapped-3.dump", swapped(three))
    variant("header-only.dump", three[:HDR])
    variant("empty.dump", b"")
    variant("short-magic.dump", three[:3])
    variant("trunc-header.dump", three[:39])
    variant("trunc-prefix.dump", three[:HDR + 10])
    variant("trunc-in-unwinding.dump", three[:unw + 50])
    variant("trunc-in-debug.dump", three[:dbg + 40])
    variant("trunc-in-load.dump", three[:load + 60])
    variant("trunc-after-unwinding.dump", three[:dbg])
    variant("bad-magic.dump", patched("I", 0, 0x12345678))
    variant("bad-version.dump", patched("I", 4, 2))
    variant("header-size-small.dump", patched("I", 8, 16))
    variant("header-size-large.dump", patched("I", 8, 1 << 30))
    variant("header-flags-reserved.dump", patched("Q", 32, 0x80))
    variant("record-size-0.dump", patched("I", unw + 4, 0))
    variant("record-size-huge.dump", patched("I", unw + 4, 0xFFFFFFF0))
    d = bytearray(three)
    name_end = d.index(b"\0", load + 56)
    d[name_end] = ord("X")
    variant("load-name-unterminated.dump", d[:load + recs[2][2]])
    variant("load-code-size-huge.dump", patched("Q", load + 40, 1 << 63))
    variant("load-padded.dump", patched("Q", load + 40, 4))
    variant("load-pid-other.dump", patched("I", load + 16, 1))
    variant("load-index-repeated.dump", patched("Q", recs[5][0] + 48, 0))
    variant("debug-nr-huge.dump", patched("Q", dbg + 24, 1 << 62))
    variant("debug-addr-outside.dump", patched("Q", dbg + 32, 16))
    variant("debug-code-addr-other.dump", patched("Q", dbg + 16, 16))
    variant("unwind-mapped-0.dump", patched("Q", unw + 32, 0))
    variant("unwind-hdr-larger.dump", patched("Q", unw + 24, 1000))
    variant("unwind-size-huge.dump", patched("Q", unw + 16, 1 << 40))
    unwinding_size = struct.unpack_from("<Q", three, unw + 16)[0]
    variant("unwind-ehptr-off.dump",
            patched("i", unw + 40 + unwinding_size - 20 + 4, -4))
    variant("two-unwinding.dump", three[:dbg] + three[unw:])
    unknown = struct.pack("<IIQ", 99, 21, 0) + b"spare"
    variant("unknown-record.dump", three[:dbg] + unknown + three[dbg:])
    close = struct.pack("<IIQ", CLOSE, 16, 0)
    variant("close-record.dump", three + close)
    if len(sys.argv) > 3:
        variant("cpython313-2.dump", first_entries(open(sys.argv[3], "rb").read(), 2))
    for name, data in sorted(files.items()):
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
    print("%d files in %s" % (len(files), outdir))


if __name__ == "__main__":
    main()
