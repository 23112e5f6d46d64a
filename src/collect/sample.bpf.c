// SPDX-License-Identifier: GPL-2.0
/*
 * Sample mode's collector in the kernel (see native/sample.h): at each
 * cpu-clock sample of a process being profiled (or, with perfpy record -e,
 * at every Nth of its page faults, context switches or tracepoint hits),
 * one ring-buffer record with what user space needs and cannot get later:
 *
 *   kernel ips                  bpf_get_stack
 *   the user registers          bpf_task_pt_regs (also when the sample hit
 *                               the kernel: the registers at its entry)
 *   a copy of the user stack    sp's page and those above it, until one
 *                               cannot be read
 *   the Python frames           the thread's PyThreadState, found by its
 *                               thread_id (pthread_self) == the task's fsbase
 *                               in the interpreter's thread list, then its
 *                               frame chain: each frame's code object address,
 *                               instruction pointer and whether it is the
 *                               first frame of an evaluation
 *
 * Three tracepoints follow the processes: a child a target forks is a
 * target too (same memory, same offsets); a target that execs runs another
 * program, so its Python frames are not read until user space has found
 * the new image's _PyRuntime; a target whose last thread ends is removed
 * (its pid may be reused). Each tells user space with a small record
 * (pp_bpf_event) in the same ring buffer, after the samples before it.
 *
 * A whole-host recording (pp_host, set by user space: PP_BPF_HOST_*) runs
 * it on a cpu-clock event per CPU instead: every exec makes its process a
 * target until user space, told, finds it runs no CPython; with HOST_ALL
 * the processes that are not targets are sampled too (native and kernel
 * frames), the idle task never.
 *
 * Wall-clock mode (wall.bpf.c, included at the end) adds the time each
 * thread spends off the CPU, from the scheduler's tracepoints.
 *
 * Only reads (bpf_probe_read_user): the program is not changed, stopped or
 * slowed beyond the sample itself. The structure offsets come from user
 * space per process (pyoffsets.h; pylayout.c finds each process's). GPL: the
 * helpers it calls need it; it is built apart from perfpy's own code and
 * loaded at run time.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "collect_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, PP_BPF_MAX_TARGETS);
    __type(key, __u32);                     /* tgid */
    __type(value, struct pp_bpf_target);
} targets SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, PP_BPF_RING_BYTES);
} events SEC(".maps");

/* A sample's record is made in a slot of its CPU and copied into the ring
 * at the length it has: its header and the stack read, not the room for
 * 68 KiB of stack a reservation in the ring takes (a thread's stack is
 * about 8 KiB: the same ring holds three times as many records when its
 * reader is late). Slot SLOT_SAMPLE for cpu-clock samples (one may
 * interrupt a tracepoint), SLOT_SWITCH for captures at the end of a switch
 * (preemption disabled there: nothing else takes the slot meanwhile).
 * Captures in a program that may be preempted or sleep (sys_exit on
 * kernels whose system-call tracepoints may fault, a task work, the task
 * iterator) reserve a whole record in the ring instead. max_entries:
 * PP_BPF_SLOTS per possible CPU, set by user space. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, PP_BPF_SLOTS);
    __type(key, __u32);
    __type(value, struct pp_bpf_sample);
} slots SEC(".maps");

enum { SLOT_SAMPLE, SLOT_SWITCH };

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, PP_BPF_N_COUNTERS);
    __type(key, __u32);
    __type(value, __u64);
} counters SEC(".maps");

__u32 pp_host = 0;                  /* PP_BPF_HOST_*: 0 unless -a */

/* Set by user space before loading: wall-clock mode and its period. */
const volatile __u32 wall = 0;
const volatile __u64 period_ns = 1;
/* Set by user space for perfpy record -e: a sample stands for a period of
 * the event's own (faults, system calls), not of CPU time; a tracepoint's
 * program keeps every every_events'th hit of each thread. 0: cpu-clock. */
