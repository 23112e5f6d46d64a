/*
 * perfpy record's options: its --help text and its parser (options.h),
 * apart from the command so that both read in one screen each. The parser
 * prints and starts nothing (tests/fuzz/fuzz_options.c feeds it hostile
 * argument vectors); the defaults the help names are defined here once.
 */
#include "cli.h"
#include "help.h"
#include "options.h"
#include "mode.h"
#include "record.h"

#include "collect/event.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RATE 399
#define DEFAULT_HOST_RATE 19        /* -a: per CPU, the profiling agents' rate */
#define MAX_EVERY 86400
#define DEFAULT_STACK 32768
#define DEFAULT_GRACE 5
#define MAX_STACK 65528
#define MAX_PERIOD 1000000000L

const char *const pp__record_help[] = {
    "usage: perfpy record [options] [--] PROGRAM [ARGS...]",
    "       perfpy record [options] -p PID",
    "       perfpy record -a [--every SECS -o DIR] [options]",
    "",
    "Profile a Python program with perf and write a profile: Python functions",
    "(qualname (file:line)), C extensions, libc and the kernel in one stack, on",
    "every CPython from 3.8. The program needs no change; children (fork,",
    "multiprocessing, subprocess running Python) are profiled too. A summary goes",
    "to stderr; the exit status is the program's.",
    "",
    "options:",
    "  -o, --output FILE     where to write (default: <program>-<timestamp>.<ext>",
    "                        in the current directory)",
    "  -f, --format FORMAT   flamegraph (default; interactive .svg), html (flame",
    "                        graph + sortable table), speedscope (.speedscope.json,",
    "                        a profile per thread in time order, one for more than",
    "                        16 threads named alike), firefox",
    "                        (.firefox.json, the Firefox Profiler's: a track per",
    "                        thread, markers), heatmap (.heatmap.html, each",
    "                        source line's share; lines need --mode sample or",
    "                        read), table (.table.txt, functions by own and total",
    "                        time), pprof (.pb.gz), collapsed (.txt), perfpy",
    "                        (.perfpy.gz, perfpy's own: the whole profile, which",
    "                        perfpy report FILE -f FORMAT writes in any format",
    "                        later and perfpy diff compares), perf (injected",
    "                        perf.data for perf report/Hotspot; its jitted ELFs",
    "                        are kept in FILE.jit/, with what perfpy report needs",
    "                        for def lines)",
    "  -r, --rate HZ         samples per second per busy thread (default: "
        PP_STR(DEFAULT_RATE) ";",
    "                        with the default stack size a 60-second recording of",
    "                        one busy thread is about 0.8 GB)",
    "  -d, --duration SECS   stop after SECS seconds: the program gets SIGINT, as",
    "                        on Ctrl-C (default: until the program exits or Ctrl-C)",
    "      --grace SECS      after Ctrl-C or --duration, how long the program has",
    "                        to end by itself (its KeyboardInterrupt handlers run)",
    "                        before it gets SIGTERM, then as long again before its",
    "                        whole process tree gets SIGKILL (default: " PP_STR(DEFAULT_GRACE) ")",
    "  -a, --all             every CPython process of the host: those running and",
    "                        those that start while it records, each under a root",
    "                        naming its command line, pid and container; Python,",
    "                        C and kernel frames, in sample mode (root), at "
        PP_STR(DEFAULT_HOST_RATE) " Hz",
    "                        per CPU unless -r; until Ctrl-C, SIGTERM or -d",
    "                        (default: off)",
    "      --all-processes   with -a, the processes that run no CPython too (C and",
    "                        kernel frames; default: left out)",
    "      --every SECS      with -a, one profile per SECS seconds (1 to " PP_STR(MAX_EVERY)
        ") into",
    "                        the directory -o DIR (./perfpy-profiles when no -o),",
    "                        each named perfpy-<UTC start>.<ext>, pprof unless -f,",
    "                        every sample labelled service, pid, tid, thread and",
    "                        container for a profile store; runs until stopped",
    "                        (default: one profile, at the end)",
    "      --label KEY=VALUE with -a, a label on every sample (repeatable; KEY",
    "                        letters, digits and _: --label env=prod; default:",
    "                        none)",
    "  -p, --pid PID         attach to a running process; stop with Ctrl-C or",
    "                        --duration (default: none; start PROGRAM). Its",
    "                        engine is looked for first: active (PERFPY=jit, -X",
    "                        perf_jit, or perf mode), its mode is used; absent,",
    "                        --mode auto attaches in sample mode where it can",
    "                        (root), and --mode perf|jit (or no sample mode)",
    "                        refuse with what to do; --mode sample or read",
    "                        attach to any CPython",
    "      --mode MODE       auto (default): the best this machine allows, said in",
    "                        the first line with the reason: sample where BPF may",
    "                        be used, else read, else (and for -f perf, --inline,",
    "                        --stack-size, --keep) hook; hook: perf map + frame",
    "                        pointers when the interpreter keeps frame pointers,",
    "                        else jit; perf:",
    "                        names from /tmp/perf-<pid>.map (without frame",
    "                        pointers, stacks stop at the innermost Python",
    "                        function with a perf using libunwind, and name no",
    "                        Python function with one using libdw, as perf 7",
    "                        does); jit: jitdump + DWARF unwinding, whole",
    "                        stacks without frame pointers; sample (root, BPF):",
    "                        nothing installed in the program, its Python frames",
    "                        read at each sample (perf is not used; executing",
    "                        lines; children followed; any CPython 3.8-3.15, no",
    "                        module of its version needed; not with -f perf,",
    "                        --inline, --stack-size, --keep); read (no root):",
    "                        no hook, its Python",
    "                        frames read from outside on a timer, as py-spy",
    "                        does (processes this user may ptrace; CPU time",
    "                        from the threads' state; no native frames)",
    "      --async           asyncio as its authors see it (CPython 3.14+, sample",
    "                        mode only, which --mode auto then picks): a sample in",
    "                        a task reads as the chain of tasks awaiting it, each",
    "                        with the coroutines it waits in, <task 'serve'>;",
    "                        serve (app.py:46); <task 'handler-42'>; handler",
    "                        (app.py:29), above its native and kernel frames, in",
    "                        place of the event loop's; with --idle, each task",
    "                        that waits too, weighing the time it waits, under",
    "                        its awaiters, what it awaits at the leaf ([awaiting",
    "                        Future]) (default: off; also --async-aware, the 3.15",
    "                        sampler's name)",
    "      --idle            a wall-clock profile (py-spy's --idle, the 3.15",
    "                        sampler's --mode wall): every thread for its whole",
    "                        life, on and off the CPU, each sample weighted by",
    "                        the time it stands for; time off the CPU ends in its",
    "                        reason, kernel frames above it: [off-CPU: sleep],",
    "                        [off-CPU: I/O], [off-CPU: lock], [off-CPU: GIL],",
    "                        [off-CPU: child process] (wait4, waitid, subprocess's",
    "                        waits), [off-CPU: waiting for a CPU], [off-CPU:",
    "                        other]; the summary's shares are each process's own:",
    "                        a block per process, each of its threads' time",
    "                        (sample mode, which --mode auto then picks, or",
    "                        --mode read: no root, the reasons from /proc, no",
    "                        kernel frames; a program or -p, not -a; default:",
    "                        CPU time only)",
    "      --wall            the same as --idle (default: off)",
    "      --gil             only samples of threads that hold the GIL (py-spy's",
    "                        --gil; sample or read mode, not -a; a free-threaded",
    "                        CPython has none: all of its samples; default:",
    "                        every thread)",
    "  -e, --event EVENT     sample EVENT instead of CPU time, perf's names (sample",
    "                        mode only, which --mode auto then picks; a program or",
    "                        -p, not -a, --idle or --gil; -e list lists this",
    "                        machine's events and exits): page-faults (where",
    "                        memory is first touched: where RSS grows),",
    "                        minor-faults, major-faults, context-switches,",
    "                        cpu-migrations, or a tracepoint SYSTEM:NAME",
    "                        (syscalls:sys_enter_write: which line makes which",
    "                        system call); Python frames at their executing",
    "                        lines, C and kernel frames; the summary and every",
    "                        format count faults, switches, calls or events",
    "                        (default: none, CPU time)",
    "  -c, --count N         with -e, a sample every N events of each thread (1",
    "                        to " PP_STR(MAX_PERIOD) "; default: 100 for page-faults,",
    "                        minor-faults and system calls' tracepoints, which",
    "                        programs make by the 100,000 a second, each sample",
    "                        costing the thread 13-41 us; 1 for the others)",
    "      --stack-size BYTES  stack copied per sample for DWARF unwinding, a",
    "                        multiple of 8 up to " PP_STR(MAX_STACK) " (default: "
        PP_STR(DEFAULT_STACK) ", about 60",
    "                        Python frames on 3.8-3.13, 30 on 3.14+)",
    "      --native          keep C, libc and kernel frames (default)",
    "      --no-native       Python frames only (default: off)",
    "      --inline          keep C functions the compiler inlined (shown as",
    "                        'name (inlined)'); slower: perf then runs addr2line",
    "                        for every library and Python function sampled",
    "                        (default: off)",
    PP_HELP_FOLD(18),
    "      --keep [N|SIZE]   keep the recording and intermediate files (the",
    "                        directory is printed; default: all removed); with",
    "                        --every N or SIZE: keep the N newest files of the",
    "                        directory, or at most SIZE bytes of them (suffix K, M",
    "                        or G: 500M), removing older ones (default: all kept)",
    "  -v, --verbose         the summary's accounting notes too: children",
    "                        followed, processes, switches seen, stacks and",
    "                        events lost however few, code objects freed, how",
    "                        long the profile took to make (default: the mode,",
    "                        the totals, the table, the file written, and one",
    "                        line for a loss or gap of 1% or more of a figure)",
    "  -h, --help            this help",
    "",
    "environment:",
    "  PERF                  the perf executable (default: perf on PATH)",
    "  PERFPY_RECORD_MODE    --mode's default for a program perfpy starts (default:",
    "                        auto)",
    "  TMPDIR                where the recording directory goes (default: /tmp;",
    "                        then, in jit mode, if /tmp is on disk and /dev/shm is",
    "                        a memory filesystem with 1 GiB free, the dumps and",
    "                        the files perf inject makes from them go to /dev/shm;",
    "                        with a perf that unwinds with libdw they go to /tmp",
    "                        itself, the only place its unwinder reads them, and",
    "                        only this recording's files are removed)",
    "",
    "exit status:",
    "  the program's own, after Ctrl-C too (0 when --duration stopped it); 1 if",
    "  perfpy or perf failed, or nothing was sampled (no profile is written);",
    "  2 for a usage error (options that cannot work together, an interpreter",
    "  older than CPython 3.8); with -a: 0 once stopped with a profile written,",
    "  1 if nothing was sampled or written, or --every dropped an interval",
    "",
    "examples:",
    "  perfpy record -- python app.py",
    "  perfpy record -f html -o app.html -r 999 -- python -m mypackage",
    "  perfpy record -e page-faults -c 10 -- python app.py",
    "  perfpy record -e syscalls:sys_enter_write -p 4242 -d 10",
    "  perfpy record -a -d 30 -o host.svg",
    "  perfpy record -a --every 60 --keep 1G --label env=prod -o /var/lib/perfpy",
    NULL,
};

