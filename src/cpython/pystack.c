/*
 * A running CPython's Python stacks, read from outside on demand (see
 * pystack.h): read mode's reader, the user-space twin of the BPF walk.
 */
#include "pystack.h"
#include "pyread.h"

#include <errno.h>
#include <string.h>

#define GLIBC_TID_OFFSET 0x2d0     /* struct pthread.tid, x86_64 glibc 2.x */
#define FRAME_SPAN 256             /* bytes of a frame read at once */
#define CODES_PER_WALK 32          /* code objects whose identity a walk remembers */
#define MAX_HOPS (4 * PP_PYSTACK_DEPTH) /* frames followed, shims included */
#define TRIES 32                   /* walks of a thread whose chain died under them */
#define LIST_HOPS 65536            /* thread states followed to find the main one (the
                                      newest come first: it is the last) */

static uint64_t threads_head(const pp_mem *m, const pp_py_offsets *o, uint64_t runtime, int *err)
{
    uint64_t interp = 0, ts = 0;

    if ((*err = pp_mem_u64(m, runtime, o->runtime_interpreters_head, &interp)) == 0)
        *err = pp_mem_u64(m, interp, o->interp_threads_head, &ts);
    return ts;
}

int pp_pystack_tid_offset(const pp_mem *m, const pp_py_offsets *o, uint64_t runtime)
{
    int err, hops = 0;
    uint64_t ts = threads_head(m, o, runtime, &err), self;
    int32_t tid;

    for (; ts && hops < LIST_HOPS; hops++) {
        if (pp_mem_u64(m, ts, o->tstate_thread_id, &self) == 0 && self &&
            pp_mem_read(m, self + GLIBC_TID_OFFSET, &tid, sizeof(tid)) == 0 && tid == m->pid)
            return GLIBC_TID_OFFSET;
        if (pp_mem_u64(m, ts, o->tstate_next, &ts) != 0)
            break;
    }
    return -1;
}

static uint64_t first_frame(const pp_mem *m, const pp_py_offsets *o, uint64_t ts)
{
    uint64_t frame = 0, cframe = 0;

    if (o->tstate_cframe >= 0) {
        if (pp_mem_u64(m, ts, o->tstate_cframe, &cframe) != 0 ||
            pp_mem_u64(m, cframe, o->cframe_current_frame, &frame) != 0)
            return 0;
    } else if (pp_mem_u64(m, ts, o->tstate_frame, &frame) != 0) {
        return 0;
    }
    return frame;
}

static uint64_t u64_at(const unsigned char *b, int32_t off)
{
    uint64_t v;

    memcpy(&v, b + off, sizeof(v));
    return v;
}

/* The identity of code, from this read's memory of it (seen: may be NULL)
 * or read now. */
static int identity(const pp_mem *m, const pp_py_offsets *o, uint64_t code, pp_pycode_id *seen,
                    size_t *nseen, pp_pycode_id *id)
{
    for (size_t i = 0; seen && i < *nseen; i++)
        if (seen[i].code == code) {
            *id = seen[i];
            return 0;
        }
    id->code = code;
    if (pp_pyread_code_fields(m, o, code, &id->fields) != 0)
        return -EFAULT;
    if (seen && *nseen < CODES_PER_WALK)
        seen[(*nseen)++] = *id;
    return 0;
}

/* Bytes of a frame to read so that every field used is in them (and
 * ob_refcnt, the first 8), or -1. */
static int32_t frame_span(const pp_py_offsets *o)
{
    int32_t span = 16;
    int32_t fields[] = {o->frame_previous, o->frame_code, o->frame_instr, o->frame_owner,
                        o->frame_is_entry};

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (fields[i] + 8 > span)
            span = fields[i] + 8;
    return span > FRAME_SPAN || o->frame_previous < 0 || o->frame_code < 0 ? -1 : span;
}

/* One frame's fields from its bytes b (read at addr): 1 a Python
 * function's frame (its code's identity and instruction in *f), 0 a shim
 * (*shim set) or no code, -EFAULT. */
