/*
 * perfpy top [-p PID | -- PROGRAM ARGS...]
 *
 * A live view of a Python program, like top: its functions ranked by their
 * own and total share of the last interval's samples, redrawn every
 * interval. The recorder is perfpy-sample's (it links libbpf and
 * elfutils): sample mode's (sample_main.c) where its BPF program loads,
 * else read mode's (read_main.c); top_view.c draws. This file parses the
 * options, picks the mode and hands over, as record's sample mode does.
 */
#include "cli.h"
#include "options.h"
#include "record.h"
#include "top_view.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOP_RATE 99                 /* samples per second per busy thread */
#define TOP_INTERVAL 1.0            /* seconds between redraws */

static void help(FILE *out)
{
    fprintf(out,
            "usage: perfpy top [options] -p PID\n"
            "       perfpy top [options] [--] PROGRAM [ARGS...]\n"
            "\n"
            "A live view of a running Python program, like top: its functions ranked\n"
            "by their own and total share of the last interval's CPU samples, redrawn\n"
            "every interval, with the samples, their rate, those lost, and the\n"
            "processes and threads followed. CPython 3.8 to 3.15; nothing is\n"
            "installed in the program. The best mode this machine allows, said on\n"
            "the second line: sample mode (BPF: root, or CAP_BPF and CAP_PERFMON):\n"
            "Python, C and kernel functions; else read mode (a process of your own\n"
            "user, or one top starts): Python functions only.\n"
            "\n"
            "keys: o rank by own share, t by total share, n own share by the leaf\n"
            "frame (C and kernel functions rank too) or by the innermost Python\n"
            "function, h threads or functions, p pause, q quit (Ctrl-C too). A\n"
            "started program is sent SIGINT when top quits (then SIGTERM and SIGKILL,\n"
            "5 s apart). When stdout is not a terminal: one plain table per\n"
            "interval, of the first --rows functions, then how many more there are.\n"
            "\n"
            "options:\n"
            "  -p, --pid PID        the running process to watch, its children too\n"
            "                       (default: start PROGRAM)\n"
            "  -r, --rate HZ        samples per second per busy thread (default: %d)\n"
            "  -i, --interval SECS  seconds between redraws (default: %g)\n"
            "      --rows N         functions in each plain table (stdout not a\n"
            "                       terminal); 0: all of them (default: %d)\n"
            "      --mode MODE      auto, sample or read (default: auto: sample mode\n"
            "                       where it loads, else read mode)\n"
            "      --idle           wall clock: every thread's time, on and off the CPU\n"
            "                       (as record --idle): time off the CPU ends in its\n"
            "                       reason, [off-CPU: sleep], [off-CPU: I/O], [off-CPU:\n"
            "                       lock], [off-CPU: GIL], [off-CPU: waiting for a CPU],\n"
            "                       [off-CPU: other], ranked as functions are; a wait\n"
            "                       longer than an interval counts in each (sample\n"
            "                       mode only; default: CPU time)\n"
            "      --wall           the same as --idle (default: off)\n"
            "      --async          asyncio as its authors see it (CPython 3.14+, as\n"
            "                       record --async): a task's samples under its chain\n"
            "                       of awaiting tasks, <task 'handler-42'> ranked as a\n"
            "                       function is; with --idle the waiting tasks too\n"
            "                       (sample mode only; default: off)\n"
            "  -h, --help           this help\n"
            "\n"
            "exit status: 0 after q, Ctrl-C, SIGTERM or the process's end (a\n"
            "started program that ends by itself: its own status), 1 when it cannot\n"
            "read the process, 2 usage error\n"
            "\n"
            "examples:\n"
            "  perfpy top -p 4242\n"
            "  perfpy top -- python3 app.py\n",
            TOP_RATE, TOP_INTERVAL, PP_TOP_PLAIN_ROWS);
}

static int top_option(int c, void *opts, pp_usage *u)
{
    pp_top_cli *o = opts;
    char *end;

    switch (c) {
    case 'p':
        if (pp_parse_long(optarg, 1, INT_MAX, &o->pid) < 0)
            return pp_usage_set(u, "--pid needs a process id, not '%s'", optarg);
        break;
    case 'r':
        if (pp_parse_long(optarg, 1, 100000, &o->rate) < 0)
            return pp_usage_set(u, "--rate takes a whole number of samples per second "
                                "(1 to 100000), not '%s'", optarg);
        break;
    case 'M':
        return pp_parse_live_mode(optarg, &o->mode, u);
    case 'W':
        o->wall = 1;
        break;
    case 'A':
        o->async = 1;
        break;
    case 'R':
        if (pp_parse_long(optarg, 0, 1000000, &o->rows) < 0)
            return pp_usage_set(u, "--rows takes how many functions each plain table "
                                "shows (0: all; at most 1000000), not '%s'", optarg);
        break;
    case 'i':
        o->interval = strtod(optarg, &end);
        if (end == optarg || *end || !(o->interval >= 0.1 && o->interval <= 3600))
            return pp_usage_set(u, "--interval takes seconds (0.1 to 3600), not '%s'",
                                optarg);
        break;
    }
    return PP_PARSED_RUN;
}

