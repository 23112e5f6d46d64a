/*
 * The started program held at its exec until its _PyRuntime is found
 * (hold.h has the picture). A static CPython (Debian's) shows it at
 * the exec stop. One linked to libpython (pyenv's, a --enable-shared
 * build) has none there: ld.so maps libpython some 30 system calls later
 * (openat, read, then one mmap per segment: its text before its data,
 * where _PyRuntime lies), still long before Python code runs. It is run
 * to its entry point (a breakpoint there, x86_64: sample mode's only
 * machine), where every library is mapped and relocated. (Stepping ld.so's
 * system calls instead, and looking after each mmap, stopped it about 60
 * times, each a round trip through perfpy-sample.) Where the
 * breakpoint cannot be set it is let go, and looked for as others are.
 */
#include "hold.h"
#include "cpython/pysyms.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int may_trace(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];

    if (syscall(SYS_capget, &h, d) != 0)
        return 0;
    return (d[CAP_SYS_PTRACE / 32].effective >> (CAP_SYS_PTRACE % 32)) & 1;
}

int pp__hold_seize(pid_t pid)
{
    if (!may_trace())
        return -EPERM;
    if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXEC) != 0)
        return -errno;
    return 0;
}

/* Whether the image pid runs (64-bit: its auxiliary vector is read as
 * ours) needs a libpython. */
static int needs_libpython(pid_t pid)
{
    char path[64];
    int fd, found;

    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    found = pp_pysyms_needs_libpython(fd, 1);
    close(fd);
    return found;
}

/* A breakpoint at the image's entry point (x86_64: int3): ld.so has
 * mapped and relocated every library it needs (libpython) when it jumps
 * there, and no Python code has run. The byte is put back before the
 * program is let go, whatever lets it go; were perfpy-sample killed
 * meanwhile (ld.so's 0.2 ms), the program would die of the SIGTRAP. */
typedef struct trap {
    uint64_t at;
    long orig;
    int set;
} trap;

#if defined(__x86_64__)
#include <sys/user.h>

static uint64_t entry_of(pid_t pid)
{
    char path[64];
    uint64_t v[2], entry = 0;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    while (read(fd, v, sizeof(v)) == (ssize_t)sizeof(v) && v[0] != AT_NULL)
        if (v[0] == AT_ENTRY) {
            entry = v[1];
            break;
        }
    close(fd);
    return entry;
}

static int trap_set(pid_t pid, trap *t)
{
    if (!(t->at = entry_of(pid)))
        return -ENOENT;
    errno = 0;
    t->orig = ptrace(PTRACE_PEEKTEXT, pid, t->at, 0);
    if (errno)
        return -errno;
    if (ptrace(PTRACE_POKETEXT, pid, t->at, (t->orig & ~0xffL) | 0xcc) != 0)
        return -errno;
    t->set = 1;
    return 0;
}

/* At a SIGTRAP: 1 when it is the breakpoint's, the program then set back
 * to run the instruction it replaced. */
static int trap_hit(pid_t pid, const trap *t)
{
    struct user_regs_struct regs;

    if (!t->set || ptrace(PTRACE_GETREGS, pid, 0, &regs) != 0 || regs.rip != t->at + 1)
        return 0;
    regs.rip = t->at;
    return ptrace(PTRACE_SETREGS, pid, 0, &regs) == 0;
}
#else
static int trap_set(pid_t pid, trap *t)
{
    (void)pid;
    (void)t;
    return -ENOTSUP;                /* its loader's system calls are stepped */
}

static int trap_hit(pid_t pid, const trap *t)
{
    (void)pid;
    (void)t;
    return 0;
}
#endif

static void trap_clear(pid_t pid, trap *t)
{
    if (t->set)
        ptrace(PTRACE_POKETEXT, pid, t->at, t->orig);
    t->set = 0;
}

/* when the stop being handled was seen (its time stopped counted as it
 * is resumed) */
static uint64_t stop_ns;

static void resumed(pp_hold_stats *out)
{
    if (stop_ns)
        out->stopped_ns += mono_ns() - stop_ns;
    stop_ns = 0;
}

