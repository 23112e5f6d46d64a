// SPDX-License-Identifier: GPL-2.0
/*
 * Wall-clock mode's captures (included by wall.bpf.c, whose thread state
 * they use): a thread's stack copied as a stretch off the CPU begins, at
 * its system call's end or its resume, and what a capture that found no
 * room costs.
 */
/* ---- the capture ------------------------------------------------------------ */

/* No room in the ring for the capture of th's stretches: counted, with
 * the time they stand for. */
static __always_inline void capture_lost(const struct pp_bpf_thread *th)
{
    count(PP_BPF_N_LOST_CAPTURES);
    count_by(PP_BPF_N_LOST_CAPTURES_NS, th->block_ns + th->runq_ns);
}

/* The record of the sampled stretches waiting in th: kind OFF_CPU, their
 * weights, the kernel stack kept at the first one's end; the rest read
 * now (task's own context, or from outside when sleepable). at_switch: at
 * the end of a switch, made in this CPU's SLOT_SWITCH (sample.bpf.c's
 * slots); elsewhere reserved whole in the ring. */
static __always_inline void capture_done(struct pp_bpf_thread *th, struct task_struct *task,
                                         const struct pp_bpf_target *t, int sleepable,
                                         int at_switch)
{
    struct pp_bpf_sample *s = at_switch && !sleepable ? slot_of(SLOT_SWITCH)
                                                      : bpf_ringbuf_reserve(&events, sizeof(*s), 0);

    if (!s) {
        capture_lost(th);
    } else {
        __builtin_memcpy(s->kips, th->kips, sizeof(s->kips));
        s->nkernel = th->nkernel;
        capture(s, t, task, sleepable, sleepable ? 2 : 1);
        s->time_ns = th->since_ns;      /* the time it stands for began then */
        s->kind = PP_BPF_OFF_CPU;
        s->state = th->pend_state;
        s->block_ns = th->block_ns;
        s->runq_ns = th->runq_ns;
        if (!at_switch || sleepable) {
            count(PP_BPF_N_CAPTURED);
            bpf_ringbuf_submit(s, 0);
        } else if (send_slot(s, 0)) {
            capture_lost(th);
        } else {
            count(PP_BPF_N_CAPTURED);
        }
    }
    th->block_ns = th->runq_ns = 0;
    th->nkernel = 0;
}

/* The same in the thread's own context, if it has stretches waiting (th:
 * its state, looked up by the caller; at_switch: as capture_done). */
static __always_inline void capture_pending(struct pp_bpf_thread *th, struct task_struct *task,
                                            int at_switch)
{
    __u32 tgid = task->tgid;
    struct pp_bpf_target *t;

    if (!th || (!th->block_ns && !th->runq_ns))
        return;
    if ((t = bpf_map_lookup_elem(&targets, &tgid)))
        capture_done(th, task, t, 0, at_switch);
    else
        th->block_ns = th->runq_ns = 0;
}

/* The task work: the thread returns to user mode, its own code not run yet. */
static int on_resume(struct bpf_map *map, void *key, void *value)
{
    struct task_struct *task = bpf_get_current_task_btf();

    if (!(task->flags & PF_EXITING_FLAG))
        capture_pending(thread_of(task, 0), task, 0);
    return 0;
}

/* Asks for on_resume in task as it returns to user mode (it is stopped). */
static __always_inline void capture_on_resume(struct task_struct *task)
{
    struct pp_bpf_work zero = {}, *w;
    __u32 tid = task->pid;
    int rc = -1;

    if (!(w = bpf_map_lookup_elem(&works, &tid))) {
        bpf_map_update_elem(&works, &tid, &zero, BPF_NOEXIST);
        w = bpf_map_lookup_elem(&works, &tid);
    }
    if (!w)
        rc = -1;
    else if (task_work_kfunc == 1)
        rc = bpf_task_work_schedule_resume_impl(task, &w->tw, &works, on_resume, 0);
    else if (task_work_kfunc == 2)
        rc = bpf_task_work_schedule_resume(task, &w->tw, &works, on_resume);
    /* -EBUSY: one asked for before has not run yet; it will take these too */
    if (rc && rc != -16)
        count(PP_BPF_N_LOST_CAPTURES);
}

/* A stack captured as its stretch begins, kind OFF_OPEN, weights to follow
 * in an end record: as a thread stops outside a system call on older
 * kernels (its own context: the kernel stack from ctx), or from outside
 * for a thread already blocked when perfpy attaches (sleepable: the task
 * iterator). 1 captured, 0 not (no room: counted lost). */
static __always_inline int capture_open(void *ctx, struct task_struct *task, __u32 state,
                                        int sleepable)
{
    __u32 tgid = task->tgid;
    struct pp_bpf_target *t = bpf_map_lookup_elem(&targets, &tgid);
    struct pp_bpf_sample *s;
    long k;

    if (!t)
        return 0;
    if (!(s = bpf_ringbuf_reserve(&events, sizeof(*s), 0))) {
        count(PP_BPF_N_LOST_CAPTURES);
        return 0;
    }
    k = sleepable ? bpf_get_task_stack(task, s->kips, sizeof(s->kips), 0)
                  : bpf_get_stack(ctx, s->kips, sizeof(s->kips), 0);
    s->nkernel = k > 0 ? (__u32)((__u64)k / 8) : 0;
    capture(s, t, task, sleepable, sleepable ? 2 : 1);
    s->kind = PP_BPF_OFF_OPEN;
    s->state = state;
    s->block_ns = s->runq_ns = 0;
    count(PP_BPF_N_CAPTURED);
    bpf_ringbuf_submit(s, 0);
    return 1;
}

/* Older kernels: whether a stretch beginning outside a system call is
 * captured as it begins. Its length is not known yet, so with the
 * probability a stretch of the thread's recent length would be sampled
 * with (min(1, length / period)), at least 1/64. In 2^-32, or 0. */
static __always_inline __u64 capture_chance(const struct pp_bpf_thread *th)
{
    __u64 p = th->outside_ns ? (th->outside_ns << 32) / period_ns : CERTAIN;

    p = p > CERTAIN ? CERTAIN : p < CERTAIN / 64 ? CERTAIN / 64 : p;
    return p >= CERTAIN || bpf_get_prandom_u32() < p ? p : 0;
}

/* Sampled stretches waiting in th whose capture can no longer be made:
 * counted, their weight said missing (user space's notes). */
static __always_inline void drop_uncaptured(struct pp_bpf_thread *th)
{
    if (!th->block_ns && !th->runq_ns)
        return;
    count(PP_BPF_N_UNCAPTURED);
    count_by(PP_BPF_N_UNCAPTURED_NS, th->block_ns + th->runq_ns);
    th->block_ns = th->runq_ns = 0;
    th->nkernel = 0;
}
