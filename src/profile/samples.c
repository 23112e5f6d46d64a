/*
 * Threads and the sample log of profile.h. Every sample of a recording is
 * kept, 12 bytes each, beside the interned stacks: when it was taken, on
 * which thread, which stack, what it weighs. That is what timelines (one
 * track per thread, samples in time) need, and what a flame graph does not:
 * the per-stack totals are only its sum.
 *
 *     chunk 0: base_us, weights {1001001}       chunk 1: ...
 *     [stack time th|w][stack time th|w]...     [stack time th|w]...
 *      32    32   20+12 bits
 *
 * What the records of a chunk share is kept once in it: the microsecond
 * their times count from (32 bits each side of it: 35 minutes) and their
 * distinct weights (a CPU profile's samples weigh one period, or a few;
 * a wall-clock profile's waits more). A record that does not fit (too far
 * in time, a weight past PP_LOG_WEIGHTS) closes the chunk, shrunk to what
 * it holds, and starts the next: at worst a chunk holds PP_LOG_WEIGHTS
 * records with a weight each, 16 bytes a record.
 *
 * Chunks are allocated one at a time (a long recording never reallocates
 * what it has); while none was closed early, record i is chunk i >> 16,
 * slot i & 0xffff (else a binary search of the chunks' first indexes). A
 * sample "taken at t, weighing w" covers [t - w, t]: perf's cpu-clock sample
 * is taken when its period of CPU time ends, and a wait is logged when it
 * ends. A weight too large for 32 bits (a wait of more than 4.29 s) becomes
 * several records, consecutive parts of that span, at most MAX_PARTS of
 * them (4.9 hours: what a single sample stands for beyond that is in its
 * stack's total, not in the log, so hostile periods cannot make the log
 * grow by more than 48 KiB a sample).
 *
 * Times are microseconds since the first logged span's start
 * (p->time_base_ns), rounded up. One hour at 399 Hz on 8 busy threads is
 * 11.5 million records, 138 MB.
 */
#include "profile.h"
#include "htab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)1 << PP_LOG_CHUNK_BITS)
#define BIAS (UINT64_C(1) << 31)
#define WHASH (2 * PP_LOG_WEIGHTS)       /* open addressing, at most half full */
#define MAX_NAME 255
#define MAX_PARTS 4096

/* ---- threads ------------------------------------------------------------ */

static uint64_t thread_hash(int32_t pid, int32_t tid)
{
    int32_t key[2] = {pid, tid};

    return pp__hash(key, sizeof(key), 5);
}

/* name[0..len) up to its first NUL and at most MAX_NAME bytes: hostile
 * input must not make every sample copy a name again. */
static size_t name_len(const char *name, size_t len)
{
    const char *nul = memchr(name, '\0', len);

    if (nul)
        len = (size_t)(nul - name);
    return len < MAX_NAME ? len : MAX_NAME;
}

static int set_name(pp_profile *p, pp_thread *t, const char *name, size_t len)
{
    const char *n;

    len = name_len(name, len);
    if (t->name && strncmp(t->name, name, len) == 0 && t->name[len] == '\0')
        return 0;
    if (!(n = pp_profile_strdup(p, name, len)))
        return -ENOMEM;
    t->name = n;
    return 0;
}

static int64_t find_thread(const pp_profile *p, int32_t pid, int32_t tid, uint64_t h)
{
    pp_htab_iter it;
    const uint32_t *slot;

    if (p->last_thread < p->nthreads && p->threads[p->last_thread].pid == pid &&
        p->threads[p->last_thread].tid == tid)
        return p->last_thread;
    for (slot = pp__htab_first(p->thread_index, h, &it); slot;
         slot = pp__htab_next(p->thread_index, h, &it))
        if (p->threads[*slot].pid == pid && p->threads[*slot].tid == tid)
            return *slot;
    return -1;
}

int64_t pp_profile_find_thread(const pp_profile *p, int32_t pid, int32_t tid)
{
    return find_thread(p, pid, tid, thread_hash(pid, tid));
}

