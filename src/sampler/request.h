/*
 * What perfpy asks of perfpy-sample, as one typed request. perfpy (record
 * in sample or read mode, top, dump) fills a pp_request and hands it over
 * as perfpy-sample's argument vector; perfpy-sample reads it back. Both
 * directions go through the one table of fields in request.c, so the
 * writer and the reader cannot drift apart, and every field is named
 * where it travels (what `ps` shows too):
 *
 *   perfpy-sample --request 1 what=record mode=sample target=program pid=0
 *                 rate=399 wall=0 gil=0 async=0 duration=0 format=flamegraph
 *                 output=app-20261201-101010.svg no-native=0 processes=0 ...
 *                 -- python3 app.py
 *
 * The number after --request is PP_REQUEST_VERSION: perfpy-sample reads a
 * request of its own version only, and says so otherwise (perfpy and
 * perfpy-sample then come from two builds: they are installed together).
 * A key it does not know is refused the same way, never skipped.
 *
 * The mode is an enum, resolved once by perfpy (cli/mode.c) before the
 * request is written: sample or read for record and top; dump alone may
 * ask auto, which perfpy-sample decides where its collector opens (the
 * BPF object is loaded once, not once to ask and once to read).
 */
#ifndef PERFPY_SAMPLER_REQUEST_H
#define PERFPY_SAMPLER_REQUEST_H

#include <stddef.h>

#define PP_REQUEST_VERSION 3

/* The exit statuses of both programs: 0 success, 1 failure, 2 usage error
 * (record passes the profiled program's own on). */
#define PP_EXIT_OK 0
#define PP_EXIT_FAIL 1
#define PP_EXIT_USAGE 2
/* perfpy-sample --check's status when it was built without sample mode's
 * BPF collector (PERFPY_NO_SAMPLE=1): it reads (read mode), it cannot
 * sample. */
#define PP_EXIT_NOT_BUILT 3

/* How a recording is made. */
typedef enum pp_mode {
    PP_MODE_AUTO = 0,            /* the best this machine allows (cli/mode.c) */
    PP_MODE_SAMPLE,              /* BPF at each sample: perfpy-sample */
    PP_MODE_READ,                /* memory read from outside on a timer: perfpy-sample */
    PP_MODE_HOOK,                /* the trampolines, perf map or jitdump as the
                                    interpreter allows */
    PP_MODE_PERF,                /* trampolines named in /tmp/perf-<pid>.map */
    PP_MODE_JIT,                 /* trampolines in a jitdump, DWARF unwinding */
    PP_MODE_N
} pp_mode;

/* "auto", "sample", "read", "hook", "perf", "jit". */
const char *pp_request_mode_name(pp_mode m);
/* The mode named name: 0, or -EINVAL. */
int pp_request_mode_of(const char *name, pp_mode *out);

typedef enum pp_request_what {
    PP_REQUEST_RECORD = 0,       /* record a profile and write it */
    PP_REQUEST_TOP,              /* perfpy top: each interval shown, nothing written */
    PP_REQUEST_DUMP,             /* perfpy dump: each thread's stack, once */
} pp_request_what;

typedef enum pp_request_target {
    PP_TARGET_PROGRAM = 0,       /* start argv */
    PP_TARGET_PID,               /* a running process (and its children) */
    PP_TARGET_HOST,              /* -a: every CPython process of the host */
} pp_request_target;

#define PP_REQUEST_LABELS 16     /* record --label, at most */

typedef struct pp_request {
    pp_request_what what;
    pp_mode mode;                /* sample or read (dump: auto too) */
    /* the target */
    pp_request_target target;
    long pid;                    /* PP_TARGET_PID (dump: its process) */
    char **argv;                 /* PP_TARGET_PROGRAM: NULL-terminated */
    /* the rate and the clock */
    long rate;                   /* samples per second per busy thread (-a: per CPU) */
    int wall;                    /* wall clock: time off the CPU too (--idle) */
    int gil;                     /* only threads that hold the GIL (--gil) */
    int async;                   /* stacks as asyncio's tasks see them (--async) */
    double duration;             /* seconds; 0: until the end (or Ctrl-C) */
    const char *event;           /* -e: perf's name of the event sampled
                                    (event.h); "" or NULL: CPU time */
    long period;                 /* -c: events per sample (with event) */
    /* the profile */
    const char *format;          /* the writer's name (output.h) */
    const char *output;          /* the file; -a --every: the directory */
    int no_native;               /* Python frames only */
    int processes;               /* PP_PROCESSES_* (report/fold.h) */
    int threads;                 /* a root per thread */
    int verbose;                 /* -v: every accounting note, not only those
                                    that move a figure by 1% or more */
    /* -a */
    double every;                /* seconds per profile; 0: one at the end */
    long keep_files;             /* files kept in the directory; 0: all */
    unsigned long long keep_bytes;   /* bytes of them; 0: no bound */
    int all_processes;           /* the processes that run no CPython too */
    const char *labels[PP_REQUEST_LABELS];   /* KEY=VALUE on every sample */
    int nlabels;
    /* top */
    double interval;             /* seconds between redraws */
    long rows;                   /* functions in each plain table; 0: all */
    /* dump */
    int json, locals, subprocesses, nonblocking;
} pp_request;

/* perfpy-sample's argument vector for rq, its first word sampler (the
 * path to run): malloc'ed, NULL-terminated, each word malloc'ed (strings
 * of rq are copied); free it with pp_request_argv_free. 0 or -ENOMEM. */
int pp_request_argv(const pp_request *rq, const char *sampler, char ***out);
void pp_request_argv_free(char **argv);

/* The request in argv (argv[0] the program, argv[1] "--request"): 0, or
 * an exit status (PP_EXIT_USAGE) with the sentence in why. rq's strings
 * and argv point into argv. */
int pp_request_read(int argc, char **argv, pp_request *rq, char *why, size_t cap);

#endif
