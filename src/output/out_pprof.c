/*
 * pprof: a gzipped protocol buffer of perftools.profiles.Profile
 * (github.com/google/pprof, proto/profile.proto), encoded by hand: the
 * format needs only varints and length-delimited fields, and a dependency
 * on a protobuf library would be larger than this file.
 *
 *   Profile      1 sample_type (ValueType)   2 sample     4 location
 *                5 function    6 string_table (index 0 is "")
 *                9 time_nanos  10 duration_nanos  11 period_type  12 period
 *                14 default_sample_type
 *   ValueType    1 type  2 unit                (string indexes)
 *   Sample       1 location_id (packed, LEAF FIRST)  2 value (packed)  3 label
 *   Label        1 key  2 str                  (string indexes)
 *   Location     1 id  4 line (Line)
 *   Line         1 function_id  2 line
 *   Function     1 id  2 name  3 system_name  4 filename  5 start_line
 *
 * One function and one location per profile frame (id = frame index + 1).
 * Values: [samples/count, cpu/nanoseconds] (the sum of the samples'
 * weights: perf's periods, nanoseconds for cpu-clock), or
 * [samples/count, wall/nanoseconds] for a wall-clock profile. A Python function's name is its
 * qualname, its system_name the "py::" name perf saw, its filename and
 * start_line the file and def line; native frames use the DSO as filename.
 *
 * A labelled profile (p->labelled: sample mode's whole-host recordings)
 * has one Sample per stack and thread, from the sample log, each with the
 * labels a profile store files it under (Pyroscope makes a series of each
 * label set; Parca keeps them per sample):
 *
 *   service   the script or module its process runs ("app.py", "http.server")
 *   pid, tid  the process and the thread (the host's numbers)
 *   thread    the thread's name
 *   container its container's root as the host sees it (only in one)
 *   k         v, for each --label k=v
 *
 * time_nanos is when the profile's span began (Unix time), duration_nanos
 * its length: what a store files the profile under.
 */
#include "profile/htab.h"
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef pp__buf buf;

/* field with wire type 0 (varint); zero values are omitted (proto3). */
static void field_u64(buf *b, unsigned field, uint64_t v)
{
    if (!v)
        return;
    pp__varint(b, (uint64_t)field << 3);
    pp__varint(b, v);
}

/* field with wire type 2 (length-delimited). */
static void field_bytes(buf *b, unsigned field, const void *data, size_t n)
{
    pp__varint(b, (uint64_t)field << 3 | 2);
    pp__varint(b, n);
    pp__put(b, data, n);
}

static void field_msg(buf *b, unsigned field, buf *msg)
{
    if (msg->err)
        b->err = msg->err;
    field_bytes(b, field, msg->d, msg->len);
    msg->len = 0;
}

/* ---- the string table -------------------------------------------------- */

typedef struct strtab {
    buf out;                  /* the encoded string_table fields */
    pp__strtab tab;           /* owned copies */
    int err;
} strtab;

static uint64_t str_id(strtab *t, const char *s)
{
    int added;
    int64_t id = pp__strtab_id(&t->tab, s, &added);

    if (id < 0) {
        t->err = -ENOMEM;
        return 0;
    }
    if (added)
        field_bytes(&t->out, 6, s, strlen(s));
    return (uint64_t)id;
}

static void value_type(buf *b, unsigned field, buf *tmp, strtab *t, const char *type,
                       const char *unit)
{
    field_u64(tmp, 1, str_id(t, type));
    field_u64(tmp, 2, str_id(t, unit));
    field_msg(b, field, tmp);
}

/* One Sample of stack s: count samples weighing weight, with the Label
 * fields in labels (may be NULL). */
