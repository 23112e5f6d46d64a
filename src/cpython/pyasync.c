/*
 * asyncio's task graph, read from outside (see pyasync.h for the picture).
 *
 * Everything read is the program's memory, changing under the reader: every
 * walk is bounded (tasks, frames, awaiters, a set's table), a list is
 * followed only while each node's neighbour links back to it, and a read
 * that failed or saw a list change under it is made again.
 */
#include "pyasync.h"
#include "pyread.h"
#include "profile/htab.h"
#include "refuse.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_OFFSET (1u << 20)        /* no structure is this large */
#define TASK_BYTES 4096              /* a task object read at once: at most this */
#define SET_SLOTS 4096               /* a set's slots looked at */
#define AGAIN_US 2000                /* between two reads of a graph */

/* ---- the offsets -------------------------------------------------------- */

int pp_pyasync_offsets_from(const void *bytes, size_t n, pp_pyasync_offsets *out, char *why,
                            size_t len)
{
    static const char *const names[] = {
        "task size", "task_name", "task_awaited_by", "task_is_task", "task_awaited_by_is_set",
        "task_coro", "task_node", "interpreter size", "its asyncio_tasks_head",
        "thread state size", "asyncio_running_loop", "asyncio_running_task",
        "asyncio_tasks_head"};
    uint64_t v[13];
    pp_pyasync_offsets *a = out;

    if (n < PP_PYASYNC_DEBUG_SIZE)
        return pp__refuse(why, len, -ENOTSUP, "its AsyncioDebug section holds %zu bytes, not the "
                          "%d of the CPython versions perfpy knows (3.14, 3.15)", n,
                          PP_PYASYNC_DEBUG_SIZE);
    memcpy(v, bytes, sizeof(v));
    for (size_t i = 0; i < 13; i++)
        if (v[i] >= MAX_OFFSET)
            return pp__refuse(why, len, -ENOTSUP, "its AsyncioDebug section gives %s as %llu, "
                              "past any structure", names[i], (unsigned long long)v[i]);
    *a = (pp_pyasync_offsets){(int32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3],
                              (int32_t)v[4], (int32_t)v[5], (int32_t)v[6], (int32_t)v[7],
                              (int32_t)v[8], (int32_t)v[9], (int32_t)v[10], (int32_t)v[11],
                              (int32_t)v[12]};
    if (a->task_size > TASK_BYTES || a->task_name + 8 > a->task_size ||
        a->task_awaited_by + 8 > a->task_size || a->task_is_task >= a->task_size ||
        a->task_awaited_by_is_set >= a->task_size || a->task_coro + 8 > a->task_size ||
        a->task_node + 16 > a->task_size || a->interp_tasks_head + 16 > a->interp_size ||
        a->tstate_running_loop + 8 > a->tstate_size ||
        a->tstate_running_task + 8 > a->tstate_size ||
        a->tstate_tasks_head + 16 > a->tstate_size)
        return pp__refuse(why, len, -ENOTSUP, "its AsyncioDebug section places a field past the "
                          "end of its structure (a task of %d bytes, a thread state of %d)",
                          a->task_size, a->tstate_size);
    return 0;
}

/* ---- one task ------------------------------------------------------------- */

static uint64_t u64_at(const unsigned char *b, int32_t off)
{
    uint64_t v;

    memcpy(&v, b + off, sizeof(v));
    return v;
}

static uint64_t rd(const pp_mem *m, uint64_t addr, int32_t off)
{
    uint64_t v = 0;

    if (pp_mem_u64(m, addr, off, &v) != 0)
        return 0;
    return v;
}

int pp_pyasync_task_name(const pp_pyobj *r, uint64_t name, char *out, size_t len)
{
    int64_t n;

    if (pp_pyobj_int(r, name, &n) == 0) {
        snprintf(out, len, "Task-%lld", (long long)n);
        return 1;
    }
    if (pp_pyread_str(r->m, r->o, name, r->t.str_type, out, len))
        return 1;
    snprintf(out, len, "?");
    return 0;
}

void pp_pyasync_name_copy(const pp_py_offsets *o, const pp_pyobj_types *t, uint64_t type,
                          const void *copy, size_t n, char *out, size_t len)
{
    int64_t v;

    if (type && type == t->int_type && pp_pyobj_int_copy(o, copy, n, &v) == 0)
        snprintf(out, len, "Task-%lld", (long long)v);
    else if (!type || type != t->str_type)
        snprintf(out, len, "?");
    else if (pp_pyread_str_copy(o, copy, n, out, len) == 2 && strlen(out) + 4 < len)
        strcat(out, "...");                  /* longer than the copy */
}

