/*
 * The subcommands' option parsers, apart from running them.
 *
 *   pp_usage u;
 *   pp_run_opts o;
 *   switch (pp_run_parse(argc, argv, &o, &u)) {
 *   case PP_PARSED_HELP:  help(stdout) ...
 *   case PP_EXIT_USAGE:   pp_usage_error("run", "%s", u.message) ...
 *   case PP_PARSED_RUN:   run with o ...
 *   }
 *
 * A parser reads argv and fills the options; it prints nothing, opens,
 * changes and starts nothing (getopt may reorder argv, as it always does),
 * so it can be called any number of times: tests/fuzz/fuzz_options.c feeds
 * it hostile argument vectors. Strings in the options point into argv.
 */
#ifndef PERFPY_OPTIONS_H
#define PERFPY_OPTIONS_H

#include "cli.h"
#include "report/report.h"

#include <getopt.h>
#include <stdio.h>

#define PP_PARSED_RUN 0
#define PP_PARSED_HELP 1
/* ... or PP_EXIT_USAGE (cli.h) with the reason in pp_usage.message */

typedef struct pp_usage {
    char message[1024];        /* one sentence, without "perfpy CMD: " */
} pp_usage;

/* perfpy run [--mode perf|jit] -- PROGRAM ARGS... */
typedef struct pp_run_opts {
    pp_mode mode;              /* PP_MODE_PERF or PP_MODE_JIT (PERFPY's words) */
    char **argv;               /* the program, NULL-terminated */
} pp_run_opts;

/* perfpy record [options] -- PROGRAM ARGS... | -p PID */
#define PP_MAX_LABELS PP_REQUEST_LABELS   /* --label given at most this often */

typedef struct pp_record_opts {
    const char *output;
    const pp_format *format;
    long rate;
    double duration;           /* seconds, 0 = none */
    double grace;              /* seconds the program has to end after SIGINT */
    long pid;                  /* -p, 0 = none */
    pp_mode mode;              /* --mode, or PERFPY_RECORD_MODE for a program (auto
                                  when neither): what is asked; mode.c decides */
    long stack_size;
    int stack_size_given;      /* --stack-size was on the command line */
    int no_native;
    int keep;
    int inline_frames;         /* --inline */
    int processes;             /* --processes: PP_PROCESSES_* */
    int show_perfpy;           /* --show-perfpy */
    int threads;               /* --threads: thread roots (1), what perfpy-sample is told */
    int threads_split;         /* --threads split: a root per thread, not per name */
    int async;                 /* --async: stacks as asyncio's tasks see them */
    int wall;                  /* --idle (--wall): wall-clock profile */
    int gil;                   /* --gil: samples of threads holding the GIL */
    const char *event;         /* -e: perf's name of the event sampled; NULL: CPU time */
    long period;               /* -c: the event's occurrences per sample */
    int list_events;           /* -e list: list them, record nothing */
    char **argv;               /* the program, NULL with -p */
    /* the whole host (-a) and continuous output (--every) */
    int host;                  /* -a: every CPython process of the host */
    int all_processes;         /* --all-processes: the others too */
    double every;              /* --every SECONDS, 0 = one profile at the end */
    long keep_files;           /* --keep N: files kept in the directory, 0 = all */
    unsigned long long keep_bytes;   /* --keep SIZE: bytes of them, 0 = no bound */
    const char *labels[PP_MAX_LABELS];   /* --label KEY=VALUE */
    int nlabels;
    int verbose;               /* -v: every accounting note in the summary */
} pp_record_opts;

/* perfpy report [options] perf.data */
typedef struct pp_report_cli {
    pp_report_opts report;     /* input, format, output... */
    long top;                  /* functions in the summary */
    int quiet;
    int verbose;               /* -v: the summary's accounting notes too */
} pp_report_cli;

/* perfpy jitdump [--list] FILE */
typedef struct pp_jitdump_opts {
    int list;
    const char *path;
} pp_jitdump_opts;

/* perfpy doctor [--dir DIR] [-- PYTHON] */
typedef struct pp_doctor_opts {
    const char *dir;           /* NULL: $PERFPY_JITDUMP_DIR, else /tmp */
    const char *python;        /* "python3" unless given */
} pp_doctor_opts;

/* perfpy __exec [--stderr-fd N] [--pid-fd M] -- PROGRAM ARGS... */
typedef struct pp_exec_opts {
    int stderr_fd;             /* -1: none */
    int pid_fd;                /* -1: none */
    char **argv;
} pp_exec_opts;

int pp_run_parse(int argc, char **argv, pp_run_opts *o, pp_usage *u);
int pp_record_parse(int argc, char **argv, pp_record_opts *o, pp_usage *u);
int pp_report_parse(int argc, char **argv, pp_report_cli *o, pp_usage *u);
int pp_jitdump_parse(int argc, char **argv, pp_jitdump_opts *o, pp_usage *u);
int pp_doctor_parse(int argc, char **argv, pp_doctor_opts *o, pp_usage *u);
int pp_exec_parse(int argc, char **argv, pp_exec_opts *o, pp_usage *u);

