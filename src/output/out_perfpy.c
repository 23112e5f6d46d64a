/*
 * perfpy's own profile file, -f perfpy (NAME.perfpy.gz): the whole profile,
 * so that a recording made once is written later in any format (`perfpy
 * report FILE -f FORMAT`: src/report/read_perfpy.c reads it) and compared
 * (`perfpy diff`). Its layout, one definition for writer, reader, tests
 * and fuzzer: include/perfpy/profile_format.h.
 *
 *   frames, stacks (with their totals and wait marks), threads (pid, tid,
 *   name), processes, labels, markers and their names, every logged sample
 *   (stack, thread, time, weight), the value kind, period, event, times
 *
 * Written into memory record by record (each record's length comes before
 * it), then gzipped to the stream. A server's 15,000 samples of wall time
 * take about 60 KB.
 */
#include "output.h"
#include "perfpy/profile_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t zz(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void str(pp__buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;

    pp__varint(b, n);
    pp__put(b, s, n);
}

/* Flag 1 and the string, or 0 for NULL. */
static void opt_str(pp__buf *b, const char *s)
{
    pp__varint(b, s != NULL);
    if (s)
        str(b, s);
}

/* The record tag with the payload in rec, which is emptied. */
static void record(pp__buf *b, unsigned tag, pp__buf *rec)
{
    if (rec->err)
        b->err = rec->err;
    pp__varint(b, tag);
    pp__varint(b, rec->len);
    pp__put(b, rec->d, rec->len);
    rec->len = 0;
}

static void meta(pp__buf *r, const pp_profile *p)
{
    const uint64_t v[] = {p->value, (uint64_t)p->exec_lines, p->period_ns, p->time_first_ns,
                          p->time_last_ns, p->time_base_ns, p->time_unix_ns, p->duration_ns,
                          (uint64_t)p->labelled, p->truncated, p->lost, p->bad_lines};

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        pp__varint(r, v[i]);
    str(r, p->event);
    str(r, p->program);
}

static void frames(pp__buf *r, const pp_profile *p)
{
    pp__varint(r, p->nframes);
    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *f = &p->frames[i];
        pp__varint(r, f->kind);
        pp__varint(r, zz(f->line));
        str(r, f->name);
        str(r, f->file);
    }
}

static void stacks(pp__buf *r, const pp_profile *p)
{
    pp__varint(r, p->nstacks);
    for (uint32_t i = 0; i < p->nstacks; i++) {
        const pp_stack *s = &p->stacks[i];
        pp__varint(r, s->depth);
        for (uint32_t d = 0; d < s->depth; d++)
            pp__varint(r, pp_stack_ids(p, s)[d]);
        pp__varint(r, s->count);
        pp__varint(r, s->period);
        pp__varint(r, s->wait);
        pp__varint(r, s->wait_kind);
    }
}

static void threads(pp__buf *r, const pp_profile *p)
{
    pp__varint(r, p->nthreads);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        const pp_thread *t = &p->threads[i];
        pp__varint(r, zz(t->pid));
        pp__varint(r, zz(t->tid));
        pp__varint(r, (uint64_t)t->name_set);
        pp__varint(r, t->first_ns);
        pp__varint(r, t->last_ns);
        pp__varint(r, t->samples);
        str(r, t->name);
    }
}

static void processes(pp__buf *r, const pp_profile *p)
{
    pp__varint(r, p->nprocs);
    for (uint32_t i = 0; i < p->nprocs; i++) {
        const pp_process *x = &p->procs[i];
        pp__varint(r, zz(x->pid));
        pp__varint(r, zz(x->ns_pid));
        pp__varint(r, x->samples);
        pp__varint(r, x->truncated);
        pp__varint(r, x->python);
        str(r, x->comm);
        opt_str(r, x->command);
        opt_str(r, x->service);
        opt_str(r, x->container);
    }
}

static void marker_names(pp__buf *r, const pp_profile *p)
{
    pp__varint(r, p->nmarker_names);
    for (size_t i = 0; i < p->nmarker_names; i++)
        str(r, p->marker_names[i]);
}

static void labels_and_markers(pp__buf *b, pp__buf *r, const pp_profile *p)
{
    pp__varint(r, p->nlabels);
    for (uint32_t i = 0; i < p->nlabels; i++) {
        str(r, p->labels[i].key);
        str(r, p->labels[i].value);
    }
    record(b, PP_PF_LABELS, r);
    pp__varint(r, p->nmarkers);
    for (size_t i = 0; i < p->nmarkers; i++) {
        const pp_marker *m = &p->markers[i];
        pp__varint(r, m->thread);
        pp__varint(r, m->kind);
        pp__varint(r, m->name);
        pp__varint(r, m->start_ns);
        pp__varint(r, m->end_ns - m->start_ns);
    }
    record(b, PP_PF_MARKERS, r);
}

/* The log, record by record as pp_profile_rec gives it (a weight past 32
 * bits is already several records): times as differences, small. */
static void samples(pp__buf *r, const pp_profile *p)
{
    uint64_t last = 0;

    pp__varint(r, p->nlog);
    for (uint64_t i = 0; i < p->nlog && !r->err; i++) {
        pp_logged l = pp_profile_rec(p, i);
        pp__varint(r, l.stack);
        pp__varint(r, l.thread);
        pp__varint(r, zz((int64_t)(l.time_ns - last)));
        pp__varint(r, l.weight);
        last = l.time_ns;
    }
}

int pp_write_perfpy(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    pp__buf b = {0}, r = {0};
    uint8_t version[4] = {PP_PROFILE_VERSION & 0xff, PP_PROFILE_VERSION >> 8 & 0xff,
                          PP_PROFILE_VERSION >> 16 & 0xff, PP_PROFILE_VERSION >> 24};
    int rc;

    (void)o;
    pp__put(&b, PP_PROFILE_MAGIC, PP_PROFILE_MAGIC_LEN);
    pp__put(&b, version, sizeof(version));
    meta(&r, p);
    record(&b, PP_PF_META, &r);
    marker_names(&r, p);
    record(&b, PP_PF_MARKER_NAMES, &r);
    frames(&r, p);
    record(&b, PP_PF_FRAMES, &r);
    stacks(&r, p);
    record(&b, PP_PF_STACKS, &r);
    threads(&r, p);
    record(&b, PP_PF_THREADS, &r);
    processes(&r, p);
    record(&b, PP_PF_PROCESSES, &r);
    labels_and_markers(&b, &r, p);
    samples(&r, p);
    record(&b, PP_PF_SAMPLES, &r);
    pp__varint(&r, p->nmarker_names);
    pp__varint(&r, p->nframes);
    pp__varint(&r, p->nstacks);
    pp__varint(&r, p->nthreads);
    pp__varint(&r, p->nmarkers);
    pp__varint(&r, p->nlog);
    record(&b, PP_PF_END, &r);
    rc = b.err ? b.err : pp__gzip_to(out, b.d, b.len);
    free(b.d);
    free(r.d);
    return rc < 0 ? rc : pp__stream_status(out);
}