/* What the suspended coroutine whose frame is at frame awaits: the object
 * yf_depth slots below the top of its value stack. */
static uint64_t awaited(const pp_mem *m, const pp_py_offsets *o, uint64_t frame)
{
    uint64_t slot, v;
    int32_t top;

    if (o->frame_stack < 0 || o->gen_yf_depth < 1)
        return 0;
    if (o->frame_stack_kind == PP_STACK_POINTER) {
        slot = rd(m, frame, o->frame_stack) - 8 * (uint64_t)o->gen_yf_depth;
    } else {
        if (pp_mem_read(m, frame + (uint64_t)o->frame_stack, &top, sizeof(top)) != 0 ||
            top < o->gen_yf_depth || top > 4096 || o->frame_localsplus < 0)
            return 0;
        slot = frame + (uint64_t)o->frame_localsplus + 8 * (uint64_t)(top - o->gen_yf_depth);
    }
    v = rd(m, slot, 0);
    return v & ~(uint64_t)(uint32_t)o->frame_code_tag_mask;      /* 3.14+: a tagged reference */
}

/* A suspended task's coroutines, outermost first from coro, into t (the
 * caller turns them innermost first), and what the innermost awaits. */
static void coro_chain(const pp_pyobj *r, const pp_pyasync_types *ty, uint64_t coro,
                       pp_pyasync_task *t)
{
    const pp_mem *m = r->m;
    const pp_py_offsets *o = r->o;

    for (size_t hop = 0; coro && hop < 4 * PP_PYASYNC_DEPTH; hop++) {
        uint64_t type = rd(m, coro, o->object_type), frame;
        uint8_t state = 0;

        if (type != ty->coro && type != ty->gen) {
            if (pp_pyobj_type_name(r, coro, t->awaits, sizeof(t->awaits)) != 0)
                snprintf(t->awaits, sizeof(t->awaits), "?");
            return;
        }
        if (o->gen_frame_state < 0 || o->gen_iframe < 0 ||
            pp_mem_read(m, coro + (uint64_t)o->gen_frame_state, &state, 1) != 0 ||
            state == (uint8_t)o->gen_state_cleared)
            return;
        frame = coro + (uint64_t)o->gen_iframe;
        if (t->nframes == PP_PYASYNC_DEPTH) {
            t->frames_cut = 1;
            return;
        }
        if (pp_pystack_frame_at(m, o, frame, &t->f[t->nframes]) == 1)
            t->nframes++;
        if (o->gen_state_yield_from < 0 || state != (uint8_t)o->gen_state_yield_from)
            return;                  /* at a plain yield, not started, or running */
        coro = awaited(m, o, frame);
    }
}

static void reverse(pp_pystack_frame *f, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        pp_pystack_frame x = f[i];

        f[i] = f[n - 1 - i];
        f[n - 1 - i] = x;
    }
}

/* The running task's coroutines: its thread's frames from the top down to
 * the one inside its coroutine object (the thread's walk th). 1 when that
 * frame was found. */
static int running_frames(const pp_py_offsets *o, const pp_pystack_thread *th, uint64_t coro,
                          pp_pyasync_task *t)
{
    uint64_t own = coro + (uint64_t)o->gen_iframe;

    for (size_t i = 0; i < th->n; i++)
        if (th->f[i].frame == own) {
            t->nframes = i + 1 < PP_PYASYNC_DEPTH ? i + 1 : PP_PYASYNC_DEPTH;
            t->frames_cut = i + 1 > PP_PYASYNC_DEPTH;
            memcpy(t->f, th->f, t->nframes * sizeof(t->f[0]));
            return 1;
        }
    return 0;
}

static void add_awaiter(pp_pyasync_task *t, uint64_t addr)
{
    if (t->nawaiters == PP_PYASYNC_AWAITERS)
        t->awaiters_cut = 1;
    else
        t->awaiter[t->nawaiters++] = addr;
}

/* task_awaited_by: one task, or a set of them (slots of key and hash; an
 * empty slot's key is NULL, a deleted one's hash -1). */
