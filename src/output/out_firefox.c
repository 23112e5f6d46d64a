/*
 * The Firefox Profiler's processed profile format, version 61 (what the
 * profiler of 2026-03 loads as it is, commit 66e023ab of
 * github.com/firefox-devtools/profiler; later profilers upgrade it, as
 * they upgrade every older version; docs-developer/processed-profile-format.md):
 *
 *   {"meta": {"preprocessedProfileVersion": 61, "categories": [...], ...},
 *    "threads": [{"name": "worker-1", "pid": "4609", "tid": 4612,
 *                 "processName": "python3", "isMainThread": false,
 *                 "samples": {"stack": [...], "time": [ms], "weight": [...]},
 *                 "markers": {"name": [...], "startTime": [...], ...}}, ...],
 *    "shared": {"stackTable": {"frame", "prefix"}, "frameTable": {...},
 *               "funcTable": {...}, "resourceTable": {...},
 *               "stringArray": [...], "sources": {...}}}
 *
 * One track per thread, grouped by process (pid), its samples in time:
 * each sample of the log at the start of its span on the thread's timeline
 * (timeline.c) weighing pp_rec_value, and each gap samples with no stack
 * (each_sample), so the stack chart draws every sample from its start to
 * its end and the activity graph leaves the gaps empty. Times are milliseconds from the recording's start (its first
 * sample, or a marker before it: sample mode's "process start").
 * The tables are shared by the threads: a frame per profile frame (index
 * = frame id), a function per (kind, name, file), a resource per file
 * (the Python file or the library), a source per Python file, the stacks
 * a prefix tree (parents first). Python frames are the profiler's "JS"
 * frames (its JavaScript filter then shows Python only), with their file
 * and line. Markers: the model's (pp_marker: processes started and ended),
 * and a wall-clock profile's waits (off-CPU reasons, GIL waits), made from
 * each thread's samples as it is written (pp_thread_waits).
 */
#include "profile/htab.h"
#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { CAT_OTHER, CAT_PYTHON, CAT_NATIVE, CAT_KERNEL, CAT_PROCESS, CAT_WAIT, CAT_GIL };

static const char categories[] =
    "[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Python\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Native\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Process\",\"color\":\"purple\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"Wait\",\"color\":\"lightblue\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"GIL\",\"color\":\"green\",\"subcategories\":[\"Other\"]}]";

/* An interning table of strings (pointers into the profile or literals:
 * not copied). */
static int64_t str_id(pp__strtab *t, const char *s)
{
    return pp__strtab_id(t, s, NULL);
}

/* What the shared tables are made of. */
typedef struct tables {
    pp__strtab s;
    uint32_t *func_of;          /* per frame: its function */
    uint32_t *func_frame;       /* per function: its first frame */
    uint32_t nfuncs;
    uint32_t *res_of;           /* per function: its resource, PP_NONE */
    pp__strtab files;           /* resources by file; sources are the Python ones */
    uint32_t *src_of;           /* per resource: its source, PP_NONE */
    uint32_t nsources;
    uint32_t *stack_node;       /* per profile stack: its node in the prefix tree */
    uint32_t *node_frame, *node_prefix;
    uint32_t nnodes;
    uint64_t origin;            /* time 0 of the file (perf clock) */
    pp_marker_order markers;    /* each thread's markers in time order */
    pp_marker *shown;           /* the thread being written: its markers and its
                                   waits (pp_thread_waits), by start */
    size_t nshown, shown_cap;
} tables;

static uint64_t func_key(const pp_frame *f)
{
    return pp__hash(f->file, strlen(f->file), pp__hash(f->name, strlen(f->name), f->kind + 1));
}

/* A function per (kind, name, file): sample mode's frames of one function
 * at several lines are one function with several frames. */
static int make_funcs(const pp_profile *p, tables *t)
{
    pp_htab index;
    int rc = 0;

    if (pp__htab_init(&index, p->nframes + 1) < 0)
        return -ENOMEM;
    for (uint32_t i = 0; i < p->nframes && rc == 0; i++) {
        const pp_frame *f = &p->frames[i];
        uint64_t h = func_key(f);
        pp_htab_iter it;
        uint32_t *slot;

        t->func_of[i] = PP_NONE;
        for (slot = pp__htab_first(&index, h, &it); slot; slot = pp__htab_next(&index, h, &it)) {
            const pp_frame *g = &p->frames[t->func_frame[*slot]];
            if (g->kind == f->kind && !strcmp(g->name, f->name) && !strcmp(g->file, f->file)) {
                t->func_of[i] = *slot;
                break;
            }
        }
        if (t->func_of[i] != PP_NONE)
            continue;
        t->func_frame[t->nfuncs] = i;
        t->func_of[i] = t->nfuncs++;
        rc = pp__htab_insert(&index, h, t->func_of[i]);
    }
    pp__htab_free(&index);
    return rc;
}