/* ---- options ---------------------------------------------------------------- */

enum { OPT_MODE = 256, OPT_STACK, OPT_NATIVE, OPT_NO_NATIVE, OPT_KEEP, OPT_INLINE,
       OPT_GRACE, OPT_PROCESSES, OPT_SHOW_PERFPY, OPT_THREADS, OPT_ALL_PROCESSES, OPT_EVERY,
       OPT_LABEL, OPT_ASYNC, OPT_IDLE, OPT_GIL };

/* -e's name, known to this kernel: PP_PARSED_RUN, or the usage error
 * naming it and how to list what exists. */
static int event_option(pp_record_opts *o, const char *name, pp_usage *u)
{
    pp_event ev;
    int rc = pp_event_parse(name, &ev);

    if (strcmp(name, "list") == 0) {
        o->list_events = 1;
        return PP_PARSED_RUN;
    }
    o->event = name;
    if (rc == -EINVAL)
        return pp_usage_set(u, "-e %s: no such event (perf's names: page-faults, "
                              "minor-faults, major-faults, context-switches, "
                              "cpu-migrations, or a tracepoint SYSTEM:NAME; perfpy "
                              "record -e list shows this kernel's)", name);
    if (rc == -ENOENT)
        return pp_usage_set(u, "-e %s: this kernel has no such tracepoint (perfpy record "
                              "-e list shows the ones it has)", name);
    return PP_PARSED_RUN;       /* -EACCES: tracefs is root's; perfpy-sample opens it */
}

