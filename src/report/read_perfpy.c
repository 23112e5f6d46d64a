/*
 * perfpy's own profile file read back (the layout:
 * include/perfpy/profile_format.h; written by src/output/out_perfpy.c):
 * the profile as it was, so that `perfpy report FILE -f FORMAT` writes any
 * format with the numbers of a direct recording, and `perfpy diff`
 * compares it.
 *
 * Input is hostile: this reads the data inside the gzip stream (the
 * caller inflates it), every length and count is checked against what
 * remains before it is used (a count of N elements needs at least N bytes),
 * every index against what was read before it (a stack's frames, a
 * sample's stack and thread, a marker's name), and the END record against
 * what the records held; the first problem stops the reading with its
 * byte offset and a sentence. A record of a tag it does not know is
 * skipped; a known one out of order, or twice, is damage.
 *
 * Indexes are mapped: a file whose frames (or stacks, threads, names)
 * repeat one another reads as a profile whose interning merged them.
 */
#include "report.h"
#include "perfpy/profile_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH (1u << 20)

typedef struct rd {
    const uint8_t *p, *end, *base;
} rd;

typedef struct ctx {
    pp_profile *p;
    pp_perfpy_error *err;
    uint32_t *names, *frames, *stacks, *threads;  /* file index -> profile index */
    const char **name_str;                         /* file name index -> its string */
    uint64_t nnames, nframes, nstacks, nthreads, nmarkers, nlog;
    pp_thread *saved;              /* the threads as written: their counts and times */
} ctx;

static int bad(ctx *c, const rd *r, const char *why)
{
    c->err->why = why;
    c->err->at = (size_t)(r->p - r->base);
    return -EINVAL;
}

static int u64(ctx *c, rd *r, uint64_t *v)
{
    uint64_t x = 0;

    for (int shift = 0; shift < 70 && r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1)
            break;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return bad(c, r, r->p >= r->end ? "a number runs past its record" : "a number too large");
}

/* A varint no larger than max. */
static int num(ctx *c, rd *r, uint64_t max, uint64_t *v, const char *what)
{
    int rc = u64(c, r, v);

    if (rc == 0 && *v > max)
        return bad(c, r, what);
    return rc;
}

static int zz(ctx *c, rd *r, int64_t lo, int64_t hi, int64_t *v, const char *what)
{
    uint64_t u;
    int rc = u64(c, r, &u);

    if (rc < 0)
        return rc;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return *v < lo || *v > hi ? bad(c, r, what) : 0;
}

/* A count of elements each at least one byte long: no more than remain. */
static int count(ctx *c, rd *r, uint64_t *n)
{
    return num(c, r, (uint64_t)(r->end - r->p), n, "a count larger than its record");
}

static int str(ctx *c, rd *r, const char **s, size_t *n)
{
    uint64_t len;
    int rc = u64(c, r, &len);

    if (rc < 0)
        return rc;
    if (len > (uint64_t)(r->end - r->p))
        return bad(c, r, "a string runs past its record");
    *s = (const char *)r->p;
    *n = (size_t)len;
    r->p += len;
    return 0;
}

/* A copy of s[0..n), NUL-terminated, in the profile's arena. */
static int dup(ctx *c, const char *s, size_t n, const char **out)
{
    return (*out = pp_profile_strdup(c->p, s, n)) ? 0 : -ENOMEM;
}

static int meta(ctx *c, rd *r)
{
    pp_profile *p = c->p;
    uint64_t v[12];
    const char *s[2];
    size_t n[2];
    int rc = 0;

    for (size_t i = 0; i < 12 && rc == 0; i++)
        rc = u64(c, r, &v[i]);
    if (rc == 0 && v[0] > PP_VALUE_WALL)
        rc = bad(c, r, "an unknown kind of value");
    for (size_t i = 0; i < 2 && rc == 0; i++)
        rc = str(c, r, &s[i], &n[i]);
    if (rc < 0)
        return rc;
    p->value = (pp_value_kind)v[0];
    p->exec_lines = v[1] != 0;
    p->period_ns = v[2];
    p->time_first_ns = v[3];
    p->time_last_ns = v[4];
    p->time_base_ns = v[5];        /* before the log: its records count from it */
    p->time_unix_ns = v[6];
    p->duration_ns = v[7];
    p->labelled = v[8] != 0;
    p->truncated = v[9];
    p->lost = v[10];
    p->bad_lines = v[11];
    snprintf(p->event, sizeof(p->event), "%.*s", (int)n[0], s[0]);
    snprintf(p->program, sizeof(p->program), "%.*s", (int)n[1], s[1]);
    return 0;
}

