// SPDX-License-Identifier: GPL-2.0
/*
 * Wall-clock mode's half of the collector (included by sample.bpf.c: one
 * BPF object, the same maps and readers): the time each thread of a target
 * spends off the CPU, with the stack it stopped with, cheaply at each
 * switch and with a whole capture only for the stretches sampled.
 *
 *   sched_switch, it stops      its time, its state (task storage); without
 *                               sched_exit_tp, whether it was in a system
 *                               call
 *   sched_switch, it runs       D = now - stop: blocked until the wake-up,
 *                               then waiting for a CPU (all of it when it was
 *                               preempted). The waiting part is the
 *                               scheduler's own account (sched_info: what it
 *                               added to the thread's run_delay since, and
 *                               the wait in progress from last_queued, by
 *                               the run queue's clock read as it stopped);
 *                               kernels without it: the time of its wake-up,
 *                               from a sched_wakeup program (one more
 *                               program at every wake-up of the machine).
 *                               A thread moved to another CPU while asleep
 *                               (sched_migrate_task, below) is the
 *                               exception: the scheduler's account then
 *                               counts its sleep as a wait for a CPU.
 *                               Sampled with probability
 *                               min(1, D / period), weighing max(D, period):
 *                               unbiased, long waits always and exactly. Its
 *                               kernel stack is taken now (it has not run)
 *   the capture                 in its own context, before it runs its own
 *                               code again: user registers, stack and Python
 *                               frames are as they were when it stopped; the
 *                               system call and its arguments give the reason.
 *                               Kernels with sched_exit_tp (2025 on): at the
 *                               end of the switch, in the thread that runs
 *                               again (its address space loaded, nothing of
 *                               its own run yet), whatever it stopped in; the
 *                               switch's program says on each CPU whom it
 *                               switched to and whether a capture waits, so
 *                               that this end (run at every switch of the
 *                               machine) looks a thread up only then.
 *                               Without it (or PERFPY_SAMPLE_SYS_EXIT=1): in
 *                               a system call, at sys_exit (a program run
 *                               at every system call of the machine, ~120 ns
 *                               each, and every system call on the slow
 *                               path; a task work instead was tried and lost
 *                               captures: asked for at the switch, it can run
 *                               after the thread's return to user mode, at
 *                               its next entry, or never when that is its
 *                               exit: a forked child's last sleep, a
 *                               thread's). Outside one (preempted in user
 *                               code, a page fault): a task work run as it
 *                               returns to user mode
 *                               (bpf_task_work_schedule_resume, Linux 6.18+);
 *                               on older kernels its stack is captured as it
 *                               stops instead, with a probability chosen from
 *                               the thread's recent stretches (the capture is
 *                               the costly part: a producer's consumer
 *                               preempting it 20,000 times a second), each
 *                               weighed by 1 / that probability
 *   task iterator (sleepable)   threads already blocked when perfpy attaches,
 *                               captured from outside then
 *                               (bpf_copy_from_user_task), and stretches still
 *                               open when the recording ends, closed then
 *
 * A thread on a CPU is not always running: a virtual machine's CPU can be
 * taken by the hypervisor for another guest (steal time), and the kernel
 * then runs the thread's clock on (wall time, cpu-clock's samples) but
 * charges it no CPU time (se.sum_exec_runtime, what the program's
 * thread_time and getrusage read: PARAVIRT_TIME_ACCOUNTING; interrupts, with
 * IRQ_TIME_ACCOUNTING, likewise). The run queue's clock minus its task clock
 * counts that time per CPU, so each thread's share of it while it ran is
 * kept, and each sample on the CPU gives it apart (runq_ns: waiting for a
 * CPU, the host's) beside the CPU time. Weighed by CPU time alone, the
 * samples lacked it, and a thread's wall time with them: a program that
 * measures its parts with perf_counter counts it.
 *
 * The scheduler's tracepoint does not report every switch here (about 0.3%
 * of them go unseen on this machine's kernel, with a trivial program too),
 * so each stretch is also measured from the thread's own CPU time, which
 * the scheduler keeps whatever is traced: a stretch whose start or end went
 * unseen is still closed with its length, and counted.
 */