/* A resource per file, a source per Python file. */
static int make_resources(const pp_profile *p, tables *t)
{
    for (uint32_t fn = 0; fn < t->nfuncs; fn++) {
        const pp_frame *f = &p->frames[t->func_frame[fn]];
        size_t known = t->files.n;
        int64_t r;
        t->res_of[fn] = PP_NONE;
        if (!*f->file)
            continue;
        if ((r = str_id(&t->files, f->file)) < 0)
            return (int)r;
        t->res_of[fn] = (uint32_t)r;
        if (t->files.n > known)                /* a file not seen before */
            t->src_of[r] = f->kind == PP_FRAME_PYTHON ? t->nsources++ : PP_NONE;
    }
    return 0;
}

/* The stacks as a prefix tree, parents first. */
static int make_stacks(const pp_profile *p, tables *t)
{
    pp_htab index;
    int rc = 0;

    if (pp__htab_init(&index, p->nids + 1) < 0)
        return -ENOMEM;
    for (uint32_t si = 0; si < p->nstacks && rc == 0; si++) {
        const pp_stack *s = &p->stacks[si];
        const uint32_t *ids = pp_stack_ids(p, s);
        uint32_t node = PP_NONE;

        for (uint32_t d = 0; d < s->depth && rc == 0; d++) {
            uint32_t key[2] = {node, ids[d]}, found = PP_NONE;
            uint64_t h = pp__hash(key, sizeof(key), 17);
            pp_htab_iter it;
            uint32_t *slot;

            for (slot = pp__htab_first(&index, h, &it); slot; slot = pp__htab_next(&index, h, &it))
                if (t->node_prefix[*slot] == node && t->node_frame[*slot] == ids[d]) {
                    found = *slot;
                    break;
                }
            if (found == PP_NONE) {
                found = t->nnodes++;
                t->node_prefix[found] = node;
                t->node_frame[found] = ids[d];
                rc = pp__htab_insert(&index, h, found);
            }
            node = found;
        }
        t->stack_node[si] = node;           /* PP_NONE for an empty stack */
    }
    pp__htab_free(&index);
    return rc;
}

static void tables_free(tables *t)
{
    pp__strtab_free(&t->s);
    pp__strtab_free(&t->files);
    free(t->func_of);
    free(t->func_frame);
    free(t->res_of);
    free(t->src_of);
    free(t->stack_node);
    free(t->node_frame);
    free(t->node_prefix);
    free(t->shown);
    pp_marker_order_free(&t->markers);
}

static int tables_make(const pp_profile *p, tables *t)
{
    size_t nf = (size_t)p->nframes + 1;

    memset(t, 0, sizeof(*t));
    t->func_of = malloc(nf * sizeof(uint32_t));
    t->func_frame = malloc(nf * sizeof(uint32_t));
    t->res_of = malloc(nf * sizeof(uint32_t));
    t->src_of = malloc(nf * sizeof(uint32_t));
    t->stack_node = malloc(((size_t)p->nstacks + 1) * sizeof(uint32_t));
    t->node_frame = malloc((p->nids + 1) * sizeof(uint32_t));
    t->node_prefix = malloc((p->nids + 1) * sizeof(uint32_t));
    if (!t->func_of || !t->func_frame || !t->res_of || !t->src_of || !t->stack_node ||
        !t->node_frame || !t->node_prefix || pp__strtab_init(&t->s, 1024, 0) < 0 ||
        pp__strtab_init(&t->files, 256, 0) < 0)
        return -ENOMEM;
    if (make_funcs(p, t) < 0 || make_resources(p, t) < 0 || make_stacks(p, t) < 0)
        return -ENOMEM;
    return 0;
}

/* ---- writing ------------------------------------------------------------ */

