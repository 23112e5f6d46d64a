// SPDX-License-Identifier: GPL-2.0
/*
 * Wall-clock mode's task iterator (included at the end of wall.bpf.c, whose
 * thread state and captures it uses): the threads a switch program cannot
 * see, those already blocked when perfpy attaches and the stretches still
 * open when the recording ends; and perfpy dump's one pass over a target's
 * threads off the CPU.
 */

/* Run by user space over a target's threads (a task iterator): at attach
 * (iter_end 0), each thread blocked now is captured, its stretch open from
 * now; at the end (iter_end 1), each stretch still open is closed now. */
SEC("iter.s/task")
int pp_iter_threads(struct bpf_iter__task *ctx)
{
    struct task_struct *task = ctx->task;
    struct pp_bpf_thread *th;
    struct pp_bpf_target *t;
    __u64 now, d, block, runq;
    __u32 tgid, state;

    if (!task || (task->flags & PF_EXITING_FLAG))
        return 0;
    tgid = task->tgid;
    if (!(t = bpf_map_lookup_elem(&targets, &tgid)))
        return 0;
    now = bpf_ktime_get_ns();
    state = task->__state;
    if (!iter_end) {
        if (state == TASK_RUNNING_STATE || !(th = thread_of(task, 1)) || th->out_ns ||
            !capture_open(ctx, task, state, 1))
            return 0;               /* running, already seen to stop, or no room */
        th->out_ns = now;
        th->out_cpu = cpu_of(task);
        /* (its run queue's clock, behind if that CPU has not scheduled
         * for a while: a wait for a CPU at the end of this first stretch
         * may then count as blocked) */
        keep_waits(th, task, rq_clock_of(task));
        th->state = state;
        th->outside = 0;
        th->open_p = CERTAIN;       /* its end record weighs it */
        return 0;
    }
    if (!(th = thread_of(task, 0)) || !th->out_ns)
        return 0;
    if (iter_until && iter_until < now)
        now = iter_until;
    d = now > th->out_ns ? now - th->out_ns : 0;
    split(th, task, d, &block, &runq);
    if (th->open_p) {
        send_end(task, scaled(block, th->open_p), scaled(runq, th->open_p));
    } else if (!th->outside || have_task_work()) {
        /* still off the CPU: captured now, for all of it (and what an
         * earlier stretch of the same system call left waiting) */
        pend(th, task, block, runq, 1);
        capture_done(th, task, t, 1, 0);
    }
    th->out_ns = 0;
    th->open_p = 0;
    /* counted up to now: if the recording goes on (perfpy top cuts the
     * waits at each interval), a thread still runnable is off the CPU
     * from now, as if it had run until now */
    set_running(th, task, now, cpu_of(task));
    return 0;
}

/* perfpy dump's iterator (collect.c's pp_collect_snapshot): each thread of
 * a target off the CPU (blocked, or preempted: its user registers saved)
 * captured as it is, once across the passes user space makes (out_ns
 * marks it: no switch is followed then); a thread on a CPU is left to its
 * cpu-clock sample. A program of its own, the only iterator a dump loads:
 * pp_iter_threads inlines the Python reader twice (its capture as a
 * stretch opens and as one closes), twice the verifier's time. */
SEC("iter.s/task")
int pp_iter_snapshot(struct bpf_iter__task *ctx)
{
    struct task_struct *task = ctx->task;
    struct pp_bpf_thread *th;
    __u32 tgid;

    if (!task || (task->flags & PF_EXITING_FLAG))
        return 0;
    tgid = task->tgid;
    if (!bpf_map_lookup_elem(&targets, &tgid) || task->on_cpu || !(th = thread_of(task, 1)) ||
        th->out_ns || !capture_open(ctx, task, task->__state, 1))
        return 0;                   /* running, already taken, or no room */
    th->out_ns = bpf_ktime_get_ns();
    return 0;
}