static int one(const pp_mem *m, const pp_py_offsets *o, uint64_t addr, const unsigned char *b,
               pp_pystack_frame *f, int *shim, pp_pycode_id *seen, size_t *nseen)
{
    uint64_t code = u64_at(b, o->frame_code) & ~(uint64_t)(uint32_t)o->frame_code_tag_mask;

    *shim = o->frame_owner >= 0 && o->frame_owner_shim_min >= 0 &&
            b[o->frame_owner] >= o->frame_owner_shim_min;
    if (*shim || !code)
        return 0;
    f->frame = addr;
    if (identity(m, o, code, seen, nseen, &f->id) != 0)
        return -EFAULT;
    f->instr = o->frame_is_object ? (uint64_t)(uint32_t)u64_at(b, o->frame_instr)
                                  : u64_at(b, o->frame_instr);
    f->entry = o->frame_is_object ? 1 : o->frame_is_entry >= 0 ? b[o->frame_is_entry] : 0;
    return 1;
}

int pp_pystack_frame_at(const pp_mem *m, const pp_py_offsets *o, uint64_t addr, pp_pystack_frame *f)
{
    int32_t span = frame_span(o);
    unsigned char b[FRAME_SPAN];
    size_t nseen = 0;
    int shim;

    if (span < 0 || pp_mem_read(m, addr, b, (size_t)span) != 0)
        return -EFAULT;
    return one(m, o, addr, b, f, &shim, NULL, &nseen);
}

/* The frame chain from frame: innermost first into t. 0, -EFAULT (a read
 * failed: the frames so far kept) or -EAGAIN (it reached a dead frame). */
static int walk(const pp_mem *m, const pp_py_offsets *o, uint64_t frame, pp_pystack_thread *t,
                pp_pycode_id *seen, size_t *nseen)
{
    int32_t span = frame_span(o);
    unsigned char b[FRAME_SPAN];

    t->n = 0;
    t->truncated = t->whole = 0;
    if (span < 0)
        return -EFAULT;
    for (size_t h = 0; frame && h < MAX_HOPS; h++) {
        pp_pystack_frame f;
        uint64_t at = frame;
        int shim, rc;

        if (pp_mem_read(m, frame, b, (size_t)span) != 0)
            return -EFAULT;
        if (o->frame_is_object && u64_at(b, 0) == 0)
            return -EAGAIN;                   /* freed: see pp_pystack_read */
        frame = u64_at(b, o->frame_previous);
        if ((rc = one(m, o, at, b, &f, &shim, seen, nseen)) < 0)
            return rc;
        if (shim && t->n > 0)
            t->f[t->n - 1].entry = 1;         /* 3.12+: it began an evaluation */
        if (!rc)
            continue;
        if (t->n == PP_PYSTACK_DEPTH) {
            t->truncated = 1;
            return 0;
        }
        t->f[t->n++] = f;
    }
    if (frame)
        t->truncated = 1;                     /* hops ran out */
    else if (t->n > 0) {
        t->f[t->n - 1].entry = 1;             /* the outermost */
        t->whole = 1;
    }
    return 0;
}

int pp_pystack_read(const pp_mem *m, const pp_py_offsets *o, uint64_t runtime, int tid_off,
                    pp_pystack_thread *out, size_t max)
{
    pp_pycode_id seen[CODES_PER_WALK];
    size_t n = 0, nseen = 0;
    int err;
    uint64_t ts = threads_head(m, o, runtime, &err), self;

    if (err)
        return err == -ESRCH || err == -EPERM ? err : -EFAULT;
    while (ts && n < max) {
        pp_pystack_thread *t = &out[n++];
        int32_t tid = 0;

        t->tid = 0;
        t->tstate = ts;
        t->thread_id = pp_mem_u64(m, ts, o->tstate_thread_id, &self) == 0 ? self : 0;
        if (tid_off >= 0 && t->thread_id &&
            pp_mem_read(m, self + (uint64_t)tid_off, &tid, sizeof(tid)) == 0)
            t->tid = tid;
        /* 3.8-3.10's frames are objects, freed when they return: one freed
         * while its chain was read has a refcount of 0 (ob_refcnt leads
         * every object of a build with the GIL), and what it links to is
         * a free list (linked through f_back, ending in NULL: a chain that
         * would look whole) or nothing. Such a walk is made again. 3.11+'s
         * frames live in the thread's own frame stack, where a frame
         * pushed over a popped one links to a caller still running. */
        for (int tries = 1; walk(m, o, first_frame(m, o, ts), t, seen, &nseen) == -EAGAIN;
             tries++)
            if (tries == TRIES) {
                t->truncated = 1;             /* its root side unknown */
                break;
            }
        if (pp_mem_u64(m, ts, o->tstate_next, &ts) != 0)
            break;
    }
    return (int)n;
}