#define TASK_RUNNING_STATE 0
#define TASK_RTLOCK_WAIT_STATE 0x00001000
#define PF_EXITING_FLAG 0x00000004
#define PF_KTHREAD_FLAG 0x00200000      /* the idle tasks too */
#define CERTAIN (1ull << 32)            /* probability 1, in 2^-32 */
/* se.sum_exec_runtime lags what a running thread ran by a tick at most */
#define TICK_LAG_NS 10000000ull

/* What is known of a thread of a target between its switches. */
struct pp_bpf_thread {
    __u64 out_ns, out_cpu;          /* last seen to stop running (0: running),
                                       and its CPU time (se.sum_exec_runtime) then */
    __u64 in_ns, in_cpu;            /* last seen to start running, the same */
    __u64 sample_cpu;               /* its CPU time at its last sample (0: none) */
    __u64 in_unch;                  /* its CPU's time uncharged (uncharged_of) then */
    __u64 unch;                     /* time uncharged while it ran, to its last stop */
    __u64 sample_unch;              /* the same, up to its last sample */
    __u64 wake_ns;                  /* woken since it stopped (0: not yet; kernels
                                       without sched_info only) */
    __u64 out_rq, out_delay;        /* as it stopped: its run queue's clock and
                                       its sched_info.run_delay */
    __u64 moved_ns;                 /* moved to another CPU since, asleep (0: not;
                                       see pp_on_migrate) */
    __u64 block_ns, runq_ns;        /* sampled stretches waiting for their capture */
    __u64 since_ns;                 /* when the first of them began */
    __u64 open_p;                   /* older kernels: its stack was captured as it
                                       stopped (OFF_OPEN), with this probability
                                       (0: not captured) */
    __u64 outside_ns;               /* older kernels: the recent length of its
                                       stretches outside a system call */
    __u32 state;                    /* its state when it stopped */
    __u32 outside;                  /* it stopped outside a system call */
    __u32 nkernel;
    __u32 pend_state;               /* the state of the stretch their blocked part
                                       comes from (their reason's) */
    __u64 kips[PP_BPF_MAX_KERNEL];  /* the kernel stack of the first of them */
};

struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct pp_bpf_thread);
} threads SEC(".maps");

/* What the switch program last did on each CPU (resume_ok): the thread it
 * switched to, and whether that thread has a capture to make as it runs
 * again. The program at the switch's end reads it instead of looking the
 * thread up (that end runs at every switch of the machine): only a thread
 * with a capture, or whose switch the first program did not see, is
 * looked up there. */
struct pp_bpf_cpu_switch {
    __u32 next_tid;
    __u32 capture;
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pp_bpf_cpu_switch);
} cpu_switch SEC(".maps");

/* A thread's task work (its own map value, as the kfunc wants). */
struct pp_bpf_work {
    struct bpf_task_work tw;
};

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32);                     /* tid */
    __type(value, struct pp_bpf_work);
} works SEC(".maps");

typedef int (*pp_work_fn)(struct bpf_map *map, void *key, void *value);
/* Linux 6.18 names it _impl; later kernels drop the last argument */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
                                              struct bpf_task_work *tw, void *map__map,
                                              pp_work_fn callback, void *aux__prog) __weak __ksym;
extern int bpf_task_work_schedule_resume(struct task_struct *task, struct bpf_task_work *tw,
                                         void *map__map, pp_work_fn callback) __weak __ksym;

/* Set by user space before it runs the task iterator at the end; and the
 * recording's end when it came late (attached for a duration that user
 * space overran: the stretches still open end with the duration). */
volatile __u32 iter_end = 0;
volatile __u64 iter_until = 0;

/* Wall-clock mode: the time off the CPU around switches the tracepoint did
 * not report, whose stack could not be had (user space reads it). */
__u64 missed_ns = 0;

/* Whether the waits for a CPU come from the scheduler's sched_info (1) or
 * from a sched_wakeup program (0: a kernel without it, or asked). */
const volatile __u32 sched_info_ok = 0;

/* A queueing of a thread moved while asleep that comes this soon after the
 * move is the move's own (the kernel queues it on the new CPU right after
 * the tracepoint), not its wake-up's. */
#define MOVED_SLACK_NS 1000000ull

/* Benchmarks only (bench/wall.py --floor, PERFPY_BENCH_WALL=empty or
 * =switch): the programs at every switch and at its end (or every system
 * call's end) return at once, attached all the same (=switch: the first
 * alone), so that what their attachment costs the program is measured
 * apart from their work. The profile is then wrong. The verifier drops the
 * test when it is 0. */
