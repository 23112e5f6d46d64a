/*
 * The profile of profile.h: a string arena, interned frames, interned
 * stacks and what a stack's number is. Interning is what keeps a long
 * recording small: a million samples of one loop are one stack with count
 * 1000000 (the sample log of samples.c adds 12 bytes for each of them; the
 * views writers share are in views.c).
 */
#include "profile.h"
#include "htab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- string arena ------------------------------------------------------ */

#define CHUNK_MIN (64 * 1024)

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
} chunk;

struct pp_strings {
    chunk *head;
};

const char *pp_profile_strdup(pp_profile *p, const char *s, size_t len)
{
    chunk *c = p->strings->head;
    char *out;

    if (!c || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > CHUNK_MIN ? len + 1 : CHUNK_MIN;
        chunk *n = malloc(sizeof(*n) + cap);

        if (!n)
            return NULL;
        n->next = c;
        n->used = 0;
        n->cap = cap;
        p->strings->head = c = n;
    }
    out = c->data + c->used;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
    c->used += len + 1;
    return out;
}

int pp_profile_label(pp_profile *p, const char *key, const char *value)
{
    size_t cap = p->nlabels;
    const char *k = pp_profile_strdup(p, key, strlen(key));
    const char *v = pp_profile_strdup(p, value, strlen(value));

    if (!k || !v || pp__grow((void **)&p->labels, &cap, (size_t)p->nlabels + 1,
                             sizeof(*p->labels)) < 0)
        return -ENOMEM;
    p->labels[p->nlabels++] = (pp_label){k, v};
    return 0;
}

const pp_process *pp_profile_process(const pp_profile *p, int pid)
{
    for (uint32_t i = 0; i < p->nprocs; i++)
        if (p->procs[i].pid == pid)
            return &p->procs[i];
    return NULL;
}

/* ---- life cycle -------------------------------------------------------- */

int pp_profile_init(pp_profile *p)
{
    memset(p, 0, sizeof(*p));
    p->strings = calloc(1, sizeof(*p->strings));
    p->frame_index = calloc(1, sizeof(pp_htab));
    p->stack_index = calloc(1, sizeof(pp_htab));
    p->thread_index = calloc(1, sizeof(pp_htab));
    p->marker_name_index = calloc(1, sizeof(pp_htab));
    if (!p->strings || !p->frame_index || !p->stack_index || !p->thread_index ||
        !p->marker_name_index || pp__htab_init(p->marker_name_index, 16) < 0 ||
        pp__htab_init(p->frame_index, 1024) < 0 ||
        pp__htab_init(p->stack_index, 1024) < 0 ||
        pp__htab_init(p->thread_index, 16) < 0) {
        pp_profile_free(p);
        return -ENOMEM;
    }
    return 0;
}

void pp_profile_free(pp_profile *p)
{
    if (p->strings) {
        chunk *c = p->strings->head;
        while (c) {
            chunk *next = c->next;
            free(c);
            c = next;
        }
        free(p->strings);
    }
    if (p->frame_index)
        pp__htab_free(p->frame_index);
    if (p->stack_index)
        pp__htab_free(p->stack_index);
    if (p->thread_index)
        pp__htab_free(p->thread_index);
    if (p->marker_name_index)
        pp__htab_free(p->marker_name_index);
    free(p->frame_index);
    free(p->stack_index);
    free(p->thread_index);
    free(p->marker_name_index);
    free(p->marker_names);
    free(p->frames);
    free(p->stacks);
    free(p->ids);
    free(p->procs);
    free(p->labels);
    pp__log_free(p);
    free(p->threads);
    free(p->markers);
    memset(p, 0, sizeof(*p));
}

/* ---- frames ------------------------------------------------------------ */

static uint64_t frame_hash(pp_frame_kind kind, const char *name, size_t nl,
                           const char *file, size_t fl, int line)
{
    uint64_t h = pp__hash(name, nl, (uint64_t)kind * 31 + (uint64_t)(unsigned)line);
    return pp__hash(file, fl, h);
}

static const char *make_label(pp_profile *p, pp_frame_kind kind, const char *name,
                              const char *file, int line)
{
    char small[512];
    char *buf = small;
    size_t need;
    const char *out;

    if (kind != PP_FRAME_PYTHON)
        return name;
    need = strlen(name) + strlen(file) + 32;
    if (need > sizeof(small) && !(buf = malloc(need)))
        return NULL;
    if (line > 0)
        snprintf(buf, need, "%s (%s:%d)", name, file, line);
    else if (*file)
        snprintf(buf, need, "%s (%s)", name, file);
    else
        snprintf(buf, need, "%s", name);
    out = pp_profile_strdup(p, buf, strlen(buf));
    if (buf != small)
        free(buf);
    return out;
}

int64_t pp_profile_frame(pp_profile *p, pp_frame_kind kind, const char *name,
                         size_t name_len, const char *file, size_t file_len,
                         int line)
{
    uint64_t h;
    pp_htab_iter it;
    uint32_t *slot;
    pp_frame *f;
    size_t cap = p->frames_cap;

    if (!file)
        file_len = 0;
    h = frame_hash(kind, name, name_len, file ? file : "", file_len, line);
    for (slot = pp__htab_first(p->frame_index, h, &it); slot;
         slot = pp__htab_next(p->frame_index, h, &it)) {
        f = &p->frames[*slot];
        if (f->kind == kind && f->line == line &&
            strlen(f->name) == name_len && memcmp(f->name, name, name_len) == 0 &&
            strlen(f->file) == file_len && (!file_len || memcmp(f->file, file, file_len) == 0))
            return *slot;
    }
    if (p->nframes >= UINT32_MAX - 1)
        return -ENOSPC;
    if (pp__grow((void **)&p->frames, &cap, (size_t)p->nframes + 1, sizeof(pp_frame)) < 0)
        return -ENOMEM;
    p->frames_cap = (uint32_t)cap;
    f = &p->frames[p->nframes];
    f->kind = kind;
    f->line = line;
    f->name = pp_profile_strdup(p, name, name_len);
    f->file = pp_profile_strdup(p, file_len ? file : "", file_len);
    if (!f->name || !f->file)
        return -ENOMEM;
    f->label = make_label(p, kind, f->name, f->file, line);
    if (!f->label || pp__htab_insert(p->frame_index, h, p->nframes) < 0)
        return -ENOMEM;
    return p->nframes++;
}

