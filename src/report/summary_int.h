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
/* The same for the stacks of one process: those whose proc_of entry
 * (pp__stack_procs) is proc, each function's own and total time its time
 * in that process. */
pp__wall_split *pp__wall_split_of(const pp_profile *p, const pp__funcs *f,
                                  const uint32_t *proc_of, uint32_t proc);
/* The overall line, then the top `top` functions by total time, each with
 * its time's shares by reason. no_line: rows named without a line. */
void pp__wall_split_print(FILE *out, const pp_profile *p, const pp__wall_split *w, int top,
                          int no_line);
void pp__wall_split_free(pp__wall_split *w);

/* Per stack of p, the index in p->procs of the process whose samples it
 * holds (PP_NONE: none logged), read from the sample log; NULL when p has
 * fewer than two processes, no log, a stack holding samples of two
 * (processes merged under no root of their own), or no memory. */
uint32_t *pp__stack_procs(const pp_profile *p);

/* Processes given a block each by pp__wall_blocks_print; the rest are
 * summed in one line. Without -v, a process that ran no Python gets one
 * only with this share of all the processes' time or more. */
#define PP_WALL_BLOCKS 8
#define PP_WALL_QUIET_PCT 5.0

/* A wall-clock profile of several processes: one block per process (the
 * most time first; verbose: every one up to PP_WALL_BLOCKS), its split and
 * top functions as pp__wall_split_print prints them, each of that
 * process's own time. 0, or -1 when the stacks cannot be told apart by
 * process (pp__stack_procs) or out of memory, nothing printed. */
int pp__wall_blocks_print(FILE *out, const pp_profile *p, const pp__funcs *f, int top,
                          int no_line, int verbose);

#endif
