/*
 * The profile: what perfpy knows after reading `perf script`, in the shape
 * every writer needs. Nothing here knows perf's text format (perf_script.c)
 * or the folding rules (fold.c); writers (out_*.c) only read it.
 *
 *     perf script text ──► perf_script.c ──► fold.c ──► pp_profile ──► out_*.c
 *       (per sample,         (pp_script_      (frames      frames[]        svg, html,
 *        native frames)       sample)          folded)     stacks[]        speedscope,
 *                                                          totals          pprof, txt
 *
 * Frames are interned: one pp_frame per distinct (kind, name, file, line),
 * identified by its index. A stack is an array of frame ids, ROOT FIRST, with
 * the number of samples that had exactly that stack and the sum of their
 * periods (nanoseconds for cpu-clock). Stacks are interned too, so a profile
 * of millions of samples holds each distinct stack once.
 *
 *     frames:  0 "[truncated]"  1 "baz"  2 "bar"  3 "foo"  4 "PyLong_FromLong"
 *     stacks:  {1,2,3}   x 812 samples
 *              {1,2,3,4} x  97 samples
 *              {0,3}     x   4 samples   (could not be unwound to its root)
 *
 * Strings live in an arena owned by the profile: pointers stay valid until
 * pp_profile_free(). All counts are 64-bit. Errors are values (0 or -errno).
 */
#ifndef PERFPY_PROFILE_H
#define PERFPY_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum pp_frame_kind {
    PP_FRAME_PYTHON = 0,   /* a Python function: name = qualname */
    PP_FRAME_NATIVE = 1,   /* user-space machine code: name = symbol, file = DSO */
    PP_FRAME_KERNEL = 2,   /* kernel code */
    PP_FRAME_MARKER = 3,   /* "[truncated]", "[unknown]", "[native]" */
} pp_frame_kind;

typedef struct pp_frame {
    const char *name;      /* qualname or symbol; never NULL */
    const char *file;      /* Python filename or DSO path; "" when unknown */
    const char *label;     /* what stacks show: "foo (/app/x.py:12)", "memcpy" */
    int line;              /* Python: the def line (co_firstlineno), or in sample
                              mode the executing line; 0 unknown */
    pp_frame_kind kind;
} pp_frame;

typedef struct pp_stack {
    uint32_t first;        /* index of the root frame id in pp_profile.ids */
    uint32_t depth;        /* number of frames */
    uint64_t count;        /* samples */
    uint64_t period;       /* sum of sample periods (ns for cpu-clock) */
} pp_stack;

/* One process of the recording (fold_proc.c), for the summary. */
typedef struct pp_process {
    int pid;                       /* -1 when perf gave none */
    char comm[64];
    uint64_t samples;
    uint64_t truncated;            /* of its samples, those not unwound to a root */
    uint64_t python;               /* of its samples, those with a Python frame */
} pp_process;

typedef struct pp_strings pp_strings;   /* private: the string arena */
typedef struct pp_htab pp_htab;         /* private: an index hash table */

typedef struct pp_profile {
    pp_frame *frames;
    uint32_t nframes, frames_cap;
    pp_stack *stacks;
    uint32_t nstacks, stacks_cap;
    uint32_t *ids;                 /* every stack's frame ids, back to back */
    size_t nids, ids_cap;

    /* Totals, filled by the reader and folder. */
    uint64_t samples;              /* samples folded (= sum of stack counts) */
    uint64_t period;               /* sum of periods */
    uint64_t truncated;            /* samples whose stack did not reach a root */
    uint64_t lost;                 /* events perf reported lost (PERF_RECORD_LOST) */
    uint64_t bad_lines;            /* input lines that were not understood */
    uint64_t time_first_ns, time_last_ns;   /* perf clock; 0 when unknown */
    char program[64];              /* the most common comm, "" when unknown */
    char event[64];                /* "cpu-clock", "cycles", ... */
    pp_process *procs;             /* the processes sampled, most samples first */
    uint32_t nprocs;

    pp_strings *strings;
    pp_htab *frame_index, *stack_index;
} pp_profile;

int pp_profile_init(pp_profile *p);
void pp_profile_free(pp_profile *p);

/* A copy of s[0..len) in the profile's arena (NUL-terminated), or NULL. */
const char *pp_profile_strdup(pp_profile *p, const char *s, size_t len);

/* The id of the frame (kind, name, file, line), interned: >= 0, or -ENOMEM.
 * file may be NULL. The label is made here: Python frames read
 * "qualname (file:line)", or "qualname (file)" without a line. */
int64_t pp_profile_frame(pp_profile *p, pp_frame_kind kind, const char *name,
                         size_t name_len, const char *file, size_t file_len,
                         int line);

/* Adds count samples (total period) with the stack ids[0..n), root first.
 * Interned: the same stack twice adds to one entry. 0 or -ENOMEM/-EINVAL. */
int pp_profile_add(pp_profile *p, const uint32_t *ids, size_t n,
                   uint64_t count, uint64_t period);

static inline const uint32_t *pp_stack_ids(const pp_profile *p, const pp_stack *s)
{
    return p->ids + s->first;
}

/* ---- views the writers share ------------------------------------------ */

/* Per frame id: samples where the frame is the leaf (self), where it is the
 * innermost Python frame (own: a Python function's own time, the native code
 * it calls directly included; 0 for other kinds), and where it appears at all
 * (total, counted once per sample even under recursion). */
typedef struct pp_func_stat {
    uint64_t self, own, total;
} pp_func_stat;

/* calloc'ed array of p->nframes entries, or NULL (out of memory). */
pp_func_stat *pp_profile_func_stats(const pp_profile *p);

/* The call tree (what flame graphs draw): node 0 is the root ("all"),
 * children sorted by label, so the same profile draws the same picture. */
typedef struct pp_tree_node {
    uint32_t frame;        /* frame id; UINT32_MAX for the root */
    uint32_t parent;       /* node index; UINT32_MAX for the root */
    uint32_t first_child;  /* node index, UINT32_MAX when none */
    uint32_t next_sibling; /* node index, UINT32_MAX when none */
    uint32_t depth;        /* root 0 */
    uint64_t total, self;  /* samples */
} pp_tree_node;

typedef struct pp_tree {
    pp_tree_node *nodes;
    uint32_t n;
    uint32_t max_depth;
} pp_tree;

#define PP_NONE UINT32_MAX

int pp_tree_build(const pp_profile *p, pp_tree *t);
void pp_tree_free(pp_tree *t);

/* Stack indexes sorted by their frames' labels, root first, byte order
 * (frame id breaks ties): deterministic outputs. malloc'ed, or NULL. */
uint32_t *pp_profile_stack_order(const pp_profile *p);

#endif