static void awaiters(const pp_mem *m, const pp_py_offsets *o, uint64_t by, int is_set,
                     pp_pyasync_task *t)
{
    uint64_t used = rd(m, by, o->set_used), mask = rd(m, by, o->set_mask);
    uint64_t table = rd(m, by, o->set_table), slot[2 * 64];

    if (!by)
        return;
    if (!is_set) {
        add_awaiter(t, by);
        return;
    }
    if (!table || mask >= SET_SLOTS || used > mask + 1)
        return;
    for (uint64_t i = 0; i <= mask && t->nawaiters < used; i += 64) {
        uint64_t k = mask + 1 - i < 64 ? mask + 1 - i : 64;

        if (pp_mem_read(m, table + 16 * i, slot, 16 * k) != 0)
            return;
        for (uint64_t j = 0; j < k; j++)
            if (slot[2 * j] && (int64_t)slot[2 * j + 1] != -1)
                add_awaiter(t, slot[2 * j]);
    }
}

/* One task at addr (its object's bytes in b). */
static void one_task(const pp_pyobj *r, const pp_pyasync_offsets *a,
                     const pp_pyasync_types *ty, uint64_t addr, const unsigned char *b,
                     const pp_pystack_thread *th, uint64_t running, pp_pyasync_task *t)
{
    const pp_mem *m = r->m;
    const pp_py_offsets *o = r->o;
    uint64_t coro = u64_at(b, a->task_coro);

    memset(t, 0, offsetof(pp_pyasync_task, f));
    t->awaits[0] = '\0';
    t->nawaiters = 0;
    t->awaiters_cut = 0;
    t->addr = addr;
    t->tstate = th ? th->tstate : 0;
    t->tid = th ? th->tid : 0;
    t->running = running && running == addr;
    pp_pyasync_task_name(r, u64_at(b, a->task_name), t->name, sizeof(t->name));
    if (!(t->running && th && running_frames(o, th, coro, t))) {
        coro_chain(r, ty, coro, t);
        reverse(t->f, t->nframes);
    }
    awaiters(m, o, u64_at(b, a->task_awaited_by), b[a->task_awaited_by_is_set], t);
}

/* ---- the graph ------------------------------------------------------------ */

static pp_pyasync_task *next_slot(pp_pyasync_graph *g)
{
    if (pp__grow((void **)&g->t, &g->cap, g->n + 1, sizeof(*g->t)) < 0)
        return NULL;
    return &g->t[g->n];
}

/* The tasks of the list whose head node is at head: 0, -EAGAIN (it changed
 * under the reader: a node whose neighbour does not link back), -ENOMEM. */
static int read_list(const pp_pyobj *r, const pp_pyasync_offsets *a,
                     const pp_pyasync_types *ty, uint64_t head, const pp_pystack_thread *th,
                     uint64_t running, pp_pyasync_graph *g)
{
    const pp_mem *m = r->m;
    const pp_py_offsets *o = r->o;
    unsigned char b[TASK_BYTES];
    uint64_t prev = head, node = rd(m, head, o->llist_next);

    while (node && node != head) {
        uint64_t addr = node - (uint64_t)a->task_node;
        pp_pyasync_task *t;

        if (g->n == PP_PYASYNC_TASKS) {
            g->truncated = 1;
            return 0;
        }
        if (pp_mem_read(m, addr, b, (size_t)a->task_size) != 0 ||
            u64_at(b, a->task_node + o->llist_prev) != prev)
            return -EAGAIN;
        if (!(t = next_slot(g)))
            return -ENOMEM;
        one_task(r, a, ty, addr, b, th, running, t);
        g->n++;
        prev = node;
        node = u64_at(b, a->task_node + o->llist_next);
    }
    return node ? 0 : -EAGAIN;
}

/* Every list once: each thread's (threads th[0..nth)), then the
 * interpreter's. */
static int read_once(const pp_pyobj *r, const pp_pyasync_offsets *a,
                     const pp_pyasync_types *ty, uint64_t runtime, int tid_off,
                     pp_pystack_thread *th, pp_pyasync_graph *g)
{
    const pp_mem *m = r->m;
    const pp_py_offsets *o = r->o;
    int nth = pp_pystack_read(m, o, runtime, tid_off, th, PP_PYSTACK_THREADS), rc;
    uint64_t interp = rd(m, runtime, o->runtime_interpreters_head);

    g->n = 0;
    g->truncated = 0;
    if (nth < 0)
        return nth;
    if (!interp || o->llist_next < 0 || o->llist_prev < 0)
        return -EFAULT;
    for (int i = 0; i < nth; i++) {
        uint64_t ts = th[i].tstate;
        uint64_t running = rd(m, ts, a->tstate_running_loop) ?
                           rd(m, ts, a->tstate_running_task) : 0;

        if ((rc = read_list(r, a, ty, ts + (uint64_t)a->tstate_tasks_head, &th[i], running,
                            g)) != 0)
            return rc;
    }
    return read_list(r, a, ty, interp + (uint64_t)a->interp_tasks_head, NULL, 0, g);
}