int64_t pp_profile_thread(pp_profile *p, int32_t pid, int32_t tid, const char *comm,
                          size_t comm_len)
{
    uint64_t h = thread_hash(pid, tid);
    int64_t i = find_thread(p, pid, tid, h);
    size_t cap = p->threads_cap;
    pp_thread *t;

    if (i < 0) {
        if (p->nthreads >= PP_MAX_THREADS)
            return -ENOSPC;
        if (pp__grow((void **)&p->threads, &cap, (size_t)p->nthreads + 1, sizeof(*t)) < 0)
            return -ENOMEM;
        p->threads_cap = (uint32_t)cap;
        if (pp__htab_insert(p->thread_index, h, p->nthreads) < 0)
            return -ENOMEM;
        t = &p->threads[p->nthreads];
        memset(t, 0, sizeof(*t));
        t->pid = pid;
        t->tid = tid;
        t->name = "";
        i = p->nthreads++;
    }
    p->last_thread = (uint32_t)i;
    t = &p->threads[i];
    if (comm && comm_len && !t->name_set && set_name(p, t, comm, comm_len) < 0)
        return -ENOMEM;
    return i;
}

int pp_thread_label(const pp_thread *t, char *buf, size_t cap)
{
    const char *name = t->name[0] ? t->name : "[unknown]";

    if (t->tid < 0)
        return snprintf(buf, cap, "%s", name);
    return snprintf(buf, cap, "%s (tid %d)", name, t->tid);
}

/* A name with a control character in it: no program's name for a thread,
 * but a read of memory the program had freed and used again (3.15's server
 * threads once read as "Accept-Encoding: identity\r\n"). */