const volatile __u32 bench_empty = 0;

/* Which of the two the kernel has (user space looks in its BTF before
 * loading: the verifier refuses a test of both addresses at once): 0 none,
 * 1 the _impl one, 2 the other. */
const volatile __u32 task_work_kfunc = 0;

/* Whether the kernel has the tracepoint at the end of a switch, in the
 * thread that runs again (sched_exit_tp, kernels from 2025 on): every capture is
 * made there, whatever the thread stopped in; else at sys_exit inside a
 * system call, and outside one as below. */
const volatile __u32 resume_ok = 0;

static __always_inline int have_task_work(void)
{
    return task_work_kfunc != 0;
}

/* task's state, made on its first switch if it belongs to a target. */
static __always_inline struct pp_bpf_thread *thread_of(struct task_struct *task, int create)
{
    struct pp_bpf_thread *th;
    __u32 tgid;

    if (task->flags & PF_KTHREAD_FLAG)
        return 0;                   /* the idle tasks: half the switches, no call */
    th = bpf_task_storage_get(&threads, task, 0, 0);
    if (th || !create)
        return th;
    tgid = task->tgid;
    if (!bpf_map_lookup_elem(&targets, &tgid))
        return 0;
    th = bpf_task_storage_get(&threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!th)
        count(PP_BPF_N_LOST_THREADS);
    return th;
}

/* The task's CPU time: exact while it is off the CPU and at its switches,
 * behind by what it ran since the last tick while it runs. */
static __always_inline __u64 cpu_of(struct task_struct *task)
{
    return task->se.sum_exec_runtime;   /* a BTF pointer: a load, not a helper call */
}

#define ENOSYS_RET (-38L)           /* -ENOSYS: the entry's ax until the call returns */

/* Whether task stopped where no system call's end (sys_exit) comes before
 * it runs its own code again: outside a call (orig_ax is the call's number
 * inside one, < 0 in an interrupt or exception), or in one whose handler
 * has returned (ax holds its result, -ENOSYS until then: x86_64's entry
 * pushes it), on its way back to user mode: exit_to_user_mode_loop's
 * schedule(), a task work. Such a stretch, taken for one inside the call,
 * waited for the next call's end and lent its kernel stack to that call's
 * own wait: beside a CPU hog, 9-27% of wall_parts.py's sleep under
 * exit_to_user_mode_loop or task_work_run, not hrtimer_nanosleep
 * (PERFPY_SAMPLE_SYS_EXIT=1; a call that returns -ENOSYS itself is still
 * taken for one in progress). */
static __always_inline int outside_call(struct task_struct *task)
{
    struct pt_regs *ur;

    if (resume_ok)
        return 0;                   /* captured as it runs again, in or out of one */
    ur = (struct pt_regs *)bpf_task_pt_regs(task);
    return (long)ur->orig_ax < 0 || (long)ur->ax != ENOSYS_RET;
}

/* The time off the CPU since `at`, when the thread's CPU time was `cpu`. */
static __always_inline __u64 off_since(__u64 now, __u64 at, __u64 cpu_now, __u64 cpu)
{
    __u64 wall = now - at, ran = cpu_now > cpu ? cpu_now - cpu : 0;

    return wall > ran ? wall - ran : 0;
}

/* The two parts of a stretch of d ns from th->out_ns: blocked until its
 * wake-up, then runnable (all of it when it never blocked: preempted).
 * The runnable part is what the scheduler counted as task's waits for a
 * CPU since (run_delay grows as each ends) and the wait it is in (since
 * last_queued, on the run queue's clock, which ran alongside ours from
 * th->out_rq at th->out_ns).
 *
 * Except after a move while asleep (th->moved_ns): the scheduler keeps a
 * thread that blocks owing CPU time queued until it is picked or woken
 * (delayed dequeue, Linux 6.12+), and one moved to another CPU meanwhile is
 * queued there as if runnable: last_queued is set then, while it sleeps,
 * and kept through its wake-up, so its whole sleep became a wait for a CPU
 * (a 1.5 s time.sleep beside four GIL-bound threads, 1 run in 8; here the
 * wake-up's time said 30 ms blocked where sched_info said 3 ms). Then
 * only a queueing later than the move is its wake-up's; else the wait for
 * a CPU after it is unknown and counted blocked (a few ms, against a sleep
 * told as a wait). */
