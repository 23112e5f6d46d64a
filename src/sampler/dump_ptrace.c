/*
 * The dump's engine without BPF (see dump.h): what the process's own user
 * may do. Each thread's state and system call first (/proc, nothing
 * stopped), then every thread stopped at once (PTRACE_SEIZE +
 * PTRACE_INTERRUPT: no signal is sent, a system call it waits in is
 * restarted as it resumes, as after any ptrace stop), its registers and
 * stack copied and the Python frames read, and every thread let go:
 *
 *   /proc/PID/task/TID/{stat,syscall,wchan}     state, system call, kernel function
 *   seize + interrupt each thread ─┐
 *   wait for each to stop          │ stopped: registers (PTRACE_GETREGS),
 *   registers, stack, Python       │ PP_DUMP_STACK bytes of stack from sp,
 *   frames (and locals)            │ the Python frames of every thread
 *   detach each ───────────────────┘ (measured: pp_dump.stopped_ms)
 *
 * Signals to perfpy are held while the threads are stopped, so none ends
 * it then; and a tracer that dies anyway has its tracees let go by the
 * kernel: the program is never left stopped. A thread that another tracer
 * holds (a debugger, strace) cannot be seized: the dump is then read
 * without stopping (PP_DUMP_NONBLOCKING), without native frames, and says
 * so. Root also gets each thread's whole kernel stack (/proc .../stack);
 * others the function it waits in (wchan).
 */
#include "dump.h"
#include "native/procs.h"
#include "cpython/pyread.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static long proc_text(pid_t pid, pid_t tid, const char *what, char *buf, size_t len)
{
    char path[96];

    snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, what);
    return pp_procs_small_file(path, buf, len);
}

/* Its state letter, system call and the kernel functions it waits in:
 * the whole kernel stack when /proc lets us read it (root), else wchan. */
void pp_dump_proc_state(pp_dump *d, pp_dump_thread *t)
{
    char buf[4096], *p, *line;
    long long nr;

    if (proc_text(d->pid, t->tid, "stat", buf, sizeof(buf)) > 0 && (p = strrchr(buf, ')')))
        t->state = p[2];
    t->syscall = -1;
    if (proc_text(d->pid, t->tid, "syscall", buf, sizeof(buf)) > 0 &&
        sscanf(buf, "%lld %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
               &nr, &t->args[0], &t->args[1], &t->args[2], &t->args[3], &t->args[4],
               &t->args[5]) >= 1 && nr >= 0)
        t->syscall = nr;
    t->nkernel_names = 0;
    if (proc_text(d->pid, t->tid, "stack", buf, sizeof(buf)) > 0) {
        /* "[<0>] futex_wait_queue+0x60/0x90" per line, leaf first */
        for (line = strtok(buf, "\n"); line && t->nkernel_names < PP_DUMP_KERNEL;
             line = strtok(NULL, "\n")) {
            char *name = strchr(line, ']');

            if (!name)
                continue;
            name += strspn(name + 1, " ") + 1;
            name[strcspn(name, "+ ")] = '\0';
            snprintf(t->kernel_names[t->nkernel_names++], 64, "%s", name);
        }
    }
    if (!t->nkernel_names && t->state != 'R' &&
        proc_text(d->pid, t->tid, "wchan", buf, sizeof(buf)) > 0 && strcmp(buf, "0") != 0)
        snprintf(t->kernel_names[t->nkernel_names++], 64, "%.63s", buf);
}

/* The registers in DWARF order (sample.h), and the stack from sp. */
static void take_regs(pp_dump *d, pp_dump_thread *t, const struct user_regs_struct *u)
{
    const pp_map *m;
    size_t len;

    t->regs[0] = u->rax;
    t->regs[1] = u->rdx;
    t->regs[2] = u->rcx;
    t->regs[3] = u->rbx;
    t->regs[4] = u->rsi;
    t->regs[5] = u->rdi;
    t->regs[6] = u->rbp;
    t->regs[7] = u->rsp;
    t->regs[8] = u->r8;
    t->regs[9] = u->r9;
    t->regs[10] = u->r10;
    t->regs[11] = u->r11;
    t->regs[12] = u->r12;
    t->regs[13] = u->r13;
    t->regs[14] = u->r14;
    t->regs[15] = u->r15;
    t->regs[16] = u->rip;
    if (!(m = pp_maps_find(&d->maps, u->rsp)))
        return;
    len = m->end - u->rsp < PP_DUMP_STACK ? (size_t)(m->end - u->rsp) : PP_DUMP_STACK;
    if (!(t->stack = malloc(len ? len : 1)))
        return;
    if (pp_mem_read(&d->mem, u->rsp, t->stack, len) != 0) {
        /* a read that crosses an unreadable page fails whole: threads'
         * stacks side by side are one mapping, each one's guard pages
         * inside it (glibc 2.42's MADV_GUARD_INSTALL): page by page from
         * sp's own, up to the first that cannot be read */
        size_t got = 0, want;

        while (got < len) {
            want = 4096 - ((u->rsp + got) & 4095);
            want = want < len - got ? want : len - got;
            if (pp_mem_read(&d->mem, u->rsp + got, t->stack + got, want) != 0)
                break;
            got += want;
        }
        len = got;
    }
    if (!len) {
        free(t->stack);
        t->stack = NULL;
        return;
    }
    t->stack_len = len;
    t->native = 1;
}