/* The argument vector being parsed: `--keep N` takes the word after it
 * (getopt gives an optional argument only as --keep=N), and whether -r
 * was given (-a's default rate is another) and --mode (else a program's
 * is PERFPY_RECORD_MODE's). */
static char **parsed_argv;
static int parsed_argc, rate_given, mode_given;

/* A number of seconds from 0 to max: 0, or -1. */
static int parse_seconds(const char *s, double max, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || v > max)
        return -1;
    *out = v;
    return 0;
}

/* N (files) or SIZE (bytes, with K, M or G): 0, or -1 when s is neither. */
static int parse_keep(const char *s, long *files, unsigned long long *bytes)
{
    char *end;
    unsigned long long v;
    int shift = 0;

    errno = 0;
    if (!s || !(*s >= '0' && *s <= '9'))
        return -1;
    v = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (errno || v == 0 || (shift && end[1]) || (!shift && *end) || v > (1ull << 40))
        return -1;
    if (shift)
        *bytes = v << shift;
    else if (v > 1000000)
        return -1;
    else
        *files = (long)v;
    return 0;
}

/* --keep alone keeps perf's files; --keep N, --keep=N or SIZE bound
 * --every's directory. */
static int keep_option(pp_record_opts *o, pp_usage *u)
{
    const char *arg = optarg;

    if (!arg && optind < parsed_argc && parse_keep(parsed_argv[optind], &o->keep_files,
                                                   &o->keep_bytes) == 0) {
        optind++;
        return PP_PARSED_RUN;
    }
    if (!arg) {
        o->keep = 1;
        return PP_PARSED_RUN;
    }
    if (parse_keep(arg, &o->keep_files, &o->keep_bytes) < 0)
        return pp_usage_set(u, "--keep takes a number of files or a size (500M, 2G), not "
                              "'%s'", arg);
    return PP_PARSED_RUN;
}

