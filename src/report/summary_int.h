/*
 * What summary.c and summary_wall.c share: the functions the summary
 * ranks. The summary ranks functions, not lines. In the trampoline modes a
 * Python frame is a function (its def line); in sample mode each executing
 * line of a function is a frame of its own (split at lines 199 and 207 are
 * two), so there the frames are grouped by name and file
 * (pp_profile_functions) and each row is named without a line.
 */
#ifndef PERFPY_SUMMARY_INT_H
#define PERFPY_SUMMARY_INT_H

#include "report.h"

typedef pp_func pp__func;        /* pp_profile_functions' */

typedef struct pp__funcs {
    pp_func *v;                  /* the Python functions, in frame order */
    uint32_t n;
    uint32_t *of;                /* per frame: its function, or PP_NONE */
} pp__funcs;

/* by_line: frames with another line are other functions (trampoline
 * modes). 0, or -1 out of memory. */
int pp__funcs_make(const pp_profile *p, int by_line, pp__funcs *f);
void pp__funcs_free(pp__funcs *f);

/* A wall-clock profile's split of time by reason (summary_wall.c), overall
 * and per function of f (made before f is sorted); NULL for a profile of
 * CPU time (or out of memory). */
typedef struct pp__wall_split pp__wall_split;
pp__wall_split *pp__wall_split_make(const pp_profile *p, const pp__funcs *f);
/* The overall line, then the top `top` functions by total time, each with
 * its time's shares by reason. no_line: rows named without a line. */
void pp__wall_split_print(FILE *out, const pp_profile *p, const pp__wall_split *w, int top,
                          int no_line);
void pp__wall_split_free(pp__wall_split *w);

#endif
