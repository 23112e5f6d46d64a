/*
 * Fuzz target: the readers of a running CPython (src/cpython), fed a
 * simulated address space of any bytes instead of a process (mem.h): a
 * root profiler reads processes it does not trust, whose memory may hold
 * anything and change while it is read. Whatever the bytes, the readers
 * must stay in bounds (ASan), end (libFuzzer's timeout: every walk is
 * bounded) and leak nothing.
 *
 * The input: a selector byte, a flags byte, then the image, _PyRuntime at
 * its start. The image stands at IMAGE_AT and again after itself (four
 * times over), so that any pointer into that span reads some of the
 * input; a pointer below or past it, or null, does not read (-EFAULT).
 * Its last TRAILER bytes (when it is that long) also say what a process's
 * ELF files would: the types' addresses (str, code, coroutine, generator,
 * a task name's, the twelve a reader of objects tells apart) and an
 * AsyncioDebug section. With the flag CHANGING, each read sees its first
 * byte changed by the number of reads made so far: memory changing under
 * the reader, as a running program's does. make_cpython_corpus.py makes
 * the seeds: a whole address space per version and flavour.
 *
 *   layout         pp_pylayout_from over the image (3.13+'s debug
 *                  offsets, checked), and pp_pylayout_read from the
 *                  address space; else the compiled table the selector
 *                  picks, for every version and flavour
 *   thread lists   pp_pystack_tid_offset, pp_pystack_read from _PyRuntime
 *   frames         every thread's chain, each frame's code identity
 *   code objects   pp_pycode_get (names, files, line tables copied),
 *   and lines      pp_pyread_code_start and pp_pycode_line of each frame
 *   strings        pp_pyread_str of words of the image
 *   objects        pp_pyobj_repr, _locals of each frame, _thread_names
 *   asyncio        pp_pyasync_offsets_from, pp_pyasync_read (one read)
 *
 * Built with libFuzzer by `make fuzz` (scripts/fuzz), replayed over
 * tests/fuzz/corpus/cpython/ by `make test`.
 */
#include "cpython/mem.h"
#include "cpython/pyasync.h"
#include "cpython/pycode.h"
#include "cpython/pylayout.h"
#include "cpython/pyobj.h"
#include "cpython/pyread.h"
#include "cpython/pystack.h"
#include "cpython/pytables.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_AT 0x10000ull          /* where the image starts */
#define COPIES 4                     /* the span holds it this many times */
#define NO_PID 0x3ffffff0            /* a pid no process has (/proc is asked of it) */

enum { CHANGING = 1, FREE_THREADED = 2, TYPES = 4, ASYNC = 8 };

/* The trailer: where each word is, from its start. */
enum { T_STR = 0, T_CODE = 8, T_CORO = 16, T_GEN = 24, T_NAME = 32, T_OBJ = 40,
       T_ASYNC = T_OBJ + 12 * 8, TRAILER = T_ASYNC + PP_PYASYNC_DEBUG_SIZE };

typedef struct space {
    const uint8_t *image;
    size_t n;
    int changing;
    unsigned reads;
} space;

static int read_space(const pp_mem *m, uint64_t addr, void *buf, size_t len)
{
    space *s = m->ctx;
    uint8_t *out = buf;
    size_t at, done = 0;

    if (addr < IMAGE_AT || addr - IMAGE_AT >= COPIES * (uint64_t)s->n ||
        len > COPIES * s->n - (addr - IMAGE_AT))
        return -EFAULT;
    /* a run of whole pieces of the image (a byte at a time, the readers'
     * 4 KiB reads made this most of the target's time) */
    for (at = (size_t)(addr - IMAGE_AT) % s->n; done < len; at = 0) {
        size_t k = s->n - at < len - done ? s->n - at : len - done;

        memcpy(out + done, s->image + at, k);
        done += k;
    }
    if (s->changing && len)
        out[0] ^= (uint8_t)++s->reads;
    return 0;
}

/* The image's word at byte at (wrapping), as an address. */
static uint64_t word(const space *s, size_t at)
{
    uint64_t v = 0;

    for (size_t i = 0; i < 8; i++)
        v |= (uint64_t)s->image[(at + i) % s->n] << (8 * i);
    return v;
}

/* The trailer's word at at, or 0 when the image has no trailer. */
static uint64_t trailer(const space *s, size_t at)
{
    return s->n >= TRAILER ? word(s, s->n - TRAILER + at) : 0;
}

/* The layout: the image's own debug offsets when they hold (3.13+ keep
 * their version just after the cookie, as Py_Version), else a table. */