/* What a subcommand does with a parser's answer: -1 to go on (PP_PARSED_RUN),
 * else its exit status after printing the help (to stdout) or the usage
 * error (to stderr, pp_usage_error's way). */
int pp_parsed(const char *cmd, int rc, const pp_usage *u, const char *const *help);

/* Helpers of the parsers (util.c). */
/* Sets u->message; returns PP_EXIT_USAGE. */
int pp_usage_set(pp_usage *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What getopt_long's ':' (a value missing) or '?' (unknown option) meant,
 * in u; returns PP_EXIT_USAGE. */
int pp_getopt_error(int c, int argc, char **argv, pp_usage *u);
/* Resets getopt for a fresh argument vector (glibc: optind 0 reinitializes
 * it; optind 1 would keep its place inside the last "-abc" group, a
 * pointer into the previous argv). */
void pp_getopt_reset(void);
/* A whole number in [lo, hi]: 0, or -1. */
int pp_parse_long(const char *s, long lo, long hi, long *out);
/* --mode of dump and top: auto, sample or read into *mode. PP_PARSED_RUN,
 * or a usage error. */
int pp_parse_live_mode(const char *s, pp_mode *mode, pp_usage *u);


/* perfpy dump [options] PID */
typedef struct pp_dump_cli {
    long pid;
    int json, locals, subprocesses, nonblocking, no_native;
    int async;                 /* --async: asyncio's task tree too */
    pp_mode mode;              /* auto, sample (BPF) or read (ptrace) */
} pp_dump_cli;
int pp_dump_parse(int argc, char **argv, pp_dump_cli *o, pp_usage *u);

/* perfpy diff [options] BASE NEW */
typedef struct pp_diff_cli {
    const pp_format *format;   /* html (default), flamegraph or table */
    const char *output, *title, *base, *nw;
    int quiet;
    long top;                  /* rows of the table, 0: the format's default */
} pp_diff_cli;
int pp_diff_parse(int argc, char **argv, pp_diff_cli *o, pp_usage *u);

/* perfpy top [options] (-p PID | -- PROGRAM ARGS...) */
typedef struct pp_top_cli {
    long pid, rate;
    double interval;           /* seconds between redraws */
    pp_mode mode;              /* auto, sample or read */
    int wall;                  /* --idle: time off the CPU too, with its reason */
    int async;                 /* --async: stacks as asyncio's tasks see them */
    long rows;                 /* --rows: functions in a plain table (0: all) */
    char **argv;               /* the program to start, or NULL */
} pp_top_cli;
int pp_top_parse(int argc, char **argv, pp_top_cli *o, pp_usage *u);

/* One option of a subcommand, c as getopt_long returns it (its letter, or
 * a long-only code; optarg its value): fills opts and returns
 * PP_PARSED_RUN, or a usage error (pp_usage_set). */
typedef int pp_option_fn(int c, void *opts, pp_usage *u);
/* The option loop of every parser: getopt_long over argv from its start
 * (pp_getopt_reset), -h/--help -> PP_PARSED_HELP, a missing value or an
 * unknown option -> a usage error (pp_getopt_error), each other option to
 * fn. PP_PARSED_RUN with optind at the first operand, or where it stopped. */
int pp_getopt_each(int argc, char **argv, const char *shortopts,
                   const struct option *longopts, pp_option_fn *fn, void *opts,
                   pp_usage *u);
/* The operands: exactly one, named `what` in the messages ("no perf.data
 * given (perfpy report perf.data)", "one perf.data at a time"). */
int pp_operand_one(int argc, char **argv, const char *what, const char *example,
                   const char **out, pp_usage *u);
/* A program and its arguments from argv[first] to the end; example (or
 * NULL) follows "no program given". */
int pp_operand_program(int argc, char **argv, int first, const char *example,
                       char ***out, pp_usage *u);
/* -f NAME and -o FILE of record and report: the format's table row, a
 * file name that is not empty. */
int pp_option_format(const char *arg, const pp_format **out, pp_usage *u);
int pp_option_output(const char *arg, const char **out, pp_usage *u);
/* --processes auto|split|merge of record and report: PP_PROCESSES_*. */
int pp_option_processes(const char *arg, int *out, pp_usage *u);

/* --threads [merge|split] of record and report (arg: getopt's optional
 * argument, else the word after it when it is one of the two, taken):
 * PP_THREAD_ROOTS_PATTERN or _SPLIT. */
int pp_option_threads(const char *arg, int argc, char **argv, int *out, pp_usage *u);

/* For the commands that run the report pipeline (record, report): its
 * progress as one line on stderr rewritten in place, when stderr is a
 * terminal and the command is not quiet; else {NULL} (silent). */
pp_progress pp_progress_on_stderr(int quiet);

#endif