/* KEY=VALUE: KEY a label name the stores take (letters, digits, _; not a
 * digit first), not one perfpy sets itself. */
static int label_option(pp_record_opts *o, const char *arg, pp_usage *u)
{
    static const char *const own[] = {"service", "pid", "tid", "thread", "container"};
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : 0;

    for (size_t i = 0; i < n; i++)
        if (!(arg[i] == '_' || (arg[i] >= 'a' && arg[i] <= 'z') ||
              (arg[i] >= 'A' && arg[i] <= 'Z') || (i && arg[i] >= '0' && arg[i] <= '9')))
            n = 0;
    if (!n || !eq[1] || n > 64 || strlen(eq + 1) > 256)
        return pp_usage_set(u, "--label takes KEY=VALUE (KEY letters, digits and _, not a "
                              "digit first; a VALUE of 1 to 256 bytes), not '%s'", arg);
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (strlen(own[i]) == n && strncmp(arg, own[i], n) == 0)
            return pp_usage_set(u, "--label %.*s: perfpy sets that label itself on every "
                                  "sample; choose another KEY", (int)n, arg);
    if (o->nlabels == PP_MAX_LABELS)
        return pp_usage_set(u, "--label is given more than %d times", PP_MAX_LABELS);
    o->labels[o->nlabels++] = arg;
    return PP_PARSED_RUN;
}

