/*
 * perfpy record's options: its --help text and its parser (options.h),
 * apart from the command so that both read in one screen each. The parser
 * prints and starts nothing (tests/fuzz/fuzz_options.c feeds it hostile
 * argument vectors); the defaults the help names are defined here once.
 */
#include "cli.h"
#include "options.h"
#include "record.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RATE 399
#define DEFAULT_HOST_RATE 19        /* -a: per CPU, the profiling agents' rate */
#define MAX_EVERY 86400
#define DEFAULT_STACK 32768
#define DEFAULT_GRACE 5.0
#define MAX_STACK 65528

void pp__record_help(FILE *out)
{
    fprintf(out,
            "usage: perfpy record [options] [--] PROGRAM [ARGS...]\n"
            "       perfpy record [options] -p PID\n"
            "       perfpy record -a [--every SECS -o DIR] [options]\n"
            "\n"
            "Profile a Python program with perf and write a profile: Python functions\n"
            "(qualname (file:line)), C extensions, libc and the kernel in one stack, on\n"
            "every CPython from 3.8. The program needs no change; children (fork,\n"
            "multiprocessing, subprocess running Python) are profiled too. A summary goes\n"
            "to stderr; the exit status is the program's.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE     where to write (default: <program>-<timestamp>.<ext>\n"
            "                        in the current directory)\n"
            "  -f, --format FORMAT   flamegraph (default; interactive .svg), html (flame\n"
            "                        graph + sortable table), speedscope (.speedscope.json,\n"
            "                        a profile per thread in time order), firefox\n"
            "                        (.firefox.json, the Firefox Profiler's: a track per\n"
            "                        thread, markers), heatmap (.heatmap.html, each\n"
            "                        source line's share; lines need --mode sample or\n"
            "                        read), table (.table.txt, functions by own and total\n"
            "                        time), pprof (.pb.gz), collapsed (.txt), perf\n"
            "                        (injected perf.data for perf report/Hotspot;\n"
            "                        its jitted ELFs are kept in FILE.jit/, with what\n"
            "                        perfpy report needs for def lines)\n"
            "  -r, --rate HZ         samples per second per busy thread (default: %d;\n"
            "                        with the default stack size a 60-second recording of\n"
            "                        one busy thread is about 0.8 GB)\n"
            "  -d, --duration SECS   stop after SECS seconds: the program gets SIGINT, as\n"
            "                        on Ctrl-C (default: until the program exits or Ctrl-C)\n"
            "      --grace SECS      after Ctrl-C or --duration, how long the program has\n"
            "                        to end by itself (its KeyboardInterrupt handlers run)\n"
            "                        before it gets SIGTERM, then as long again before its\n"
            "                        whole process tree gets SIGKILL (default: %g)\n"
            "  -a, --all             every CPython process of the host: those running and\n"
            "                        those that start while it records, each under a root\n"
            "                        naming its command line, pid and container; Python,\n"
            "                        C and kernel frames, in sample mode (root), at %d Hz\n"
            "                        per CPU unless -r; until Ctrl-C, SIGTERM or -d\n"
            "                        (default: off)\n"
            "      --all-processes   with -a, the processes that run no CPython too (C and\n"
            "                        kernel frames; default: left out)\n"
            "      --every SECS      with -a, one profile per SECS seconds (1 to %d) into\n"
            "                        the directory -o DIR (./perfpy-profiles when no -o),\n"
            "                        each named perfpy-<UTC start>.<ext>, pprof unless -f,\n"
            "                        every sample labelled service, pid, tid, thread and\n"
            "                        container for a profile store; runs until stopped\n"
            "                        (default: one profile, at the end)\n"
            "      --label KEY=VALUE with -a, a label on every sample (repeatable; KEY\n"
            "                        letters, digits and _: --label env=prod; default:\n"
            "                        none)\n"
            "  -p, --pid PID         attach to a running process; stop with Ctrl-C or\n"
            "                        --duration (default: none; start PROGRAM). Its\n"
            "                        engine is looked for first: active (PERFPY=jit, -X\n"
            "                        perf_jit, or perf mode), its mode is used; absent,\n"
            "                        --mode auto attaches in sample mode where it can\n"
            "                        (root), and --mode perf|jit (or no sample mode)\n"
            "                        refuse with what to do; --mode sample or read\n"
            "                        attach to any CPython\n"
            "      --mode MODE       auto (default): the best this machine allows, said in\n"
            "                        the first line with the reason: sample where BPF may\n"
            "                        be used, else read, else (and for -f perf, --inline,\n"
            "                        --stack-size, --keep) hook; hook: perf map + frame\n"
            "                        pointers when the interpreter keeps frame pointers,\n"
            "                        else jit; perf:\n"
            "                        names from /tmp/perf-<pid>.map (without frame\n"
            "                        pointers, stacks stop at the innermost Python\n"
            "                        function with a perf using libunwind, and name no\n"
            "                        Python function with one using libdw, as perf 7\n"
            "                        does); jit: jitdump + DWARF unwinding, whole\n"
            "                        stacks without frame pointers; sample (root, BPF):\n"
            "                        nothing installed in the program, its Python frames\n"
            "                        read at each sample (perf is not used; executing\n"
            "                        lines; children followed; any CPython 3.8-3.15, no\n"
            "                        module of its version needed; not with -f perf,\n"
            "                        --inline, --stack-size, --keep); read (no root):\n"
            "                        no hook, its Python\n"
            "                        frames read from outside on a timer, as py-spy\n"
            "                        does (processes this user may ptrace; CPU time\n"
            "                        from the threads' state; no native frames)\n"
            "      --async           asyncio as its authors see it (CPython 3.14+, sample\n"
            "                        mode only, which --mode auto then picks): a sample in\n"
            "                        a task reads as the chain of tasks awaiting it, each\n"
            "                        with the coroutines it waits in, <task 'serve'>;\n"
            "                        serve (app.py:46); <task 'handler-42'>; handler\n"
            "                        (app.py:29), above its native and kernel frames, in\n"
            "                        place of the event loop's; with --idle, each task\n"
            "                        that waits too, weighing the time it waits, under\n"
            "                        its awaiters, what it awaits at the leaf ([awaiting\n"
            "                        Future]) (default: off; also --async-aware, the 3.15\n"
            "                        sampler's name)\n"
            "      --idle            a wall-clock profile (py-spy's --idle, the 3.15\n"
            "                        sampler's --mode wall): every thread for its whole\n"
            "                        life, on and off the CPU, each sample weighted by\n"
            "                        the time it stands for; time off the CPU ends in its\n"
            "                        reason, kernel frames above it: [off-CPU: sleep],\n"
            "                        [off-CPU: I/O], [off-CPU: lock], [off-CPU: GIL],\n"
            "                        [off-CPU: waiting for a CPU], [off-CPU: other]\n"
            "                        (sample mode only, which --mode auto then picks;\n"
            "                        a program or -p, not -a; default: CPU time only)\n"
            "      --wall            the same as --idle (default: off)\n"
            "      --gil             only samples of threads that hold the GIL (py-spy's\n"
            "                        --gil; sample mode only, not -a; a free-threaded\n"
            "                        CPython has none: all of its samples; default:\n"
            "                        every thread)\n"
            "      --stack-size BYTES  stack copied per sample for DWARF unwinding, a\n"
            "                        multiple of 8 up to %d (default: %d, about 60\n"
            "                        Python frames on 3.8-3.13, 30 on 3.14+)\n"
            "      --native          keep C, libc and kernel frames (default)\n"
            "      --no-native       Python frames only (default: off)\n"
            "      --inline          keep C functions the compiler inlined (shown as\n"
            "                        'name (inlined)'); slower: perf then runs addr2line\n"
            "                        for every library and Python function sampled\n"
            "                        (default: off)\n",
            DEFAULT_RATE, DEFAULT_GRACE, DEFAULT_HOST_RATE, MAX_EVERY, MAX_STACK,
            DEFAULT_STACK);
    pp_help_fold_options(out, 18);
    fprintf(out,
            "      --keep [N|SIZE]   keep the recording and intermediate files (the\n"
            "                        directory is printed; default: all removed); with\n"
            "                        --every N or SIZE: keep the N newest files of the\n"
            "                        directory, or at most SIZE bytes of them (suffix K, M\n"
            "                        or G: 500M), removing older ones (default: all kept)\n"
            "  -h, --help            this help\n"
            "\n"
            "environment:\n"
            "  PERF                  the perf executable (default: perf on PATH)\n"
            "  PERFPY_RECORD_MODE    --mode's default for a program perfpy starts (default:\n"
            "                        auto)\n"
            "  TMPDIR                where the recording directory goes (default: /tmp;\n"
            "                        then, in jit mode, if /tmp is on disk and /dev/shm is\n"
            "                        a memory filesystem with 1 GiB free, the dumps and\n"
            "                        the files perf inject makes from them go to /dev/shm;\n"
            "                        with a perf that unwinds with libdw they go to /tmp\n"
            "                        itself, the only place its unwinder reads them, and\n"
            "                        only this recording's files are removed)\n"
            "\n"
            "exit status:\n"
            "  the program's own, after Ctrl-C too (0 when --duration stopped it); 1 if\n"
            "  perfpy or perf failed, or nothing was sampled (no profile is written);\n"
            "  2 for a usage error (options that cannot work together, an interpreter\n"
            "  older than CPython 3.8); with -a: 0 once stopped with a profile written,\n"
            "  1 if nothing was sampled or written, or --every dropped an interval\n"
            "\n"
            "examples:\n"
            "  perfpy record -- python app.py\n"
            "  perfpy record -f html -o app.html -r 999 -- python -m mypackage\n"
            "  perfpy record -a -d 30 -o host.svg\n"
            "  perfpy record -a --every 60 --keep 1G --label env=prod -o /var/lib/perfpy\n");
}