static int marker_names(ctx *c, rd *r)
{
    int rc = count(c, r, &c->nnames);

    if (rc == 0 && (!(c->names = malloc((c->nnames + 1) * sizeof(*c->names))) ||
                    !(c->name_str = malloc((c->nnames + 1) * sizeof(*c->name_str)))))
        return -ENOMEM;
    for (uint64_t i = 0; i < c->nnames && rc == 0; i++) {
        const char *s;
        size_t n;
        int64_t id;
        if ((rc = str(c, r, &s, &n)) < 0)
            break;
        if ((id = pp_profile_marker_name(c->p, s, n)) < 0)
            return (int)id;
        c->names[i] = (uint32_t)id;
        c->name_str[i] = c->p->marker_names[id];
    }
    return rc;
}

static int frames(ctx *c, rd *r)
{
    int rc = count(c, r, &c->nframes);

    if (rc == 0 && !(c->frames = malloc((c->nframes + 1) * sizeof(*c->frames))))
        return -ENOMEM;
    for (uint64_t i = 0; i < c->nframes && rc == 0; i++) {
        uint64_t kind;
        int64_t line, id;
        const char *name, *file;
        size_t nn, fn;
        if ((rc = num(c, r, PP_FRAME_MARKER, &kind, "an unknown kind of frame")) < 0 ||
            (rc = zz(c, r, INT32_MIN, INT32_MAX, &line, "a line out of range")) < 0 ||
            (rc = str(c, r, &name, &nn)) < 0 || (rc = str(c, r, &file, &fn)) < 0)
            break;
        if ((id = pp_profile_frame(c->p, (pp_frame_kind)kind, name, nn, file, fn, (int)line)) < 0)
            return (int)id;
        c->frames[i] = (uint32_t)id;
    }
    return rc;
}

static int stacks(ctx *c, rd *r)
{
    uint32_t *ids = NULL;
    int rc = count(c, r, &c->nstacks);

    if (rc == 0 && !(c->stacks = malloc((c->nstacks + 1) * sizeof(*c->stacks))))
        return -ENOMEM;
    for (uint64_t i = 0; i < c->nstacks && rc == 0; i++) {
        uint64_t depth, cnt, period, wait, kind, f;
        int64_t id;
        uint32_t *more;
        if ((rc = count(c, r, &depth)) < 0 || depth > MAX_DEPTH ||
            !(more = realloc(ids, (depth + 1) * sizeof(*ids)))) {
            rc = rc < 0 ? rc : depth > MAX_DEPTH ? bad(c, r, "a stack too deep") : -ENOMEM;
            break;
        }
        ids = more;
        for (uint64_t d = 0; d < depth && rc == 0; d++)
            if ((rc = num(c, r, c->nframes ? c->nframes - 1 : 0, &f, "a frame that is not "
                          "in the file")) == 0 && !c->nframes)
                rc = bad(c, r, "a frame that is not in the file");
            else if (rc == 0)
                ids[d] = c->frames[f];
        if (rc < 0 || (rc = u64(c, r, &cnt)) < 0 || (rc = u64(c, r, &period)) < 0 ||
            (rc = num(c, r, c->nnames, &wait, "a wait named by no marker name")) < 0 ||
            (rc = num(c, r, PP_MARKER_GIL, &kind, "an unknown kind of marker")) < 0)
            break;
        if ((id = pp_profile_add(c->p, ids, depth, cnt, period)) < 0) {
            rc = id == -ENOMEM ? -ENOMEM : bad(c, r, "a stack the profile cannot hold");
            break;
        }
        c->stacks[i] = (uint32_t)id;
        if (wait && (rc = pp_profile_stack_wait(c->p, (uint32_t)id, (pp_marker_kind)kind,
                                                c->name_str[wait - 1])) < 0)
            break;
    }
    free(ids);
    return rc;
}

static int threads(ctx *c, rd *r)
{
    int rc = count(c, r, &c->nthreads);

    if (rc == 0 && (!(c->threads = malloc((c->nthreads + 1) * sizeof(*c->threads))) ||
                    !(c->saved = calloc(c->nthreads + 1, sizeof(*c->saved)))))
        return -ENOMEM;
    for (uint64_t i = 0; i < c->nthreads && rc == 0; i++) {
        int64_t pid, tid, id;
        uint64_t set;
        const char *name;
        size_t n;
        pp_thread *t = &c->saved[i];
        if ((rc = zz(c, r, INT32_MIN, INT32_MAX, &pid, "a pid out of range")) < 0 ||
            (rc = zz(c, r, INT32_MIN, INT32_MAX, &tid, "a tid out of range")) < 0 ||
            (rc = u64(c, r, &set)) < 0 || (rc = u64(c, r, &t->first_ns)) < 0 ||
            (rc = u64(c, r, &t->last_ns)) < 0 || (rc = u64(c, r, &t->samples)) < 0 ||
            (rc = str(c, r, &name, &n)) < 0)
            break;
        if ((id = pp_profile_thread(c->p, (int32_t)pid, (int32_t)tid, set ? NULL : name,
                                    set ? 0 : n)) < 0)
            return id == -ENOMEM ? -ENOMEM : bad(c, r, "more threads than a profile holds");
        if (set && n && (rc = pp_profile_thread_name(c->p, (uint32_t)id, name, n)) < 0)
            return rc;
        c->threads[i] = (uint32_t)id;
    }
    return rc;
}