/* Which thread holds the GIL (here read while every thread is stopped):
 * the GIL state's `locked` and `last_holder` (the PyThreadState that took
 * it last), py-spy's --gil test. Left unknown (-1) without those offsets
 * (a free-threaded build has no GIL). */
void pp_dump_gil_holder(pp_dump *d)
{
    const pp_py_offsets *o = &d->layout.off;
    uint64_t gil = 0, holder = 0;
    int32_t locked = 0;

    if (o->gil_locked < 0 || o->gil_last_holder < 0)
        return;
    if (o->gil_runtime >= 0)
        gil = d->runtime + (uint64_t)o->gil_runtime;
    else if (o->gil_interp < 0 ||
             pp_mem_read(&d->mem, d->interp + (uint64_t)o->gil_interp, &gil, sizeof(gil)) != 0)
        return;
    if (!gil || pp_mem_read(&d->mem, gil + (uint64_t)o->gil_locked, &locked,
                               sizeof(locked)) != 0 ||
        pp_mem_read(&d->mem, gil + (uint64_t)o->gil_last_holder, &holder,
                       sizeof(holder)) != 0)
        return;
    for (size_t i = 0; i < d->nthreads; i++)
        d->threads[i].gil = locked && holder && d->threads[i].python &&
                            d->threads[i].py.tstate == holder;
}

/* Every thread's Python frames (and locals), matched by tid, else by its
 * pthread_self() (fs_base on x86_64). */
static int python_frames(pp_dump *d, const pp_dump_opts *o, const uint64_t *fsbase)
{
    pp_pystack_thread *th = calloc(d->nthreads, sizeof(*th));
    int n, rc = 0;

    if (!th)
        return -ENOMEM;
    n = pp_pystack_read(&d->mem, &d->layout.off, d->runtime, d->tid_off, th, d->nthreads);
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < d->nthreads; i++) {
            pp_dump_thread *t = &d->threads[i];

            if ((th[k].tid && th[k].tid == t->tid) ||
                (!th[k].tid && fsbase && fsbase[i] && fsbase[i] == th[k].thread_id)) {
                t->py = th[k];
                t->python = 1;
                if (o->locals && (rc = pp_dump_read_locals(d, t)) != 0)
                    goto out;
                break;
            }
        }
out:
    free(th);
    if (n > 0 && !rc)
        pp_dump_gil_holder(d);
    return n == -ESRCH ? -ESRCH : rc;
}

/* Stops every thread; *stopped[i] 1 for those seized. 0, or -EPERM (the
 * first could not be seized: another tracer, or not permitted). */
static int stop_all(pp_dump *d, char *stopped)
{
    size_t seized = 0;

    for (size_t i = 0; i < d->nthreads; i++) {
        pid_t tid = d->threads[i].tid;

        if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) {
            if (errno == ESRCH)
                continue;               /* it ended meanwhile */
            return seized ? 0 : -errno;
        }
        stopped[i] = 1;
        seized++;
        ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    }
    for (size_t i = 0; i < d->nthreads; i++) {
        int st;

        if (stopped[i] && (waitpid(d->threads[i].tid, &st, __WALL) != d->threads[i].tid ||
                           !WIFSTOPPED(st)))
            stopped[i] = 0;             /* it ended while stopping */
    }
    return 0;
}

static void let_go(pp_dump *d, const char *stopped)
{
    for (size_t i = 0; i < d->nthreads; i++)
        if (stopped[i])
            ptrace(PTRACE_DETACH, d->threads[i].tid, 0, 0);
}

int pp_dump_ptrace(pp_dump *d, const pp_dump_opts *o, pp_error *e)
{
    char *stopped = calloc(d->nthreads ? d->nthreads : 1, 1);
    uint64_t *fsbase = calloc(d->nthreads ? d->nthreads : 1, sizeof(*fsbase));
    sigset_t all, old;
    double t0;
    int rc;

    if (!stopped || !fsbase) {
        free(stopped);
        free(fsbase);
        return pp_error_set(e, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < d->nthreads; i++)
        pp_dump_proc_state(d, &d->threads[i]);
    d->engine = o->engine == PP_DUMP_NONBLOCKING ? PP_DUMP_NONBLOCKING : PP_DUMP_PTRACE;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    t0 = now_ms();
    if (d->engine == PP_DUMP_PTRACE && (rc = stop_all(d, stopped)) != 0) {
        let_go(d, stopped);
        d->engine = PP_DUMP_NONBLOCKING;    /* another tracer holds it */
    }
    for (size_t i = 0; i < d->nthreads; i++) {
        struct user_regs_struct u;

        if (stopped[i] && ptrace(PTRACE_GETREGS, d->threads[i].tid, 0, &u) == 0) {
            take_regs(d, &d->threads[i], &u);
            fsbase[i] = u.fs_base;
        }
    }
    rc = python_frames(d, o, fsbase);
    let_go(d, stopped);
    if (d->engine == PP_DUMP_PTRACE)
        d->stopped_ms = now_ms() - t0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(stopped);
    free(fsbase);
    if (rc == -ESRCH || kill(d->pid, 0) != 0)
        return pp_error_set(e, -ESRCH, "the process %d ended during the dump", (int)d->pid);
    return rc ? pp_error_set(e, rc, "out of memory") : 0;
}
