/*
 * The report pipeline: from a perf.data file to a written profile. Both
 * `perfpy report` and `perfpy record` (after its recording) call it.
 *
 *   perf.data ─scan─► [perf --buildid-dir TMP inject --jit] ─► perf script ─►
 *     parser+folder (streamed, no temporary text file) ─► pp_profile ─►
 *     writer (temporary file, renamed on success) ─► summary on stderr
 *
 * The simplest use:
 *
 *     pp_report_opts o = PP_REPORT_OPTS_INIT;
 *     pp_report_result r;
 *     o.input = "perf.data"; o.format = pp_format_find("html"); o.output = "out.html";
 *     if (pp_report(&o, &r) == 0) pp_summary_print(stderr, &r, 10);
 *     else fprintf(stderr, "perfpy: %s\n", r.err.message);
 *     pp_report_result_free(&r);
 *
 * The stages live in their own files: perf_run.c (perf inject, perf
 * script, the jitted ELFs), perf_data.c (scan), perf_data_fix.c (exec
 * fix-ups), jitdump_codes.c (a dump's code loads), perf_script.c
 * and fold.c (text to profile), output/ (the writers, atomic writes).
 * Errors are values: 0 or a negative errno, the sentence in r->err; this
 * layer includes nothing of the commands and prints nothing: its progress
 * goes to the callback the command supplies (o->progress), and
 * pp_summary_print writes to the stream the command gives it. The input
 * perf.data is only ever read.
 */
#ifndef PERFPY_REPORT_H
#define PERFPY_REPORT_H

#include "fold.h"
#include "output/output.h"
#include "perf_data.h"
#include "profile/profile.h"
#include "perfpy/error.h"

#include <limits.h>
#include <stdint.h>

/* What the pipeline is doing, for a command that shows it. */
typedef enum pp_progress_step {
    PP_PROGRESS_INJECT,          /* perf inject --jit starts */
    PP_PROGRESS_SCRIPT,          /* perf script starts (its text folded as it comes) */
    PP_PROGRESS_SAMPLES,         /* samples folded so far, seconds spent on them */
    PP_PROGRESS_DONE,            /* what was shown is over (clear it) */
} pp_progress_step;

typedef struct pp_progress {
    /* NULL: nothing is reported. Called from the pipeline's own thread;
     * SAMPLES at most every 0.25 s and only after the first second. */
    void (*fn)(void *ctx, pp_progress_step step, uint64_t samples, double seconds);
    void *ctx;
} pp_progress;

typedef struct pp_report_opts {
    const char *input;           /* perf.data to read, or a profile perfpy wrote
                                    (-f perfpy, gzip: read_profile.c) (required) */
    const pp_format *format;     /* NULL: flamegraph */
    const char *output;          /* NULL: pp_report_default_output(); "-": stdout */
    int no_native;               /* drop native and kernel frames */
    int keep;                    /* keep the injected perf.data and jitted-*.so */
    const char *lines_dir;       /* perfpy-<pid>.lines; NULL: the input's directory */
    const char *perf;            /* perf executable; NULL: $PERF or "perf" on PATH */
    const char *title;           /* graphical formats' title; NULL: program name */
    pp_progress progress;        /* {NULL}: silent */
    const char *tmpdir;          /* for the temporary directory; NULL: $TMPDIR or /tmp */
    int from_script;             /* input is `perf script` text (-F PP_SCRIPT_FIELDS),
                                    "-" for stdin: no perf is run */
    int inline_frames;           /* keep frames the compiler inlined ("(inlined)"):
                                    perf script then runs addr2line once per DSO
                                    hit, jitted ELFs included (seconds); 0: off */
    int no_inject;               /* never perf inject: a perf-map recording whose
                                    program also wrote a jitdump (CPython's own
                                    -X perf_jit) keeps its perf-map names, which
                                    inject would drop */
    int processes;               /* PP_PROCESSES_AUTO (0): a root per process when
                                    there are two or more; _SPLIT, _MERGE (fold.h) */
    int show_perfpy;             /* keep perfpy's own frames (engine, startup hook) */
    int threads;                 /* roots per thread (--threads): PP_THREAD_ROOTS_* */
} pp_report_opts;

#define PP_REPORT_OPTS_INIT {.input = NULL}

