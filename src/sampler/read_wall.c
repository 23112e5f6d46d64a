/*
 * Read mode's wall clock and GIL (see read_wall.h): each thread's last
 * read kept, by (pid, tid), to split the time to the next.
 */
#include "read_wall.h"
#include "collect/offcpu.h"
#include "profile/htab.h"
#include "profile/raw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct seen {
    pid_t pid, tid;
    uint64_t at_ns;                /* when it was last read */
    pp_offcpu last;
} seen;

struct pp_readwall {
    seen *t;
    size_t n, cap;
    pp_htab index;                 /* (pid, tid) -> t[] */
};

int pp__readwall_open(pp_readwall **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : -ENOMEM;
}

void pp__readwall_close(pp_readwall *w)
{
    if (!w)
        return;
    free(w->t);
    pp__htab_free(&w->index);
    free(w);
}

/* The thread's last read, or a new one (*fresh set), or NULL (no memory). */
static seen *find(pp_readwall *w, pid_t pid, pid_t tid, int *fresh)
{
    uint64_t h = pp__hash(&tid, sizeof(tid), (uint64_t)pid);
    pp_htab_iter it;
    uint32_t *slot;

    *fresh = 0;
    for (slot = pp__htab_first(&w->index, h, &it); slot; slot = pp__htab_next(&w->index, h, &it))
        if (w->t[*slot].pid == pid && w->t[*slot].tid == tid)
            return &w->t[*slot];
    if (pp__grow((void **)&w->t, &w->cap, w->n + 1, sizeof(*w->t)) < 0 ||
        pp__htab_insert(&w->index, h, (uint32_t)w->n) < 0)
        return NULL;
    *fresh = 1;
    memset(&w->t[w->n], 0, sizeof(w->t[w->n]));
    w->t[w->n].pid = pid;
    w->t[w->n].tid = tid;
    return &w->t[w->n++];
}

static void put(pp_readwall_part *parts, int *n, uint64_t ns, int wait, uint64_t *at)
{
    if (!ns)
        return;
    *at += ns;
    parts[(*n)++] = (pp_readwall_part){ns, *at, wait};
}

int pp__readwall_parts(pp_readwall *w, pid_t pid, pid_t tid, uint64_t now_ns, uint64_t gil,
                       uint64_t gil_size, pp_readwall_part parts[3])
{
    pp_offcpu cur;
    pp_offcpu_split sp;
    uint64_t at;
    int fresh, rc, n = 0, reason;
    seen *s;

    if ((rc = pp_offcpu_read(pid, tid, &cur)) != 0)
        return rc;
    if (!(s = find(w, pid, tid, &fresh)))
        return -ENOMEM;
    if (!fresh && now_ns > s->at_ns) {
        pp_offcpu_split_of(&s->last, &cur, now_ns - s->at_ns, &sp);
        /* the wait it is in now, else the one that ended since */
        reason = pp_offcpu_reason(pp_offcpu_blocked(&cur) || !pp_offcpu_blocked(&s->last)
                                  ? &cur : &s->last, gil, gil_size);
        at = s->at_ns;
        if (pp_offcpu_blocked(&s->last)) {      /* woken, waited for a CPU, ran */
            put(parts, &n, sp.blocked_ns, reason, &at);
            put(parts, &n, sp.runq_ns, PP_WAIT_CPU, &at);
            put(parts, &n, sp.cpu_ns, PP_WAIT_NONE, &at);
        } else {                                /* ran (between turns), then blocked */
            put(parts, &n, sp.runq_ns, PP_WAIT_CPU, &at);
            put(parts, &n, sp.cpu_ns, PP_WAIT_NONE, &at);
            put(parts, &n, sp.blocked_ns, reason, &at);
        }
    }
    s->last = cur;
    s->at_ns = now_ns;
    return n;
}

uint64_t pp__readwall_gil(const pp_mem *m, const pp_py_offsets *o, uint64_t runtime)
{
    uint64_t interp = 0, gil = 0;

    if (o->gil_size <= 0)
        return 0;
    if (o->gil_runtime >= 0)
        return runtime + (uint64_t)o->gil_runtime;
    if (o->gil_interp < 0 || pp_mem_u64(m, runtime, o->runtime_interpreters_head, &interp) != 0 ||
        !interp || pp_mem_u64(m, interp, o->gil_interp, &gil) != 0)
        return 0;
    return gil;
}

int pp__readwall_holder(const pp_mem *m, const pp_py_offsets *o, uint64_t gil,
                        uint64_t *holder)
{
    int32_t locked = 0;
    int rc;

    *holder = 0;
    if (!gil || o->gil_locked < 0 || o->gil_last_holder < 0)
        return -ENOTSUP;
    if ((rc = pp_mem_read(m, gil + (uint64_t)o->gil_locked, &locked, sizeof(locked))) != 0 ||
        (rc = pp_mem_u64(m, gil, o->gil_last_holder, holder)) != 0)
        return rc;
    if (!locked)
        *holder = 0;
    return 0;
}