static int kind_category(pp_frame_kind k)
{
    return k == PP_FRAME_PYTHON ? CAT_PYTHON : k == PP_FRAME_NATIVE ? CAT_NATIVE
           : k == PP_FRAME_KERNEL ? CAT_KERNEL : CAT_OTHER;
}

/* The recording's start: its first sample's span, or a marker before it
 * (sample mode's "process start"). */
static uint64_t origin_of(const pp_profile *p)
{
    uint64_t o = p->time_base_ns;

    for (size_t i = 0; i < p->nmarkers; i++)
        if (p->markers[i].start_ns && p->markers[i].start_ns < o)
            o = p->markers[i].start_ns;
    return o;
}

/* ns on the perf clock -> milliseconds from the recording's start */
static double ms(const tables *t, uint64_t ns)
{
    return ns > t->origin ? (double)(ns - t->origin) / 1e6 : 0.0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

#define NUL INT64_MIN            /* a column's "null" */

/* A column of n numbers from fn(i), "null" where it gives NUL. */
static void column(FILE *out, const char *name, uint32_t n, int64_t (*fn)(const void *, uint32_t),
                   const void *arg)
{
    fprintf(out, "\"%s\":[", name);
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = fn(arg, i);
        if (v == NUL)
            fprintf(out, i ? ",null" : "null");
        else
            fprintf(out, i ? ",%lld" : "%lld", (long long)v);
    }
    fputs("],", out);
}

typedef struct ctx {
    const pp_profile *p;
    tables *t;
} ctx;

static int64_t c_node_frame(const void *c, uint32_t i) { return ((const ctx *)c)->t->node_frame[i]; }
static int64_t c_node_prefix(const void *c, uint32_t i)
{
    uint32_t v = ((const ctx *)c)->t->node_prefix[i];
    return v == PP_NONE ? NUL : v;
}
static int64_t c_frame_cat(const void *c, uint32_t i)
{
    return kind_category(((const ctx *)c)->p->frames[i].kind);
}
static int64_t c_zero(const void *c, uint32_t i) { (void)c; (void)i; return 0; }
static int64_t c_minus1(const void *c, uint32_t i) { (void)c; (void)i; return -1; }
static int64_t c_null(const void *c, uint32_t i) { (void)c; (void)i; return NUL; }
static int64_t c_frame_func(const void *c, uint32_t i) { return ((const ctx *)c)->t->func_of[i]; }
static int64_t c_frame_line(const void *c, uint32_t i)
{
    int line = ((const ctx *)c)->p->frames[i].line;
    return line > 0 ? line : NUL;
}
static int64_t c_func_res(const void *c, uint32_t i)
{
    uint32_t r = ((const ctx *)c)->t->res_of[i];
    return r == PP_NONE ? -1 : (int64_t)r;      /* -1: none, as the format says */
}
static int64_t c_func_src(const void *c, uint32_t i)
{
    const ctx *x = c;
    uint32_t r = x->t->res_of[i];
    return r == PP_NONE || x->t->src_of[r] == PP_NONE ? NUL : x->t->src_of[r];
}
static int64_t c_func_line(const void *c, uint32_t i)
{
    const ctx *x = c;
    const pp_frame *f = &x->p->frames[x->t->func_frame[i]];
    return f->kind == PP_FRAME_PYTHON && f->line > 0 ? f->line : NUL;
}
static int64_t c_one(const void *c, uint32_t i) { (void)c; (void)i; return 1; }

static void bools(FILE *out, const char *name, const ctx *x, uint32_t n)
{
    fprintf(out, "\"%s\":[", name);
    for (uint32_t i = 0; i < n; i++)
        fputs(i ? (x->p->frames[x->t->func_frame[i]].kind == PP_FRAME_PYTHON ? ",true" : ",false")
                : (x->p->frames[x->t->func_frame[i]].kind == PP_FRAME_PYTHON ? "true" : "false"),
              out);
    fputs("],", out);
}