static int garbled(const char *name, size_t len)
{
    for (size_t i = 0; i < len && name[i]; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return 1;
    return 0;
}

int pp_profile_thread_name(pp_profile *p, uint32_t thread, const char *name, size_t len)
{
    if (thread >= p->nthreads || !name)
        return -EINVAL;
    if (garbled(name, len))
        return 0;                  /* the thread keeps the name it had */
    if (set_name(p, &p->threads[thread], name, len) < 0)
        return -ENOMEM;
    p->threads[thread].name_set = 1;
    return 0;
}

/* ---- the log ------------------------------------------------------------ */

static void shrink(pp_log_chunk *c)
{
    pp_sample_rec *r = realloc(c->recs, (c->n ? c->n : 1) * sizeof(*r));
    uint32_t *w = realloc(c->weights, (c->nweights ? c->nweights : 1) * sizeof(*w));

    if (r)                         /* else it keeps its larger block */
        c->recs = r;
    if (w)
        c->weights = w;
}

/* A new last chunk for a record at us. */
static pp_log_chunk *open_chunk(pp_profile *p, uint64_t us)
{
    pp_log_chunk *c;

    if (p->log_chunks && p->log[p->log_chunks - 1].n < CHUNK)
        p->log_split = 1;
    if (!p->log_whash && !(p->log_whash = malloc(WHASH * sizeof(*p->log_whash))))
        return NULL;
    if (pp__grow((void **)&p->log, &p->log_chunks_cap, p->log_chunks + 1, sizeof(*p->log)) < 0)
        return NULL;
    c = &p->log[p->log_chunks];
    memset(c, 0, sizeof(*c));
    c->recs = malloc(CHUNK * sizeof(*c->recs));
    c->weights = malloc(PP_LOG_WEIGHTS * sizeof(*c->weights));
    if (!c->recs || !c->weights) {
        free(c->recs);
        free(c->weights);
        return NULL;
    }
    if (p->log_chunks)
        shrink(&p->log[p->log_chunks - 1]);
    c->first = p->nlog;
    c->base_us = us;
    memset(p->log_whash, 0, WHASH * sizeof(*p->log_whash));
    p->log_wlast = UINT32_MAX;
    p->log_chunks++;
    return c;
}

/* weight's index among c's (the last chunk's) weights, added when new;
 * -1 when they are full. */
static int64_t weight_index(pp_profile *p, pp_log_chunk *c, uint32_t weight)
{
    uint32_t h;

    if (p->log_wlast < c->nweights && c->weights[p->log_wlast] == weight)
        return p->log_wlast;
    h = (uint32_t)(((uint64_t)weight * UINT64_C(0x9e3779b97f4a7c15)) >> 40) & (WHASH - 1);
    for (;; h = (h + 1) & (WHASH - 1)) {
        uint16_t slot = p->log_whash[h];

        if (!slot)
            break;
        if (c->weights[slot - 1] == weight)
            return p->log_wlast = slot - 1u;
    }
    if (c->nweights >= PP_LOG_WEIGHTS)
        return -1;
    c->weights[c->nweights] = weight;
    p->log_whash[h] = (uint16_t)(c->nweights + 1);
    return p->log_wlast = c->nweights++;
}

static int fits(const pp_log_chunk *c, uint64_t us)
{
    return c->n < CHUNK && us + BIAS >= c->base_us && us < c->base_us + BIAS;
}

static int append(pp_profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns,
                  uint32_t weight)
{
    pp_log_chunk *c = p->log_chunks ? &p->log[p->log_chunks - 1] : NULL;
    /* rounded up: a span [t - w, t] never starts before the base */
    uint64_t us = time_ns > p->time_base_ns ? (time_ns - p->time_base_ns + 999) / 1000 : 0;
    int64_t w = -1;
    pp_sample_rec *r;

    if (p->nlog >= UINT32_MAX)      /* pp_thread_order indexes records in 32 bits */
        return -ENOSPC;
    if (c && fits(c, us))
        w = weight_index(p, c, weight);
    if (w < 0) {
        if (!(c = open_chunk(p, us)))
            return -ENOMEM;
        w = weight_index(p, c, weight);
    }
    r = &c->recs[c->n++];
    r->stack = stack;
    r->time = (uint32_t)(us + BIAS - c->base_us);
    r->thread_weight = thread << PP_LOG_WEIGHT_BITS | (uint32_t)w;
    p->nlog++;
    return 0;
}

static const pp_log_chunk *chunk_of(const pp_profile *p, uint64_t i)
{
    size_t lo = 0, hi = p->log_chunks;

    if (!p->log_split)
        return &p->log[i >> PP_LOG_CHUNK_BITS];
    while (hi - lo > 1) {           /* the last chunk whose first is <= i */
        size_t mid = lo + (hi - lo) / 2;
        if (p->log[mid].first <= i)
            lo = mid;
        else
            hi = mid;
    }
    return &p->log[lo];
}

static pp_logged decode(const pp_profile *p, const pp_log_chunk *c, const pp_sample_rec *r)
{
    pp_logged l;

    l.time_ns = p->time_base_ns + (c->base_us + r->time - BIAS) * 1000;
    l.weight = c->weights[r->thread_weight & (PP_LOG_WEIGHTS - 1)];
    l.stack = r->stack;
    l.thread = r->thread_weight >> PP_LOG_WEIGHT_BITS;
    return l;
}

pp_logged pp_profile_rec(const pp_profile *p, uint64_t i)
{
    const pp_log_chunk *c = chunk_of(p, i);

    return decode(p, c, &c->recs[i - c->first]);
}

int pp_profile_log(pp_profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns,
                   uint64_t weight)
{
    pp_thread *t;
    uint64_t left = weight;
    int rc, parts = 0;

    if (stack >= p->nstacks || thread >= p->nthreads)
        return -EINVAL;
    if (time_ns && !p->time_base_ns)
        p->time_base_ns = time_ns - (weight < time_ns ? weight : time_ns - 1);
    do {      /* the span [time_ns - weight, time_ns], in parts of 32 bits */
        uint32_t w = left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
        left -= w;
        if ((rc = append(p, stack, thread, time_ns && time_ns > left ? time_ns - left : 0, w)))
            return rc;
    } while (left && ++parts < MAX_PARTS);
    t = &p->threads[thread];
    t->samples++;
    if (time_ns) {
        if (!t->first_ns || time_ns < t->first_ns)
            t->first_ns = time_ns;
        if (time_ns > t->last_ns)
            t->last_ns = time_ns;
    }
    return 0;
}

int64_t pp_profile_sample(pp_profile *p, const uint32_t *ids, size_t n, uint32_t thread,
                          uint64_t time_ns, uint64_t weight)
{
    int64_t si = pp_profile_add(p, ids, n, 1, weight);
    int rc;

    if (si < 0)
        return si;
    if ((rc = pp_profile_log(p, (uint32_t)si, thread, time_ns, weight)) < 0)
        return rc;
    return si;
}

/* ---- markers ------------------------------------------------------------- */

/* The index of name[0..len) among the markers' names, interned: a few
 * distinct names ("[off-CPU: sleep]", "process start") stand for all of a
 * recording's markers. >= 0, or -ENOMEM/-ENOSPC. */
static int64_t marker_name(pp_profile *p, const char *name, size_t len)
{
    uint64_t h = pp__hash(name, len, 7);
    pp_htab_iter it;
    const uint32_t *slot;
    const char *copy;

    for (slot = pp__htab_first(p->marker_name_index, h, &it); slot;
         slot = pp__htab_next(p->marker_name_index, h, &it))
        if (strncmp(p->marker_names[*slot], name, len) == 0 &&
            p->marker_names[*slot][len] == '\0')
            return *slot;
    if (p->nmarker_names >= PP_MAX_MARKER_NAMES)
        return -ENOSPC;
    if (pp__grow((void **)&p->marker_names, &p->marker_names_cap, p->nmarker_names + 1,
                 sizeof(*p->marker_names)) < 0 ||
        !(copy = pp_profile_strdup(p, name, len)) ||
        pp__htab_insert(p->marker_name_index, h, (uint32_t)p->nmarker_names) < 0)
        return -ENOMEM;
    p->marker_names[p->nmarker_names] = copy;
    return (int64_t)p->nmarker_names++;
}

int64_t pp_profile_marker_name(pp_profile *p, const char *name, size_t len)
{
    return marker_name(p, name, name_len(name, len));
}

static int add_marker(pp_profile *p, uint32_t thread, pp_marker_kind kind, uint64_t start_ns,
                      uint64_t end_ns, uint32_t name)
{
    pp_marker *m;

    if (pp__grow((void **)&p->markers, &p->markers_cap, p->nmarkers + 1, sizeof(*m)) < 0)
        return -ENOMEM;
    m = &p->markers[p->nmarkers];
    m->start_ns = start_ns;
    m->end_ns = end_ns;
    m->thread = thread;
    m->kind = kind;
    m->name = name;
    p->nmarkers++;
    return 0;
}

int pp_profile_marker(pp_profile *p, uint32_t thread, pp_marker_kind kind, uint64_t start_ns,
                      uint64_t end_ns, const char *name, size_t len)
{
    int64_t n;

    if (thread >= p->nthreads || end_ns < start_ns)
        return -EINVAL;
    if ((n = marker_name(p, name, name_len(name, len))) < 0)
        return (int)n;
    return add_marker(p, thread, kind, start_ns, end_ns, (uint32_t)n);
}

int pp_profile_stack_wait(pp_profile *p, uint32_t stack, pp_marker_kind kind, const char *name)
{
    int64_t n;

    if (stack >= p->nstacks || !name)
        return -EINVAL;
    if ((n = marker_name(p, name, name_len(name, strlen(name)))) < 0)
        return (int)n;
    p->stacks[stack].wait = (uint32_t)n + 1;
    p->stacks[stack].wait_kind = kind;
    return 0;
}

/* ---- freeing, moving the log to a rebuilt profile ----------------------- */

void pp__log_free(pp_profile *p)
{
    for (size_t i = 0; i < p->log_chunks; i++) {
        free(p->log[i].recs);
        free(p->log[i].weights);
    }
    free(p->log);
    free(p->log_whash);
    p->log = NULL;
    p->log_whash = NULL;
    p->log_chunks = p->log_chunks_cap = 0;
}

int pp_profile_take_samples(pp_profile *dst, pp_profile *src, const uint32_t *stack_map)
{
    pp_htab *index, *names;

    if (dst->nthreads || dst->nlog || dst->nmarkers)
        return -EINVAL;
    for (uint32_t i = 0; i < src->nstacks; i++)
        if (stack_map[i] >= dst->nstacks)
            return -EINVAL;
    for (uint32_t i = 0; i < src->nthreads; i++) {
        const char *n = pp_profile_strdup(dst, src->threads[i].name,
                                          strlen(src->threads[i].name));
        if (!n)
            return -ENOMEM;
        src->threads[i].name = n;     /* src's arena goes with src */
    }
    for (size_t i = 0; i < src->nmarker_names; i++) {
        const char *n = pp_profile_strdup(dst, src->marker_names[i],
                                          strlen(src->marker_names[i]));
        if (!n)
            return -ENOMEM;
        src->marker_names[i] = n;
    }
    for (size_t c = 0; c < src->log_chunks; c++)
        for (uint32_t k = 0; k < src->log[c].n; k++)
            src->log[c].recs[k].stack = stack_map[src->log[c].recs[k].stack];
    free(dst->threads);
    free(dst->markers);
    free(dst->marker_names);
    pp__log_free(dst);
    index = dst->thread_index;
    names = dst->marker_name_index;
    dst->threads = src->threads;
    dst->nthreads = src->nthreads;
    dst->threads_cap = src->threads_cap;
    dst->thread_index = src->thread_index;
    dst->log = src->log;
    dst->log_chunks = src->log_chunks;
    dst->log_chunks_cap = src->log_chunks_cap;
    dst->nlog = src->nlog;
    dst->log_whash = src->log_whash;
    dst->log_wlast = src->log_wlast;
    dst->log_split = src->log_split;
    dst->time_base_ns = src->time_base_ns;
    dst->markers = src->markers;
    dst->nmarkers = src->nmarkers;
    dst->markers_cap = src->markers_cap;
    dst->marker_names = src->marker_names;
    dst->nmarker_names = src->nmarker_names;
    dst->marker_names_cap = src->marker_names_cap;
    dst->marker_name_index = src->marker_name_index;
    src->markers = NULL;
    src->nmarkers = src->markers_cap = 0;
    src->marker_names = NULL;
    src->nmarker_names = src->marker_names_cap = 0;
    src->marker_name_index = names;   /* dst's empty one, freed with src */
    src->threads = NULL;
    src->nthreads = src->threads_cap = 0;
    src->thread_index = index;        /* dst's empty one, freed with src */
    src->log = NULL;
    src->log_chunks = src->log_chunks_cap = 0;
    src->nlog = 0;
    src->log_whash = NULL;
    src->log_split = 0;
    return 0;
}

/* ---- the log by thread -------------------------------------------------- */

static int by_time(const void *a, const void *b, void *ctx)
{
    const pp_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t tx = pp_profile_rec(p, x).time_ns, ty = pp_profile_rec(p, y).time_ns;

    if (tx != ty)
        return tx < ty ? -1 : 1;
    return (x > y) - (x < y);
}

/* Thread t's records in time order: usually they are already. */
static void sort_by_time(const pp_profile *p, uint32_t *r, size_t n)
{
    for (size_t k = 1; k < n; k++)
        if (pp_profile_rec(p, r[k]).time_ns < pp_profile_rec(p, r[k - 1]).time_ns) {
            qsort_r(r, n, sizeof(*r), by_time, (void *)p);
            return;
        }
}

#define thread_of(rec) ((rec).thread_weight >> PP_LOG_WEIGHT_BITS)

int pp_thread_order_build(const pp_profile *p, pp_thread_order *o)
{
    memset(o, 0, sizeof(*o));
    o->p = p;
    o->thread = UINT32_MAX;
    return 0;
}

/* The batch from thread lo: its threads' records gathered in one pass. */
static int gather(pp_thread_order *o, uint32_t lo)
{
    const pp_profile *p = o->p;
    uint64_t budget = p->nlog / 8, sum = p->threads[lo].samples, *at;
    uint32_t hi = lo + 1, k;

    if (budget < sum)
        budget = sum;
    while (hi < p->nthreads && sum + p->threads[hi].samples <= budget)
        sum += p->threads[hi++].samples;
    if (pp__grow((void **)&o->first, &o->first_cap, (size_t)(hi - lo) * 2 + 1,
                 sizeof(*o->first)) < 0)
        return -ENOMEM;
    memset(o->first, 0, ((size_t)(hi - lo) * 2 + 1) * sizeof(*o->first));
    at = o->first + (hi - lo) + 1;
    for (size_t c = 0; c < p->log_chunks; c++)        /* counted, then gathered */
        for (uint32_t i = 0; i < p->log[c].n; i++)
            if ((k = thread_of(p->log[c].recs[i])) >= lo && k < hi)
                o->first[k - lo + 1]++;
    for (k = 0; k < hi - lo; k++) {
        o->first[k + 1] += o->first[k];
        at[k] = o->first[k];
    }
    if (o->first[hi - lo] > o->own_cap) {
        uint32_t *own = realloc(o->own, o->first[hi - lo] * sizeof(*own));
        if (!own)
            return -ENOMEM;
        o->own = own;
        o->own_cap = o->first[hi - lo];
    }
    for (size_t c = 0; c < p->log_chunks; c++)
        for (uint32_t i = 0; i < p->log[c].n; i++)
            if ((k = thread_of(p->log[c].recs[i])) >= lo && k < hi)
                o->own[at[k - lo]++] = (uint32_t)(p->log[c].first + i);
    for (k = 0; k < hi - lo; k++)
        sort_by_time(p, o->own + o->first[k], (size_t)(o->first[k + 1] - o->first[k]));
    o->lo = lo;
    o->hi = hi;
    return 0;
}

int pp_thread_order_load(pp_thread_order *o, uint32_t thread)
{
    if (thread >= o->p->nthreads)
        return -EINVAL;
    if (thread < o->lo || thread >= o->hi) {
        o->lo = o->hi = 0;
        if (gather(o, thread) < 0) {
            o->thread = UINT32_MAX;
            o->n = 0;
            return -ENOMEM;
        }
    }
    o->thread = thread;
    o->recs = o->own + o->first[thread - o->lo];
    o->n = o->first[thread - o->lo + 1] - o->first[thread - o->lo];
    return 0;
}

void pp_thread_order_free(pp_thread_order *o)
{
    free(o->own);
    free(o->first);
    memset(o, 0, sizeof(*o));
    o->thread = UINT32_MAX;
}

int pp_marker_by_start(const void *a, const void *b)
{
    const pp_marker *x = a, *y = b;

    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

int pp_thread_waits(const pp_profile *p, const pp_thread_order *o, pp_marker **out,
                    size_t *n, size_t *cap)
{
    size_t last = SIZE_MAX;        /* the thread's latest wait marker */

    *n = 0;
    for (uint64_t i = 0; i < o->n; i++) {
        pp_logged r = pp_profile_rec(p, o->recs[i]);
        const pp_stack *s = &p->stacks[r.stack];
        uint64_t start = r.time_ns > r.weight ? r.time_ns - r.weight : 0;
        pp_marker *m = last != SIZE_MAX ? &(*out)[last] : NULL;

        if (!s->wait)
            continue;
        if (m && m->kind == s->wait_kind && m->name == s->wait - 1 &&
            m->end_ns <= r.time_ns && start <= m->end_ns + p->period_ns) {
            m->end_ns = r.time_ns;
            continue;
        }
        if (pp__grow((void **)out, cap, *n + 1, sizeof(**out)) < 0)
            return -ENOMEM;
        m = &(*out)[last = (*n)++];
        m->start_ns = start;
        m->end_ns = r.time_ns;
        m->thread = o->thread;
        m->kind = s->wait_kind;
        m->name = s->wait - 1;
    }
    if (*n > 1)
        qsort(*out, *n, sizeof(**out), pp_marker_by_start);
    return 0;
}

/* ---- the markers by thread ---------------------------------------------- */

static int by_start(const void *a, const void *b, void *ctx)
{
    const pp_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t sx = p->markers[x].start_ns, sy = p->markers[y].start_ns;

    if (sx != sy)
        return sx < sy ? -1 : 1;
    return (x > y) - (x < y);
}

int pp_marker_order_build(const pp_profile *p, pp_marker_order *o)
{
    uint64_t *at;

    o->idx = malloc((p->nmarkers ? p->nmarkers : 1) * sizeof(*o->idx));
    o->first = calloc((size_t)p->nthreads + 1, sizeof(*o->first));
    at = calloc((size_t)p->nthreads + 1, sizeof(*at));
    if (!o->idx || !o->first || !at) {
        free(at);
        pp_marker_order_free(o);
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->nmarkers; i++)          /* counting sort by thread */
        o->first[p->markers[i].thread + 1]++;
    for (uint32_t t = 0; t < p->nthreads; t++)
        o->first[t + 1] += o->first[t];
    memcpy(at, o->first, ((size_t)p->nthreads + 1) * sizeof(*at));
    for (size_t i = 0; i < p->nmarkers; i++)
        o->idx[at[p->markers[i].thread]++] = (uint32_t)i;
    free(at);
    for (uint32_t t = 0; t < p->nthreads; t++)
        qsort_r(o->idx + o->first[t], (size_t)(o->first[t + 1] - o->first[t]),
                sizeof(*o->idx), by_start, (void *)p);
    return 0;
}

void pp_marker_order_free(pp_marker_order *o)
{
    free(o->idx);
    free(o->first);
    memset(o, 0, sizeof(*o));
}