static int opt_str(ctx *c, rd *r, const char **out)
{
    uint64_t has;
    const char *s;
    size_t n;
    int rc = num(c, r, 1, &has, "a flag neither 0 nor 1");

    *out = NULL;
    if (rc < 0 || !has)
        return rc;
    if ((rc = str(c, r, &s, &n)) < 0)
        return rc;
    return dup(c, s, n, out);
}

static int processes(ctx *c, rd *r)
{
    pp_profile *p = c->p;
    uint64_t n;
    int rc = count(c, r, &n);

    if (rc < 0)
        return rc;
    if (p->procs || n > UINT32_MAX || !(p->procs = calloc(n + 1, sizeof(*p->procs))))
        return p->procs ? bad(c, r, "processes twice") : -ENOMEM;
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        pp_process *x = &p->procs[i];
        int64_t pid, ns_pid;
        const char *comm;
        size_t cn;
        if ((rc = zz(c, r, INT32_MIN, INT32_MAX, &pid, "a pid out of range")) < 0 ||
            (rc = zz(c, r, INT32_MIN, INT32_MAX, &ns_pid, "a pid out of range")) < 0 ||
            (rc = u64(c, r, &x->samples)) < 0 || (rc = u64(c, r, &x->truncated)) < 0 ||
            (rc = u64(c, r, &x->python)) < 0 || (rc = str(c, r, &comm, &cn)) < 0 ||
            (rc = opt_str(c, r, &x->command)) < 0 || (rc = opt_str(c, r, &x->service)) < 0 ||
            (rc = opt_str(c, r, &x->container)) < 0)
            break;
        x->pid = (int)pid;
        x->ns_pid = (int)ns_pid;
        snprintf(x->comm, sizeof(x->comm), "%.*s", (int)cn, comm);
        p->nprocs = (uint32_t)i + 1;
    }
    return rc;
}

static int labels(ctx *c, rd *r)
{
    uint64_t n;
    int rc = count(c, r, &n);

    for (uint64_t i = 0; i < n && rc == 0; i++) {
        const char *k, *v, *kc, *vc;
        size_t kn, vn;
        if ((rc = str(c, r, &k, &kn)) < 0 || (rc = str(c, r, &v, &vn)) < 0)
            break;
        if (dup(c, k, kn, &kc) < 0 || dup(c, v, vn, &vc) < 0 ||
            pp_profile_label(c->p, kc, vc) < 0)
            return -ENOMEM;
    }
    return rc;
}

static int markers(ctx *c, rd *r)
{
    int rc = count(c, r, &c->nmarkers);

    for (uint64_t i = 0; i < c->nmarkers && rc == 0; i++) {
        uint64_t th, kind, name, start, dur;
        const char *s;
        if ((rc = num(c, r, c->nthreads ? c->nthreads - 1 : 0, &th, "a marker on no thread")) < 0 ||
            (rc = num(c, r, PP_MARKER_GIL, &kind, "an unknown kind of marker")) < 0 ||
            (rc = num(c, r, c->nnames ? c->nnames - 1 : 0, &name, "a marker named by no "
                      "marker name")) < 0 ||
            (rc = u64(c, r, &start)) < 0 || (rc = u64(c, r, &dur)) < 0)
            break;
        if (!c->nthreads || !c->nnames || start + dur < start)
            return bad(c, r, !c->nthreads ? "a marker on no thread" : !c->nnames ?
                       "a marker named by no marker name" : "a marker that ends past time");
        s = c->name_str[name];
        if ((rc = pp_profile_marker(c->p, c->threads[th], (pp_marker_kind)kind, start,
                                    start + dur, s, strlen(s))) < 0)
            return rc;
    }
    return rc;
}

/* The log again, record by record; then each thread's counts and times as
 * written (a record is one part of a sample whose weight passed 32 bits). */
