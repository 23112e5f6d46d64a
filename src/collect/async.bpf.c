// SPDX-License-Identifier: GPL-2.0
/*
 * sample.bpf.c's asyncio part (record --async; included by it): at a sample
 * of a thread that runs an asyncio task (CPython 3.14+: its thread state's
 * asyncio_running_task), that task and the chain of tasks awaiting it, read
 * while the thread is stopped in the sample, so the chain is the one of
 * that moment (user space reads the names later from these bytes, never
 * from the program's memory, where the task may be gone):
 *
 *   thread ── running task: name ──────────────────────────► tasks[0]
 *             its coroutines: the thread's own frames, down to
 *             the frame inside its coroutine (py[task_frame])
 *   awaited by ─► task: name, its coroutines, each suspended ──► tasks[1],
 *             in an await of the next (a frame each, into py[]   py[npy..]
 *             after the thread's), down to what the last awaits
 *   awaited by ─► ... until a task no task awaits (a root)
 *
 * A task awaited by several (a set: shield, two awaits of one task) is
 * followed through the first of them; the record says so. Where each field
 * is comes from CPython itself (_asyncio's AsyncioDebug section and
 * _Py_DebugOffsets, through user space: pp_bpf_async).
 */

/* The readers take (tk, sl) as rd_t does: the thread's own memory in a
 * sample or a tracepoint, another's from the task iterator (sleepable),
 * each bpf_loop body compiled once for each. */
static __always_inline __u64 running_task(const struct pp_bpf_async *a, __u64 ts,
                                          struct task_struct *tk, int sl)
{
    if (!rd_t(ts, a->tstate_running_loop, tk, sl))
        return 0;
    return rd_t(ts, a->tstate_running_task, tk, sl);
}

/* What the walks keep between two calls of their bpf_loop bodies: in a
 * per-CPU map, not on the stack, so that the verifier does not follow each
 * count's exact value through every call (it did: it never saw the state
 * settle, and gave up). Slot 0 is for samples, 1 for tracepoints (a sample
 * may interrupt one), 2 for the task iterator (it may sleep, and a
 * tracepoint run on its CPU meanwhile). The stacks are read one after the other in one
 * bpf_loop: the running task's, then those of the waiting tasks chosen. */
struct ascratch {
    __u64 task;                     /* the task being read */
    __u64 coro;                     /* its coroutine being read; 0: the task itself */
    __u32 ti;                       /* its entry in s->tasks */
    __u32 first;                    /* the stack's first entry */
    __u32 n;                        /* the next free py[] */
    __u32 coros;                    /* read the next task's coroutines (not the
                                       running one's: they are the thread's frames) */
    __u32 first_flags;              /* the first entry's PP_BPF_TASK_* */
    __u32 nstarts, next;            /* stacks to read; the next one */
    __u32 running;                  /* starts[0] is the running task */
    __u32 done;                     /* nothing more to read */
    __u32 count;                    /* waiting tasks seen */
    __u64 node, head;               /* the walk over the thread's tasks */
    __u64 starts[8];                /* each stack's first task (1 + CHOSEN of them) */
    __u64 chosen[PP_BPF_WAITING_CHOSEN];
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 3);
    __type(key, __u32);
    __type(value, struct ascratch);
} ascratch SEC(".maps");

struct achain {
    const struct pp_bpf_target *t;
    struct pp_bpf_sample *s;
    struct ascratch *x;
    struct task_struct *tk;         /* the thread read (the iterator's) */
};

/* An index the compiler may not reason about: the mask after it stays, and
 * gives the verifier its bound. */
#define OPAQUE(v) asm volatile("" : "+r"(v))

/* The next stack; 1 when none is left. */
static __always_inline long next_stack(struct ascratch *x)
{
    __u32 k = x->next;

    if (k >= x->nstarts || k > PP_BPF_WAITING_CHOSEN || x->ti >= PP_BPF_MAX_TASKS) {
        x->done = 1;
        return 1;
    }
    x->next = k + 1;
    OPAQUE(k);
    x->task = x->starts[k & 7];
    x->coro = 0;
    x->first = x->ti;
    x->coros = !(k == 0 && x->running);
    x->first_flags = x->coros ? PP_BPF_TASK_STACK | PP_BPF_TASK_WAITING : PP_BPF_TASK_STACK;
    return 0;
}

