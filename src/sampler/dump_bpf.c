/*
 * The dump's engine with BPF (see dump.h): sample mode's collector reads
 * every thread where it is, and the program is never stopped.
 *
 *   a thread off the CPU (blocked, or preempted): the task iterator
 *       (wall.bpf.c's pp_iter_threads, pp_collect_snapshot) copies its
 *       saved user registers, its stack and Python frames from outside
 *       (bpf_copy_from_user_task) and takes its kernel stack as it waits
 *   a thread on a CPU: its registers are saved nowhere while it runs, so
 *       its next cpu-clock sample (a perf event on each thread, one per
 *       millisecond of its CPU time) captures it in its own context, as
 *       sample mode's samples are taken
 *
 * The iterator runs again every PASS_MS until each thread has its record
 * (one that was running may block before its sample comes; records that
 * did not fit in the ring are taken by a later pass: the iterator takes
 * each thread once across passes) or WAIT_MS pass; the first record of
 * each thread is kept. A thread with none (it ended, or the machine's load
 * kept a CPU-bound thread from a millisecond of CPU) keeps what /proc says
 * of it and the Python frames read from user space. Then, from user space
 * for every thread at once: its PyThreadState and ident (threading's
 * names, the GIL's holder), its frames' addresses (its locals) when they
 * are still the frames the BPF program read, and the Python frames of a
 * thread past the first PP_BPF_MAX_THREADS of the interpreter's list,
 * which the BPF program does not search (read now, without stopping).
 */
#include "collect/collect.h"
#include "dump.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_MS 500                /* for every thread's record */
#define PASS_MS 10                 /* between the iterator's passes */

typedef struct taking {
    pp_dump *d;
    char *taken;                   /* per thread: its record came */
    uint64_t *ident;               /* per thread: its pthread_self() (fs base) */
    size_t got;
} taking;

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The kernel's task state as /proc's letter. */
static char state_letter(uint32_t state)
{
    return state == 0 ? 'R' : state & 1 ? 'S' : state & 2 ? 'D' : state & 4 ? 'T'
         : state & 8 ? 't' : '?';
}

static void take_py(pp_dump_thread *t, const struct pp_bpf_sample *s)
{
    t->py.n = s->npy < PP_PYSTACK_DEPTH ? s->npy : PP_PYSTACK_DEPTH;
    t->py.truncated = (s->flags & PP_BPF_PY_TRUNCATED) || s->npy > PP_PYSTACK_DEPTH;
    t->py.whole = (s->flags & PP_BPF_PY_THREAD) && !t->py.truncated;
    for (size_t i = 0; i < t->py.n; i++) {
        const struct pp_bpf_pyframe *f = &s->py[i];
        pp_pystack_frame *p = &t->py.f[i];

        memset(p, 0, sizeof(*p));
        p->id.code = f->code;
        p->id.fields = (pp_pyread_fields){f->name, f->file, f->table, f->name_id, 0,
                                          (int32_t)f->firstlineno};
        p->instr = f->instr;
        p->entry = (int)f->entry;
    }
}

static void on_record(const struct pp_bpf_sample *s, void *ctx)
{
    taking *k = ctx;
    pp_dump *d = k->d;
    size_t i = 0, skip;

    while (i < d->nthreads && d->threads[i].tid != (pid_t)s->tid)
        i++;
    if (i == d->nthreads || k->taken[i] || s->pid != (uint32_t)d->pid ||
        (s->kind != PP_BPF_OFF_OPEN && s->kind != PP_BPF_ON_CPU))
        return;
    pp_dump_thread *t = &d->threads[i];

    k->taken[i] = 1;
    k->ident[i] = s->ident;
    k->got++;
    t->state = s->kind == PP_BPF_ON_CPU ? 'R' : state_letter(s->state);
    t->syscall = s->syscall >= 0 ? s->syscall : -1;
    /* the system call's arguments as it entered the kernel (x86_64: rdi,
     * rsi, rdx, r10, r8, r9; regs[] in DWARF order) */
    t->args[0] = s->regs[5];
    t->args[1] = s->regs[4];
    t->args[2] = s->regs[1];
    t->args[3] = s->regs[10];
    t->args[4] = s->regs[8];
    t->args[5] = s->regs[9];
    t->nkernel = s->nkernel < PP_DUMP_KERNEL ? s->nkernel : PP_DUMP_KERNEL;
    memcpy(t->kips, s->kips, t->nkernel * sizeof(*t->kips));
    t->nkernel_names = 0;
    take_py(t, s);
    t->python = (s->flags & PP_BPF_PY_THREAD) != 0;
    skip = s->stack_skip;
    if ((s->flags & PP_BPF_USER) && s->stack_len > skip && !t->stack &&
        (t->stack = malloc(s->stack_len - skip))) {
        memcpy(t->regs, s->regs, sizeof(t->regs));
        t->stack_len = s->stack_len - skip;
        memcpy(t->stack, s->stack + skip, t->stack_len);
        t->native = 1;
    }
}

