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
 *     if (pp_report(&o, &r) == 0) pp_report_print_summary(stderr, &r, 10);
 *     pp_report_result_free(&r);
 *
 * Each stage is also callable alone (record may want to inject and write
 * while it still holds the engine's files). Functions that can fail print
 * one message naming the problem and the fix (perfpy: ...) and return -1;
 * nothing here exits, and the input perf.data is only ever read.
 */
#ifndef PERFPY_REPORT_H
#define PERFPY_REPORT_H

#include "fold.h"
#include "output.h"
#include "perf_data.h"
#include "profile.h"

#include <limits.h>

typedef struct pp_report_opts {
    const char *input;           /* perf.data to read (required) */
    const pp_format *format;     /* NULL: flamegraph */
    const char *output;          /* NULL: pp_report_default_output(); "-": stdout */
    int no_native;               /* drop native and kernel frames */
    int keep;                    /* keep the injected perf.data and jitted-*.so */
    const char *lines_dir;       /* perfpy-<pid>.lines; NULL: the input's directory */
    const char *perf;            /* perf executable; NULL: $PERF or "perf" on PATH */
    const char *title;           /* graphical formats' title; NULL: program name */
    int progress;                /* 1 on, 0 off, -1: when stderr is a terminal */
    const char *tmpdir;          /* for the temporary directory; NULL: $TMPDIR or /tmp */
    int from_script;             /* input is `perf script` text (-F PP_SCRIPT_FIELDS),
                                    "-" for stdin: no perf is run */
    int inline_frames;           /* keep frames the compiler inlined ("(inlined)"):
                                    perf script then runs addr2line once per DSO
                                    hit, jitted ELFs included (seconds); 0: off */
} pp_report_opts;

#define PP_REPORT_OPTS_INIT {NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, -1, NULL, 0, 0}

typedef struct pp_report_result {
    pp_profile profile;          /* the folded profile (totals, stacks) */
    pp_perf_data_info info;      /* what the scan found (lost events, dumps) */
    char output[PATH_MAX];       /* the file written */
    int injected;                /* perf inject --jit ran */
    char kept[PATH_MAX];         /* --keep: the directory of kept files, else "" */
    size_t jitted_kept;          /* jitted-*.so files left for `perf report` (format perf) */
    double seconds;              /* post-processing time */
} pp_report_result;

/* The whole pipeline. 0, or -1 after printing why. r is always initialised
 * (free it with pp_report_result_free). */
int pp_report(const pp_report_opts *o, pp_report_result *r);
void pp_report_result_free(pp_report_result *r);

/* "<stem>.<ext>" in the current directory, stem = the input's file name
 * without ".data" ("perf.data" -> "perf.svg"; format perf: "perf-perfpy.data"). */
void pp_report_default_output(const char *input, const pp_format *f, char *buf, size_t cap);

/* Samples, lost events, truncated share, the top `top` Python functions by
 * own and by total time, and the output path. */
void pp_report_print_summary(FILE *out, const pp_report_result *r, int top);

/* ---- the stages ---------------------------------------------------------- */

/* The perf executable to run (o->perf, $PERF, or "perf" found on PATH) into
 * buf; -1 after saying how to install perf. */
int pp_report_find_perf(const char *want, char *buf, size_t cap);

/* `perf --buildid-dir <tmp>/buildid inject --jit -i in -o out`, deleting
 * nothing. *made gets the paths of the jitted-*.so files it made (a
 * NULL-terminated malloc'ed array, or NULL): pass it to
 * pp_report_unlink_all() once perf script has read them. 0 or -1. */
int pp_report_inject(const char *perf, const char *in, const char *out,
                     const char *tmp, const pp_perf_data_info *info, char ***made);

/* Runs `perf --buildid-dir <tmp>/buildid script -F ... --max-stack 4096
 * [--no-inline] -i data` and folds its output, streamed, into p. Without
 * inline_frames perf is given --no-inline: resolving inlined frames makes
 * perf 6.1 start one addr2line per DSO with samples (every jitted function
 * is a DSO), which took 1.7-2.5 s of a 2.0 s perf script on a 400-sample
 * recording (docs/PERFORMANCE.md, levers). 0 or -1. */
int pp_report_script(const char *perf, const char *data, const char *tmp,
                     const pp_fold_opts *fo, pp_profile *p, int progress,
                     int inline_frames);

/* Folds `perf script` text read from fd into p (streamed). 0 or -1. */
int pp_report_fold_fd(int fd, const pp_fold_opts *fo, pp_profile *p, int progress);

/* Writes p in format f to path: through a temporary file renamed at the end
 * when path is (or would be) a regular file, directly otherwise (/dev/full,
 * a pipe, "-" for stdout). fflush/ferror/fclose checked: a full disk fails
 * and leaves no partial file. 0 or -1. */
int pp_report_write(const pp_profile *p, const pp_format *f, const char *path,
                    const pp_write_opts *wo);

/* Copies a file (format perf), through a temporary file as above. 0 or -1. */
int pp_report_copy(const char *from, const char *path);

/* Deletes the files named in made (and frees the array). */
void pp_report_unlink_all(char **made);

#endif