static __always_inline void split(const struct pp_bpf_thread *th, struct task_struct *task,
                                  __u64 d, __u64 *block, __u64 *runq)
{
    __u64 wake = th->wake_ns, waited, lq;

    if (th->state == TASK_RUNNING_STATE) {
        *block = 0;
        *runq = d;
        return;
    }
    if (sched_info_ok) {
        waited = th->moved_ns ? 0 : task->sched_info.run_delay - th->out_delay;
        lq = task->sched_info.last_queued;
        if (lq && lq >= th->out_rq && lq - th->out_rq < d &&
            (!th->moved_ns || th->out_ns + (lq - th->out_rq) > th->moved_ns + MOVED_SLACK_NS))
            waited += d - (lq - th->out_rq);
        *runq = waited < d ? waited : d;
        *block = d - *runq;
    } else if (wake > th->out_ns && wake - th->out_ns <= d) {
        *block = wake - th->out_ns;
        *runq = d - *block;
    } else {
        *block = d;
        *runq = 0;
    }
}

/* Keeps, as task stops (or is first seen stopped), what split needs: its
 * run queue's clock now (rq_ns) and its waits for a CPU so far. */
static __always_inline void keep_waits(struct pp_bpf_thread *th, struct task_struct *task,
                                       __u64 rq_ns)
{
    th->wake_ns = 0;
    th->moved_ns = 0;
    if (sched_info_ok) {
        th->out_rq = rq_ns;
        th->out_delay = task->sched_info.run_delay;
    }
}

/* Whether the run queue's clock and task clock can be read (uncharged_of). */
const volatile __u32 uncharged_ok = 0;

/* The time task's CPU spent, while the scheduler's clock ran, charged to
 * no task (its run queue's clock minus its task clock: the hypervisor's
 * steal, and interrupts where the kernel accounts them apart), up to that
 * clock's last update (a tick at most behind); 0 when it cannot be read. */
static __always_inline __u64 uncharged_of(struct task_struct *task)
{
    struct rq *rq;

    if (!uncharged_ok)
        return 0;
    rq = task->se.cfs_rq->rq;
    return rq->clock - rq->clock_task;
}

static __always_inline __u64 sub0(__u64 a, __u64 b)
{
    return a > b ? a - b : 0;
}

/* task is seen to start running at now (its CPU time cpu). */
static __always_inline void set_running(struct pp_bpf_thread *th, struct task_struct *task,
                                        __u64 now, __u64 cpu)
{
    th->in_ns = now;
    th->in_cpu = cpu;
    th->in_unch = uncharged_of(task);
}

/* The clock of task's run queue (reached through its CFS run queue: the
 * per-CPU variable itself has no address in a kernel built without
 * KALLSYMS_ALL): the scheduler updates it as it runs, so at a switch it is
 * now; 0 without sched_info. */
static __always_inline __u64 rq_clock_of(struct task_struct *task)
{
    if (!sched_info_ok)
        return 0;
    return task->se.cfs_rq->rq->clock;
}

/* Whether a stretch of d ns is sampled: with probability min(1, d / period). */
static __always_inline int sampled(__u64 d)
{
    return d >= period_ns || (__u64)bpf_get_prandom_u32() * period_ns < (d << 32);
}

/* x / (p / 2^32), for a stretch captured with probability p (Horvitz-
 * Thompson: unbiased whatever p was, as long as it was chosen before the
 * stretch's length was known). */
static __always_inline __u64 scaled(__u64 x, __u64 p)
{
    if (p >= CERTAIN || !p)
        return x;
    return x / p * CERTAIN + ((x % p) << 32) / p;
}

static __always_inline void send_end(struct task_struct *task, __u64 block, __u64 runq)
{
    struct pp_bpf_wall_end *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

    if (!e) {
        count(PP_BPF_N_LOST_ENDS);
        count_by(PP_BPF_N_LOST_ENDS_NS, block + runq);
        return;
    }
    e->kind = PP_BPF_EV_WALL_END;
    e->pid = task->tgid;
    e->tid = task->pid;
    e->pad = 0;
    e->block_ns = block;
    e->runq_ns = runq;
    submit_quiet(e);
}

#include "wall_capture.bpf.c"

/* ---- the stretches ----------------------------------------------------------- */