static int samples(ctx *c, rd *r)
{
    uint64_t time = 0;
    int rc = count(c, r, &c->nlog);

    for (uint64_t i = 0; i < c->nlog && rc == 0; i++) {
        uint64_t st, th, w;
        int64_t dt;
        if ((rc = num(c, r, c->nstacks ? c->nstacks - 1 : 0, &st, "a sample of no stack")) < 0 ||
            (rc = num(c, r, c->nthreads ? c->nthreads - 1 : 0, &th, "a sample on no thread")) < 0 ||
            (rc = zz(c, r, INT64_MIN, INT64_MAX, &dt, "")) < 0 ||
            (rc = num(c, r, UINT32_MAX, &w, "a logged weight past 32 bits")) < 0)
            break;
        if (!c->nstacks || !c->nthreads)
            return bad(c, r, !c->nstacks ? "a sample of no stack" : "a sample on no thread");
        time += (uint64_t)dt;
        if ((rc = pp_profile_log(c->p, c->stacks[st], c->threads[th], time, w)) < 0)
            return rc == -ENOMEM ? rc : bad(c, r, "a sample the log cannot hold");
    }
    for (uint64_t i = 0; i < c->nthreads && rc == 0; i++) {
        pp_thread *t = &c->p->threads[c->threads[i]];
        t->samples = c->saved[i].samples;
        t->first_ns = c->saved[i].first_ns;
        t->last_ns = c->saved[i].last_ns;
    }
    return rc;
}

static int end(ctx *c, rd *r)
{
    const uint64_t want[] = {c->nnames, c->nframes, c->nstacks, c->nthreads, c->nmarkers,
                             c->nlog};
    uint64_t v;

    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        int rc = u64(c, r, &v);
        if (rc < 0)
            return rc;
        if (v != want[i])
            return bad(c, r, "its END record counts other records than it holds");
    }
    return 0;
}

typedef int (*handler)(ctx *c, rd *r);

static int records(ctx *c, rd *r)
{
    static const handler by_tag[PP_PF_END + 1] = {
        [PP_PF_META] = meta, [PP_PF_MARKER_NAMES] = marker_names, [PP_PF_FRAMES] = frames,
        [PP_PF_STACKS] = stacks, [PP_PF_THREADS] = threads, [PP_PF_PROCESSES] = processes,
        [PP_PF_LABELS] = labels, [PP_PF_MARKERS] = markers, [PP_PF_SAMPLES] = samples,
        [PP_PF_END] = end,
    };
    uint64_t tag, len, last = 0;
    int rc;

    while (r->p < r->end) {
        rd rec;
        if ((rc = u64(c, r, &tag)) < 0 || (rc = u64(c, r, &len)) < 0)
            return rc;
        if (len > (uint64_t)(r->end - r->p))
            return bad(c, r, "a record runs past the end of the file (truncated)");
        rec = (rd){r->p, r->p + len, r->base};
        r->p += len;
        if (tag > PP_PF_END || !by_tag[tag])
            continue;                  /* a record of a later perfpy: skipped */
        if (tag <= last)
            return bad(c, &rec, "a record out of order, or twice");
        if (tag != PP_PF_META && last < PP_PF_META)
            return bad(c, &rec, "a record before the META record");
        last = tag;
        if ((rc = by_tag[tag](c, &rec)) < 0)
            return rc;
        if (rec.p != rec.end)
            return bad(c, &rec, "a record longer than what it holds");
        if (tag == PP_PF_END)
            return 0;
    }
    return bad(c, r, "it ends before its END record (truncated)");
}

int pp_is_perfpy(const uint8_t *d, size_t len)
{
    return len >= PP_PROFILE_MAGIC_LEN && memcmp(d, PP_PROFILE_MAGIC, PP_PROFILE_MAGIC_LEN) == 0;
}

int pp_read_perfpy(const uint8_t *d, size_t len, pp_profile *p, pp_perfpy_error *err)
{
    ctx c = {.p = p, .err = err};
    rd r = {d, d + len, d};
    int rc;

    memset(err, 0, sizeof(*err));
    if (!pp_is_perfpy(d, len))
        return -ENOMSG;
    if (len < PP_PROFILE_HEADER_LEN) {
        r.p = r.end;
        return bad(&c, &r, "it ends inside its header (truncated)");
    }
    err->version = (uint32_t)d[8] | (uint32_t)d[9] << 8 | (uint32_t)d[10] << 16 |
                   (uint32_t)d[11] << 24;
    if (err->version != PP_PROFILE_VERSION)
        return -EPROTO;
    r.p += PP_PROFILE_HEADER_LEN;
    rc = records(&c, &r);
    free(c.names);
    free(c.name_str);
    free(c.frames);
    free(c.stacks);
    free(c.threads);
    free(c.saved);
    return rc;
}