static int let_go(pid_t pid, trap *t, int sig, int why, uint64_t t0, pp_hold_stats *out)
{
    trap_clear(pid, t);
    resumed(out);
    out->why = why;
    out->found = why == PP_HOLD_FOUND;
    out->held_ns = t0 ? mono_ns() - t0 : 0;
    if (ptrace(PTRACE_DETACH, pid, 0, sig) != 0 && errno != ESRCH)
        return -errno;
    return 0;
}

/* Until the program's next stop, at most 1 ms: its SIGCHLD (blocked, so
 * none is missed between the waitpid and this). */
static void wait_stop(void)
{
    sigset_t chld;
    struct timespec ms = {0, 1000000};

    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigtimedwait(&chld, NULL, &ms);
}

static int hold_run(pid_t pid, double bound_s, pp_hold_look look, pp_hold_idle idle, void *ctx,
                    int *status, pp_hold_stats *out);

int pp__hold_run(pid_t pid, double bound_s, pp_hold_look look, pp_hold_idle idle, void *ctx,
                 int *status, pp_hold_stats *out)
{
    sigset_t chld, old;
    int rc;

    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    rc = hold_run(pid, bound_s, look, idle, ctx, status, out);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static int hold_run(pid_t pid, double bound_s, pp_hold_look look, pp_hold_idle idle, void *ctx,
                    int *status, pp_hold_stats *out)
{
    uint64_t t0 = 0, bound = (uint64_t)(bound_s * 1e9);
    int ws, r, running = 0, interrupted = 0;
    trap t = {0, 0, 0};

    stop_ns = 0;
    memset(out, 0, sizeof(*out));
    for (;;) {
        /* between execs (env, a shell that execs python), or on its way to
         * its entry point: the recording goes on while the program runs */
        pid_t w = waitpid(pid, &ws, __WALL | (running ? WNOHANG : 0));

        if (w == 0) {
            if (mono_ns() - t0 < bound) {
                if (!t.set)         /* on its way to its entry: ld.so's 0.2 ms */
                    idle(ctx);
                wait_stop();
            } else if (!interrupted) {
                interrupted = 1;
                if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0)
                    return let_go(pid, &t, 0, PP_HOLD_ENDED, t0, out);
                running = 0;        /* its stop is waited for */
            }
            continue;
        }
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        running = 0;
        stop_ns = mono_ns();
        if (WIFEXITED(ws) || WIFSIGNALED(ws)) {       /* exec failed (127), or killed */
            *status = ws;
            out->why = PP_HOLD_ENDED;
            out->held_ns = t0 ? mono_ns() - t0 : 0;
            return 1;
        }
        if (!WIFSTOPPED(ws))
            continue;
        if (ws >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8) && !interrupted) {
            t0 = t0 ? t0 : mono_ns();
            t.set = 0;              /* a new image: no breakpoint in it */
            out->looks++;
            if ((r = look(ctx)) != 0)
                return let_go(pid, &t, 0, r > 0 ? PP_HOLD_FOUND : PP_HOLD_REFUSED, t0, out);
            if (mono_ns() - t0 >= bound)
                return let_go(pid, &t, 0, PP_HOLD_BOUND, t0, out);
            if (needs_libpython(pid) && trap_set(pid, &t) != 0)
                return let_go(pid, &t, 0, PP_HOLD_MISSED, t0, out);   /* looked for as
                                                                          others are */
            if (ptrace(PTRACE_CONT, pid, 0, 0) != 0)
                return let_go(pid, &t, 0, PP_HOLD_ENDED, t0, out);
            resumed(out);
            out->execs += !t.set;
            running = 1;
        } else if (WSTOPSIG(ws) == SIGTRAP && ws >> 16 == 0 && trap_hit(pid, &t)) {
            trap_clear(pid, &t);
            out->looks++;
            r = look(ctx);
            return let_go(pid, &t, 0, r > 0 ? PP_HOLD_FOUND : r < 0 ? PP_HOLD_REFUSED :
                          PP_HOLD_MISSED, t0, out);
        } else if (interrupted && ws >> 16 == PTRACE_EVENT_STOP) {
            return let_go(pid, &t, 0, PP_HOLD_BOUND, t0, out);
        } else {
            /* a signal (delivered as the detach lets it go), a group
             * stop (left stopped), anything else: not held further */
            int sig = (ws >> 16) == 0 ? WSTOPSIG(ws) : 0;

            return let_go(pid, &t, sig, PP_HOLD_SIGNAL, t0, out);
        }
    }
}