const volatile __u64 every_events = 0;
/* Set by perfpy dump, which reads asyncio's tasks from user space: the
 * verifier then drops the readers of task chains (--async) from the
 * programs, most of its work on them (a dump's two programs: 27 and 20
 * ms of verification, 5 and 5 without). */
const volatile __u32 no_async = 0;

static __always_inline void count_by(__u32 which, __u64 n)
{
    __u64 *c = bpf_map_lookup_elem(&counters, &which);

    if (c)
        *c += n;
}

static __always_inline void count(__u32 which)
{
    count_by(which, 1);
}

/* A small record into the ring without waking user space, unless the
 * ring is half full: wall-clock mode's ends of stretches come at every
 * preemption (each wake-up costs the program a few µs), and user space
 * reads the ring at least every 20 ms. Stacks are submitted with a wake-up:
 * user space names their code objects from the process, which the last
 * stack of a process (its last wait, captured as it ends) barely outlives. */
static __always_inline __u64 quiet(void)
{
    return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
           bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2
           ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void submit_quiet(void *rec)
{
    bpf_ringbuf_submit(rec, quiet());
}

/* This CPU's slot (SLOT_*), or 0. */
static __always_inline struct pp_bpf_sample *slot_of(__u32 which)
{
    __u32 key = bpf_get_smp_processor_id() * PP_BPF_SLOTS + which;

    return bpf_map_lookup_elem(&slots, &key);
}

/* A record made in a slot into the ring, as long as it is. 0, or < 0: no
 * room. */
static __always_inline long send_slot(struct pp_bpf_sample *s, __u64 flags)
{
    __u64 n = __builtin_offsetof(struct pp_bpf_sample, stack) + s->stack_len;

    if (n > sizeof(*s))
        n = sizeof(*s);
    return bpf_ringbuf_output(&events, s, n, flags);
}

/* ---- reading the program's memory --------------------------------------- */

/* Each reader exists twice: `sleepable` 0 reads the current task's memory
 * (bpf_probe_read_user: a sample or a tracepoint in the thread's own
 * context), 1 another task's (bpf_copy_from_user_task: the task iterator,
 * which may sleep). The argument is always a constant, so each copy keeps
 * one helper: a non-sleepable program may not even contain the other. */
static __always_inline long read_user(void *dst, __u32 size, __u64 addr,
                                      struct task_struct *task, int sleepable)
{
    if (sleepable)
        return bpf_copy_from_user_task(dst, size, (const void *)addr, task, 0);
    return bpf_probe_read_user(dst, size, (const void *)addr);
}

static __always_inline __u64 rd_t(__u64 addr, __s32 off, struct task_struct *task, int sleepable)
{
    __u64 v = 0;

    if (!addr || off < 0)
        return 0;
    read_user(&v, sizeof(v), addr + off, task, sleepable);
    return v;
}

static __always_inline __u8 rd8_t(__u64 addr, __s32 off, struct task_struct *task, int sleepable)
{
    __u8 v = 0;

    if (!addr || off < 0)
        return 0;
    read_user(&v, sizeof(v), addr + off, task, sleepable);
    return v;
}

static __always_inline __u32 rd32_t(__u64 addr, __s32 off, struct task_struct *task, int sleepable)
{
    __u32 v = 0;

    if (!addr || off < 0)
        return 0;
    read_user(&v, sizeof(v), addr + off, task, sleepable);
    return v;
}

/* The current task's memory (a sample, a tracepoint in its own context). */
static __always_inline __u64 rd(__u64 addr, __s32 off)
{
    return rd_t(addr, off, NULL, 0);
}

static __always_inline __u8 rd8(__u64 addr, __s32 off)
{
    return rd8_t(addr, off, NULL, 0);
}

static __always_inline __u32 rd32(__u64 addr, __s32 off)
{
    return rd32_t(addr, off, NULL, 0);
}

/* pp_name_id of the str at name: its hash, else its characters */
static __always_inline __u64 name_id(__u64 name, const struct pp_bpf_offsets *o,
                                     struct task_struct *task, int sleepable)
{
    __u64 chars[4] = {0, 0, 0, 0}, len;
    __s64 hash = (__s64)rd_t(name, o->str_hash, task, sleepable);
    __u32 n;

    if (hash != -1 || !name)
        return pp_name_id(hash, 0, chars);
    len = rd_t(name, o->str_length, task, sleepable);
    n = len > PP_NAME_ID_BYTES ? PP_NAME_ID_BYTES : (__u32)len;
    if (n > 0 && n <= PP_NAME_ID_BYTES && o->str_ascii_data >= 0)
        read_user(chars, n, name + o->str_ascii_data, task, sleepable);
    return pp_name_id(hash, len, chars);
}

#include "codename.bpf.h"       /* after the readers: it reads as they do */

struct walk {
    const struct pp_bpf_offsets *o;
    const struct pp_bpf_code_offsets *co;
    struct pp_bpf_sample *s;
    struct task_struct *task;
    __u64 fsbase, ts, frame;
    __u64 task_frame;               /* --async: the running task's coroutine's frame */
    __u32 n;
    int found;
};

/* bpf_loop callbacks: the verifier checks each body once, not once per
 * iteration (the unrolled walk was past its limit). 1 ends the loop. */
static __always_inline long find_thread(struct walk *w, int sleepable)
{
    if (!w->ts)
        return 1;
    if (rd_t(w->ts, w->o->tstate_thread_id, w->task, sleepable) == w->fsbase) {
        w->found = 1;
        return 1;
    }
    w->ts = rd_t(w->ts, w->o->tstate_next, w->task, sleepable);
    return 0;
}

/* What a sample keeps of one frame of code (task, sleepable: as rd_t). */
static __always_inline void put_frame_t(const struct pp_bpf_offsets *o, struct pp_bpf_pyframe *f,
                                        __u64 frame, __u64 code, struct task_struct *task,
                                        int sleepable)
{
    f->code = code;
    f->instr = o->frame_is_object ? (__u64)rd32_t(frame, o->frame_instr, task, sleepable)
                                  : rd_t(frame, o->frame_instr, task, sleepable);
    f->entry = o->frame_is_object ? 1
               : o->frame_is_entry >= 0 ? rd8_t(frame, o->frame_is_entry, task, sleepable) : 0;
    f->name = rd_t(code, o->code_name, task, sleepable);
    f->name_id = name_id(f->name, o, task, sleepable);
    f->file = rd_t(code, o->code_filename, task, sleepable);
    f->table = rd_t(code, o->code_linetable, task, sleepable);
    f->firstlineno = (__u32)rd_t(code, o->code_firstlineno, task, sleepable);
    f->tlbc = o->frame_tlbc_index >= 0 ? (__s32)rd_t(frame, o->frame_tlbc_index, task, sleepable)
                                       : 0;
}

static __always_inline long one_frame(struct walk *w, int sleepable)
{
    const struct pp_bpf_offsets *o = w->o;
    struct pp_bpf_sample *s = w->s;
    struct task_struct *task = w->task;
    __u64 frame = w->frame, code, prev;
    __u8 owner;
    int shim;
    __u32 n = w->n;

    if (!frame)
        return 1;
    code = rd_t(frame, o->frame_code, task, sleepable) & ~(__u64)o->frame_code_tag_mask;
    prev = rd_t(frame, o->frame_previous, task, sleepable);
    owner = rd8_t(frame, o->frame_owner, task, sleepable);
    shim = o->frame_owner_shim_min >= 0 && owner >= o->frame_owner_shim_min;
    w->frame = prev;
    if (shim) {
        /* 3.12+: the frame before a shim began an evaluation */
        if (n > 0)
            s->py[(n - 1) & (PP_BPF_MAX_PY - 1)].entry = 1;
        return 0;
    }
    if (!code)
        return 0;
    if (n >= PP_BPF_MAX_PY) {
        s->flags |= PP_BPF_PY_TRUNCATED;
        return 1;
    }
    n &= PP_BPF_MAX_PY - 1;
    if (frame == w->task_frame)
        s->task_frame = (__s32)n;
    put_frame_t(o, &s->py[n], frame, code, task, sleepable);
    pp_code_first_sight(o, w->co, s->pid, &s->py[n], task, sleepable);
    w->n = n + 1;
    return 0;
}

static long find_thread_cur(__u32 i, void *ctx) { return find_thread(ctx, 0); }
static long one_frame_cur(__u32 i, void *ctx) { return one_frame(ctx, 0); }
static long find_thread_task(__u32 i, void *ctx) { return find_thread(ctx, 1); }
static long one_frame_task(__u32 i, void *ctx) { return one_frame(ctx, 1); }
#include "async.bpf.c"

/* slot: async.bpf.c's ascratch, 0 in a cpu-clock sample, 1 in a tracepoint
 * or a task work (a sample may interrupt those), 2 in the task iterator. */
static __always_inline void python_frames(const struct pp_bpf_target *t,
                                          struct task_struct *task,
                                          struct pp_bpf_sample *s, int sleepable, __u32 slot)
{
    const struct pp_bpf_offsets *o = &t->off;
    struct walk w = {.o = o, .co = &t->code, .s = s, .task = task};
    __u64 running = 0;
    __u64 interp, gil;

    w.fsbase = BPF_CORE_READ(task, thread.fsbase);
    interp = rd_t(t->runtime, o->runtime_interpreters_head, task, sleepable);
    w.ts = rd_t(interp, o->interp_threads_head, task, sleepable);
    bpf_loop(PP_BPF_MAX_THREADS, sleepable ? find_thread_task : find_thread_cur, &w, 0);
    /* the GIL's state: a wait on it is told from other futex waits by its
     * address, and the thread holds it when it is locked and held last by
     * the thread's state */
    gil = o->gil_runtime >= 0 ? (t->runtime ? t->runtime + o->gil_runtime : 0)
                              : rd_t(interp, o->gil_interp, task, sleepable);
    s->gil = gil;
    if (!w.found)
        return;
    s->flags |= PP_BPF_PY_THREAD;
    if (!no_async && t->as.on && (running = running_task(&t->as, w.ts, task, sleepable)))
        w.task_frame = rd_t(running, t->as.task_coro, task, sleepable) + t->as.gen_iframe;
    if (gil && rd32_t(gil, o->gil_locked, task, sleepable) &&
        rd_t(gil, o->gil_last_holder, task, sleepable) == w.ts)
        s->flags |= PP_BPF_GIL_HELD;
    if (o->tstate_cframe >= 0)
        w.frame = rd_t(rd_t(w.ts, o->tstate_cframe, task, sleepable), o->cframe_current_frame,
                     task, sleepable);
    else
        w.frame = rd_t(w.ts, o->tstate_frame, task, sleepable);
    bpf_loop(PP_BPF_MAX_HOPS, sleepable ? one_frame_task : one_frame_cur, &w, 0);
    if (w.frame)
        s->flags |= PP_BPF_PY_TRUNCATED;                    /* frames left unread */
    else if (w.n > 0)
        s->py[(w.n - 1) & (PP_BPF_MAX_PY - 1)].entry = 1;   /* the outermost */
    s->npy = s->npy_all = w.n;
    if (!no_async && t->as.on)
        async_tasks(t, s, w.ts, running, slot, task, sleepable);
}

/* A record for the thread task of the target t, with its kernel stack
 * already in s->kips: its user registers (as it entered the kernel), a
 * copy of its stack from sp, its Python frames. */
static __always_inline void capture(struct pp_bpf_sample *s, const struct pp_bpf_target *t,
                                    struct task_struct *task, int sleepable, __u32 slot)
{
    struct pt_regs *ur = (struct pt_regs *)bpf_task_pt_regs(task);
    __u64 sp;

    s->pid = task->tgid;
    s->tid = task->pid;
    s->time_ns = bpf_ktime_get_ns();
    s->flags = 0;
    s->npy = s->npy_all = 0;
    s->ntasks = s->nwaiting = 0;
    s->task_frame = -1;
    s->stack_len = 0;
    s->stack_skip = 0;
    s->gil = 0;
    s->syscall = BPF_CORE_READ(ur, orig_ax);
    s->ident = BPF_CORE_READ(task, thread.fsbase);
    s->born_ns = BPF_CORE_READ(task, start_time);
    BPF_CORE_READ_STR_INTO(&s->comm, task, comm);
    s->regs[0] = BPF_CORE_READ(ur, ax);
    s->regs[1] = BPF_CORE_READ(ur, dx);
    s->regs[2] = BPF_CORE_READ(ur, cx);
    s->regs[3] = BPF_CORE_READ(ur, bx);
    s->regs[4] = BPF_CORE_READ(ur, si);
    s->regs[5] = BPF_CORE_READ(ur, di);
    s->regs[6] = BPF_CORE_READ(ur, bp);
    s->regs[7] = sp = BPF_CORE_READ(ur, sp);
    s->regs[8] = BPF_CORE_READ(ur, r8);
    s->regs[9] = BPF_CORE_READ(ur, r9);
    s->regs[10] = BPF_CORE_READ(ur, r10);
    s->regs[11] = BPF_CORE_READ(ur, r11);
    s->regs[12] = BPF_CORE_READ(ur, r12);
    s->regs[13] = BPF_CORE_READ(ur, r13);
    s->regs[14] = BPF_CORE_READ(ur, r14);
    s->regs[15] = BPF_CORE_READ(ur, r15);
    s->regs[16] = BPF_CORE_READ(ur, ip);
    /* (a read, not task->mm: the verifier looks each pointer loaded from a
     * trusted one up in the kernel's BTF by name, a walk over all its
     * types, ~2 ms of a dump's load per inlined copy) */
    if (BPF_CORE_READ(task, mm) && sp) {
        __u64 base = sp & ~4095ULL;

        /* whole pages from sp's own: a read that crosses the stack's end
         * fails whole, and the outermost frames are the last bytes */
        s->flags |= PP_BPF_USER;
        s->stack_skip = sp - base;
        for (int i = 0; i < PP_BPF_STACK_PAGES; i++) {
            if (read_user(s->stack + i * 4096, 4096, base + i * 4096, task, sleepable))
                break;
            s->stack_len += 4096;
        }
        if (t)                      /* -a's other processes: native frames only */
            python_frames(t, task, s, sleepable, slot);
    }
}

static __always_inline __u64 wall_sampled(struct task_struct *task, __u64 *unch);
static __always_inline void wall_unsampled(struct task_struct *task, __u64 w, __u64 unch);

/* Plain sample mode: the CPU time each thread's samples have stood for so
 * far, on the scheduler's account (cpu_sampled). */
struct pp_bpf_given {
    __u64 upto;                     /* se.sum_exec_runtime they reach */
    __u64 set;
    __u64 hits;                     /* -e TRACEPOINT: since its last sample */
};

struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct pp_bpf_given);
} given SEC(".maps");

