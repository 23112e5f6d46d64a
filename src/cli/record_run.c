/*
 * `perfpy record`'s run: perf and the program while they run (see
 * record.h). perf's own stderr goes to a pipe so its errors can be
 * explained (perf missing, not permitted); the program keeps the real
 * stderr: perfpy passes it down as an inherited descriptor and `perfpy
 * __exec` puts it back on fd 2 before exec'ing the program.
 */
#include "cli.h"
#include "record.h"
#include "report/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* ---- running perf ------------------------------------------------------------- */

volatile sig_atomic_t pp__record_stop;

void pp__record_on_stop(int sig)
{
    (void)sig;
    pp__record_stop = 1;
}


static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void keep_err(run_state *st, const char *buf, size_t n)
{
    if (n >= sizeof(st->err)) {
        buf += n - (sizeof(st->err) - 1);
        n = sizeof(st->err) - 1;
    }
    if (st->err_len + n >= sizeof(st->err)) {
        size_t drop = st->err_len + n - (sizeof(st->err) - 1);
        memmove(st->err, st->err + drop, st->err_len - drop);
        st->err_len -= drop;
    }
    memcpy(st->err + st->err_len, buf, n);
    st->err_len += n;
    st->err[st->err_len] = '\0';
}

static void status_line(double elapsed, int done)
{
    if (done)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "\r\033[Kperfpy: recording %.1f s (Ctrl-C stops and writes the "
                "profile)", elapsed);
    fflush(stderr);
}

/* Waits for perf, reading its stderr, stopping it on Ctrl-C or after the
 * duration, drawing the status line on a terminal. */
void pp__record_supervise(run_state *st, double duration)
{
    double t0 = now_s(), next_draw = t0 + 1.0;
    int live = isatty(2), drawn = 0, open_err = 1, sent = 0;

    for (;;) {
        struct pollfd p = {st->err_fd, POLLIN, 0};
        double now = now_s();
        int r, status;

        if (!sent && (pp__record_stop || (duration > 0 && now - t0 >= duration))) {
            kill(st->perf, SIGINT);
            st->stopped = 1;
            sent = 1;
        }
        if (waitpid(st->perf, &status, WNOHANG) == st->perf) {
            st->status = status;
            break;
        }
        r = open_err ? poll(&p, 1, 100) : poll(NULL, 0, 100);
        if (r > 0 && open_err) {
            char buf[4096];
            ssize_t n = read(st->err_fd, buf, sizeof(buf));
            if (n > 0)
                keep_err(st, buf, (size_t)n);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                open_err = 0;
        }
        if (live && now_s() >= next_draw) {
            status_line(now_s() - t0, 0);
            drawn = 1;
            next_draw += 0.5;
        }
    }
    for (;;) {   /* what perf wrote just before exiting */
        char buf[4096];
        ssize_t n = open_err ? read(st->err_fd, buf, sizeof(buf)) : 0;
        if (n <= 0)
            break;
        keep_err(st, buf, (size_t)n);
    }
    if (drawn)
        status_line(0, 1);
    st->seconds = now_s() - t0;
}

int pp__record_start_perf(char **argv, run_state *st)
{
    pp_spawn_opts o = {.in_fd = PP_FD_INHERIT, .out_fd = PP_FD_INHERIT,
                       .search_path = 1, .default_signals = 1};
    int pipefd[2], rc;

    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -errno;
    o.err_fd = pipefd[1];
    rc = pp_spawn(argv, &o, &st->perf);
    close(pipefd[1]);
    if (rc < 0) {
        close(pipefd[0]);
        return rc;
    }
    st->err_fd = pipefd[0];
    return 0;
}

/* Why perf could not record, in words that say what to do. */
void pp__record_explain_failure(const run_state *st)
{
    const char *e = st->err;

    if (pp_perf_refused(e)) {
        char advice[1024];
        pp_perf_refused_advice(advice, sizeof(advice));
        pp_fail("perf is not permitted to record: %s. Check with `perfpy doctor`.", advice);
    }
    else if (strstr(e, "clockid") || strstr(e, "use_clockid"))
        pp_fail("this perf cannot timestamp with CLOCK_MONOTONIC (-k 1), which jit "
                "mode needs; upgrade perf, or use --mode perf. perf said:\n%s", e);
    else
        pp_fail("perf record failed. perf said:\n%s", e[0] ? e : "(nothing)");
}

/* perf and the program: perfpy is a child subreaper, so when perf ends
 * first (killed, or crashed) the program becomes perfpy's child instead of
 * init's. It then goes on to its end, perfpy waits for it and passes its
 * status on, and what perf wrote is finished (pp_perf_data_finish) and
 * reported. A program that ended with perf is reaped here too, so its own
 * status is known (perf's mimics it). */
int pp__record_watch_program(int *r, int *w)
{
    int fds[2];

    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    *w = fcntl(fds[1], F_DUPFD, 10);   /* no CLOEXEC: perf passes it to __exec */
    close(fds[1]);
    if (*w < 0) {
        close(fds[0]);
        return -1;
    }
    *r = fds[0];
    return 0;
}