static int same_frames(const pp_pyasync_task *x, const pp_pyasync_task *y)
{
    if (x->nframes != y->nframes)
        return 0;
    for (size_t i = 0; i < x->nframes; i++)
        if (x->f[i].frame != y->f[i].frame || x->f[i].id.code != y->f[i].id.code ||
            x->f[i].instr != y->f[i].instr)
            return 0;
    return 1;
}

static int same_graph(const pp_pyasync_graph *x, const pp_pyasync_graph *y)
{
    if (x->n != y->n || x->truncated != y->truncated)
        return 0;
    for (size_t i = 0; i < x->n; i++) {
        const pp_pyasync_task *p = &x->t[i], *q = &y->t[i];

        if (p->addr != q->addr || p->running != q->running || strcmp(p->name, q->name) ||
            strcmp(p->awaits, q->awaits) || p->nawaiters != q->nawaiters ||
            memcmp(p->awaiter, q->awaiter, p->nawaiters * sizeof(p->awaiter[0])) ||
            !same_frames(p, q))
            return 0;
    }
    return 1;
}

/* Whether any thread of pid runs: each one's state and context switches
 * (/proc/PID/task/TID/status) summed into *sig; 1 when every thread is off
 * the CPU. */
static int asleep(pid_t pid, uint64_t *sig)
{
    char path[96], line[256];
    struct dirent *d;
    DIR *dir;
    int all = 1;

    *sig = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(dir = opendir(path)))
        return 0;
    while ((d = readdir(dir)) != NULL) {
        FILE *f;

        if (d->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%.20s/status", (int)pid, d->d_name);
        if (!(f = fopen(path, "r"))) {
            all = 0;
            continue;
        }
        *sig = *sig * 31 + strtoull(d->d_name, NULL, 10);
        while (fgets(line, sizeof(line), f)) {
            if (strncmp(line, "State:", 6) == 0 && strchr(line, 'R'))
                all = 0;
            else if (strstr(line, "ctxt_switches:"))
                *sig = *sig * 1000003 + strtoull(strchr(line, ':') + 1, NULL, 10);
        }
        fclose(f);
    }
    closedir(dir);
    return all;
}

int pp_pyasync_read(const pp_pyobj *r, const pp_pyasync_offsets *a,
                    const pp_pyasync_types *ty, uint64_t runtime, int tid_off, int tries,
                    pp_pyasync_graph *g)
{
    const pp_mem *m = r->m;
    pp_pystack_thread *th = calloc(PP_PYSTACK_THREADS, sizeof(*th));
    pp_pyasync_graph other = {0}, *cur = g, *prev = &other, *x, swap;
    int rc = -EFAULT, reads, have_prev = 0, consistent = 0, quiet = 0;

    if (!th)
        return -ENOMEM;
    for (reads = 1; reads <= tries; reads++) {
        uint64_t before, after;
        int still = asleep(m->pid, &before);

        rc = read_once(r, a, ty, runtime, tid_off, th, cur);
        still = still && asleep(m->pid, &after) && after == before;
        if (rc == -ESRCH || rc == -EPERM || rc == -ENOMEM)
            break;
        if (rc == 0 && (still || (have_prev && same_graph(prev, cur)))) {
            consistent = 1;
            quiet = still;
            break;
        }
        if (rc == 0) {               /* kept, to compare the next read with */
            x = cur;
            cur = prev;
            prev = x;
            have_prev = 1;
        }
        if (reads < tries)
            usleep(AGAIN_US);
    }
    /* the result: the read that settled, else the last whole one (marked) */
    x = consistent || !have_prev ? cur : prev;
    if (x != g) {
        swap = *g;
        *g = *x;
        *x = swap;
    }
    if (!consistent && have_prev)
        rc = 0;
    g->reads = reads > tries ? tries : reads;
    g->consistent = consistent;
    g->quiet = quiet;
    free(other.t);
    free(th);
    return rc == -EAGAIN ? -EFAULT : rc;
}

const pp_pyasync_task *pp_pyasync_find_task(const pp_pyasync_graph *g, uint64_t addr)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->t[i].addr == addr)
            return &g->t[i];
    return NULL;
}

void pp_pyasync_graph_free(pp_pyasync_graph *g)
{
    free(g->t);
    memset(g, 0, sizeof(*g));
}