/* se.sum_exec_runtime lags by what the thread ran since the last tick */
#define GIVEN_SLACK 10000000ull

/* A sample's CPU time in plain sample mode (a thread's own event, one
 * sample per period of cpu-clock: the time the thread is current on its
 * CPU): its period, less what would take the thread's samples past the CPU
 * time the scheduler charged it. On a virtual machine the hypervisor takes
 * the CPU for another guest (steal time) while a thread is current, and
 * the kernel charges that time to no task (PARAVIRT_TIME_ACCOUNTING), so
 * the program's own thread_time (se.sum_exec_runtime) lacks it, and
 * periods of cpu-clock stood for 10-20% more than the crunch threads'
 * thread_time on a busy host (test_timeline). Never more than its period:
 * a sample the ring lost stays missing, its time given to no later one.
 * At least 1 ns (0 means a period). */
static __always_inline __u64 cpu_sampled(struct task_struct *task)
{
    struct pp_bpf_given *g = bpf_task_storage_get(&given, task, 0,
                                                  BPF_LOCAL_STORAGE_GET_F_CREATE);
    __u64 cpu = task->se.sum_exec_runtime, w = period_ns;

    if (!g)
        return 0;
    if (!g->set) {
        g->set = 1;
        g->upto = cpu > period_ns ? cpu - period_ns : 0;
    }
    if (g->upto + w > cpu + GIVEN_SLACK)
        w = cpu + GIVEN_SLACK > g->upto ? cpu + GIVEN_SLACK - g->upto : 0;
    g->upto += w;
    count_by(PP_BPF_N_UNCHARGED_NS, period_ns - w);
    if (g->upto + GIVEN_SLACK < cpu)
        g->upto = cpu - GIVEN_SLACK;    /* samples lost: that time stays missing */
    return w ? w : 1;
}