/* ---- stacks ------------------------------------------------------------ */

int64_t pp_profile_add(pp_profile *p, const uint32_t *ids, size_t n,
                       uint64_t count, uint64_t period)
{
    uint64_t h = pp__hash(ids, n * sizeof(*ids), 7);
    pp_htab_iter it;
    uint32_t *slot;
    pp_stack *s;
    size_t cap;

    if (n > UINT32_MAX / 2)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= p->nframes)
            return -EINVAL;
    for (slot = pp__htab_first(p->stack_index, h, &it); slot;
         slot = pp__htab_next(p->stack_index, h, &it)) {
        s = &p->stacks[*slot];
        if (s->depth == n && memcmp(p->ids + s->first, ids, n * sizeof(*ids)) == 0)
            goto found;
    }
    if (p->nstacks >= UINT32_MAX - 1 || p->nids + n > UINT32_MAX)
        return -ENOSPC;
    cap = p->stacks_cap;
    if (pp__grow((void **)&p->stacks, &cap, (size_t)p->nstacks + 1, sizeof(pp_stack)) < 0)
        return -ENOMEM;
    p->stacks_cap = (uint32_t)cap;
    if (pp__grow((void **)&p->ids, &p->ids_cap, p->nids + n + 1, sizeof(uint32_t)) < 0)
        return -ENOMEM;
    if (pp__htab_insert(p->stack_index, h, p->nstacks) < 0)
        return -ENOMEM;
    s = &p->stacks[p->nstacks++];
    s->first = (uint32_t)p->nids;
    s->depth = (uint32_t)n;
    s->count = s->period = 0;
    s->wait = s->wait_kind = 0;
    if (n)
        memcpy(p->ids + p->nids, ids, n * sizeof(*ids));
    p->nids += n;
found:
    s->count += count;
    s->period += period;
    p->samples += count;
    p->period += period;
    return s - p->stacks;
}

/* ---- values ------------------------------------------------------------ */

uint64_t pp_stack_value(const pp_profile *p, const pp_stack *s)
{
    if (p->value != PP_VALUE_WALL || !p->period_ns)
        return s->count;
    return (s->period + p->period_ns / 2) / p->period_ns;
}

uint64_t pp_profile_value_total(const pp_profile *p)
{
    uint64_t total = 0;

    if (p->value != PP_VALUE_WALL || !p->period_ns)
        return p->samples;
    for (uint32_t i = 0; i < p->nstacks; i++)
        total += pp_stack_value(p, &p->stacks[i]);
    return total;
}

static int event_is(const char *event, const char *name)
{
    size_t n = strlen(name);

    return strncmp(event, name, n) == 0 && (event[n] == '\0' || event[n] == ':');
}

int pp_profile_time_weights(const pp_profile *p)
{
    return p->value == PP_VALUE_WALL || event_is(p->event, "cpu-clock") ||
           event_is(p->event, "task-clock");
}

const char *pp_profile_event_unit(const char *event)
{
    static const struct {
        const char *prefix, *unit;
        int whole;
    } units[] = {
        {"page-faults", "faults", 1}, {"faults", "faults", 1}, {"minor-faults", "faults", 1},
        {"major-faults", "faults", 1}, {"context-switches", "switches", 1},
        {"cs", "switches", 1}, {"cpu-migrations", "migrations", 1},
        {"migrations", "migrations", 1}, {"syscalls:sys_enter_", "calls", 0},
        {"syscalls:sys_exit_", "calls", 0}, {"raw_syscalls:sys_enter", "calls", 1},
        {"raw_syscalls:sys_exit", "calls", 1}, {"cpu-clock", "ns", 1},
        {"task-clock", "ns", 1}, {"wall-clock", "ns", 1},
    };

    if (!event || !*event)
        return "ns";
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (units[i].whole ? event_is(event, units[i].prefix)
                           : strncmp(event, units[i].prefix, strlen(units[i].prefix)) == 0)
            return units[i].unit;
    return "events";
}

const char *pp_profile_unit(const pp_profile *p)
{
    return p->value == PP_VALUE_EVENTS ? pp_profile_event_unit(p->event) : "samples";
}

const char *pp_profile_unit_n(const pp_profile *p, uint64_t n)
{
    static const char *const one[][2] = {
        {"faults", "fault"}, {"switches", "switch"}, {"migrations", "migration"},
        {"calls", "call"}, {"events", "event"}, {"samples", "sample"}, {"ns", "ns"},
    };
    const char *unit = pp_profile_unit(p);

    for (size_t i = 0; n == 1 && i < sizeof(one) / sizeof(one[0]); i++)
        if (strcmp(unit, one[i][0]) == 0)
            return one[i][1];
    return unit;
}

uint64_t pp_profile_every(const pp_profile *p)
{
    return p->value == PP_VALUE_EVENTS && p->samples ? p->period / p->samples : 0;
}
