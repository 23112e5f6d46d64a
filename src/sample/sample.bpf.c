// SPDX-License-Identifier: GPL-2.0
/*
 * Sample mode's collector in the kernel (issue 15; see sample.h): at each
 * cpu-clock sample of a process being profiled, one ring-buffer record
 * with what user space needs and cannot get later:
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

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} lost SEC(".maps");

__u32 pp_host = 0;                  /* PP_BPF_HOST_*: 0 unless -a */

static __always_inline __u64 rd(__u64 addr, __s32 off)
{
    __u64 v = 0;

    if (!addr || off < 0)
        return 0;
    bpf_probe_read_user(&v, sizeof(v), (const void *)(addr + off));
    return v;
}

static __always_inline __u8 rd8(__u64 addr, __s32 off)
{
    __u8 v = 0;

    if (!addr || off < 0)
        return 0;
    bpf_probe_read_user(&v, sizeof(v), (const void *)(addr + off));
    return v;
}

/* pp_bpf_name_id of the str at name: its hash, else its characters */
static __always_inline __u64 name_id(__u64 name, const struct pp_bpf_offsets *o)
{
    __u64 chars[4] = {0, 0, 0, 0}, len;
    __s64 hash = (__s64)rd(name, o->str_hash);
    __u32 n;

    if (hash != -1 || !name)
        return pp_bpf_name_id(hash, 0, chars);
    len = rd(name, o->str_length);
    n = len > PP_BPF_NAME_BYTES ? PP_BPF_NAME_BYTES : (__u32)len;
    if (n > 0 && n <= PP_BPF_NAME_BYTES && o->str_ascii_data >= 0)
        bpf_probe_read_user(chars, n, (const void *)(name + o->str_ascii_data));
    return pp_bpf_name_id(hash, len, chars);
}

struct walk {
    const struct pp_bpf_offsets *o;
    struct pp_bpf_sample *s;
    __u64 fsbase, ts, frame;
    __u64 task_frame;               /* --async: the running task's coroutine's frame */
    __u32 n;
    int found;
};

/* bpf_loop callbacks: the verifier checks each body once, not once per
 * iteration (the unrolled walk was past its limit). 1 ends the loop. */
static long find_thread(__u32 i, void *ctx)
{
    struct walk *w = ctx;

    if (!w->ts)
        return 1;
    if (rd(w->ts, w->o->tstate_thread_id) == w->fsbase) {
        w->found = 1;
        return 1;
    }
    w->ts = rd(w->ts, w->o->tstate_next);
    return 0;
}

/* What a sample keeps of one frame of code. */
static __always_inline void put_frame(const struct pp_bpf_offsets *o, struct pp_bpf_pyframe *f,
                                      __u64 frame, __u64 code)
{
    f->code = code;
    f->instr = o->frame_is_object ? (__u64)(__u32)rd(frame, o->frame_instr)
                                  : rd(frame, o->frame_instr);
    f->entry = o->frame_is_object ? 1
               : o->frame_is_entry >= 0 ? rd8(frame, o->frame_is_entry) : 0;
    f->name = rd(code, o->code_name);
    f->name_id = name_id(f->name, o);
    f->file = rd(code, o->code_filename);
    f->table = rd(code, o->code_linetable);
    f->firstlineno = (__u32)rd(code, o->code_firstlineno);
    f->tlbc = o->frame_tlbc_index >= 0 ? (__s32)rd(frame, o->frame_tlbc_index) : 0;
}

static long one_frame(__u32 i, void *ctx)
{
    struct walk *w = ctx;
    const struct pp_bpf_offsets *o = w->o;
    struct pp_bpf_sample *s = w->s;
    __u64 frame = w->frame, code, prev;
    __u8 owner;
    int shim;
    __u32 n = w->n;

    if (!frame)
        return 1;
    code = rd(frame, o->frame_code) & ~(__u64)o->frame_code_tag_mask;
    prev = rd(frame, o->frame_previous);
    owner = rd8(frame, o->frame_owner);
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
    put_frame(o, &s->py[n], frame, code);
    w->n = n + 1;
    return 0;
}

#include "async.bpf.c"