/* The task awaiting task: task_awaited_by, a task or a set of them (slots of
 * key and hash: an empty one's key is NULL, a deleted one's hash -1). */
static __always_inline __u64 awaiter(const struct pp_bpf_async *a, __u64 task,
                                     struct pp_bpf_task *rec, struct task_struct *tk, int sl)
{
    __u64 by = rd_t(task, a->task_awaited_by, tk, sl), table, mask, key;

    if (!by || !rd8_t(task, a->task_awaited_by_is_set, tk, sl))
        return by;
    rec->flags |= PP_BPF_TASK_SET;
    table = rd_t(by, a->set_table, tk, sl);
    mask = rd_t(by, a->set_mask, tk, sl);
    for (int i = 0; i < 8; i++) {
        if ((__u64)i > mask)
            break;
        key = rd_t(table, 16 * i, tk, sl);
        if (key && rd_t(table, 16 * i + 8, tk, sl) != (__u64)-1)
            return key;
    }
    rec->flags |= PP_BPF_TASK_CUT;
    return 0;
}

static __always_inline long next_task(struct achain *c, struct pp_bpf_task *rec, int sl)
{
    struct ascratch *x = c->x;

    x->task = awaiter(&c->t->as, x->task, rec, c->tk, sl);
    x->coro = 0;
    x->ti++;
    if (!x->task) {
        if (!(rec->flags & PP_BPF_TASK_CUT))
            rec->flags |= PP_BPF_TASK_ROOT;
        return next_stack(x);
    }
    return 0;
}

/* A task: its name's bytes; 1 when its stack goes on with its awaiter
 * now (its coroutines are not read: it runs, or has none). */
static __always_inline int task_itself(struct achain *c, struct pp_bpf_task *rec, int sl)
{
    const struct pp_bpf_async *a = &c->t->as;
    struct ascratch *x = c->x;
    __u64 name = rd_t(x->task, a->task_name, c->tk, sl);

    rec->addr = x->task;
    rec->flags = x->ti == x->first ? (__u16)x->first_flags : 0;
    rec->name_type = rd_t(name, a->object_type, c->tk, sl);
    if (!name || read_user(rec->name, sizeof(rec->name), name, c->tk, sl))
        rec->name_type = 0;
    rec->first = (__u16)x->n;
    rec->n = 0;
    rec->awaits = rec->awaits_type = rec->inner_type = 0;
    c->s->ntasks = x->ti + 1;
    x->coro = x->coros ? rd_t(x->task, a->task_coro, c->tk, sl) : 0;
    x->coros = 1;
    return !x->coro;
}

/* One coroutine of the task: its frame; 1 when it awaits no coroutine (the
 * task's stack goes on with its awaiter), 0 when it does, -1 when py[] is
 * full. */
static __always_inline int one_coro(struct achain *c, struct pp_bpf_task *rec, int sl)
{
    const struct pp_bpf_async *a = &c->t->as;
    const struct pp_bpf_offsets *o = &c->t->off;
    struct pp_bpf_sample *s = c->s;
    struct ascratch *x = c->x;
    __u64 type = rd_t(x->coro, a->object_type, c->tk, sl), frame;
    __u32 n = x->n;
    __u8 state;

    if (type != a->coro_type && type != a->gen_type) {
        rec->awaits = x->coro;                 /* a future, a future's iterator */
        rec->awaits_type = type;
        rec->inner_type = rd_t(rd_t(x->coro, a->object_type + 8, c->tk, sl), a->object_type,
                               c->tk, sl);
        return 1;
    }
    state = rd8_t(x->coro, a->gen_frame_state, c->tk, sl);
    if (state == (__u8)a->gen_state_cleared)
        return 1;
    if (n >= PP_BPF_MAX_PY) {
        rec->flags |= PP_BPF_TASK_CUT;
        return -1;
    }
    frame = x->coro + a->gen_iframe;
    put_frame_t(o, &s->py[n & (PP_BPF_MAX_PY - 1)], frame,
                rd_t(frame, o->frame_code, c->tk, sl) & ~(__u64)o->frame_code_tag_mask, c->tk, sl);
    x->n = n + 1;
    rec->n++;
    s->npy_all = n + 1;
    if (state != (__u8)a->gen_state_yield_from)
        return 1;                              /* at a plain yield, or not started */
    /* what it awaits: on its frame's value stack, yf_depth slots below the top */
    x->coro = rd_t(rd_t(frame, a->frame_stack, c->tk, sl) - 8 * (__u64)a->gen_yf_depth, 0,
                   c->tk, sl) & ~(__u64)o->frame_code_tag_mask;
    return 0;
}