/* ---- options ---------------------------------------------------------------- */

enum { OPT_MODE = 256, OPT_STACK, OPT_NATIVE, OPT_NO_NATIVE, OPT_KEEP, OPT_INLINE,
       OPT_GRACE, OPT_PROCESSES, OPT_SHOW_PERFPY, OPT_THREADS, OPT_ALL_PROCESSES, OPT_EVERY,
       OPT_LABEL, OPT_ASYNC, OPT_IDLE, OPT_GIL };

/* The argument vector being parsed: `--keep N` takes the word after it
 * (getopt gives an optional argument only as --keep=N), and whether -r
 * was given (-a's default rate is another). */
static char **parsed_argv;
static int parsed_argc, rate_given;

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

static int known_mode(const char *m)
{
    static const char *const modes[] = {"auto", "sample", "read", "hook", "perf", "jit"};

    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (strcmp(m, modes[i]) == 0)
            return 1;
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
        if (!known_mode(optarg))
            return pp_usage_set(u, "--mode must be auto, sample, read, hook, perf or jit, "
                                  "not '%s'", optarg);
        o->mode = optarg;
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
    case OPT_THREADS:
        o->threads = 1;
        break;
    case OPT_ASYNC:
        o->async = 1;
        break;
    case OPT_IDLE:
        o->wall = 1;
        break;
    case OPT_GIL:
        o->gil = 1;
        break;
    }
    return PP_PARSED_RUN;
}