static void sample(buf *b, buf *m, buf *packed, const pp_profile *p, const pp_stack *s,
                   uint64_t count, uint64_t weight, const buf *labels)
{
    const uint32_t *ids = pp_stack_ids(p, s);

    for (uint32_t d = s->depth; d-- > 0;)       /* leaf first */
        pp__varint(packed, (uint64_t)ids[d] + 1);
    field_bytes(m, 1, packed->d, packed->len);
    packed->len = 0;
    pp__varint(packed, count);
    pp__varint(packed, weight);
    field_bytes(m, 2, packed->d, packed->len);
    packed->len = 0;
    if (labels && labels->len)
        pp__put(m, labels->d, labels->len);
    field_msg(b, 2, m);
}

static void label(buf *out, buf *tmp, strtab *t, const char *key, const char *value)
{
    field_u64(tmp, 1, str_id(t, key));
    field_u64(tmp, 2, str_id(t, value));
    field_msg(out, 3, tmp);
}

/* The Label fields of thread th's samples (see the top). */
static void thread_labels(buf *out, buf *tmp, strtab *t, const pp_profile *p, uint32_t th)
{
    const pp_thread *x = &p->threads[th];
    const pp_process *proc = pp_profile_process(p, x->pid);
    char num[32];

    if (proc && proc->service)
        label(out, tmp, t, "service", proc->service);
    snprintf(num, sizeof(num), "%d", (int)x->pid);
    label(out, tmp, t, "pid", num);
    snprintf(num, sizeof(num), "%d", (int)x->tid);
    label(out, tmp, t, "tid", num);
    if (x->name && x->name[0])
        label(out, tmp, t, "thread", x->name);
    if (proc && proc->container)
        label(out, tmp, t, "container", proc->container);
    for (uint32_t i = 0; i < p->nlabels; i++)
        label(out, tmp, t, p->labels[i].key, p->labels[i].value);
}

typedef struct group {
    uint32_t stack, thread;
    uint64_t count, weight;
} group;

/* The samples of the log by (stack, thread), in order of first sample. */
static int group_log(const pp_profile *p, group **out, size_t *n)
{
    pp_htab index;
    group *g = NULL;
    size_t cap = 0;

    *n = 0;
    if (pp__htab_init(&index, 1024) < 0)
        return -ENOMEM;
    for (uint64_t i = 0; i < p->nlog; i++) {
        pp_logged r = pp_profile_rec(p, i);
        uint32_t key[2] = {r.stack, r.thread};
        uint64_t h = pp__hash(key, sizeof(key), 23);
        pp_htab_iter it;
        uint32_t *slot;

        for (slot = pp__htab_first(&index, h, &it); slot; slot = pp__htab_next(&index, h, &it))
            if (g[*slot].stack == key[0] && g[*slot].thread == key[1])
                break;
        if (slot) {
            g[*slot].count++;
            g[*slot].weight += r.weight;
            continue;
        }
        if (pp__grow((void **)&g, &cap, *n + 1, sizeof(*g)) < 0 ||
            pp__htab_insert(&index, h, (uint32_t)*n) < 0) {
            free(g);
            pp__htab_free(&index);
            return -ENOMEM;
        }
        g[(*n)++] = (group){key[0], key[1], 1, r.weight};
    }
    pp__htab_free(&index);
    *out = g;
    return 0;
}

/* The samples with their labels; -EINVAL when the log does not hold every
 * sample (then they are written per stack, without labels). */