static __always_inline void python_frames(const struct pp_bpf_target *t,
                                          struct task_struct *task,
                                          struct pp_bpf_sample *s)
{
    const struct pp_bpf_offsets *o = &t->off;
    struct walk w = {.o = o, .s = s};
    __u64 running = 0;

    w.fsbase = BPF_CORE_READ(task, thread.fsbase);
    w.ts = rd(rd(t->runtime, o->runtime_interpreters_head), o->interp_threads_head);
    bpf_loop(PP_BPF_MAX_THREADS, find_thread, &w, 0);
    if (!w.found)
        return;
    s->flags |= PP_BPF_PY_THREAD;
    if (t->as.on && (running = running_task(&t->as, w.ts)))
        w.task_frame = rd(running, t->as.task_coro) + t->as.gen_iframe;
    if (o->tstate_cframe >= 0)
        w.frame = rd(rd(w.ts, o->tstate_cframe), o->cframe_current_frame);
    else
        w.frame = rd(w.ts, o->tstate_frame);
    bpf_loop(PP_BPF_MAX_HOPS, one_frame, &w, 0);
    if (w.frame)
        s->flags |= PP_BPF_PY_TRUNCATED;                    /* frames left unread */
    else if (w.n > 0)
        s->py[(w.n - 1) & (PP_BPF_MAX_PY - 1)].entry = 1;   /* the outermost */
    s->npy = s->npy_all = w.n;
    if (t->as.on)
        async_tasks(t, s, w.ts, running, 0);
}

SEC("perf_event")
int pp_on_sample(struct bpf_perf_event_data *ctx)
{
    __u64 id = bpf_get_current_pid_tgid();
    __u32 tgid = id >> 32, zero = 0;
    struct pp_bpf_target *t = bpf_map_lookup_elem(&targets, &tgid);
    struct task_struct *task;
    struct pt_regs *ur;
    struct pp_bpf_sample *s;
    __u64 sp, *l;
    long k;

    if (!t && !((pp_host & PP_BPF_HOST_ALL) && tgid))
        return 0;
    s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
    if (!s) {
        if ((l = bpf_map_lookup_elem(&lost, &zero)))
            (*l)++;
        return 0;
    }
    s->pid = tgid;
    s->tid = (__u32)id;
    s->time_ns = bpf_ktime_get_ns();
    s->flags = 0;
    s->npy = s->npy_all = 0;
    s->ntasks = s->nwaiting = 0;
    s->task_frame = -1;
    s->stack_len = 0;
    s->stack_skip = 0;
    bpf_get_current_comm(s->comm, sizeof(s->comm));
    k = bpf_get_stack(ctx, s->kips, sizeof(s->kips), 0);
    s->nkernel = k > 0 ? (__u32)((__u64)k / 8) : 0;
    task = bpf_get_current_task_btf();
    ur = (struct pt_regs *)bpf_task_pt_regs(task);
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
    if (task->mm && sp) {
        __u64 base = sp & ~4095ULL;

        /* whole pages from sp's own: a read that crosses the stack's end
         * fails whole, and the outermost frames are the last bytes */
        s->flags |= PP_BPF_USER;
        s->stack_skip = sp - base;
        for (int i = 0; i < PP_BPF_STACK_PAGES; i++) {
            if (bpf_probe_read_user(s->stack + i * 4096, 4096, (const void *)(base + i * 4096)))
                break;
            s->stack_len += 4096;
        }
        if (t)
            python_frames(t, task, s);
    }
    /* a whole host's samples wait for user space's next look (its 50 ms
     * poll, or an event's wake-up): waking it for each one cost more than
     * reading them */
    bpf_ringbuf_submit(s, (pp_host & PP_BPF_HOST_EXEC) ? BPF_RB_NO_WAKEUP : 0);
    return 0;
}

/* ---- following the processes ------------------------------------------------ */

static __always_inline void tell(__u32 kind, __u32 pid, __u32 ppid)
{
    struct pp_bpf_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    __u32 zero = 0;
    __u64 *l;

    if (!e) {
        if ((l = bpf_map_lookup_elem(&lost, &zero)))
            (*l)++;
        return;
    }
    e->kind = kind;
    e->pid = pid;
    e->ppid = ppid;
    e->pad = 0;
    e->time_ns = bpf_ktime_get_ns();
    bpf_ringbuf_submit(e, 0);
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