static int shared_tables(const pp_profile *p, tables *t, FILE *out)
{
    ctx x = {p, t};
    uint32_t nres = (uint32_t)t->files.n;
    int64_t id;

    fputs("\"shared\":{\"stackTable\":{", out);
    column(out, "frame", t->nnodes, c_node_frame, &x);
    column(out, "prefix", t->nnodes, c_node_prefix, &x);
    fprintf(out, "\"length\":%u},\n\"frameTable\":{", t->nnodes);
    column(out, "address", p->nframes, c_minus1, &x);
    column(out, "inlineDepth", p->nframes, c_zero, &x);
    column(out, "category", p->nframes, c_frame_cat, &x);
    column(out, "subcategory", p->nframes, c_zero, &x);
    column(out, "func", p->nframes, c_frame_func, &x);
    column(out, "nativeSymbol", p->nframes, c_null, &x);
    column(out, "innerWindowID", p->nframes, c_null, &x);
    column(out, "line", p->nframes, c_frame_line, &x);
    column(out, "column", p->nframes, c_null, &x);
    fprintf(out, "\"length\":%u},\n\"funcTable\":{\"name\":[", p->nframes);
    for (uint32_t i = 0; i < t->nfuncs; i++) {
        const pp_frame *f = &p->frames[t->func_frame[i]];
        if ((id = str_id(&t->s, f->kind == PP_FRAME_PYTHON ? f->name : f->label)) < 0)
            return (int)id;
        fprintf(out, i ? ",%lld" : "%lld", (long long)id);
    }
    fputs("],", out);
    bools(out, "isJS", &x, t->nfuncs);
    bools(out, "relevantForJS", &x, t->nfuncs);
    column(out, "resource", t->nfuncs, c_func_res, &x);
    column(out, "source", t->nfuncs, c_func_src, &x);
    column(out, "lineNumber", t->nfuncs, c_func_line, &x);
    column(out, "columnNumber", t->nfuncs, c_null, &x);
    fprintf(out, "\"length\":%u},\n\"resourceTable\":{\"lib\":[", t->nfuncs);
    for (uint32_t i = 0; i < nres; i++)
        fputs(i ? ",null" : "null", out);
    fputs("],\"name\":[", out);
    for (uint32_t i = 0; i < nres; i++) {
        if ((id = str_id(&t->s, base_name(t->files.v[i]))) < 0)
            return (int)id;
        fprintf(out, i ? ",%lld" : "%lld", (long long)id);
    }
    fputs("],", out);
    column(out, "host", nres, c_null, &x);
    column(out, "type", nres, c_one, &x);
    fprintf(out, "\"length\":%u},\n\"nativeSymbols\":{\"libIndex\":[],\"address\":[],"
            "\"name\":[],\"functionSize\":[],\"length\":0},\n\"sources\":{\"id\":[", nres);
    for (uint32_t i = 0, k = 0; i < nres; i++)
        if (t->src_of[i] != PP_NONE)
            fputs(k++ ? ",null" : "null", out);
    fputs("],\"filename\":[", out);
    for (uint32_t i = 0, k = 0; i < nres; i++) {
        if (t->src_of[i] == PP_NONE)
            continue;
        if ((id = str_id(&t->s, t->files.v[i])) < 0)
            return (int)id;
        fprintf(out, k++ ? ",%lld" : "%lld", (long long)id);
    }
    fputs("],", out);
    column(out, "startLine", t->nsources, c_one, &x);
    column(out, "startColumn", t->nsources, c_one, &x);
    column(out, "sourceMapURL", t->nsources, c_null, &x);
    fprintf(out, "\"length\":%u},\n\"stringArray\":[", t->nsources);
    return 0;
}

static int marker_category(pp_marker_kind k)
{
    return k == PP_MARKER_WAIT ? CAT_WAIT : k == PP_MARKER_GIL ? CAT_GIL : CAT_PROCESS;
}

/* Thread o->thread's markers, the stored ones and its waits made from its
 * samples, in tb->shown by start. */
static int gather_markers(const pp_profile *p, tables *tb, const pp_thread_order *o)
{
    uint64_t first = tb->markers.first[o->thread];
    uint64_t stored = tb->markers.first[o->thread + 1] - first;
    size_t waits;

    if (pp_thread_waits(p, o, &tb->shown, &waits, &tb->shown_cap) < 0 ||
        pp__grow((void **)&tb->shown, &tb->shown_cap, waits + stored, sizeof(*tb->shown)) < 0)
        return -ENOMEM;
    for (uint64_t i = 0; i < stored; i++)
        tb->shown[waits + i] = p->markers[tb->markers.idx[first + i]];
    tb->nshown = waits + stored;
    if (stored && waits)
        qsort(tb->shown, tb->nshown, sizeof(*tb->shown), pp_marker_by_start);
    return 0;
}

