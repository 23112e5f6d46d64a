/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 *
 *   {"$schema": "...", "shared": {"frames": [{"name","file","line"}, ...]},
 *    "profiles": [{"type": "sampled", "name": "worker-1 (tid 4612)",
 *                  "unit": "nanoseconds", "startValue": 2506000,
 *                  "endValue": <startValue + the weights>,
 *                  "samples": [[root..leaf frame indexes], [], ...],
 *                  "weights": [5012530, 41000000, ...]}, ...]}
 *
 * One sampled profile per thread, as py-spy writes them, its samples in
 * time order: each run of one stack on the thread's timeline (timeline.c)
 * is a sample weighing its duration in nanoseconds, and each gap where
 * the thread was not sampled (it waited, or another thread held the GIL) an
 * empty sample weighing the gap. So speedscope's time-order view puts
 * every run where it happened, its start and end to the microsecond, and
 * its left-heavy and sandwich views weigh each stack by its time on the
 * thread (the runs' jitter of a few µs included). startValue is the
 * thread's first sample from the recording's start, so threads line up.
 *
 * No sample weighs less than what sampling measures: a span shorter than
 * a hundredth of the period (and than a microsecond, the log's unit) is an
 * artefact of timer jitter or of a sample overlapping the one before (a
 * thread's timeline gives those a few ns), and speedscope's sandwich view
 * listed each as a "1.00ns" row (8-9% of a user's samples). Such a span is
 * merged into the span before it on its thread (into the next when it is
 * the first), so every later span keeps its place and the thread its
 * total.
 *
 * A profile whose samples carry no time (one rebuilt from collapsed text)
 * is one profile of its distinct stacks instead, each weighing its
 * pp_stack_value (speedscope sums weights, so this is exact and small).
 * So is an event's (perfpy record -e): its weights are the event's
 * occurrences (faults, calls), which speedscope has no unit for ("none"),
 * so the profile's name says it: "app — 4583 samples of 10 faults
 * (page-faults)"; a timeline would weigh them as time.
 * Python frames carry their file and line; native frames their DSO.
 */
#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The frames' indexes in the file, the most used first: every sample
 * repeats its whole stack, and a deep one (native and kernel frames under
 * the Python ones) repeats the same few dozen frames, whose indexes then
 * take one or two digits instead of three: a server's file 12% smaller. */
typedef struct ranks {
    uint32_t *of;                  /* per frame of p: its index in the file */
    uint32_t *order;               /* per index in the file: the frame */
    uint64_t *use;                 /* per frame: the samples whose stack holds it */
} ranks;

static int cmp_use(const void *a, const void *b, void *ctx)
{
    const uint64_t *use = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    if (use[x] != use[y])
        return use[x] > use[y] ? -1 : 1;
    return (x > y) - (x < y);
}

static void ranks_free(ranks *r)
{
    free(r->of);
    free(r->order);
    free(r->use);
}

static int ranks_make(const pp_profile *p, ranks *r)
{
    size_t n = p->nframes ? p->nframes : 1;

    r->of = malloc(n * sizeof(*r->of));
    r->order = malloc(n * sizeof(*r->order));
    r->use = calloc(n, sizeof(*r->use));
    if (!r->of || !r->order || !r->use) {
        ranks_free(r);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < p->nstacks; i++) {
        const uint32_t *ids = pp_stack_ids(p, &p->stacks[i]);

        for (uint32_t d = 0; d < p->stacks[i].depth; d++)
            r->use[ids[d]] += p->stacks[i].count;
    }
    for (uint32_t i = 0; i < p->nframes; i++)
        r->order[i] = i;
    qsort_r(r->order, p->nframes, sizeof(*r->order), cmp_use, r->use);
    for (uint32_t i = 0; i < p->nframes; i++)
        r->of[r->order[i]] = i;
    return 0;
}

static void frames_json(const pp_profile *p, const ranks *r, FILE *out)
{
    fputs("\"shared\":{\"frames\":[\n", out);
    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *f = &p->frames[r->order[i]];
        fputs(i ? ",\n{\"name\":\"" : "{\"name\":\"", out);
        pp__json_text(out, f->kind == PP_FRAME_PYTHON ? f->name : f->label);
        fputc('"', out);
        if (*f->file) {
            fputs(",\"file\":\"", out);
            pp__json_text(out, f->file);
            fputc('"', out);
        }
        if (f->line > 0)
            fprintf(out, ",\"line\":%d", f->line);
        fputc('}', out);
    }
    fputs("]},\n", out);
}

static void stack_json(const pp_profile *p, const ranks *r, uint32_t si, FILE *out)
{
    const pp_stack *s = &p->stacks[si];
    const uint32_t *ids = pp_stack_ids(p, s);

    fputc('[', out);
    for (uint32_t d = 0; d < s->depth; d++)
        fprintf(out, d ? ",%u" : "%u", r->of[ids[d]]);
    fputc(']', out);
}

/* The distinct stacks, for a profile without times. */
static int aggregated(const pp_profile *p, const ranks *r, FILE *out, const pp_write_opts *o)
{
    uint32_t *order = pp_profile_stack_order(p);
    int events = p->value == PP_VALUE_EVENTS;
    char counted[192];

    if (!order)
        return -ENOMEM;
    fputs("\"profiles\":[{\"type\":\"sampled\",\"name\":\"", out);
    pp__json_text(out, pp__title(p, o));
    if (events) {
        fputs(" — ", out);
        pp__json_text(out, pp__counted(p, counted, sizeof(counted)));
    }
    fprintf(out, "\",\"unit\":\"none\",\"startValue\":0,\"endValue\":%llu,\n\"samples\":[\n",
            (unsigned long long)(events ? p->period : pp_profile_value_total(p)));
    for (uint32_t i = 0; i < p->nstacks; i++) {
        fputs(i ? ",\n" : "", out);
        stack_json(p, r, order[i], out);
    }
    fputs("],\n\"weights\":[", out);
    for (uint32_t i = 0; i < p->nstacks; i++)
        fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)(events ? p->stacks[order[i]].period
                                                                 : pp_stack_value(p, &p->stacks[order[i]])));
    fputs("]}]}\n", out);
    free(order);
    return pp__stream_status(out);
}

/* A thread's spans with the short ones merged into a neighbour (see the
 * top): one held back until the next is known to be long enough. */
typedef struct spans {
    pp_timeline tl;
    uint64_t min_ns;
    pp_span held;
    int have;
    uint64_t carry;                /* short spans before the first long one */
    pp_span first;                 /* the first short one, for a thread of only those */
    int short_seen;
} spans;

static void spans_start(spans *it, const pp_profile *p, const pp_thread_order *o, uint32_t t)
{
    memset(it, 0, sizeof(*it));
    pp_timeline_start(&it->tl, p, o, t, 1);
    it->min_ns = p->period_ns / 100 > 1000 ? p->period_ns / 100 : 1000;
}

static int spans_next(spans *it, pp_span *out)
{
    pp_span s;

    while (pp_timeline_next(&it->tl, &s)) {
        if (s.dur_ns < it->min_ns) {
            if (it->have) {
                it->held.dur_ns += s.dur_ns;
            } else {
                if (!it->short_seen++)
                    it->first = s;
                it->carry += s.dur_ns;
            }
            continue;
        }
        if (!it->have) {
            s.start_ns -= it->carry < s.start_ns ? it->carry : s.start_ns;
            s.dur_ns += it->carry;
            it->carry = 0;
            it->short_seen = 0;
            it->held = s;
            it->have = 1;
            continue;
        }
        *out = it->held;
        it->held = s;
        return 1;
    }
    if (it->have) {
        *out = it->held;
        it->have = 0;
        return 1;
    }
    if (it->short_seen) {          /* every span was short: one of them all */
        *out = it->first;
        out->dur_ns = it->carry;
        it->carry = 0;
        it->short_seen = 0;
        return 1;
    }
    return 0;
}

/* Thread t's runs and gaps; its weights are written in a second pass over
 * the timeline, so nothing of the size of the log is held. */
static void thread_profile(const pp_profile *p, const ranks *r, const pp_thread_order *o,
                           uint32_t t, FILE *out)
{
    spans it;
    pp_span s;
    uint64_t start = 0, total = 0;
    char label[400];
    int first = 1;

    spans_start(&it, p, o, t);
    while (spans_next(&it, &s)) {
        /* a wait logged later may have begun before the first sample
         * logged (the log's base): its thread starts at 0, as firefox's */
        if (first)
            start = s.start_ns > p->time_base_ns ? s.start_ns - p->time_base_ns : 0;
        first = 0;
        total += s.dur_ns;
    }
    pp__thread_label(p, &p->threads[t], label, sizeof(label));
    fputs("{\"type\":\"sampled\",\"name\":\"", out);
    pp__json_text(out, label);
    fprintf(out, "\",\"unit\":\"nanoseconds\",\"startValue\":%llu,\"endValue\":%llu,\n"
            "\"samples\":[", (unsigned long long)start, (unsigned long long)(start + total));
    first = 1;
    spans_start(&it, p, o, t);
    while (spans_next(&it, &s)) {
        fputs(first ? "" : ",\n", out);
        first = 0;
        if (s.stack == PP_NONE)
            fputs("[]", out);
        else
            stack_json(p, r, s.stack, out);
    }
    fputs("],\n\"weights\":[", out);
    first = 1;
    spans_start(&it, p, o, t);
    while (spans_next(&it, &s)) {
        fprintf(out, first ? "%llu" : ",%llu", (unsigned long long)s.dur_ns);
        first = 0;
    }
    fputs("]}", out);
}

/* Every thread's profile in time order: 0, or -ENOMEM. */
static int threads_json(const pp_profile *p, const ranks *r, FILE *out)
{
    pp_thread_order order;
    uint32_t shown = 0;

    if (pp_thread_order_build(p, &order) < 0)
        return -ENOMEM;
    fputs("\"profiles\":[\n", out);
    for (uint32_t t = 0; t < p->nthreads; t++) {
        if (!p->threads[t].samples)
            continue;                  /* a thread known only by a marker */
        if (pp_thread_order_load(&order, t) < 0) {
            pp_thread_order_free(&order);
            return -ENOMEM;
        }
        fputs(shown++ ? ",\n" : "", out);
        thread_profile(p, r, &order, t, out);
    }
    fputs("]}\n", out);
    pp_thread_order_free(&order);
    return 0;
}

int pp_write_speedscope(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    ranks r;
    int rc;

    if (ranks_make(p, &r) < 0)
        return -ENOMEM;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"exporter\":\"perfpy\",\"name\":\"", out);
    pp__json_text(out, pp__title(p, o));
    fputs("\",\"activeProfileIndex\":0,\n", out);
    frames_json(p, &r, out);
    if (!p->nlog || !p->time_first_ns || p->value == PP_VALUE_EVENTS)
        rc = aggregated(p, &r, out, o);
    else if ((rc = threads_json(p, &r, out)) == 0)
        rc = pp__stream_status(out);
    ranks_free(&r);
    return rc;
}