static int labelled_samples(buf *b, buf *m, buf *packed, buf *sub, strtab *t,
                            const pp_profile *p)
{
    group *g;
    size_t n;
    uint64_t total = 0;
    buf *per = NULL;
    int rc;

    if (p->nlog != p->samples)
        return -EINVAL;
    if ((rc = group_log(p, &g, &n)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        total += g[i].count;
    if (total != p->samples || !(per = calloc(p->nthreads ? p->nthreads : 1, sizeof(*per)))) {
        free(g);
        return total != p->samples ? -EINVAL : -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        buf *l = &per[g[i].thread];
        if (!l->len)
            thread_labels(l, sub, t, p, g[i].thread);
        sample(b, m, packed, p, &p->stacks[g[i].stack], g[i].count, g[i].weight, l);
        if (l->err)
            b->err = l->err;
    }
    for (uint32_t i = 0; i < p->nthreads; i++)
        free(per[i].d);
    free(per);
    free(g);
    return 0;
}

int pp_pprof_encode(const pp_profile *p, uint8_t **out, size_t *out_len)
{
    buf b = {0}, m = {0}, sub = {0}, packed = {0};
    strtab t = {0};
    char sysname[4096];
    /* an event's second value: its occurrences, typed by its name
     * ("page-faults", "syscalls:sys_enter_write") in its unit ("faults",
     * "calls"), as perf's own pprof converters type them */
    int events = p->value == PP_VALUE_EVENTS;
    const char *kind = events ? p->event : p->value == PP_VALUE_WALL ? "wall" : "cpu";
    const char *unit = events ? pp_profile_unit(p) : "nanoseconds";
    int rc;

    if (pp__strtab_init(&t.tab, 1024, 1) < 0)
        return -ENOMEM;
    str_id(&t, "");
    value_type(&b, 1, &m, &t, "samples", "count");
    value_type(&b, 1, &m, &t, kind, unit);
    if (!p->labelled || (rc = labelled_samples(&b, &m, &packed, &sub, &t, p)) == -EINVAL)
        for (uint32_t si = 0; si < p->nstacks; si++)
            sample(&b, &m, &packed, p, &p->stacks[si], p->stacks[si].count,
                   p->stacks[si].period, NULL);
    else if (rc < 0)
        b.err = rc;
    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *f = &p->frames[i];
        field_u64(&sub, 1, (uint64_t)i + 1);
        field_u64(&sub, 2, f->line > 0 ? (uint64_t)f->line : 0);
        field_u64(&m, 1, (uint64_t)i + 1);
        field_msg(&m, 4, &sub);
        field_msg(&b, 4, &m);
    }
    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *f = &p->frames[i];
        const char *name = f->kind == PP_FRAME_PYTHON ? f->name : f->label;
        uint64_t sys;

        if (f->kind == PP_FRAME_PYTHON) {
            snprintf(sysname, sizeof(sysname), "py::%s:%s", f->name, f->file);
            sys = str_id(&t, sysname);
        } else {
            sys = str_id(&t, name);
        }
        field_u64(&m, 1, (uint64_t)i + 1);
        field_u64(&m, 2, str_id(&t, name));
        field_u64(&m, 3, sys);
        field_u64(&m, 4, str_id(&t, f->file));
        field_u64(&m, 5, f->line > 0 ? (uint64_t)f->line : 0);
        field_msg(&b, 5, &m);
    }
    field_u64(&b, 9, p->time_unix_ns);
    if (p->duration_ns)
        field_u64(&b, 10, p->duration_ns);
    else if (p->time_last_ns > p->time_first_ns)
        field_u64(&b, 10, p->time_last_ns - p->time_first_ns);
    value_type(&b, 11, &m, &t, kind, unit);
    field_u64(&b, 12, p->period_ns ? p->period_ns : p->samples ? p->period / p->samples : 0);
    field_u64(&b, 14, str_id(&t, kind));
    /* string_table (field 6) last: every index is known by now */
    pp__put(&b, t.out.d, t.out.len);
    rc = b.err ? b.err : m.err ? m.err : sub.err ? sub.err : packed.err ? packed.err
         : t.err ? t.err : t.out.err;
    free(m.d);
    free(sub.d);
    free(packed.d);
    free(t.out.d);
    pp__strtab_free(&t.tab);
    if (rc < 0) {
        free(b.d);
        return rc;
    }
    *out = b.d;
    *out_len = b.len;
    return 0;
}

int pp_write_pprof(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    uint8_t *data;
    size_t len;
    int rc;

    (void)o;
    rc = pp_pprof_encode(p, &data, &len);
    if (rc < 0)
        return rc;
    rc = pp__gzip_to(out, data, len);
    free(data);
    if (rc < 0)
        return rc;
    return pp__stream_status(out);
}
