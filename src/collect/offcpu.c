/*
 * Time off the CPU as /proc tells it (see offcpu.h).
 */
#include "offcpu.h"
#include "native/procs.h"
#include "wall.h"
#include "profile/raw.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pp_offcpu_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *delay_ns)
{
    unsigned long long run, delay;

    if (sscanf(text, "%llu %llu", &run, &delay) != 2)
        return -EIO;
    *run_ns = run;
    *delay_ns = delay;
    return 0;
}

int pp_offcpu_parse_syscall(const char *text, int64_t *nr, uint64_t args[6])
{
    long long n;

    *nr = -1;
    memset(args, 0, 6 * sizeof(*args));
    if (strncmp(text, "running", 7) == 0)
        return 0;
    if (sscanf(text, "%lld", &n) != 1)
        return -EIO;
    if (n < 0)
        return 0;                   /* blocked outside a system call (a fault) */
    if (sscanf(text, "%*d %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
               " %" SCNx64, &args[0], &args[1], &args[2], &args[3], &args[4], &args[5]) != 6)
        return -EIO;
    *nr = n;
    return 0;
}

int pp_offcpu_wchan_reason(const char *wchan)
{
    static const struct {
        const char *prefix;
        int reason;
    } family[] = {
        {"do_nanosleep", PP_WAIT_SLEEP}, {"hrtimer_nanosleep", PP_WAIT_SLEEP},
        {"common_nsleep", PP_WAIT_SLEEP}, {"sys_pause", PP_WAIT_SLEEP},
        {"futex_", PP_WAIT_LOCK}, {"do_futex", PP_WAIT_LOCK}, {"sem", PP_WAIT_LOCK},
        {"flock", PP_WAIT_LOCK}, {"locks_lock", PP_WAIT_LOCK}, {"fcntl_setlk", PP_WAIT_LOCK},
        {"pipe_", PP_WAIT_IO}, {"wait_woken", PP_WAIT_IO}, {"sk_wait", PP_WAIT_IO},
        {"unix_stream", PP_WAIT_IO}, {"inet_", PP_WAIT_IO}, {"tcp_", PP_WAIT_IO},
        {"do_sys_poll", PP_WAIT_IO}, {"do_select", PP_WAIT_IO}, {"ep_poll", PP_WAIT_IO},
        {"do_epoll", PP_WAIT_IO}, {"n_tty_read", PP_WAIT_IO}, {"io_", PP_WAIT_IO},
        {"folio_wait", PP_WAIT_IO}, {"wait_on_page", PP_WAIT_IO}, {"jbd2", PP_WAIT_IO},
        {"do_wait", PP_WAIT_CHILD}, {"kernel_wait", PP_WAIT_CHILD},
        {"wait_for_vfork_done", PP_WAIT_CHILD},
    };

    for (size_t i = 0; i < sizeof(family) / sizeof(family[0]); i++)
        if (strncmp(wchan, family[i].prefix, strlen(family[i].prefix)) == 0)
            return family[i].reason;
    return PP_WAIT_OTHER;
}

static long task_file(pid_t pid, pid_t tid, const char *what, char *buf, size_t len)
{
    char path[96];

    snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, what);
    return pp_procs_small_file(path, buf, len);
}

int pp_offcpu_read(pid_t pid, pid_t tid, pp_offcpu *t)
{
    char buf[512];
    long rc;
    int err;

    memset(t, 0, sizeof(*t));
    t->syscall = -1;
    if ((err = pp_procs_stat(pid, tid, &t->state, NULL, NULL)) != 0)
        return err;
    if ((rc = task_file(pid, tid, "schedstat", buf, sizeof(buf))) < 0)
        return (int)rc;
    if (pp_offcpu_parse_schedstat(buf, &t->run_ns, &t->delay_ns) != 0)
        return -EIO;
    if (!pp_offcpu_blocked(t))
        return 0;
    rc = task_file(pid, tid, "syscall", buf, sizeof(buf));
    if (rc >= 0 && pp_offcpu_parse_syscall(buf, &t->syscall, t->args) == 0)
        return 0;
    if (task_file(pid, tid, "wchan", buf, sizeof(buf)) > 0 && strcmp(buf, "0") != 0)
        snprintf(t->wchan, sizeof(t->wchan), "%.63s", buf);
    return 0;
}

int pp_offcpu_blocked(const pp_offcpu *t)
{
    return t->state == 'S' || t->state == 'D';
}

int pp_offcpu_reason(const pp_offcpu *t, uint64_t gil, uint64_t gil_size)
{
    int r;

    if (t->syscall >= 0)
        r = pp_wall_reason(1, t->syscall, t->args[0], t->args[1], gil, gil_size);
    else if (t->wchan[0])
        r = pp_offcpu_wchan_reason(t->wchan);
    else
        r = PP_WAIT_OTHER;
    return r == PP_WAIT_CPU ? PP_WAIT_OTHER : r;
}

void pp_offcpu_split_of(const pp_offcpu *a, const pp_offcpu *b, uint64_t wall_ns,
                        pp_offcpu_split *out)
{
    uint64_t cpu, runq;

    memset(out, 0, sizeof(*out));
    if (b->run_ns < a->run_ns || b->delay_ns < a->delay_ns) {
        if (pp_offcpu_blocked(b))
            out->blocked_ns = wall_ns;
        else
            out->cpu_ns = wall_ns;
        return;
    }
    cpu = b->run_ns - a->run_ns;
    runq = b->delay_ns - a->delay_ns;
    if (runq > wall_ns)
        runq = wall_ns;
    if (!pp_offcpu_blocked(a) && !pp_offcpu_blocked(b)) {
        /* running at both reads: what is not a wait for a CPU ran (the
         * account of a running thread lags the read by up to a tick) */
        out->runq_ns = runq;
        out->cpu_ns = wall_ns - runq;
        return;
    }
    if (cpu + runq > wall_ns)       /* the account ran ahead of this interval */
        cpu = wall_ns - runq;
    out->cpu_ns = cpu;
    out->runq_ns = runq;
    out->blocked_ns = wall_ns - cpu - runq;
}