/* A sample of the current thread, ctx the program's (its kernel stack). */
static __always_inline int sample_current(void *ctx)
{
    __u32 tgid = bpf_get_current_pid_tgid() >> 32;
    struct pp_bpf_target *t = bpf_map_lookup_elem(&targets, &tgid);
    struct pp_bpf_sample *s;
    long k;

    if (!t && !((pp_host & PP_BPF_HOST_ALL) && tgid))
        return 0;
    s = slot_of(SLOT_SAMPLE);
    if (!s) {
        count(PP_BPF_N_LOST);
        return 0;
    }
    k = bpf_get_stack(ctx, s->kips, sizeof(s->kips), 0);
    s->nkernel = k > 0 ? (__u32)((__u64)k / 8) : 0;
    capture(s, t, bpf_get_current_task_btf(), 0, 0);
    s->kind = PP_BPF_ON_CPU;
    s->state = 0;
    /* the CPU time the sample stands for (0: a period; a whole host's
     * samples, per CPU: a period of that CPU; an event's: its period of
     * events), and in wall-clock mode the time on the CPU the hypervisor
     * took meanwhile */
    s->runq_ns = 0;
    s->block_ns = wall ? wall_sampled(bpf_get_current_task_btf(), &s->runq_ns)
                       : t && !pp_host && !every_events ? cpu_sampled(bpf_get_current_task_btf())
                       : 0;
    /* a whole host's samples wait for user space's next look (its 50 ms
     * poll, or an event's wake-up): waking it for each one cost more than
     * reading them. Wall-clock mode's too (20 ms): its events are per CPU,
     * and perfpy-sample woken by a sample preempted the thread sampled,
     * whose runs then fell in step with the samples (collect.c) */
    if (send_slot(s, wall ? quiet() : (pp_host & PP_BPF_HOST_EXEC) ? BPF_RB_NO_WAKEUP : 0)) {
        count(PP_BPF_N_LOST);
        /* no room: the thread's CPU time since goes to its next sample */
        if (wall)
            wall_unsampled(bpf_get_current_task_btf(), s->block_ns, s->runq_ns);
    }
    return 0;
}