typedef struct pp_report_result {
    pp_profile profile;          /* the folded profile (totals, stacks) */
    pp_perf_data_info info;      /* what the scan found (lost events, dumps) */
    char output[PATH_MAX];       /* the file written */
    int injected;                /* perf inject --jit ran */
    char kept[PATH_MAX];         /* --keep: the directory of kept files, else "" */
    size_t jitted_kept;          /* jitted-*.so files left for `perf report` (format perf) */
    char jitted_for[PATH_MAX];   /* the perf.data `perf report` reads them with */
    double seconds;              /* post-processing time */
    /* where it went (what `perfpy record` says after the summary, and
     * docs/PERFORMANCE.md's report times come from) */
    double inject_s;             /* perf inject --jit, wall */
    double script_s;             /* perf script with the folding of its text, wall */
    double perf_cpu_s;           /* perf's CPU time (inject, script, addr2line) */
    double own_cpu_s;            /* perfpy's: parsing, folding, writing */
    int sample_mode;             /* read by perfpy-sample, not perf: the summary
                                    speaks of what did the reading */
    int verbose;                 /* the summary's accounting notes too (-v), not
                                    only the mode, totals, table and losses */
    char warning[PATH_MAX + 256];/* what the command should say even on success
                                    ("" when nothing): jit dumps that are gone */
    pp_error err;                /* why pp_report failed */
} pp_report_result;

/* The whole pipeline. 0, or a negative errno with r->err filled. r is always
 * initialised (free it with pp_report_result_free). */
int pp_report(const pp_report_opts *o, pp_report_result *r);
void pp_report_result_free(pp_report_result *r);

/* "<stem>.<ext>" in the current directory, stem = the input's file name
 * without ".data", ".perfpy.gz" or ".pb.gz" ("perf.data" -> "perf.svg",
 * "app.perfpy.gz" -> "app.svg"; format perf: "perf-perfpy.data"). */
void pp_report_default_output(const char *input, const pp_format *f, char *buf, size_t cap);

/* A profile perfpy wrote, read back into p (read_profile.c): perfpy's own
 * (-f perfpy: everything), collapsed stacks, or perfpy's gzipped pprof;
 * what `perfpy diff` compares and `perfpy report` writes again. 0, or a
 * negative errno with e's sentence, one line naming what is wrong (-ENODATA:
 * no samples in it). */
int pp_read_profile(const char *path, pp_profile *p, pp_error *e);
/* The same of a buffer (tests, the fuzzer): 0, -EINVAL (damaged pprof) or
 * -ENOMEM; lines or samples not understood are counted in p->bad_lines. */
int pp_read_profile_buffer(const uint8_t *data, size_t len, pp_profile *p);

/* perfpy's own profile file (-f perfpy; include/perfpy/profile_format.h)
 * inside its gzip stream, read back (read_perfpy.c): why it could not be,
 * where, and the version a file of another one says. */
typedef struct pp_perfpy_error {
    const char *why;             /* a phrase: "a stack too deep" */
    size_t at;                   /* its byte in the data inside the gzip stream */
    uint32_t version;            /* the file's version (from its header) */
} pp_perfpy_error;

/* Whether data begins with the file's magic. */
int pp_is_perfpy(const uint8_t *data, size_t len);
/* 0; -ENOMSG not perfpy's (no magic); -EPROTO another version
 * (err->version); -EINVAL damaged or cut (err->why, err->at); -ENOMEM.
 * p may hold part of the file after a failure: free it, write nothing. */
int pp_read_perfpy(const uint8_t *data, size_t len, pp_profile *p, pp_perfpy_error *err);

/* Samples, lost events, truncated share, the top `top` Python functions by
 * own and by total time, and the output path (summary.c). */
void pp_summary_print(FILE *out, const pp_report_result *r, int top);
/* How a recording ended, on out: stopped after N s (by --duration or
 * Ctrl-C), or the program's end by a signal or a status other than 0 (a
 * wait status); nothing for a program that ended well. */
void pp_summary_end(FILE *out, int stopped, double seconds, int wait_status);
/* Nothing was sampled: no profile is written (pid: the process attached
 * to, 0 the program). */
void pp_summary_no_samples(FILE *out, long pid, double seconds);

#endif