static int record_option(int c, void *opts, pp_usage *u)
{
    pp_record_opts *o = opts;

    switch (c) {
    case 'v':
        o->verbose = 1;
        return PP_PARSED_RUN;
    case 'o':
        return pp_option_output(optarg, &o->output, u);
    case 'f':
        return pp_option_format(optarg, &o->format, u);
    case 'r':
        rate_given = 1;
        if (pp_parse_long(optarg, 1, 100000, &o->rate) < 0)
            return pp_usage_set(u, "--rate takes a whole number of samples "
                                  "per second from 1 to 100000, not '%s'", optarg);
        break;
    case 'd':
        if (parse_seconds(optarg, 1e7, &o->duration) < 0 || o->duration == 0)
            return pp_usage_set(u, "--duration takes a positive number of "
                                  "seconds, not '%s'", optarg);
        break;
    case OPT_GRACE:
        if (parse_seconds(optarg, 3600, &o->grace) < 0)
            return pp_usage_set(u, "--grace takes a number of seconds from 0 to 3600, "
                                  "not '%s'", optarg);
        break;
    case 'p':
        if (pp_parse_long(optarg, 1, 1L << 30, &o->pid) < 0)
            return pp_usage_set(u, "--pid takes a process id, not '%s'", optarg);
        break;
    case OPT_MODE:
        if (pp_request_mode_of(optarg, &o->mode) != 0)
            return pp_usage_set(u, "--mode must be auto, sample, read, hook, perf or jit, "
                                  "not '%s'", optarg);
        mode_given = 1;
        break;
    case OPT_STACK:
        if (pp_parse_long(optarg, 8, MAX_STACK, &o->stack_size) < 0 || o->stack_size % 8)
            return pp_usage_set(u, "--stack-size takes a multiple of 8 from 8 "
                                  "to %d bytes, not '%s'", MAX_STACK, optarg);
        o->stack_size_given = 1;
        break;
    case OPT_NATIVE:
    case OPT_NO_NATIVE:
        o->no_native = c == OPT_NO_NATIVE;
        break;
    case OPT_KEEP:
        return keep_option(o, u);
    case 'a':
        o->host = 1;
        break;
    case OPT_ALL_PROCESSES:
        o->all_processes = 1;
        break;
    case OPT_EVERY:
        if (parse_seconds(optarg, MAX_EVERY, &o->every) < 0 || o->every < 1)
            return pp_usage_set(u, "--every takes a number of seconds from 1 to %d, not '%s'",
                                MAX_EVERY, optarg);
        break;
    case OPT_LABEL:
        return label_option(o, optarg, u);
    case OPT_INLINE:
        o->inline_frames = 1;
        break;
    case OPT_PROCESSES:
        return pp_option_processes(optarg, &o->processes, u);
    case OPT_SHOW_PERFPY:
        o->show_perfpy = 1;
        break;
    case OPT_THREADS: {
        int how, rc = pp_option_threads(optarg, parsed_argc, parsed_argv, &how, u);
        o->threads = 1;
        o->threads_split = how == PP_THREAD_ROOTS_SPLIT;
        return rc;
    }
    case OPT_ASYNC:
        o->async = 1;
        break;
    case OPT_IDLE:
        o->wall = 1;
        break;
    case OPT_GIL:
        o->gil = 1;
        break;
    case 'e':
        return event_option(o, optarg, u);
    case 'c':
        if (pp_parse_long(optarg, 1, MAX_PERIOD, &o->period) < 0)
            return pp_usage_set(u, "--count takes a whole number of events per sample from 1 "
                                  "to %ld, not '%s'", MAX_PERIOD, optarg);
        break;
    }
    return PP_PARSED_RUN;
}

/* Options each valid alone that cannot work together: refused here, before
 * anything starts, not found out after the program ran. */
static int combinations(const pp_record_opts *o, pp_usage *u)
{
    /* -a, --async and -e leave auto only sample mode, --idle and --gil
     * sample or read mode (mode_rules.c): none makes a perf.data */
    int only_sample = o->mode == PP_MODE_AUTO &&
                      (o->host || o->async || o->wall || o->gil || o->event);

    if (o->format->recording && o->output && strcmp(o->output, "-") == 0)
        return pp_usage_set(u, "-f perf writes a perf.data and keeps its jitted code in "
                              "FILE.jit/ beside it: it cannot go to standard output (give "
                              "-o FILE)");
    if (o->mode == PP_MODE_SAMPLE || o->mode == PP_MODE_READ || only_sample)
        return pp__record_sample_refusal(o, only_sample ? PP_MODE_SAMPLE : o->mode, u);
    return PP_PARSED_RUN;
}

const char *pp__record_perf_only(const pp_record_opts *o)
{
    return o->format->recording ? "-f perf (a perf.data for perf's own tools)"
           : o->inline_frames   ? "--inline (perf's addr2line)"
           : o->stack_size_given ? "--stack-size (perf's stack copy)"
           : o->keep            ? "--keep (perf's recording kept)" : NULL;
}