static int same_frames(const pp_pystack_thread *a, const pp_pystack_thread *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->f[i].id.code != b->f[i].id.code || a->f[i].instr != b->f[i].instr)
            return 0;
    return 1;
}

/* From user space: each thread's PyThreadState and ident; its frames'
 * addresses (its locals) where they are the frames the record holds; a
 * thread without a record, its frames as read now. 0, -ENOMEM, or -ESRCH
 * (the process ended). */
static int user_side(pp_dump *d, const pp_dump_opts *o, const taking *k)
{
    pp_pystack_thread *th = calloc(d->nthreads ? d->nthreads : 1, sizeof(*th));
    int n, rc = 0;

    if (!th)
        return -ENOMEM;
    n = pp_pystack_read(&d->mem, &d->layout.off, d->runtime, d->tid_off, th, d->nthreads);
    for (size_t i = 0; i < d->nthreads && !rc; i++) {
        pp_dump_thread *t = &d->threads[i];
        int j, addresses = 0;

        for (j = 0; j < n; j++)
            if ((th[j].tid && th[j].tid == t->tid) ||
                (!th[j].tid && k->ident[i] && k->ident[i] == th[j].thread_id))
                break;
        if (j == n)
            continue;
        t->python = 1;
        if (!k->taken[i] || (!t->py.n && th[j].n)) {
            /* no record, or one without Python frames: the BPF program
             * looks for a thread's state among the first PP_BPF_MAX_THREADS
             * of the interpreter's list; read from here, not stopped */
            t->py = th[j];
            addresses = 1;
        } else {
            t->py.tid = th[j].tid;
            t->py.thread_id = th[j].thread_id;
            t->py.tstate = th[j].tstate;
            if ((addresses = same_frames(&t->py, &th[j])))
                for (size_t f = 0; f < t->py.n; f++)
                    t->py.f[f].frame = th[j].f[f].frame;
        }
        if (o->locals && addresses)
            rc = pp_dump_read_locals(d, t);
    }
    free(th);
    if (n > 0 && !rc)
        pp_dump_gil_holder(d);
    return n == -ESRCH ? -ESRCH : rc;     /* its memory is gone: it ended */
}

int pp_dump_bpf_kernel_names(void *ctx, const uint64_t *addr, size_t n, char *names, size_t len)
{
    if (len != PP_BPF_KSYM_LEN)
        return -EINVAL;
    return pp_collect_kernel_names(ctx, addr, n, (char (*)[PP_BPF_KSYM_LEN])names);
}

int pp_dump_bpf(pp_dump *d, struct pp_collector *c, const pp_dump_opts *o, pp_error *e)
{
    taking k = {d, calloc(d->nthreads ? d->nthreads : 1, 1),
                calloc(d->nthreads ? d->nthreads : 1, sizeof(uint64_t)), 0};
    double t0;
    int rc;

    if (!k.taken || !k.ident) {
        free(k.taken);
        free(k.ident);
        return pp_error_set(e, -ENOMEM, "out of memory");
    }
    d->engine = PP_DUMP_BPF;
    if ((rc = pp_collect_add(c, d->pid, &d->layout.off, d->runtime)) != 0) {
        free(k.taken);
        free(k.ident);
        return rc == -ENOENT || rc == -ESRCH
            ? pp_error_set(e, -ESRCH, "the process %d ended during the dump", (int)d->pid)
            : pp_error_set(e, rc, "cannot sample the process %d: %s", (int)d->pid,
                           strerror(-rc));
    }
    t0 = now_ms();
    do {
        if ((rc = pp_collect_snapshot(c, d->pid)) != 0)
            break;
        while (pp_collect_poll(c, k.got < d->nthreads ? PASS_MS : 0, on_record, NULL, &k) > 0 &&
               k.got < d->nthreads)
            ;
    } while (k.got < d->nthreads && now_ms() - t0 < WAIT_MS);
    pp_collect_remove(c, d->pid);
    for (size_t i = 0; i < d->nthreads; i++)
        if (!k.taken[i])
            pp_dump_proc_state(d, &d->threads[i]);    /* what /proc says, no C frames */
    if (rc == 0)
        rc = user_side(d, o, &k);
    free(k.taken);
    free(k.ident);
    if (rc == -ESRCH || rc == -ENOENT || kill(d->pid, 0) != 0)
        return pp_error_set(e, -ESRCH, "the process %d ended during the dump", (int)d->pid);
    if (rc == -ENOMEM)
        return pp_error_set(e, rc, "out of memory");
    if (rc != 0)
        return pp_error_set(e, rc, "the task iterator over the process %d failed: %s",
                            (int)d->pid, strerror(-rc));
    return 0;
}
