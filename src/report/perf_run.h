/*
 * Running perf for the report: finding it, `perf inject --jit` with the
 * bookkeeping of the jitted-<pid>-<n>.so files it writes, `perf script`
 * streamed into a callback, and what perf's version says when it fails.
 *
 * Every run gets `--buildid-dir <tmp>/buildid`, so ~/.debug is never
 * touched, and its stderr in a file of tmp, whose last lines go into the
 * error message when perf fails. Errors are values: 0 or a negative errno,
 * with the sentence in a pp_error (include/perfpy/error.h).
 */
#ifndef PERFPY_PERF_RUN_H
#define PERFPY_PERF_RUN_H

#include "perf_data.h"
#include "perfpy/error.h"

#include <stddef.h>

/* The perf executable to run (want, else $PERF, else "perf" found on PATH)
 * into buf; -ENOENT with how to install perf. */
int pp_perf_find(const char *want, char *buf, size_t cap, pp_error *e);

/* `perf --buildid-dir <tmp>/buildid inject --jit -i in -o out`, deleting
 * nothing. *made gets the paths of the jitted-*.so files it made (a
 * NULL-terminated malloc'ed array, or NULL): pass it to pp_perf_unlink_all()
 * once perf script has read them. 0 or a negative errno. */
int pp_perf_inject(const char *perf, const char *in, const char *out, const char *tmp,
                   const pp_perf_data_info *info, char ***made, pp_error *e);

/* Deletes the files named in made (and frees the array). */
void pp_perf_unlink_all(char **made);

/* Runs `perf --buildid-dir <tmp>/buildid script -F PP_SCRIPT_FIELDS
 * --max-stack 4096 [--no-inline] -i data` and hands its output, streamed,
 * to read(fd, ctx), which returns 0 or a negative errno. Without
 * inline_frames perf is given --no-inline: resolving inlined frames makes
 * perf 6.1 start one addr2line per DSO with samples (every jitted function
 * is a DSO), which took 1.7-2.5 s of a 2.0 s perf script on a 400-sample
 * recording (docs/PERFORMANCE.md, levers). 0 or a negative errno. */
int pp_perf_script(const char *perf, const char *data, const char *tmp, int inline_frames,
                   int (*read)(int fd, void *ctx), void *ctx, pp_error *e);

/* After perf failed on `in`: when a newer perf wrote it (perf itself only
 * says "incompatible file format"), adds a line saying so to e. */
void pp_perf_explain_newer_writer(const char *perf, const char *in,
                                  const pp_perf_data_info *info, pp_error *e);

#endif