int pp__record_sample_refusal(const pp_record_opts *o, pp_mode mode, pp_usage *u)
{
    const struct {
        int given;
        const char *why;
    } no[] = {
        {o->format->recording, "--mode %s makes no perf.data (perf is not used), so -f "
                               "perf cannot be written: choose another format, or --mode "
                               "auto for a perf.data"},
        {o->inline_frames, "--inline is not built in %s mode (it names functions from "
                           "symbol tables, without inlined ones): leave it out, or --mode "
                           "auto"},
        {o->stack_size_given, "--stack-size is perf's; %s mode copies no stack for perf "
                              "to unwind, and reads up to 256 Python frames (read mode "
                              "128): leave it out"},
        {o->keep, "--keep keeps perf's recording and intermediate files; %s mode makes "
                  "none (the profile is written from memory): leave it out"},
    };

    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        if (no[i].given)
            return pp_usage_set(u, no[i].why, pp_request_mode_name(mode));
    return PP_PARSED_RUN;
}

/* -e: an event's samples are sample mode's, of one program or process,
 * counting the event, not time; -c only with it. */
static int event_combinations(pp_record_opts *o, pp_usage *u)
{
    const char *other = o->host ? "-a (the whole host samples CPU time per CPU)"
                        : o->wall ? "--idle (a wall-clock profile samples time, on and off "
                                    "the CPU; an event's samples count the event)"
                        : o->gil ? "--gil (who holds the GIL is asked of time samples)"
                        : NULL;

    if (!o->event) {
        if (o->period)
            return pp_usage_set(u, "-c counts the events of -e EVENT between two samples: "
                                  "give -e too, or -r for a rate of CPU samples");
        return PP_PARSED_RUN;
    }
    if (other)
        return pp_usage_set(u, "-e %s cannot be sampled with %s: leave one out", o->event,
                            other);
    if (o->mode != PP_MODE_AUTO && o->mode != PP_MODE_SAMPLE)
        return pp_usage_set(u, "-e %s needs --mode sample: its samples are taken by a BPF "
                              "program at each event, which --mode %s does not use (the "
                              "trampoline modes sample CPU time with perf)", o->event,
                            pp_request_mode_name(o->mode));
    if (!o->period) {
        pp_event ev;

        pp_event_parse(o->event, &ev);      /* known: event_option */
        o->period = (long)ev.every;
    }
    return PP_PARSED_RUN;
}

/* -a: sample mode, no program and no -p, its own defaults (the agents'
 * rate; pprof for --every, whose -o is a directory). */
static int host_options(pp_record_opts *o, pp_usage *u)
{
    if (o->argv || o->pid)
        return pp_usage_set(u, "-a records every CPython process of the host: give no "
                              "program and no -p");
    if (o->mode != PP_MODE_AUTO && o->mode != PP_MODE_SAMPLE)
        return pp_usage_set(u, "-a reads every process from outside, in sample mode: "
                              "--mode %s cannot (leave --mode out)",
                            pp_request_mode_name(o->mode));
    if (o->wall || o->gil)          /* the scheduler's events are followed per program */
        return pp_usage_set(u, "%s records one program or -p PID, not the whole host: "
                              "leave -a out", o->wall ? "--idle (a wall-clock profile)" : "--gil");
    if ((o->keep_files || o->keep_bytes) && !o->every)
        return pp_usage_set(u, "--keep N or SIZE bounds the directory --every writes to: "
                              "give --every SECONDS too");
    if (o->every && o->output && strcmp(o->output, "-") == 0)
        return pp_usage_set(u, "--every writes one file per interval into a directory: "
                              "give -o DIR, not -");
    if (o->processes == PP_PROCESSES_AUTO)
        o->processes = PP_PROCESSES_SPLIT;    /* each process a root, even alone */
    if (!rate_given)
        o->rate = DEFAULT_HOST_RATE;
    if (!o->format)
        o->format = pp_format_find(o->every ? "pprof" : "flamegraph");
    return combinations(o, u);
}

