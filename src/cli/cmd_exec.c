/*
 * perfpy __exec [--stderr-fd N] [--pid-fd M] -- PROGRAM ARGS...
 *
 * Internal to `perfpy record`: the program perf starts. It tells its pid
 * (the program's, after the exec) on M, puts the user's stderr back on
 * fd 2 (perf's own stderr is a pipe to perfpy) and the environment perf
 * changed back as it was, and becomes the program (same pid, no extra
 * process):
 *
 *   perfpy record ─► perf record ... -- perfpy __exec --stderr-fd N -- python app.py
 *                                        └─ dup2(N, 2); restore env; execvp(python)
 */
#include "cli.h"
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the program's environment -------------------------------------------------- */

/* perf puts its own directories first on the workload's PATH
 * (/usr/lib/perf-core, and /usr/bin when run as /usr/bin/perf: ahead of a
 * venv's or pyenv's python3) and sets PREFIX, PERF_BUILDID_DIR and
 * DEBUGINFOD_URLS. record saves these as perfpy found them in
 * PERFPY_EXEC_ENV ("NAME=value" or "NAME" for unset, one a line) and
 * `perfpy __exec` puts them back before running the program, so that
 * `python3` is the one the user's shell would run. */
static const char *const perf_sets[] = {"PATH", "PREFIX", "PERF_BUILDID_DIR", "DEBUGINFOD_URLS"};
#define N_PERF_SETS (sizeof(perf_sets) / sizeof(perf_sets[0]))

/* ---- the program's signals and process group ------------------------------------ */

/* The program starts with the signal dispositions and mask perfpy itself
 * was started with (perf ignores SIGUSR2 and blocks others before it forks
 * the workload; perfpy ignores SIGPIPE), and in perfpy's process group, the
 * terminal's foreground one: Ctrl-C reaches perfpy and the program, never
 * perf, which runs in a group of its own (perf would SIGTERM the program at
 * once). Saved at record's start in PERFPY_EXEC_SIGNALS as
 * "<ignored> <blocked> <pgid>" (hex bit masks of signals 1-64). */
static uint64_t start_ignored, start_blocked;

void pp_exec_signals_capture(void)
{
    sigset_t mask;

    sigprocmask(SIG_SETMASK, NULL, &mask);
    for (int sig = 1; sig <= 64 && sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
            start_ignored |= UINT64_C(1) << (sig - 1);
        if (sigismember(&mask, sig) == 1)
            start_blocked |= UINT64_C(1) << (sig - 1);
    }
}

static void restore_signals_for_exec(void)
{
    const char *saved = getenv("PERFPY_EXEC_SIGNALS");
    unsigned long long ignored, blocked;
    long pgid;
    sigset_t mask;

    if (!saved || sscanf(saved, "%llx %llx %ld", &ignored, &blocked, &pgid) != 3)
        return;
    unsetenv("PERFPY_EXEC_SIGNALS");
    sigemptyset(&mask);
    for (int sig = 1; sig <= 64 && sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        signal(sig, (ignored >> (sig - 1)) & 1 ? SIG_IGN : SIG_DFL);
        if ((blocked >> (sig - 1)) & 1)
            sigaddset(&mask, sig);
    }
    sigprocmask(SIG_SETMASK, &mask, NULL);
    if (pgid > 0)
        setpgid(0, (pid_t)pgid);     /* back in the terminal's group */
}

int pp_exec_env_save(void)
{
    char buf[65536];
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < N_PERF_SETS; i++) {
        const char *v = getenv(perf_sets[i]);
        int w;
        if (v && strchr(v, '\n'))
            continue;                   /* not representable: perf's value stays */
        w = snprintf(buf + n, sizeof(buf) - n, v ? "%s=%s\n" : "%s\n", perf_sets[i], v);
        if (w < 0 || (size_t)w >= sizeof(buf) - n)
            return -ENAMETOOLONG;
        n += (size_t)w;
    }
    if (setenv("PERFPY_EXEC_ENV", buf, 1) != 0)
        return -errno;
    snprintf(buf, sizeof(buf), "%llx %llx %ld", (unsigned long long)start_ignored,
             (unsigned long long)start_blocked, (long)getpgrp());
    return setenv("PERFPY_EXEC_SIGNALS", buf, 1) == 0 ? 0 : -errno;
}

static void restore_env_for_exec(void)
{
    const char *saved = getenv("PERFPY_EXEC_ENV");
    char *copy = saved ? strdup(saved) : NULL, *line, *next;

    unsetenv("PERFPY_EXEC_ENV");
    for (line = copy; line && *line; line = next) {
        char *eq;
        next = strchr(line, '\n');
        if (!next)
            break;
        *next++ = '\0';
        eq = strchr(line, '=');
        if (eq)
            *eq = '\0';
        for (size_t i = 0; i < N_PERF_SETS; i++) {
            if (strcmp(line, perf_sets[i]) != 0)
                continue;
            if (eq)
                setenv(line, eq + 1, 1);
            else
                unsetenv(line);
        }
    }
    free(copy);
}


/* perfpy __exec --stderr-fd N [--pid-fd M] -- PROGRAM ARGS...: tells its pid
 * (the program's, after the exec) on M, puts the user's stderr
 * back on fd 2 (perf's own stderr is a pipe to perfpy) and the environment
 * perf changed back as it was (see pp_exec_env_save), and becomes the
 * program. Internal to record. */
int pp_exec_parse(int argc, char **argv, pp_exec_opts *o, pp_usage *u)
{
    int i = 1;
    long fd;

    o->stderr_fd = o->pid_fd = -1;
    o->argv = NULL;
    while (i + 1 < argc && (strcmp(argv[i], "--stderr-fd") == 0 ||
                            strcmp(argv[i], "--pid-fd") == 0)) {
        if (pp_parse_long(argv[i + 1], 3, INT_MAX, &fd) < 0)
            return pp_usage_set(u, "%s takes a descriptor number above 2, not '%s'",
                                argv[i], argv[i + 1]);
        if (argv[i][2] == 's')
            o->stderr_fd = (int)fd;
        else
            o->pid_fd = (int)fd;
        i += 2;
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    return pp_operand_program(argc, argv, i, NULL, &o->argv, u);
}

int pp_cmd_exec(int argc, char **argv)
{
    pp_exec_opts o;
    pp_usage u;

    if (pp_exec_parse(argc, argv, &o, &u) != PP_PARSED_RUN)
        return pp_usage_error("__exec", "%s", u.message);
    if (o.stderr_fd >= 0 && dup2(o.stderr_fd, 2) == 2)
        close(o.stderr_fd);
    if (o.pid_fd >= 0) {
        char buf[16];
        int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
        if (write(o.pid_fd, buf, (size_t)n) != n)
            fprintf(stderr, "perfpy: cannot tell perfpy record the program's pid: %s\n",
                    strerror(errno));
        close(o.pid_fd);
    }
    restore_env_for_exec();
    restore_signals_for_exec();
    pp_exec(o.argv);
    return 127;                        /* as a shell says "not found" */
}