int pp_top_parse(int argc, char **argv, pp_top_cli *o, pp_usage *u)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"rate", required_argument, NULL, 'r'},
        {"interval", required_argument, NULL, 'i'},
        {"mode", required_argument, NULL, 'M'},
        {"idle", no_argument, NULL, 'W'},
        {"wall", no_argument, NULL, 'W'},
        {"async", no_argument, NULL, 'A'},
        {"rows", required_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int rc;

    memset(o, 0, sizeof(*o));
    o->rate = TOP_RATE;
    o->interval = TOP_INTERVAL;
    o->rows = PP_TOP_PLAIN_ROWS;
    o->mode = "auto";
    rc = pp_getopt_each(argc, argv, "+:p:r:i:h", opts, top_option, o, u);
    if (rc != PP_PARSED_RUN)
        return rc;
    if (optind < argc) {
        if (o->pid)
            return pp_usage_set(u, "a process (-p) or a program to start, not both");
        if ((rc = pp_operand_program(argc, argv, optind, "(perfpy top -- python3 app.py)",
                                     &o->argv, u)) != PP_PARSED_RUN)
            return rc;
    }
    if (!o->pid && !o->argv)
        return pp_usage_set(u, "nothing to watch: -p PID, or -- PROGRAM ARGS");
    if (o->wall && strcmp(o->mode, "read") == 0)
        return pp_usage_set(u, "--idle needs sample mode: the time each thread spends off "
                              "the CPU, and why, comes from BPF programs in the kernel, "
                              "which --mode read does not use");
    if (o->async && strcmp(o->mode, "read") == 0)
        return pp_usage_set(u, "--async needs sample mode: the task a thread runs and "
                              "the tasks awaiting it are read by its BPF program at each "
                              "sample, which --mode read does not use");
    return PP_PARSED_RUN;
}

int pp_cmd_top(int argc, char **argv)
{
    pp_top_cli o;
    pp_usage u;
    char libdir[PATH_MAX], helper[PATH_MAX + 16], why[512], said[1024];
    char every[32], rows[32], rate[32], pid[32], clock[32];
    char **args;
    int rc, n = 0, k = 0;

    if ((rc = pp_parsed("top", pp_top_parse(argc, argv, &o, &u), &u, help)) >= 0)
        return rc;
    if (o.pid && kill((pid_t)o.pid, 0) != 0 && errno == ESRCH)
        return pp_fail("no process %ld: it does not exist (or has ended)", o.pid);
    if (pp_find_libdir_quiet(libdir, sizeof(libdir)) < 0)
        libdir[0] = '\0';
    if (pp_sampler_find(libdir[0] ? libdir : NULL, helper, sizeof(helper), why,
                        sizeof(why)) != 0) {
        pp_sampler_absent(helper, why, said, sizeof(said));
        return pp_fail("perfpy top samples with perfpy-sample, and %s", said);
    }
    if (strcmp(o.mode, "read") != 0 &&
        pp__record_sample_check(libdir[0] ? libdir : NULL, why, sizeof(why)) != 0) {
        if (o.wall || o.async)
            return pp_fail("perfpy top %s needs sample mode, which cannot sample here "
                           "(%s): it needs root, or the capabilities CAP_BPF and "
                           "CAP_PERFMON, and a kernel with BPF and BTF; without it, "
                           "top watches CPU time in read mode", o.wall ? "--idle" : "--async",
                           why);
        if (strcmp(o.mode, "sample") == 0)
            return pp_fail("sample mode cannot sample here (%s): it needs root, or the "
                           "capabilities CAP_BPF and CAP_PERFMON, and a kernel with BPF and "
                           "BTF; --mode read needs none of them", why);
        o.mode = "read";
    }
    if (strcmp(o.mode, "read") == 0 && o.pid &&
        (rc = pp__record_can_read((pid_t)o.pid)) != 0)
        return pp_fail("cannot read the memory of the process %ld: %s", o.pid, rc == -EPERM
                       ? "not permitted (a user may read only its own processes, and "
                         "kernel.yama.ptrace_scope may allow only children: run perfpy as "
                         "that process's user, or as root for sample mode)"
                       : strerror(-rc));
    while (o.argv && o.argv[n])
        n++;
    if (!(args = calloc((size_t)n + 16, sizeof(*args))))
        return pp_fail("out of memory");
    snprintf(every, sizeof(every), "%g", o.interval);
    snprintf(rows, sizeof(rows), "%ld", o.rows);
    snprintf(rate, sizeof(rate), "%ld", o.rate);
    snprintf(pid, sizeof(pid), "%ld", o.pid);
    snprintf(clock, sizeof(clock), "%s%s", o.wall ? "wall" : "cpu", o.async ? ",async" : "");
    /* perfpy-sample --top INTERVAL ROWS [--read] FORMAT OUTPUT RATE NO_NATIVE
     * DURATION PROCESSES THREADS [CLOCK] (-p PID | -- PROGRAM...): a
     * recording whose intervals are shown, not written; all processes in
     * one table */
    args[k++] = helper;
    args[k++] = "--top";
    args[k++] = every;
    args[k++] = rows;
    if (strcmp(o.mode, "read") == 0)
        args[k++] = "--read";
    args[k++] = "-";
    args[k++] = "-";
    args[k++] = rate;
    args[k++] = "0";
    args[k++] = "0";
    args[k++] = "2";
    args[k++] = "0";
    if (strcmp(o.mode, "read") != 0)
        args[k++] = clock;                      /* sample mode's CLOCK */
    args[k++] = o.pid ? "-p" : "--";
    if (o.pid)
        args[k++] = pid;
    for (int i = 0; i < n; i++)
        args[k++] = o.argv[i];
    fflush(stdout);
    fflush(stderr);
    execv(helper, args);
    free(args);
    return pp_fail("cannot run %s: %s", helper, strerror(errno));
}