/* Adds a sampled stretch's parts to those waiting for their capture. The
 * first keeps its start and its kernel stack (taken now when take_stack:
 * task has not run since); the reason of the blocked part is the state of
 * the stretch it came from, not th->state at the capture: a thread woken
 * can be preempted before its capture runs (at sys_exit, or as it returns
 * to user mode), and that stretch's state (runnable) made a whole wait
 * "waiting for a CPU". */
static __always_inline void pend(struct pp_bpf_thread *th, struct task_struct *task, __u64 block,
                                 __u64 runq, int take_stack)
{
    long k;

    if (!th->block_ns && !th->runq_ns) {
        k = take_stack ? bpf_get_task_stack(task, th->kips, sizeof(th->kips), 0) : 0;
        th->nkernel = k > 0 ? (__u32)((__u64)k / 8) : 0;
        th->since_ns = th->out_ns;
        th->pend_state = th->state;
    } else if (block) {
        th->pend_state = th->state;
    }
    th->block_ns += block;
    th->runq_ns += runq;
}

enum { AT_SWITCH, IN_OWN_CONTEXT };

/* The stretch that began at th->out_ns ends after d ns. Seen at its
 * switch (`at` AT_SWITCH: task is stopped, its kernel stack the one it
 * stopped with) or, when that switch went unseen, in task's own context:
 * then only a stretch inside a system call still has its stack (the task
 * has not left the call). */
static __always_inline void end_stretch(struct pp_bpf_thread *th, struct task_struct *task,
                                        __u64 d, int at)
{
    __u64 block, runq, w;

    split(th, task, d, &block, &runq);
    if (th->outside && !have_task_work()) {
        w = d < period_ns ? d : period_ns;
        th->outside_ns = th->outside_ns ? th->outside_ns - th->outside_ns / 8 + w / 8 : w;
    }
    if (th->open_p) {
        send_end(task, scaled(block, th->open_p), scaled(runq, th->open_p));
    } else if (th->outside && !have_task_work()) {
        /* not captured as it began: the captured ones stand for it */
    } else if (th->outside && at != AT_SWITCH) {
        __sync_fetch_and_add(&missed_ns, d);    /* it ran since: its stack is gone */
    } else if (d && sampled(d)) {
        /* a sampled stretch weighs max(d, period), in its parts' shares */
        if (d < period_ns) {
            w = period_ns;
            block = block * w / d;
            runq = w - block;
        }
        pend(th, task, block, runq, at == AT_SWITCH);
        if (th->outside)
            capture_on_resume(task);
    }
    th->out_ns = 0;
    th->open_p = 0;
    th->outside = 0;
}

static __always_inline void switched_out(void *ctx, struct task_struct *prev, __u32 state,
                                         __u64 now)
{
    struct pp_bpf_thread *th;
    __u64 cpu, d;

    if (prev->flags & PF_EXITING_FLAG)
        return;                     /* its last switch */
    if (!(th = thread_of(prev, 1)))
        return;
    cpu = cpu_of(prev);
    if (th->out_ns) {
        /* its last start went unseen: the stretch before it ends with what
         * it did not run since */
        d = off_since(now, th->out_ns, cpu, th->out_cpu);
        count(PP_BPF_N_MISSED);
        if (th->outside || th->open_p)
            end_stretch(th, prev, d, IN_OWN_CONTEXT);
        else
            __sync_fetch_and_add(&missed_ns, d);    /* it left its call since */
    } else if (th->in_ns) {
        th->unch += sub0(uncharged_of(prev), th->in_unch);    /* its run ends */
    }
    if (resume_ok)
        drop_uncaptured(th);        /* its capture as it ran again went unseen: it
                                       has run its own code since, and the stack
                                       those stretches stopped with is gone */
    count(PP_BPF_N_SWITCHES);
    th->out_cpu = cpu;
    keep_waits(th, prev, rq_clock_of(prev));
    th->state = state;
    th->open_p = 0;
    /* preempted in its own code, or blocked outside a system call (a page
     * fault), or on its way out of one: no system call's end comes before
     * it runs its code again */
    th->outside = outside_call(prev);
    /* the stretch begins when the thread is off the CPU: after a capture,
     * whose time would otherwise weigh only on captured stretches (a bias
     * the weights of rare captures would multiply) */
    if (th->outside && !have_task_work() && (th->open_p = capture_chance(th))) {
        if (!capture_open(ctx, prev, state, 0))
            th->open_p = 0;
        now = bpf_ktime_get_ns();
    }
    th->out_ns = now;
}

