/*
 * `perfpy record`'s run: perf and the program while they run (see
 * record.h). perf's own stderr goes to a pipe so its errors can be
 * explained (perf missing, not permitted); the program keeps the real
 * stderr: perfpy passes it down as an inherited descriptor and `perfpy
 * __exec` puts it back on fd 2 before exec'ing the program.
 */
#include "cli.h"
#include "record.h"
#include "report/report.h"
#include "report/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
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

volatile sig_atomic_t pp__record_stop, pp__record_stop_sig;

void pp__record_on_stop(int sig, siginfo_t *info, void *ctx)
{
    (void)info;
    (void)ctx;
    if (!pp__record_stop)
        pp__record_stop_sig = sig;
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

/* The program's pid, once `perfpy __exec` has written it (non-blocking). */
static void read_pid(run_state *st, int fd)
{
    char buf[32];
    ssize_t n;

    if (st->program > 0 || fd < 0)
        return;
    n = read(fd, buf, sizeof(buf) - 1);
    if (n <= 0)
        return;
    buf[n] = '\0';
    st->program = (pid_t)atoi(buf);
}

/* The parent of process `pid` (a /proc name), or 0. */
static int ppid_of(const char *pid)
{
    char path[300], line[256];
    FILE *f;
    int ppid = 0;

    snprintf(path, sizeof(path), "/proc/%s/status", pid);
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "PPid: %d", &ppid) == 1)
            break;
    fclose(f);
    return ppid;
}

/* The pids whose parent is this process (orphans it inherited as a child
 * subreaper among them), up to cap. */
static size_t my_children(pid_t *out, size_t cap)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t n = 0;
    pid_t me = getpid();

    while (d && n < cap && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (ppid_of(e->d_name) == me)
            out[n++] = (pid_t)atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return n;
}

/* Sends sig to the process and to every process below it. */
static void signal_tree(pid_t top, int sig)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    kill(top, sig);
    while (d && (e = readdir(d)) != NULL) {
        int pid;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        pid = atoi(e->d_name);
        if (pid != top && ppid_of(e->d_name) == top)
            signal_tree(pid, sig);
    }
    if (d)
        closedir(d);
}

void pp__record_end_tree(double grace)
{
    pid_t kids[256];
    size_t n;
    double t0 = now_s();
    int sig = SIGTERM;

    while ((n = my_children(kids, 256)) > 0) {
        for (size_t i = 0; i < n; i++)
            signal_tree(kids[i], sig);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (sig == SIGTERM && now_s() - t0 >= grace)
            sig = SIGKILL;
        else if (sig == SIGKILL && now_s() - t0 >= grace + 5)
            break;                     /* unkillable (D state): let it be */
        usleep(20000);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
}

/* Waits for perf, reading its stderr and the program's pid; on a stop, the
 * program first (see record.h). */
void pp__record_supervise(run_state *st, double duration, double grace, int pid_fd)
{
    double t0 = now_s(), next_draw = t0 + 1.0, t_stop = 0;
    int live = isatty(2), drawn = 0, open_err = 1, phase = 0;

    for (;;) {
        struct pollfd p = {st->err_fd, POLLIN, 0};
        double now = now_s();
        int r, status;

        read_pid(st, pid_fd);
        if (phase == 0 && (pp__record_stop || (duration > 0 && now - t0 >= duration))) {
            st->stopped = 1;
            st->by_duration = !pp__record_stop;
            t_stop = now;
            phase = 1;
            /* SIGINT comes from the terminal (Ctrl-C) or to the whole
             * group, which the program is in: it has it already. SIGTERM
             * (a supervisor stopping perfpy) is passed on; --duration
             * sends what Ctrl-C would. */
            if (st->program <= 0)
                phase = 2;            /* attached, or the pid never came: perf */
            else if (st->by_duration)
                kill(st->program, SIGINT);
            else if (pp__record_stop_sig == SIGTERM)
                kill(st->program, SIGTERM);
        }
        if (phase == 2 || (phase == 1 && now - t_stop >= grace)) {
            kill(st->perf, SIGINT);   /* perf SIGTERMs the program */
            t_stop = now;
            phase = 3;
        }
        if (phase == 3 && st->program > 0 && now - t_stop >= grace) {
            signal_tree(st->program, SIGKILL);
            phase = 4;
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
                       .search_path = 1, .default_signals = 1, .new_group = 1};
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
    int status;
    pid_t r;

    read_pid(st, pid_fd);
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
    int before = m->before, now = m->now, rc = pp_max_stack_restore(m);

    if (rc == PP_MAX_STACK_DEFERRED)
        fprintf(stderr, "perfpy: note: kernel.perf_event_max_stack stays %d while another perf "
                "session records call graphs (the kernel refuses the change until then); a "
                "background process (pid %d) puts it back to %d when that session ends\n",
                now, (int)m->restorer, before);
    else if (rc < 0)
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
    (void)status;
    pp_summary_end(stderr, st->stopped, st->seconds, st->status);
}