/* cpu-clock's samples, and those of -e's software events (page faults,
 * context switches): the kernel counts each thread's events and runs this
 * at every period's end */
SEC("perf_event")
int pp_on_sample(struct bpf_perf_event_data *ctx)
{
    return sample_current(ctx);
}

/* -e SYSTEM:NAME: attached to the tracepoint once for the whole machine
 * (a tracepoint's programs run at each hit, whatever perf event they came
 * by), each hit of a target's thread counted here and every
 * every_events'th sampled; the user registers are the thread's at its
 * entry to the kernel (bpf_task_pt_regs), as for a sample in the kernel */
SEC("tracepoint")
int pp_on_tracepoint(void *ctx)
{
    __u32 tgid = bpf_get_current_pid_tgid() >> 32;
    struct pp_bpf_given *g;

    if (!bpf_map_lookup_elem(&targets, &tgid))
        return 0;
    g = bpf_task_storage_get(&given, bpf_get_current_task_btf(), 0,
                             BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!g || ++g->hits < every_events)
        return 0;
    g->hits = 0;
    return sample_current(ctx);
}

/* ---- following the processes ------------------------------------------------ */

static __always_inline void tell(__u32 kind, __u32 pid, __u32 ppid)
{
    struct pp_bpf_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

    if (!e) {
        count(PP_BPF_N_LOST);
        return;
    }
    e->kind = kind;
    e->pid = pid;
    e->ppid = ppid;
    e->pad = 0;
    e->time_ns = bpf_ktime_get_ns();
    bpf_ringbuf_submit(e, 0);       /* a wake-up: user space reads a new
                                       process's maps while it lives */
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(pp_on_fork, struct task_struct *parent, struct task_struct *child)
{
    __u32 ptgid = parent->tgid, ctgid = child->tgid;
    struct pp_bpf_target *t, copy;

    if (ctgid == ptgid || !(t = bpf_map_lookup_elem(&targets, &ptgid)))
        return 0;                   /* a thread, or not a target's child */
    copy = *t;
    if (bpf_map_update_elem(&targets, &ctgid, &copy, BPF_ANY) == 0)
        tell(PP_BPF_EV_FORK, ctgid, ptgid);
    return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(pp_on_exec, struct task_struct *p)
{
    __u32 tgid = p->tgid;
    struct pp_bpf_target *t = bpf_map_lookup_elem(&targets, &tgid), none = {};

    if (t)
        t->runtime = 0;             /* another image: its _PyRuntime is elsewhere */
    else if (!(pp_host & PP_BPF_HOST_EXEC) ||
             bpf_map_update_elem(&targets, &tgid, &none, BPF_NOEXIST) != 0)
        return 0;                   /* (a target of runtime 0 reads no Python frame) */
    tell(PP_BPF_EV_EXEC, tgid, 0);
    return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pp_on_exit, struct task_struct *p)
{
    __u32 tgid = p->tgid;

    /* the group's last thread (the count is down before this tracepoint;
     * an exec from another thread ends the leader with the group alive) */
    if (BPF_CORE_READ(p, signal, live.counter) != 0 ||
        !bpf_map_lookup_elem(&targets, &tgid))
        return 0;
    bpf_map_delete_elem(&targets, &tgid);
    tell(PP_BPF_EV_EXIT, tgid, 0);
    return 0;
}

/* ---- perfpy dump's kernel names ----------------------------------------------- */

/* The kernel's own names of the addresses ksym_addr[0, ksym_n), as its
 * stack traces print them (%ps: "name", "name [module]"; an address no
 * symbol holds as its number), into ksym_name: user space sets the
 * addresses and runs it (BPF_PROG_TEST_RUN). A dump names the few
 * dozen addresses of its kernel stacks so, instead of reading the whole
 * of /proc/kallsyms (5 MB of text the kernel writes out, 160-270 ms
 * here); loaded only for a dump. */
__u64 ksym_addr[PP_BPF_KSYMS];
char ksym_name[PP_BPF_KSYMS][PP_BPF_KSYM_LEN];
__u32 ksym_n = 0;

SEC("syscall")
int pp_ksym_names(void *ctx)
{
    for (__u32 i = 0; i < PP_BPF_KSYMS && i < ksym_n; i++)
        bpf_snprintf(ksym_name[i], PP_BPF_KSYM_LEN, "%ps", &ksym_addr[i], sizeof(__u64));
    return 0;
}

/* ---- wall-clock mode: wall.bpf.c (the same object: it shares the maps) --- */

#include "wall.bpf.c"