/* Thread o->thread's markers in time order, their names interned in t->s. */
static int thread_markers(const pp_profile *p, tables *tb, const pp_thread_order *o, FILE *out)
{
    static const char *const cols[] = {"name", "startTime", "endTime", "phase", "category"};
    uint64_t n;
    int64_t id;

    if (gather_markers(p, tb, o) < 0)
        return -ENOMEM;
    n = tb->nshown;
    fputs("\"markers\":{\"data\":[", out);
    for (uint64_t i = 0; i < n; i++)
        fputs(i ? ",null" : "null", out);
    for (int c = 0; c < 5; c++) {
        fprintf(out, "],\"%s\":[", cols[c]);
        for (uint64_t i = 0; i < n; i++) {
            const pp_marker *m = &tb->shown[i];
            int instant = m->end_ns == m->start_ns;
            fputs(i ? "," : "", out);
            if (c == 0) {
                if ((id = str_id(&tb->s, pp_marker_name(p, m))) < 0)
                    return (int)id;
                fprintf(out, "%lld", (long long)id);
            } else if (c == 1) {
                fprintf(out, "%.3f", ms(tb, m->start_ns));
            } else if (c == 2) {
                if (instant)
                    fputs("null", out);
                else
                    fprintf(out, "%.3f", ms(tb, m->end_ns));
            } else {
                fprintf(out, "%d", c == 3 ? (instant ? 0 : 1) : marker_category(m->kind));
            }
        }
    }
    fprintf(out, "],\"length\":%llu}", (unsigned long long)n);
    return 0;
}

/* The samples of thread t, to fn: one per sample of the log, at the start
 * of its span (the stack chart draws it to the next one), and two without
 * a stack per gap, at its start and a microsecond before its end (the
 * activity graph centres each sample between its neighbours: the sample
 * after a gap must not reach back into it), and one at the end. */
typedef void sample_fn(void *arg, uint32_t node, uint64_t time_ns, uint64_t weight);

static void each_sample(const pp_profile *p, const tables *tb, const pp_thread_order *o,
                        uint32_t t, sample_fn *fn, void *arg)
{
    pp_timeline tl;
    pp_span s;
    uint64_t end = 0;

    pp_timeline_start(&tl, p, o, t, 0);
    while (pp_timeline_next(&tl, &s)) {
        if (s.stack != PP_NONE) {
            fn(arg, tb->stack_node[s.stack], s.start_ns, s.value);
        } else {
            fn(arg, PP_NONE, s.start_ns, 0);
            if (s.dur_ns >= 2000)
                fn(arg, PP_NONE, s.start_ns + s.dur_ns - 1000, 0);
        }
        end = s.start_ns + s.dur_ns;
    }
    fn(arg, PP_NONE, end, 0);
}

typedef struct column_ctx {
    FILE *out;
    const tables *tb;
    uint64_t n, first_ns, last_ns;
} column_ctx;

static void put_stack(void *arg, uint32_t node, uint64_t time_ns, uint64_t weight)
{
    column_ctx *c = arg;

    (void)weight;
    if (node == PP_NONE)
        fputs(c->n ? ",null" : "null", c->out);
    else
        fprintf(c->out, c->n ? ",%u" : "%u", node);
    if (!c->n++)
        c->first_ns = time_ns;
    c->last_ns = time_ns;
}

static void put_time(void *arg, uint32_t node, uint64_t time_ns, uint64_t weight)
{
    column_ctx *c = arg;

    (void)node;
    (void)weight;
    fprintf(c->out, c->n++ ? ",%.3f" : "%.3f", ms(c->tb, time_ns));
}

static void put_weight(void *arg, uint32_t node, uint64_t time_ns, uint64_t weight)
{
    column_ctx *c = arg;

    (void)node;
    (void)time_ns;
    fprintf(c->out, c->n++ ? ",%llu" : "%llu", (unsigned long long)weight);
}

/* Thread t's samples table, a column per pass; its first and last time. */
static void thread_samples(const pp_profile *p, const tables *tb, const pp_thread_order *o,
                           uint32_t t, FILE *out, uint64_t *start, uint64_t *end)
{
    column_ctx c = {out, tb, 0, 0, 0};
    uint64_t n;

    fputs("\"samples\":{\"stack\":[", out);
    each_sample(p, tb, o, t, put_stack, &c);
    n = c.n;
    *start = c.first_ns;
    *end = c.last_ns;
    fputs("],\"time\":[", out);
    c.n = 0;
    each_sample(p, tb, o, t, put_time, &c);
    fputs("],\"weight\":[", out);
    c.n = 0;
    each_sample(p, tb, o, t, put_weight, &c);
    fprintf(out, "],\"weightType\":\"samples\",\"length\":%llu},\n", (unsigned long long)n);
}