/* 1 when next has a capture to make as it runs again. */
static __always_inline int switched_in(struct task_struct *next, __u64 now)
{
    struct pp_bpf_thread *th = thread_of(next, 0);
    __u64 cpu, d;

    if (!th)
        return 0;
    cpu = cpu_of(next);
    if (!th->out_ns && th->in_ns && (d = off_since(now, th->in_ns, cpu, th->in_cpu))) {
        /* its last stop went unseen; it has not run since, so it is treated
         * as if seen then (blocked: the wake-up says until when), except
         * that an older kernel's capture as it stopped never happened */
        count(PP_BPF_N_MISSED);
        th->outside = outside_call(next);
        if (th->outside && !have_task_work()) {
            __sync_fetch_and_add(&missed_ns, d);
        } else {
            th->out_ns = now - d;
            th->state = 1;
            keep_waits(th, next, rq_clock_of(next) - d);
        }
    }
    set_running(th, next, now, cpu);
    if (th->out_ns)
        end_stretch(th, next, now - th->out_ns, AT_SWITCH);
    return th->block_ns || th->runq_ns;
}

/* A thread seen running in its own context (the end of a switch, a
 * system call's end, a sample) while its stretch is open: the switch that
 * ended it went unseen. at_end: the end of a switch or of a system call,
 * where a stretch inside a system call can still be closed with its stack
 * (the thread has not left the call); a sample closes only a stretch
 * outside one. th: its state, looked up by the caller (each lookup is a
 * helper call, and those ends run at every switch or call of the
 * machine). */
static __always_inline void seen_running(struct pp_bpf_thread *th, struct task_struct *task,
                                         int at_end)
{
    __u64 now, cpu;

    if (!th || !th->out_ns || (!th->outside && !at_end))
        return;
    now = bpf_ktime_get_ns();
    cpu = cpu_of(task);
    count(PP_BPF_N_MISSED);
    end_stretch(th, task, off_since(now, th->out_ns, cpu, th->out_cpu), IN_OWN_CONTEXT);
    set_running(th, task, now, cpu);
}

/* A sample of a thread on the CPU: the CPU time it stands for, the
 * thread's since its previous sample (0 for its first: a period), and in
 * *unch the time it was on its CPU uncharged since then (the hypervisor's:
 * uncharged_of). The events are per CPU (collect.c): a sample lands on
 * whichever thread runs there, and a thread whose runs fall in step with
 * the samples (woken with them, or another profiler's) would be sampled
 * more often than the time it runs; weighed by its own CPU time, its
 * samples add up to it whatever the timing. Its CPU time now: as it
 * started running plus the time since, less what went uncharged since
 * (se.sum_exec_runtime lags by what it ran since the last tick). */
static __always_inline __u64 wall_sampled(struct task_struct *task, __u64 *unch)
{
    struct pp_bpf_thread *th = thread_of(task, 1);
    __u64 now, cpu, w, since, total;

    *unch = 0;
    if (!th)
        return 0;
    seen_running(th, task, 0);
    now = bpf_ktime_get_ns();
    since = th->in_ns && !th->out_ns ? sub0(uncharged_of(task), th->in_unch) : 0;
    cpu = th->in_ns && now > th->in_ns ? th->in_cpu + sub0(now - th->in_ns, since)
                                       : cpu_of(task);
    if (cpu > cpu_of(task) + TICK_LAG_NS) {
        /* more than it ran: it stopped and started again unseen (neither
         * switch reported), and the time since in_ns was not all CPU time:
         * off the CPU for the rest, its stack gone (counted missing, not
         * given to this sample as CPU time: a sleep's 40 ms was crunch's) */
        count(PP_BPF_N_MISSED);
        __sync_fetch_and_add(&missed_ns, cpu - cpu_of(task));
        cpu = cpu_of(task);
        th->unch += since;
        since = 0;
        set_running(th, task, now, cpu);
    }
    total = th->unch + since;
    w = !th->sample_cpu ? 0 : cpu > th->sample_cpu ? cpu - th->sample_cpu : 1;
    if (th->sample_cpu) {
        *unch = sub0(total, th->sample_unch);
        count_by(PP_BPF_N_UNCHARGED_NS, *unch);
    }
    th->sample_cpu = cpu;
    th->sample_unch = total;
    return w;
}