void pp__record_wait_program(run_state *st, int pid_fd)
{
    char buf[32];
    ssize_t n = pid_fd >= 0 ? read(pid_fd, buf, sizeof(buf) - 1) : -1;
    int status;
    pid_t r;

    if (n <= 0)
        return;
    buf[n] = '\0';
    st->program = (pid_t)atoi(buf);
    if (st->program <= 0 || st->stopped)
        return;
    r = waitpid(st->program, &status, WNOHANG);
    if (r == st->program) {
        st->status = status;
        return;
    }
    if (r != 0)
        return;                        /* perf reaped it: perf's status mimics it */
    st->perf_died = 1;
    if (WIFSIGNALED(st->status))
        fprintf(stderr, "perfpy: perf was killed while recording (signal %d, %s); ",
                WTERMSIG(st->status), strsignal(WTERMSIG(st->status)));
    else
        fprintf(stderr, "perfpy: perf ended while recording (exit status %d); ",
                WIFEXITED(st->status) ? WEXITSTATUS(st->status) : -1);
    fprintf(stderr, "the program (pid %d) goes on and perfpy waits for it; what perf "
            "recorded until then is kept\n", (int)st->program);
    while (waitpid(st->program, &status, 0) < 0)
        if (errno != EINTR)
            return;
    st->status = status;
}

void pp__record_raise_max_stack(pp_max_stack *m)
{
    pp_max_stack_raise(m, PP_MAX_STACK_WANTED);
    if (m->raised || m->now < 0 || m->now >= PP_MAX_STACK_WANTED)
        return;
    fprintf(stderr, "perfpy: note: the kernel cuts frame-pointer stacks at %d native frames "
            "(kernel.perf_event_max_stack; about %d Python frames)%s%s%s; deeper stacks are "
            "marked [truncated]: as root, `sysctl kernel.perf_event_max_stack=%d` before "
            "recording, or --mode jit\n", m->now, m->now / 4,
            m->err ? " and perfpy could not raise it: " : "",
            m->err ? strerror(m->err) : "",
            m->err == EBUSY ? " (another perf session is recording call graphs)" : "",
            PP_MAX_STACK_WANTED);
}

void pp__record_restore_max_stack(pp_max_stack *m)
{
    int before = m->before, rc = pp_max_stack_restore(m);

    if (rc < 0)
        fprintf(stderr, "perfpy: warning: cannot put kernel.perf_event_max_stack back to %d: "
                "%s; as root: sysctl kernel.perf_event_max_stack=%d\n", before,
                strerror(-rc), before);
}

/* When many stacks are cut: why, and what would keep them whole. */
void pp__record_explain_truncation(const pp_profile *p, int fp, long stack_size,
                               const pp_max_stack *m)
{
    if (!p->samples || (double)p->truncated < 0.10 * (double)p->samples)
        return;
    if (fp && m->now >= 0 && m->now < PP_MAX_STACK_WANTED)
        fprintf(stderr, "perfpy: many stacks are cut: the kernel stops frame-pointer "
                "stacks at kernel.perf_event_max_stack=%d native frames; as root, `sysctl "
                "kernel.perf_event_max_stack=%d` (perfpy raises it by itself when run as "
                "root)\n", m->now, PP_MAX_STACK_WANTED);
    else if (!fp)
        fprintf(stderr, "perfpy: many stacks are cut: DWARF unwinding sees only the %ld "
                "bytes of stack perf copies per sample (--stack-size), and with the hook "
                "each Python call takes 0.5-1 KB of it (about 60 Python frames per 32 KiB "
                "on 3.8-3.13, 30 on 3.14+; docs/PERFORMANCE.md, \"Deep stacks\"); --stack-size "
                "65528, the most perf copies, keeps about twice as deep (twice the data); "
                "deeper stacks need an interpreter built with frame pointers, where "
                "--mode perf follows them about 300 Python frames deep\n", stack_size);
}

/* Where a recording's jit dumps (and so perf inject's ELFs) go. */
int pp__record_program_status(const run_state *st)
{
    if (WIFEXITED(st->status))
        return WEXITSTATUS(st->status);
    if (WIFSIGNALED(st->status))
        return 128 + WTERMSIG(st->status);
    return PP_EXIT_FAIL;
}

void pp__record_describe_end(const run_state *st, int status)
{
    if (st->stopped)
        fprintf(stderr, "perfpy: recording stopped after %.1f s\n", st->seconds);
    else if (WIFSIGNALED(st->status))
        fprintf(stderr, "perfpy: the program was killed by signal %d (%s); its profile "
                "is still written\n", WTERMSIG(st->status), strsignal(WTERMSIG(st->status)));
    else if (status != 0)
        fprintf(stderr, "perfpy: the program exited with status %d; its profile is still "
                "written\n", status);
}
