/*
 * A recording of one program: started here (held at its exec until its
 * _PyRuntime is found: hold.h) and followed to its end, or a running
 * process attached to, until it ends, the duration passes or Ctrl-C. The
 * ring is read every 20 ms at most, the processes' _PyRuntime looked for
 * meanwhile, and perfpy top's interval shown when it is over.
 */
#include "record.h"
#include "hold.h"
#include "native/procs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* what a started program has after SIGINT (-d), then after SIGTERM: record's
 * --grace default (perfpy-sample is not told --grace) */
#define PP_RECORD_GRACE 5.0

static pid_t start_program(char **argv, int *go)
{
    int p[2];
    pid_t pid;
    char c;

    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    if ((pid = fork()) == 0) {
        /* started once the collector follows it: its first sample counts */
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
            _exit(127);
        signal(SIGINT, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "perfpy: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(p[0]);
    *go = p[1];
    return pid;
}

volatile sig_atomic_t pp__interrupted;

void pp__on_interrupt(int sig)
{
    (void)sig;
    pp__interrupted = 1;
}

/* perfpy top --idle: the waits still going on end with the interval, and
 * each thread still blocked is captured again for the next (the task
 * iterator's two passes, as at the recording's end and start), so that a
 * thread blocked for longer than an interval shows in each. */
static void cut_waits(state *st)
{
    for (size_t i = 0; i < st->nprocs; i++)
        if (pp_collect_threads(st->c, st->procs[i].pid, 1) == 0)
            pp_collect_threads(st->c, st->procs[i].pid, 0);
    pp__ring_take(st, 0);
}

/* perfpy top: its keys, and the interval shown once it is over (the
 * waits still going on ended with it first). */
static void top_tick(state *st)
{
    uint64_t now = pp__mono_ns();

    if (pp__interval_top_keys(st) == PP_TOP_QUIT)
        pp__interrupted = 1;
    if (now < st->next_ns)
        return;
    if (st->wall)
        cut_waits(st);
    pp__interval_top_show(st, now);
}

/* Attached: until the process ends, the duration passes, or Ctrl-C.
 * The duration's end (CLOCK_MONOTONIC s), or 0. */
static double follow(state *st, double duration)
{
    double end = duration > 0 ? pp__now_s() + duration : 0;

    signal(SIGINT, pp__on_interrupt);
    signal(SIGTERM, pp__on_interrupt);
    pp__targets_find_all(st);
    while (!pp__interrupted && (!end || pp__now_s() < end) &&
           (kill(st->pid, 0) == 0 || errno == EPERM)) {
        pp__ring_take(st, 20);
        pp__targets_find_all(st);
        if (st->top_mode)
            top_tick(st);
    }
    st->stopped = pp__interrupted || (end && pp__now_s() >= end);
    /* its children stop being sampled with it: the map is freed on close */
    return end;
}

/* Follows the running process pid (see follow). */
int pp__follow_attach(state *st, pid_t pid, long rate, double duration)
{
    pp_proc_info tree[256];
    char how[192];
    double end;
    long n;
    int rc;

    st->pid = pid;
    st->attached = 1;
    pp__targets_of(st, pid);
    if ((rc = pp_collect_add(st->c, pid, NULL, 0)) != 0) {
        fprintf(stderr, "perfpy: cannot sample the process %d: %s\n", (int)pid,
                rc == -ENOENT ? "no such process" : strerror(-rc));
        return PP_EXIT_FAIL;
    }
    /* its children already running (a pool's workers): the fork
     * tracepoint follows only those it starts from now on */
    if ((n = pp_procs_tree(pid, tree, sizeof(tree) / sizeof(tree[0]))) > 1)
        for (long i = 1; i < n; i++) {
            pp__targets_of(st, tree[i].pid);
            if (pp_collect_add(st->c, tree[i].pid, NULL, 0) == 0)
                st->children++;
        }
    if (st->wall) {
        pp__targets_find_all(st);         /* their Python frames, before the iterator reads them */
        for (size_t i = 0; i < st->nprocs; i++)
            if ((rc = pp_collect_threads(st->c, st->procs[i].pid, 0)) != 0)
                fprintf(stderr, "perfpy: the threads of the process %d that were waiting "
                        "when perfpy attached could not be read (%s): their time off the "
                        "CPU counts from their next wake-up\n", (int)st->procs[i].pid,
                        strerror(-rc));
    }
    if (st->event)
        snprintf(how, sizeof(how), "%s, a sample every %llu %s", st->event->name,
                 (unsigned long long)st->period_ns, st->event->unit);
    else
        snprintf(how, sizeof(how), "%ld Hz", rate);
    if (!st->top_mode)
        fprintf(stderr, "perfpy: recording the process %d in sample mode (%s, BPF%s; "
                "nothing installed in it); Ctrl-C stops\n", (int)pid, how,
                st->wall ? ", wall clock" : "");
    pp__waits_read_sooner(st);
    end = follow(st, duration);
    if (st->wall) {                /* what is still off the CPU ends now */
        /* or with the duration, if the last poll took this process past
         * it (a loaded machine: polls of 0.3-0.6 s seen): -d 3 is 3 s of
         * each wait */
        if (end > 0)
            pp_collect_end_at(st->c, (uint64_t)(end * 1e9));
        for (size_t i = 0; i < st->nprocs; i++)
            pp_collect_threads(st->c, st->procs[i].pid, 1);
    }
    return 0;
}

/* The held program's look at each of its stops: its maps searched, not
 * held back as the other looks may be (PERFPY_SAMPLE_LOOK_DELAY_MS). The
 * ring is not read: the program waits for this, and its first samples'
 * unwinding opens its files (5 ms for 3.8); its exec's event, read later,
 * keeps what was found after it (on_event). */
static int hold_look(void *ctx)
{
    state *st = ctx;
    proc *p;

    if (!(p = pp__targets_of(st, st->pid)))
        return -1;
    if (!p->runtime && !p->refused)
        pp__targets_look(st, p);
    return p->runtime ? 1 : p->refused ? -1 : 0;
}

/* The program running between two execs of its hold (env), or to its
 * entry point: recorded, its children looked for (it is looked at in its
 * next stop: a first look at a new image opens its files, milliseconds
 * the program would wait stopped). */
static void hold_idle(void *ctx)
{
    state *st = ctx;

    pp__ring_take(st, 0);
    for (size_t i = 0; i < st->nprocs; i++) {
        proc *p = &st->procs[i];

        if (p->pid != st->pid)
            pp__targets_find(st, p);
    }
}

/* The program held at its exec until its _PyRuntime is found, at most
 * HOLD_BOUND seconds (hold.h). 1 when it ended meanwhile. */
#define HOLD_BOUND 1.0

static int hold(state *st, int *status)
{
    static const char *const why[] = {"", "found", "not a CPython", "refused", "the bound",
                                      "a signal", "its end", "not found at its entry"};
    pp_hold_stats hs = {0};
    int rc;

    st->held_ns = UINT64_MAX;      /* its samples read meanwhile are ld.so's */
    rc = pp__hold_run(st->pid, HOLD_BOUND, hold_look, hold_idle, st, status, &hs);
    if (getenv("PERFPY_SAMPLE_HOLD_SAY"))        /* tests: what the hold took */
        fprintf(stderr, "perfpy: held %.3f ms (stopped %.3f ms), %u looks, %u images run "
                "through; let go: %s\n", (double)hs.held_ns / 1e6,
                (double)hs.stopped_ns / 1e6, hs.looks, hs.execs, hs.why >= 0 && hs.why <= PP_HOLD_MISSED ? why[hs.why] : "?");
    st->held_ns = pp__mono_ns();
    return rc == 1;
}

/* Starts the program, once the collector follows it, and waits for its end. */
int pp__follow_program(state *st, char **argv, int *status, double duration)
{
    double end = duration > 0 ? pp__now_s() + duration : 0;
    uint64_t started;
    int go, rc, held, sent = 0;

    signal(SIGINT, SIG_IGN);       /* the program gets Ctrl-C; it ends, then we do */
    if ((st->pid = start_program(argv, &go)) < 0) {
        fprintf(stderr, "perfpy: cannot start %s: %s\n", argv[0], strerror(errno));
        return PP_EXIT_FAIL;
    }
    pp__waits_read_sooner(st);
    pp__targets_of(st, st->pid);
    if ((rc = pp_collect_add(st->c, st->pid, NULL, 0)) != 0) {
        fprintf(stderr, "perfpy: cannot sample %s: %s\n", argv[0], strerror(-rc));
        kill(st->pid, SIGKILL);
        waitpid(st->pid, status, 0);
        return PP_EXIT_FAIL;
    }
    started = (uint64_t)(pp__now_s() * 1e9);          /* the samples' clock, CLOCK_MONOTONIC */
    pp_fold_marker(st->fold, (int32_t)st->pid, (int32_t)st->pid, PP_MARKER_PROCESS, started,
                   started, "process start");
    held = pp__hold_seize(st->pid) == 0;
    if (write(go, "g", 1) != 1)
        kill(st->pid, SIGKILL);
    close(go);
    if (held && hold(st, status))
        return 0;                  /* it ended before it was let go (exec failed) */
    if (!st->top_mode)
        fprintf(stderr, "perfpy: recording %s in sample mode (BPF%s; nothing installed in "
                "the program)\n", argv[0], st->wall ? ", wall clock" : "");
    for (;;) {
        pid_t w = waitpid(st->pid, status, WNOHANG);

        /* top's q or SIGTERM: the terminal back, then the program ended
         * as -d ends it */
        if (st->top_mode && w == 0 && pp__interrupted && !end) {
            pp__interval_top_end(st);
            end = pp__now_s();
        }

        /* past the duration: SIGINT, as on Ctrl-C, then SIGTERM and
         * SIGKILL PP_RECORD_GRACE seconds apart if it goes on */
        if (w == 0 && end && pp__now_s() >= end + sent * PP_RECORD_GRACE && sent < 3) {
            kill(st->pid, sent == 0 ? SIGINT : sent == 1 ? SIGTERM : SIGKILL);
            st->stopped = 1;
            sent++;
        }
        pp__targets_find_all(st);
        pp__ring_take(st, w == 0 ? 20 : 0);
        if (st->top_mode && w == 0 && !end)
            top_tick(st);
        if (w == st->pid || (w < 0 && errno != EINTR))
            return 0;
    }
}