/* The sample wall_sampled weighed w (unch uncharged) did not fit in the
 * ring: the thread's CPU time since its previous sample is left to its
 * next one. */
static __always_inline void wall_unsampled(struct task_struct *task, __u64 w, __u64 unch)
{
    struct pp_bpf_thread *th = thread_of(task, 0);

    if (!th)
        return;
    th->sample_cpu = w && th->sample_cpu > w ? th->sample_cpu - w : 0;
    th->sample_unch = sub0(th->sample_unch, unch);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(pp_on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
             unsigned int prev_state)
{
    struct pp_bpf_cpu_switch *seen;
    __u32 zero = 0;
    int capture;
    __u64 now;

    if (bench_empty)
        return 0;
    now = bpf_ktime_get_ns();           /* one clock read for both halves */
    /* preempted as it was going to sleep (its state set, schedule() not
     * reached yet): it stays queued, runnable, and sched_info counts none
     * of that wait (a state other than running queues nothing as it
     * departs); the kernel's own trace says R+. A PREEMPT_RT kernel's
     * wait for a sleeping spinlock is passed as a preemption too: that
     * one blocks */
    switched_out(ctx, prev, preempt && !(prev_state & TASK_RTLOCK_WAIT_STATE) ? TASK_RUNNING_STATE
                                                                          : prev_state, now);
    capture = switched_in(next, now);
    if (resume_ok && (seen = bpf_map_lookup_elem(&cpu_switch, &zero))) {
        seen->next_tid = next->pid;
        seen->capture = (__u32)capture;
    }
    return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(pp_on_wakeup, struct task_struct *p)
{
    struct pp_bpf_thread *th = bench_empty ? 0 : thread_of(p, 0);

    if (th && th->out_ns && !th->wake_ns)
        th->wake_ns = bpf_ktime_get_ns();
    return 0;
}

/* A thread moved to another CPU (set_task_cpu): when it is asleep and still
 * queued (the scheduler's delayed dequeue: its field tells, kernels from
 * 6.12 on), the kernel queues it on the new CPU as if runnable and its
 * sched_info counts the sleep from then as a wait for a CPU (split). One
 * load decides for every other move of the machine; loaded only where the
 * field is and the waits come from sched_info. */
SEC("tp_btf/sched_migrate_task")
int BPF_PROG(pp_on_migrate, struct task_struct *p, int dest_cpu)
{
    struct pp_bpf_thread *th;

    if (bench_empty || !bpf_core_field_exists(p->se.sched_delayed) || !p->se.sched_delayed)
        return 0;
    if ((th = thread_of(p, 0)) && th->out_ns)
        th->moved_ns = bpf_ktime_get_ns();
    return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(pp_on_sys_exit, struct pt_regs *regs, long ret)
{
    struct task_struct *task = bpf_get_current_task_btf();
    struct pp_bpf_thread *th = bench_empty ? 0 : thread_of(task, 0);

    if (th) {
        seen_running(th, task, 1);
        capture_pending(th, task, 0);
    }
    return 0;
}

/* The end of a switch, in the thread that runs again (when the kernel has it:
 * resume_ok): its sampled stretch captured before it runs any of its own
 * code, its address space the current one. */
SEC("tp_btf/sched_exit_tp")
int BPF_PROG(pp_on_resume, bool is_switch)
{
    struct task_struct *task = bpf_get_current_task_btf();
    struct pp_bpf_cpu_switch *seen;
    struct pp_bpf_thread *th;
    __u32 zero = 0;

    if (bench_empty || !is_switch || !(seen = bpf_map_lookup_elem(&cpu_switch, &zero)))
        return 0;
    if (seen->next_tid == (__u32)task->pid && !seen->capture)
        return 0;                   /* the switch seen, nothing to capture */
    seen->capture = 0;
    if (!(th = thread_of(task, 0)))
        return 0;
    if (task->flags & PF_EXITING_FLAG) {
        /* its memory may be gone: what waited for a capture is said
         * missing (switched_out never sees an exiting thread) */
        drop_uncaptured(th);
        return 0;
    }
    seen_running(th, task, 1);      /* the switch unseen: its stretch ends now */
    capture_pending(th, task, 1);
    return 0;
}

#include "wall_iter.bpf.c"
