/*
 * The folder's insides, shared by its four files (fold.h is the outside):
 *
 *   fold_rules.c   which frame is what: the name and DSO tables (C_* bits),
 *                  the label of a frame perf could not name
 *   fold_python.c  Python frames: "qualname (file:line)", the def line from
 *                  a .lines sidecar or a jitdump's code load, paths
 *                  normalised, perfpy's own startup frames recognised
 *   fold_proc.c    processes and threads: one root per process (and per
 *                  thread when asked), the per-process counts, the merge
 *                  when there is only one process (or when asked)
 *   fold.c         the walk over one sample (the rules at its top)
 */
#ifndef PERFPY_FOLD_INT_H
#define PERFPY_FOLD_INT_H

#include "fold.h"
#include "profile/htab.h"

#include <stddef.h>
#include <stdint.h>

enum {
    C_PY = 1 << 0,        /* a Python function (py:: name) */
    C_INTERP = 1 << 1,    /* code of the interpreter itself (by DSO) */
    C_PLUMB = 1 << 2,     /* call machinery between Python functions (by name) */
    C_STARTUP = 1 << 3,   /* process/thread start-up (by name or DSO) */
    C_ROOT = 1 << 4,      /* where a complete stack ends (by name) */
    C_KERNEL = 1 << 5,    /* kernel code (by DSO or address) */
    C_ENTRY = 1 << 6,     /* the interpreter's entry: only start-up code is rootward */
    C_UNNAMED = 1 << 7,   /* "[unknown]": perf found no symbol */
    C_SELF = 1 << 8,      /* perfpy's own: its module (engine, hook) or startup hook */
    C_SELF_CUT = 1 << 9,  /* perfpy's own, and everything it calls is too */
    C_NOWHERE = 1 << 10,  /* unnamed, in no mapping perf knows: "[unknown]" */
    C_TASK = 1 << 11,     /* an asyncio task (sample mode --async): a marker, always kept */
    C_KIND = 1 << 12,     /* its kind was said by its producer (pp_raw_frame.kind), not
                             read from its name: part of its identity */
};

/* One distinct frame seen in the input: (symbol, effective DSO) as perf
 * names it, or a frame its producer said the kind of (a Python function by
 * its qualname and file, a kernel symbol, a task's label). */
typedef struct pp__fold_raw {
    pp_raw_kind kind;
    const char *sym, *dso;       /* in the profile's arena */
    uint32_t sym_len, dso_len;
    unsigned bits;
    int64_t frame;               /* its profile frame when it needs no line */
    const char *qual, *file;     /* Python: the name and the normalised file */
    size_t qual_len, file_len;
    int jit_pid;                 /* DSO jitted-<pid>-<index>.so: pid, else -1 */
    uint64_t jit_index;
} pp__fold_raw;

typedef struct pp__fold_range {
    uint64_t start, end;
    int line;
} pp__fold_range;

typedef struct pp__fold_sidecar {
    int pid;
    pp__fold_range *r;
    size_t n;
    int loaded;                  /* its lines file was looked for */
    struct pp__fold_jdump {      /* the pid's jitdumps read so far: perfpy's, */
        char *path;              /* and CPython's own when -X perf_jit was */
        pp_jit_code *codes;      /* passed too (two dumps, two index spaces) */
        size_t ncodes;           /* its code loads, by index */
    } *dumps;
    size_t ndumps, dumps_cap;
} pp__fold_sidecar;

typedef struct pp__fold_comm {
    char name[64];
    uint64_t count;
} pp__fold_comm;

/* A process seen in the samples (by its real pid: the images perf_data.c
 * moved to pid + k * 2^22 belong to pid). */
typedef struct pp__fold_proc {
    int pid;
    char comm[64];               /* its main thread's last comm, else its first */
    int64_t root;                /* its placeholder root frame (-1: none) */
    uint64_t samples, truncated, python;
    int ns_pid;                  /* its pid in its container (0: none said) */
    char container[128];         /* its container's root ("": not in one) */
    char command[160];           /* its command line ("": not said) */
    char service[64];            /* the script or module it runs ("": not said) */
} pp__fold_proc;

struct pp_folder {
    pp_profile *p;
    pp_fold_opts o;
    pp__fold_raw *raws;
    size_t nraws, raws_cap;
    pp_htab raw_index;
    pp__fold_sidecar *cars;
    size_t ncars, cars_cap;
    pp_htab pyline_index;        /* (pid, ip, raw) -> frame id */
    struct pp__fold_pyline { int pid; uint32_t raw; uint64_t ip; uint32_t frame; } *pylines;
    size_t npylines, pylines_cap;
    uint32_t *raw_of_key;        /* frame line key (perf_script.h) -> raw + 1 */
    size_t keys_cap;
    /* per-sample scratch, reused */
    uint32_t *keep, *ids, *rawof;
    const char **effdso;
    uint32_t *effdso_len;
    size_t scratch_cap;
    int64_t mark_truncated, mark_unknown, mark_native, mark_perfpy;
    int64_t mark_wait[PP_WAIT_N];        /* the off-CPU reasons' markers */
    pp__fold_comm comms[16];
    size_t ncomms;
    int event_set;
    pp__fold_proc *procs;
    size_t nprocs, procs_cap;
    size_t last_proc;            /* the process of the previous sample */
    int64_t *thread_roots;       /* by profile thread: its placeholder root (-1: none) */
    size_t nthread_roots, thread_roots_cap;
};

/* fold_rules.c */
int pp__fold_starts(const char *s, size_t len, const char *prefix);
unsigned pp__fold_name_bits(const char *sym, size_t len);
unsigned pp__fold_dso_bits(const char *dso, size_t len);
size_t pp__fold_cut_offset(const char *s, size_t len);
int pp__fold_jitted_name(const char *dso, size_t len, uint64_t *index);
/* The name a frame perf could not name gets: "[libz.so.1]" (the DSO's file
 * name in brackets; "[vdso]" as it is), or "[unknown]" without a DSO.
 * Written to buf (cap >= 8); its length. */
size_t pp__fold_unnamed_label(const char *dso, size_t dl, char *buf, size_t cap);

/* fold_python.c */
/* Fills r's Python fields (qual, file normalised, C_SELF bits) from a
 * "py::<qualname>:<filename>" symbol. 0 or -ENOMEM. */
int pp__fold_python_raw(pp_folder *f, pp__fold_raw *r, const char *sym, size_t sl);
/* The same from a Python function's qualname and file as a reader gave
 * them. 0 or -ENOMEM. */
int pp__fold_python_named(pp_folder *f, pp__fold_raw *r, const char *qual, size_t ql,
                          const char *file, size_t fl);
/* The frame id of Python raw ri at (pid, ip): with its def line when known. */
int64_t pp__fold_python_frame(pp_folder *f, uint32_t ri, int pid, uint64_t ip);
void pp__fold_python_free(pp_folder *f);

/* fold_proc.c */
/* The process of sample s, counted; its root frame id in *root (-1: none,
 * when processes are merged). NULL when out of memory. */
pp__fold_proc *pp__fold_proc_of(pp_folder *f, const pp_raw_sample *s, int64_t *root);
/* The profile thread of sample s (>= 0, or a negative errno); its root
 * frame id in *root (-1: none, without pp_fold_opts.threads). */
int64_t pp__fold_thread_of(pp_folder *f, const pp_raw_sample *s, int64_t *root);
/* At the end: names the roots, or takes the process roots away (one
 * process, or merge); hands the per-process counts to the profile. 0 or
 * -ENOMEM. */
int pp__fold_proc_finish(pp_folder *f);

#endif
