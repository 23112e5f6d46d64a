/*
 * perfpy top [-p PID | -- PROGRAM ARGS...]
 *
 * A live view of a Python program, like top: its functions ranked by their
 * own and total share of the last interval's samples, redrawn every
 * interval. The recorder is perfpy-sample's (it links libbpf and
 * elfutils): sample mode's (src/sampler/record.c) where its BPF program
 * loads, else read mode's (src/sampler/read.c); src/sampler/top_view.c
 * draws. This file parses the options, picks the mode and hands over, as
 * record's sample mode does.
 */
#include "cli.h"
#include "help.h"
#include "options.h"
#include "mode.h"
#include "record.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOP_RATE 99                 /* samples per second per busy thread */
#define TOP_INTERVAL 1              /* seconds between redraws */
#define TOP_ROWS 20                 /* functions in each plain table */

static const char *const help[] = {
    "usage: perfpy top [options] -p PID",
    "       perfpy top [options] [--] PROGRAM [ARGS...]",
    "",
    "A live view of a running Python program, like top: its functions ranked",
    "by their own and total share of the last interval's CPU samples, redrawn",
    "every interval, with the samples, their rate, those lost, and the",
    "processes and threads followed. CPython 3.8 to 3.15; nothing is",
    "installed in the program. The best mode this machine allows, said on",
    "the second line: sample mode (BPF: root, or CAP_BPF and CAP_PERFMON):",
    "Python, C and kernel functions; else read mode (a process of your own",
    "user, or one top starts): Python functions only.",
    "",
    "keys: o rank by own share, t by total share, n own share by the leaf",
    "frame (C and kernel functions rank too) or by the innermost Python",
    "function, h threads or functions, p pause, q quit (Ctrl-C too). A",
    "started program is sent SIGINT when top quits (then SIGTERM and SIGKILL,",
    "5 s apart). When stdout is not a terminal: one plain table per",
    "interval, of the first --rows functions, then how many more there are.",
    "",
    "options:",
    "  -p, --pid PID        the running process to watch, its children too",
    "                       (default: start PROGRAM)",
    "  -r, --rate HZ        samples per second per busy thread (default: " PP_STR(TOP_RATE) ")",
    "  -i, --interval SECS  seconds between redraws (default: " PP_STR(TOP_INTERVAL) ")",
    "      --rows N         functions in each plain table (stdout not a",
    "                       terminal); 0: all of them (default: " PP_STR(TOP_ROWS) ")",
    "      --mode MODE      auto, sample or read (default: auto: sample mode",
    "                       where it loads, else read mode)",
    "      --idle           wall clock: every thread's time, on and off the CPU",
    "                       (as record --idle): time off the CPU ends in its",
    "                       reason, [off-CPU: sleep], [off-CPU: I/O], [off-CPU:",
    "                       lock], [off-CPU: GIL], [off-CPU: child process],",
    "                       [off-CPU: waiting for a CPU], [off-CPU: other], each",
    "                       reason's row first in the table, by its total share,",
    "                       so all are on the first screen; a wait longer than an",
    "                       interval counts in each (sample mode, else read mode:",
    "                       the reasons from /proc; default: CPU time)",
    "      --wall           the same as --idle (default: off)",
    "      --async          asyncio as its authors see it (CPython 3.14+, as",
    "                       record --async): a task's samples under its chain",
    "                       of awaiting tasks, <task 'handler-42'> ranked as a",
    "                       function is; with --idle the waiting tasks too",
    "                       (sample mode only; default: off)",
    "  -h, --help           this help",
    "",
    "exit status: 0 after q, Ctrl-C, SIGTERM or the process's end (a",
    "started program that ends by itself: its own status), 1 when it cannot",
    "read the process, 2 usage error",
    "",
    "examples:",
    "  perfpy top -p 4242",
    "  perfpy top -- python3 app.py",
    NULL,
};

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
    o->rows = TOP_ROWS;
    o->mode = PP_MODE_AUTO;
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
    if (o->async && o->mode == PP_MODE_READ)
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
    pp_request rq;
    pp_mode_ask a = {0};
    pp_mode_choice c;
    int rc;

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
    a.asked = o.mode;
    a.live = 1;
    a.sample_only = o.async ? "--async" : NULL;
    a.sample_or_read = o.wall ? "--idle" : NULL;
    a.pid = o.pid;
    a.libdir = libdir[0] ? libdir : NULL;
    if (pp_mode_resolve(&a, &c) != 0)
        return pp_fail("%s", c.why);
    /* a recording whose intervals are shown, not written; all processes
     * in one table */
    memset(&rq, 0, sizeof(rq));
    rq.what = PP_REQUEST_TOP;
    rq.mode = c.mode;
    rq.target = o.pid ? PP_TARGET_PID : PP_TARGET_PROGRAM;
    rq.pid = o.pid;
    rq.argv = o.argv;
    rq.rate = o.rate;
    rq.wall = o.wall;
    rq.async = o.async;
    rq.format = "-";
    rq.output = "-";
    rq.processes = PP_PROCESSES_MERGE;
    rq.interval = o.interval;
    rq.rows = o.rows;
    return pp_sampler_exec(helper, &rq);
}
