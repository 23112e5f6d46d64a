/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 *
 *   {"$schema": "...", "shared": {"frames": [{"name","file","line"}, ...]},
 *    "profiles": [{"type": "sampled", "name": "worker-* (8 threads)",
 *                  "unit": "microseconds", "startValue": 2506,
 *                  "endValue": <startValue + the weights>,
 *                  "samples": [[root..leaf frame indexes], [], ...],
 *                  "weights": [5013, 41000, ...]}, ...]}
 *
 * One sampled profile per kind of thread, its samples in time order: each
 * run of one stack on a thread's timeline (timeline.c) is a sample
 * weighing its duration, and each gap where the thread was not sampled
 * (it waited, or another thread held the GIL) an empty sample weighing the
 * gap. So speedscope's time-order view puts every run where it happened,
 * and its left-heavy and sandwich views weigh each stack by its time on
 * the thread. startValue is the track's first sample from the recording's
 * start, so tracks line up.
 *
 * Each thread has a track of its own, named as threading named it, unless
 * more than SHARED_FROM threads are named alike (roots.c's patterns): those
 * share one, as they share a root, a server's thread per request
 * ("Thread-* (handler) (412 threads)"), their timelines one after another
 * in the order the threads began. A server's request threads made
 * thousands of profiles, and speedscope spent more time opening those than
 * all the samples of the busy ones (docs/PERFORMANCE.md, sizes). `--threads split` keeps a track per thread
 * however many, as py-spy writes them.
 *
 * Weights are whole microseconds, the sample log's unit: each sample ends
 * at its exact end rounded, so rounding never adds up along a track, and
 * a sample of a microsecond or more (below) never weighs 0.
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
#include <stdio.h>
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

/* The most threads of one kind that keep a track each. */
#define SHARED_FROM 16

/* The tracks: the threads with samples, those of one track together in
 * the order they began; each track's first thread gives its place. */
typedef struct tracks {
    uint32_t *thread;              /* the threads, track by track */
    uint32_t *first;               /* per track: its first entry in thread[]; [n]: the end */
    uint32_t n;
    char **key;                    /* per thread: "pid root-name" (NULL: no samples) */
    uint32_t nkeys;
} tracks;

static int by_key(const void *a, const void *b, void *ctx)
{
    char *const *key = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(key[x], key[y]);

    return c ? c : (x > y) - (x < y);
}

static int by_value(const void *a, const void *b, void *ctx)
{
    const uint32_t *v = ctx;
    uint32_t x = v[*(const uint32_t *)a], y = v[*(const uint32_t *)b];

    return (x > y) - (x < y);
}

static void tracks_free(tracks *k)
{
    for (uint32_t t = 0; k->key && t < k->nkeys; t++)
        free(k->key[t]);
    free(k->key);
    free(k->thread);
    free(k->first);
}

/* Each thread's track key, "pid root-name" (the root it would have under
 * mode; NULL for a thread without samples): 0 or -ENOMEM. */
static int track_keys(const pp_profile *p, int mode, char **key)
{
    pp_thread_patterns known = {0};
    int rc = 0;

    if (mode != PP_THREAD_ROOTS_SPLIT && pp_thread_patterns_known(p, &known) < 0)
        return -ENOMEM;
    for (uint32_t t = 0; t < p->nthreads && rc == 0; t++) {
        char name[320];

        if (!p->threads[t].samples)
            continue;                  /* a thread known only by a marker */
        if (pp_thread_root_name(&p->threads[t], mode == PP_THREAD_ROOTS_SPLIT ? mode
                                : PP_THREAD_ROOTS_PATTERN, &known, name, sizeof(name)) < 0)
            name[0] = 0;
        if (asprintf(&key[t], "%d %s", p->threads[t].pid, name) < 0) {
            key[t] = NULL;
            rc = -ENOMEM;
        }
    }
    pp_thread_patterns_free(&known);
    return rc;
}

/* The threads with samples grouped by track: 0 or -ENOMEM. */
static int tracks_make(const pp_profile *p, int mode, tracks *k)
{
    size_t cap = (size_t)p->nthreads + 1;
    char **key;
    uint32_t *sorted = malloc(cap * sizeof(*sorted)), *start = malloc(cap * sizeof(*start));
    uint32_t *lead = malloc(cap * sizeof(*lead)), *order = malloc(cap * sizeof(*order));
    uint32_t n = 0, at = 0;
    int rc = -ENOMEM;

    memset(k, 0, sizeof(*k));
    k->key = key = calloc(cap, sizeof(*key));
    k->nkeys = p->nthreads;
    k->thread = malloc(cap * sizeof(*k->thread));
    k->first = malloc((cap + 1) * sizeof(*k->first));
    if (!key || !sorted || !start || !lead || !order || !k->thread || !k->first ||
        track_keys(p, mode, key) < 0)
        goto out;
    for (uint32_t t = 0; t < p->nthreads; t++)
        if (key[t])
            sorted[n++] = t;
    qsort_r(sorted, n, sizeof(*sorted), by_key, key);   /* a kind's lowest thread first */
    for (uint32_t i = 0, end; i < n; i = end) {
        for (end = i + 1; end < n && strcmp(key[sorted[end]], key[sorted[i]]) == 0; end++)
            ;
        for (uint32_t from = i; from < end; from = end - i > SHARED_FROM ? end : from + 1) {
            lead[k->n] = sorted[from];
            order[k->n] = k->n;
            start[k->n++] = from;
        }
    }
    start[k->n] = n;
    qsort_r(order, k->n, sizeof(*order), by_value, lead);
    for (uint32_t j = 0; j < k->n; j++) {
        k->first[j] = at;
        for (uint32_t i = start[order[j]]; i < start[order[j] + 1]; i++)
            k->thread[at++] = sorted[i];
    }
    k->first[k->n] = at;
    rc = 0;
out:
    free(sorted);
    free(start);
    free(lead);
    free(order);
    if (rc < 0)
        tracks_free(k);
    return rc;
}

/* A track's name: its thread's label, or the root its threads share (as
 * their key has it: a name the kernel cut joins its whole one) and how
 * many they are. */
static void track_label(const pp_profile *p, const tracks *k, uint32_t j, char *buf, size_t cap)
{
    uint32_t t = k->thread[k->first[j]], many = k->first[j + 1] - k->first[j];

    if (many == 1) {
        pp__thread_label(p, &p->threads[t], buf, cap);
        return;
    }
    pp__process_suffix(p, p->threads[t].pid, buf,
                       snprintf(buf, cap, "%s (%u threads)", strchr(k->key[t], ' ') + 1, many),
                       cap);
}

/* ns in whole microseconds, rounded. */
static uint64_t us(uint64_t ns)
{
    return (ns + 500) / 1000;
}

/* What one pass over a track's spans writes. */
enum { PASS_TIME, PASS_STACKS, PASS_WEIGHTS };

/* One pass over track j's threads' spans, in order: the samples' stacks
 * or weights written, or (PASS_TIME) its start and total measured, all in
 * ns. 0 or -ENOMEM. */
static int track_pass(const pp_profile *p, const ranks *r, const tracks *k, uint32_t j,
                      pp_thread_order *o, int pass, uint64_t *start, uint64_t *total, FILE *out)
{
    uint64_t at = 0;               /* ns from the track's start: where the sample ends */
    int first = 1;

    for (uint32_t i = k->first[j]; i < k->first[j + 1]; i++) {
        uint32_t t = k->thread[i];
        spans it;
        pp_span s;

        if (pp_thread_order_load(o, t) < 0)
            return -ENOMEM;
        spans_start(&it, p, o, t);
        while (spans_next(&it, &s)) {
            /* a wait logged later may have begun before the first sample
             * logged (the log's base): its thread starts at 0, as firefox's */
            if (first && pass == PASS_TIME)
                *start = s.start_ns > p->time_base_ns ? s.start_ns - p->time_base_ns : 0;
            if (pass == PASS_STACKS) {
                fputs(first ? "" : ",\n", out);
                if (s.stack == PP_NONE)
                    fputs("[]", out);
                else
                    stack_json(p, r, s.stack, out);
            } else if (pass == PASS_WEIGHTS) {
                fprintf(out, first ? "%llu" : ",%llu",
                        (unsigned long long)(us(at + s.dur_ns) - us(at)));
            }
            first = 0;
            at += s.dur_ns;
        }
    }
    if (pass == PASS_TIME)
        *total = at;
    return 0;
}

/* Track j's profile; its spans are read again for each part written, so
 * nothing of the size of the log is held. 0 or -ENOMEM. */
static int track_profile(const pp_profile *p, const ranks *r, const tracks *k, uint32_t j,
                         pp_thread_order *o, FILE *out)
{
    uint64_t start = 0, total = 0;
    char label[400];
    int rc;

    if ((rc = track_pass(p, r, k, j, o, PASS_TIME, &start, &total, out)) < 0)
        return rc;
    track_label(p, k, j, label, sizeof(label));
    fputs("{\"type\":\"sampled\",\"name\":\"", out);
    pp__json_text(out, label);
    fprintf(out, "\",\"unit\":\"microseconds\",\"startValue\":%llu,\"endValue\":%llu,\n"
            "\"samples\":[", (unsigned long long)us(start),
            (unsigned long long)(us(start) + us(total)));
    if ((rc = track_pass(p, r, k, j, o, PASS_STACKS, &start, &total, out)) < 0)
        return rc;
    fputs("],\n\"weights\":[", out);
    if ((rc = track_pass(p, r, k, j, o, PASS_WEIGHTS, &start, &total, out)) < 0)
        return rc;
    fputs("]}", out);
    return 0;
}

/* Every track's profile: 0, or -ENOMEM. */
static int threads_json(const pp_profile *p, const ranks *r, int mode, FILE *out)
{
    pp_thread_order order;
    tracks k;
    int rc = 0;

    if (tracks_make(p, mode, &k) < 0)
        return -ENOMEM;
    if (pp_thread_order_build(p, &order) < 0) {
        tracks_free(&k);
        return -ENOMEM;
    }
    fputs("\"profiles\":[\n", out);
    for (uint32_t j = 0; j < k.n && rc == 0; j++) {
        fputs(j ? ",\n" : "", out);
        rc = track_profile(p, r, &k, j, &order, out);
    }
    fputs("]}\n", out);
    pp_thread_order_free(&order);
    tracks_free(&k);
    return rc;
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
    else if ((rc = threads_json(p, &r, o ? o->threads : 0, out)) == 0)
        rc = pp__stream_status(out);
    ranks_free(&r);
    return rc;
}