static int thread_json(const pp_profile *p, tables *tb, const pp_thread_order *o, uint32_t t,
                       FILE *out)
{
    const pp_thread *th = &p->threads[t];
    const pp_process *proc = pp_profile_process(p, th->pid);
    uint64_t start = 0, end = 0;

    fputs("{\"processType\":\"default\",\"name\":\"", out);
    pp__json_text(out, th->name[0] ? th->name : "[unknown]");
    fputs("\",\"processName\":\"", out);
    pp__json_text(out, proc && proc->comm[0] ? proc->comm : th->name);
    fprintf(out, "\",\"pid\":\"%d\",\"tid\":%d,\"isMainThread\":%s,\"pausedRanges\":[],\n",
            th->pid, th->tid, th->tid == th->pid ? "true" : "false");
    thread_samples(p, tb, o, t, out, &start, &end);
    if (thread_markers(p, tb, o, out) < 0)
        return -ENOMEM;
    fprintf(out, ",\n\"processStartupTime\":%.3f,\"processShutdownTime\":null,"
            "\"registerTime\":%.3f,\"unregisterTime\":%.3f}", ms(tb, start), ms(tb, start),
            ms(tb, end));
    return 0;
}

/* The recording's end: its last sample, or a marker after it (a process
 * ends after its last sample; the profiler shows only markers in range). */
static uint64_t end_of(const pp_profile *p)
{
    uint64_t e = 0;

    for (uint32_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].last_ns > e)
            e = p->threads[i].last_ns;
    for (size_t i = 0; i < p->nmarkers; i++)
        if (p->markers[i].end_ns > e)
            e = p->markers[i].end_ns;
    return e;
}

static void meta(const pp_profile *p, const tables *tb, FILE *out, const pp_write_opts *o)
{
    double interval = p->period_ns ? (double)p->period_ns / 1e6 : 1.0;

    fprintf(out, "{\"meta\":{\"interval\":%.3f,\"startTime\":0,\"profilingStartTime\":0,"
            "\"profilingEndTime\":%.3f,\"processType\":0,\"product\":\"", interval,
            ms(tb, end_of(p)) + interval);
    pp__json_text(out, pp__title(p, o));
    fputs("\",\"stackwalk\":1,\"version\":27,\"preprocessedProfileVersion\":61,"
          "\"symbolicated\":true,\"importedFrom\":\"perfpy\",\"platform\":\"Linux\","
          "\"markerSchema\":[],\"categories\":", out);
    fputs(categories, out);
    fputs("},\n\"libs\":[],\"pages\":[],\"counters\":[],\n\"threads\":[\n", out);
}

int pp_write_firefox(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    pp_thread_order order;
    tables tb;
    uint32_t shown = 0;
    int rc = -ENOMEM;

    if (tables_make(p, &tb) < 0) {
        tables_free(&tb);
        return -ENOMEM;
    }
    if (pp_thread_order_build(p, &order) < 0)
        goto out_tables;
    if (pp_marker_order_build(p, &tb.markers) < 0)
        goto out_order;
    tb.origin = origin_of(p);
    meta(p, &tb, out, o);
    for (uint32_t t = 0; t < p->nthreads; t++) {
        if (!p->threads[t].samples)
            continue;                  /* a thread known only by a marker */
        if ((rc = pp_thread_order_load(&order, t)) < 0)
            goto out_order;
        fputs(shown++ ? ",\n" : "", out);
        if ((rc = thread_json(p, &tb, &order, t, out)) < 0)
            goto out_order;
    }
    fputs("],\n", out);
    if ((rc = shared_tables(p, &tb, out)) < 0)
        goto out_order;
    for (size_t i = 0; i < tb.s.n; i++) {
        fputs(i ? ",\"" : "\"", out);
        pp__json_text(out, tb.s.v[i]);
        fputc('"', out);
    }
    fputs("]}}\n", out);
    rc = pp__stream_status(out);
out_order:
    pp_thread_order_free(&order);
out_tables:
    tables_free(&tb);
    return rc;
}
