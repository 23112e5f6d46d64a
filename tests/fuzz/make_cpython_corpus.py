#!/usr/bin/env python3
"""Seeds for tests/fuzz/fuzz_cpython.c: for each compiled table (every
CPython version and flavour perfpy reads, as `perfpy-sample --tables`
prints them), one simulated address space that reads whole: _PyRuntime,
an interpreter, two threads, a chain of three frames, their code objects
(names and files as compact strs, a line table as bytes) and the trailer
the fuzz target reads the types from (every other one with its memory
changing under the reader). And, from every live
interpreter given, its _PyRuntime as it is (3.13+: its _Py_DebugOffsets,
which the layout reader checks).

    tests/fuzz/make_cpython_corpus.py BUILD [PYTHON...]

writes tests/fuzz/corpus/cpython/."""
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "cpython")
IMAGE_AT = 0x10000
SIZE = 0x8000
CHANGING, FREE_THREADED, TYPES, ASYNC = 1, 2, 4, 8
T_STR, T_CODE, T_CORO, T_GEN, T_NAME, T_OBJ = 0, 8, 16, 24, 32, 40
T_ASYNC = T_OBJ + 12 * 8
TRAILER = T_ASYNC + 104
STR_TYPE, CODE_TYPE, BYTES_TYPE = 0x7000, 0x7100, 0x7200


class Image:
    def __init__(self):
        self.b = bytearray(SIZE)

    def put(self, at, fmt, v):
        if at >= 0:
            struct.pack_into(fmt, self.b, at, v)

    def ptr(self, base, off, to):
        if off >= 0:
            self.put(base + off, "<Q", IMAGE_AT + to)


def field(t, name):
    return t[name][0]


def ascii_str(img, t, at, text):
    """A compact ASCII str at image offset at."""
    img.ptr(at, field(t, "object_type"), STR_TYPE)
    img.put(at + field(t, "str_length"), "<q", len(text))
    img.put(at + field(t, "str_hash"), "<q", hash(text) & 0x7fffffffffffffff)
    state = field(t, "str_compact_mask") | field(t, "str_ascii_mask")
    kind = field(t, "str_kind_mask")
    state |= (1 << ((kind & -kind).bit_length() - 1)) if kind else 0     # kind 1
    img.put(at + field(t, "str_state"), "<I", state)
    data = at + field(t, "str_ascii_data")
    img.b[data:data + len(text)] = text.encode()


def code(img, t, at, name, file_at, line, table_at):
    img.ptr(at, field(t, "object_type"), CODE_TYPE)
    name_off = field(t, "code_qualname") if field(t, "code_qualname") >= 0 else field(t, "code_name")
    img.ptr(at, name_off, at + 0x200)
    ascii_str(img, t, at + 0x200, name)
    img.ptr(at, field(t, "code_filename"), file_at)
    img.put(at + field(t, "code_firstlineno"), "<i", line)
    img.ptr(at, field(t, "code_linetable"), table_at)


def frames(img, t):
    tag = field(t, "frame_code_tag_mask")
    chain = [(0x3000, 0x4000, "leaf", 3), (0x3100, 0x4400, "Klass.mid", 10),
             (0x3200, 0x4800, "<module>", 1)]
    for i, (fr, co, name, line) in enumerate(chain):
        nxt = chain[i + 1][0] if i + 1 < len(chain) else None
        if field(t, "frame_is_object") == 1:
            img.put(fr, "<Q", 1)                    # a live frame object: ob_refcnt
        if nxt is not None:
            img.ptr(fr, field(t, "frame_previous"), nxt)
        img.put(fr + field(t, "frame_code"), "<Q", (IMAGE_AT + co) | (1 if tag else 0))
        img.put(fr + field(t, "frame_instr"), "<Q", IMAGE_AT + co + max(field(t, "code_adaptive"), 0) + 4)
        if field(t, "frame_is_entry") >= 0:
            img.put(fr + field(t, "frame_is_entry"), "<B", 1 if nxt is None else 0)
        code(img, t, co, name, 0x5000, line, 0x6000)
    ascii_str(img, t, 0x5000, "/srv/app.py")
    img.ptr(0x6000, field(t, "object_type"), BYTES_TYPE)
    img.put(0x6000 + field(t, "bytes_size"), "<q", 8)
    data = 0x6000 + field(t, "bytes_data")
    img.b[data:data + 8] = bytes([0x80, 0x00, 0x01, 0x02, 0x81, 0x01, 0x00, 0x00])
    return chain[0][0]


def space(t):
    """A whole address space for table t: _PyRuntime at 0."""
    img = Image()
    img.ptr(0, field(t, "runtime_interpreters_head"), 0x1000)
    img.ptr(0x1000, field(t, "interp_threads_head"), 0x2000)
    for ts, nxt in ((0x2000, 0x2400), (0x2400, None)):
        img.put(ts + field(t, "tstate_thread_id"), "<Q", IMAGE_AT + 0x2800)
        if nxt:
            img.ptr(ts, field(t, "tstate_next"), nxt)
    first = frames(img, t)
    if field(t, "tstate_cframe") >= 0:
        img.ptr(0x2000, field(t, "tstate_cframe"), 0x2c00)
        img.ptr(0x2c00, field(t, "cframe_current_frame"), first)
    else:
        img.ptr(0x2000, field(t, "tstate_frame"), first)
    tail = SIZE - TRAILER
    img.put(tail + T_STR, "<Q", IMAGE_AT + STR_TYPE)
    img.put(tail + T_CODE, "<Q", IMAGE_AT + CODE_TYPE)
    img.put(tail + T_OBJ + 3 * 8, "<Q", IMAGE_AT + STR_TYPE)      # pp_pyobj_types.str_type
    return bytes(img.b)


def tables(build):
    out = subprocess.run([os.path.join(build, "perfpy-sample"), "--tables"],
                         stdout=subprocess.PIPE, check=True, universal_newlines=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


LIVE = ("import ctypes, sys\n"
        "rt = ctypes.c_char.in_dll(ctypes.pythonapi, '_PyRuntime')\n"
        "sys.stdout.buffer.write(ctypes.string_at(ctypes.addressof(rt), 4096))\n")


def main():
    build = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    for i, t in enumerate(tables(build)):
        v, ft = t["table"]["version_hex"], t["table"]["free_threaded"]
        name = "%d.%d%s" % (v >> 24, (v >> 16) & 0xff, "t" if ft else "")
        img = space(t)
        flags = FREE_THREADED if ft else 0
        with open(os.path.join(OUT, "space-%s" % name), "wb") as f:
            f.write(bytes([i, flags | TYPES | ASYNC | (CHANGING if i % 2 else 0)]) + img)
    for python in sys.argv[2:]:
        p = subprocess.run([python, "-c", LIVE], stdout=subprocess.PIPE)
        if p.returncode == 0 and len(p.stdout) == 4096:
            version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                     stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
            with open(os.path.join(OUT, "runtime-%s" % version), "wb") as f:
                f.write(bytes([0, 0]) + p.stdout)


if __name__ == "__main__":
    main()