/* bpf_loop body: one task, or one of its coroutines. */
static __always_inline long task_step(void *ctx, int sl)
{
    struct achain *c = ctx;
    struct ascratch *x = c->x;
    struct pp_bpf_task *rec;
    int end;

    if (x->done || x->ti >= PP_BPF_MAX_TASKS)
        return 1;
    rec = &c->s->tasks[x->ti & (PP_BPF_MAX_TASKS - 1)];
    end = x->coro ? one_coro(c, rec, sl) : task_itself(c, rec, sl);
    if (end < 0) {
        x->done = 1;                           /* no room for another stack either */
        return 1;
    }
    return end ? next_task(c, rec, sl) : 0;
}

static long task_step_cur(__u32 i, void *ctx) { return task_step(ctx, 0); }
static long task_step_task(__u32 i, void *ctx) { return task_step(ctx, 1); }

/* Wall-clock mode: the tasks of the thread that wait, PP_BPF_WAITING_CHOSEN
 * of them chosen uniformly in one pass over its list (reservoir sampling),
 * each read as a stack of its own. */
static __always_inline long pick_step(void *ctx, int sl)
{
    struct achain *c = ctx;
    struct ascratch *x = c->x;
    __u64 task;
    __u32 k;

    if (!x->node || x->node == x->head)
        return 1;
    task = x->node - c->t->as.task_node;
    if (task != (x->running ? x->starts[0] : 0)) {
        k = x->count++ < PP_BPF_WAITING_CHOSEN ? x->count - 1 : bpf_get_prandom_u32() % x->count;
        if (k < PP_BPF_WAITING_CHOSEN) {
            OPAQUE(k);
            x->chosen[k & (PP_BPF_WAITING_CHOSEN - 1)] = task;
        }
    }
    x->node = rd_t(x->node, c->t->as.llist_next, c->tk, sl);
    return 0;
}

static long pick_step_cur(__u32 i, void *ctx) { return pick_step(ctx, 0); }
static long pick_step_task(__u32 i, void *ctx) { return pick_step(ctx, 1); }

/* slot: ascratch's; tk, sl: as rd_t (the iterator reads another thread). */
static __always_inline void async_tasks(const struct pp_bpf_target *t, struct pp_bpf_sample *s,
                                        __u64 ts, __u64 running, __u32 slot,
                                        struct task_struct *tk, int sl)
{
    struct ascratch *x = bpf_map_lookup_elem(&ascratch, &slot);
    struct achain c = {.t = t, .s = s, .x = x, .tk = tk};

    if (!x)
        return;
    __builtin_memset(x, 0, sizeof(*x));
    x->n = s->npy_all;
    x->running = running != 0;
    if (running)
        x->starts[x->nstarts++ & 7] = running;
    if (t->as.waiting) {
        x->head = ts + t->as.tstate_tasks_head;
        x->node = rd_t(x->head, t->as.llist_next, tk, sl);
        bpf_loop(PP_BPF_WAITING_WALK, sl ? pick_step_task : pick_step_cur, &c, 0);
        s->nwaiting = x->count;
        for (int i = 0; i < PP_BPF_WAITING_CHOSEN; i++)
            if ((__u32)i < x->count) {
                __u32 k = x->nstarts++;

                OPAQUE(k);
                x->starts[k & 7] = x->chosen[i];
            }
    }
    if (!next_stack(x))
        bpf_loop(PP_BPF_MAX_TASKS * 32, sl ? task_step_task : task_step_cur, &c, 0);
}