/* Options each valid alone that cannot work together: refused here, before
 * anything starts, not found out after the program ran. */
static int combinations(const pp_record_opts *o, pp_usage *u)
{
    int sample = strcmp(o->mode, "sample") == 0 || strcmp(o->mode, "read") == 0;

    if (o->format->recording && o->output && strcmp(o->output, "-") == 0)
        return pp_usage_set(u, "-f perf writes a perf.data and keeps its jitted code in "
                              "FILE.jit/ beside it: it cannot go to standard output (give "
                              "-o FILE)");
    return sample ? pp__record_sample_refusal(o, u) : PP_PARSED_RUN;
}

int pp__record_sample_refusal(const pp_record_opts *o, pp_usage *u)
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
            return pp_usage_set(u, no[i].why, o->mode);
    return PP_PARSED_RUN;
}

/* -a: sample mode, no program and no -p, its own defaults (the agents'
 * rate; pprof for --every, whose -o is a directory). */
static int host_options(pp_record_opts *o, pp_usage *u)
{
    if (o->argv || o->pid)
        return pp_usage_set(u, "-a records every CPython process of the host: give no "
                              "program and no -p");
    if (o->mode && strcmp(o->mode, "auto") != 0 && strcmp(o->mode, "sample") != 0)
        return pp_usage_set(u, "-a reads every process from outside, in sample mode: "
                              "--mode %s cannot (leave --mode out)", o->mode);
    if (o->wall || o->gil)          /* the scheduler's events are followed per program */
        return pp_usage_set(u, "%s records one program or -p PID, not the whole host: "
                              "leave -a out", o->wall ? "--idle (a wall-clock profile)" : "--gil");
    if ((o->keep_files || o->keep_bytes) && !o->every)
        return pp_usage_set(u, "--keep N or SIZE bounds the directory --every writes to: "
                              "give --every SECONDS too");
    if (o->every && o->output && strcmp(o->output, "-") == 0)
        return pp_usage_set(u, "--every writes one file per interval into a directory: "
                              "give -o DIR, not -");
    o->mode = "sample";
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
        {"threads", no_argument, NULL, OPT_THREADS},
        {"async", no_argument, NULL, OPT_ASYNC},
        {"async-aware", no_argument, NULL, OPT_ASYNC},
        {"idle", no_argument, NULL, OPT_IDLE},
        {"wall", no_argument, NULL, OPT_IDLE},
        {"gil", no_argument, NULL, OPT_GIL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int rc;

    memset(o, 0, sizeof(*o));
    o->rate = DEFAULT_RATE;
    o->stack_size = DEFAULT_STACK;
    o->grace = DEFAULT_GRACE;
    parsed_argv = argv;
    parsed_argc = argc;
    rate_given = 0;
    rc = pp_getopt_each(argc, argv, "+:o:f:r:d:p:ah", opts, record_option, o, u);
    if (rc != PP_PARSED_RUN)
        return rc;
    if (optind < argc)
        o->argv = argv + optind;
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
    /* only sample mode reads a task at each sample, records time off the
     * CPU or who holds the GIL: it is what --mode auto (or none) means
     * then; the others are refused */
    if ((o->async || o->wall || o->gil) && (!o->mode || strcmp(o->mode, "auto") == 0))
        o->mode = "sample";
    if (!o->mode)                   /* attached, the process decides (cmd_record.c) */
        o->mode = o->argv ? pp__record_default_mode() : "auto";
    if (!known_mode(o->mode))
        return pp_usage_set(u, "PERFPY_RECORD_MODE (--mode's default for a program perfpy "
                              "starts) must be auto, sample, read, hook, perf or jit, not "
                              "'%s'", o->mode);
    if (o->async && strcmp(o->mode, "sample") != 0)
        return pp_usage_set(u, "--async needs --mode sample: the task a thread runs and "
                              "the tasks awaiting it are read by a BPF program at each "
                              "sample, which --mode %s does not use", o->mode);
    if ((o->wall || o->gil) && strcmp(o->mode, "sample") != 0)
        return pp_usage_set(u, "%s needs --mode sample: %s comes from BPF programs in the "
                              "kernel, which --mode %s does not use", o->wall ?
                              "--idle (a wall-clock profile)" : "--gil", o->wall ?
                              "the time each thread spends off the CPU, and why," :
                              "who holds the GIL at each sample", o->mode);
    if (!o->format)
        o->format = pp_format_find("flamegraph");
    return combinations(o, u);
}