int pp_record_parse(int argc, char **argv, pp_record_opts *o, pp_usage *u)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"rate", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'},
        {"grace", required_argument, NULL, OPT_GRACE},
        {"pid", required_argument, NULL, 'p'},
        {"mode", required_argument, NULL, OPT_MODE},
        {"stack-size", required_argument, NULL, OPT_STACK},
        {"native", no_argument, NULL, OPT_NATIVE},
        {"no-native", no_argument, NULL, OPT_NO_NATIVE},
        {"keep", optional_argument, NULL, OPT_KEEP},
        {"all", no_argument, NULL, 'a'},
        {"all-processes", no_argument, NULL, OPT_ALL_PROCESSES},
        {"every", required_argument, NULL, OPT_EVERY},
        {"label", required_argument, NULL, OPT_LABEL},
        {"inline", no_argument, NULL, OPT_INLINE},
        {"processes", required_argument, NULL, OPT_PROCESSES},
        {"show-perfpy", no_argument, NULL, OPT_SHOW_PERFPY},
        {"threads", optional_argument, NULL, OPT_THREADS},
        {"async", no_argument, NULL, OPT_ASYNC},
        {"async-aware", no_argument, NULL, OPT_ASYNC},
        {"idle", no_argument, NULL, OPT_IDLE},
        {"wall", no_argument, NULL, OPT_IDLE},
        {"gil", no_argument, NULL, OPT_GIL},
        {"event", required_argument, NULL, 'e'},
        {"count", required_argument, NULL, 'c'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *env;
    int rc;

    memset(o, 0, sizeof(*o));
    o->rate = DEFAULT_RATE;
    o->stack_size = DEFAULT_STACK;
    o->grace = DEFAULT_GRACE;
    parsed_argv = argv;
    parsed_argc = argc;
    rate_given = mode_given = 0;
    rc = pp_getopt_each(argc, argv, "+:o:f:r:d:p:e:c:avh", opts, record_option, o, u);
    if (rc != PP_PARSED_RUN)
        return rc;
    if (optind < argc)
        o->argv = argv + optind;
    if (o->list_events)             /* perfpy record -e list: nothing else is done */
        return PP_PARSED_RUN;
    if ((rc = event_combinations(o, u)) != PP_PARSED_RUN)
        return rc;
    if (o->host)
        return host_options(o, u);
    if (!o->argv && !o->pid)
        return pp_usage_set(u, "no program given (perfpy record -- python app.py, "
                              "-p PID, or -a for every Python process)");
    if (o->argv && o->pid)
        return pp_usage_set(u, "give a program or --pid, not both");
    if (o->every || o->keep_files || o->keep_bytes || o->nlabels || o->all_processes)
        return pp_usage_set(u, "%s is for the whole host: give -a (without a program "
                              "or -p)", o->every ? "--every" : o->nlabels ? "--label" :
                              o->all_processes ? "--all-processes" : "--keep N");
    /* only sample mode reads a task at each sample, only sample and read
     * modes record time off the CPU or who holds the GIL: --mode auto (or
     * none) is one of them then (mode_rules.c); the others are refused. A program perfpy starts is
     * recorded in PERFPY_RECORD_MODE's mode when neither says one; a
     * process attached to, in its engine's (mode.c) */
    if (!mode_given && !(o->async || o->wall || o->gil || o->event) && o->argv &&
        pp_mode_default(&o->mode, &env) != 0)
        return pp_usage_set(u, "PERFPY_RECORD_MODE (--mode's default for a program perfpy "
                              "starts) must be auto, sample, read, hook, perf or jit, not "
                              "'%s'", env);
    if (o->async && o->mode != PP_MODE_AUTO && o->mode != PP_MODE_SAMPLE)
        return pp_usage_set(u, "--async needs --mode sample: the task a thread runs and "
                              "the tasks awaiting it are read by a BPF program at each "
                              "sample, which --mode %s does not use",
                            pp_request_mode_name(o->mode));
    if ((o->wall || o->gil) && o->mode != PP_MODE_AUTO && o->mode != PP_MODE_SAMPLE &&
        o->mode != PP_MODE_READ)
        return pp_usage_set(u, "%s needs --mode sample or read: %s is read from outside the "
                              "program, which --mode %s does not do", o->wall ?
                              "--idle (a wall-clock profile)" : "--gil", o->wall ?
                              "the time each thread spends off the CPU, and why," :
                              "who holds the GIL at each sample", pp_request_mode_name(o->mode));
    if (!o->format)
        o->format = pp_format_find("flamegraph");
    return combinations(o, u);
}