static pp_py_offsets layout(const pp_mem *m, const space *s, uint8_t select, unsigned flags)
{
    unsigned lf = flags & FREE_THREADED ? PP_PYLAYOUT_FREE_THREADED : 0;
    char why[512];
    pp_pylayout l;

    if (pp_pylayout_from(s->image, s->n, (uint32_t)word(s, 8), lf, &l, why, sizeof(why)) == 0)
        return l.off;
    if (pp_pylayout_read(m, IMAGE_AT, IMAGE_AT + 8, "/usr/lib/libpython3.13.so.1.0", lf, &l,
                         why, sizeof(why)) == 0)
        return l.off;
    return pp_py_tables[select % pp_py_ntables].off;
}

/* Each frame of each thread named, its line found, its locals read. */
static void frames(const pp_mem *m, const pp_py_offsets *o, const pp_pyobj *r,
                   const pp_pyread_types *types, const pp_pystack_thread *th, int nth)
{
    static pp_pylocal locals[16];
    pp_pycode *codes;

    if (pp_pycode_open(&codes) != 0)
        return;
    for (int i = 0; i < nth; i++)
        for (size_t k = 0; k < th[i].n; k++) {
            const pp_pystack_frame *f = &th[i].f[k];
            const pp_pycode_entry *e = pp_pycode_get(codes, m, o, types, &f->id);
            uint64_t start = pp_pyread_code_start(m, o, f->id.code, (int32_t)(k % 3));

            if (e && pp_pycode_line(e, o, start, f->instr) < 0)
                abort();                 /* a line is never negative */
            pp_pyobj_locals(r, f->frame, f->id.code, locals, 16);
        }
    pp_pycode_close(codes);
}

/* asyncio's task graph, with the trailer's AsyncioDebug section. */
static void tasks(const pp_pyobj *r, const space *s, uint64_t runtime, int tid_off)
{
    pp_pyasync_offsets a;
    pp_pyasync_types ty = {trailer(s, T_CORO), trailer(s, T_GEN)};
    pp_pyasync_graph g = {0};
    char why[256], name[64];

    pp_pyasync_name_copy(r->o, &r->t, trailer(s, T_NAME), s->image, s->n, name, sizeof(name));
    if (s->n < TRAILER ||
        pp_pyasync_offsets_from(s->image + s->n - TRAILER + T_ASYNC, PP_PYASYNC_DEBUG_SIZE, &a,
                                why, sizeof(why)) != 0)
        return;
    if (pp_pyasync_read(r, &a, &ty, runtime, tid_off, 1, &g) == 0)
        for (size_t i = 0; i < g.n; i++)
            if (!pp_pyasync_find_task(&g, g.t[i].addr))
                abort();                 /* every task read is found */
    pp_pyasync_graph_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pp_pystack_thread th[8];
    space s = {data + 2, size - 2, 0, 0};
    pp_mem m = {NO_PID, read_space, &s};
    pp_py_offsets o;
    pp_pyread_types types;
    pp_pyobj r;
    uint64_t idents[8], interp = 0;
    char buf[256], names[8][64];
    int tid_off, nth;

    if (size < 2 + 8)
        return 0;
    s.changing = data[1] & CHANGING;
    o = layout(&m, &s, data[0], data[1]);
    types = (pp_pyread_types){trailer(&s, T_CODE), trailer(&s, T_STR)};
    r = (pp_pyobj){&m, &o, {0}};
    if (data[1] & TYPES) {
        uint64_t w[12];                  /* pp_pyobj_types' words, in order */

        _Static_assert(sizeof(w) == sizeof(r.t), "twelve words");
        for (size_t i = 0; i < 12; i++)
            w[i] = trailer(&s, T_OBJ + 8 * i);
        memcpy(&r.t, w, sizeof(w));
    }
    tid_off = pp_pystack_tid_offset(&m, &o, IMAGE_AT);
    nth = pp_pystack_read(&m, &o, IMAGE_AT, tid_off, th, 8);
    if (nth > 8)
        abort();
    frames(&m, &o, &r, data[1] & TYPES ? &types : NULL, th, nth);
    for (size_t at = 0; at < s.n && at < 64; at += 8) {
        pp_pyread_str(&m, &o, word(&s, at), data[1] & TYPES ? types.str : 0, buf, sizeof(buf));
        pp_pyobj_repr(&r, word(&s, at), buf, sizeof(buf));
    }
    for (int i = 0; i < nth; i++)
        idents[i] = th[i].thread_id;
    if (nth > 0 && pp_mem_u64(&m, IMAGE_AT, o.runtime_interpreters_head, &interp) == 0)
        pp_pyobj_thread_names(&r, interp, idents, names, (size_t)nth);
    if (data[1] & ASYNC)
        tasks(&r, &s, IMAGE_AT, tid_off);
    return 0;
}
