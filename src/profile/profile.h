/*
 * The profile: what perfpy knows of a recording, in the shape every writer
 * needs. It lives below both the pipeline that fills it (src/report: perf
 * script text folded; src/sample: stacks read at sample time) and the
 * writers that read it (src/output), and includes neither.
 *
 *     perf script / BPF ──► fold.c ──► pp_profile ──────────────► out_*.c
 *       (per sample,         (frames     frames[]  (interned)       svg, html, speedscope,
 *        native frames)       folded)    stacks[]  (interned, with  pprof, collapsed, ...
 *                                                   their totals)
 *                                        threads[] (pid, tid, name)
 *                                        samples   (the log: when, which
 *                                                   thread, which stack)
 *
 * Frames are interned: one pp_frame per distinct (kind, name, file, line),
 * identified by its index. A stack is an array of frame ids, ROOT FIRST, with
 * the number of samples that had exactly that stack and the sum of their
 * weights (nanoseconds for cpu-clock). Stacks are interned too, so a profile
 * of millions of samples holds each distinct stack once:
 *
 *     frames:  0 "[truncated]"  1 "baz"  2 "bar"  3 "foo"  4 "PyLong_FromLong"
 *     stacks:  0 {1,2,3}   x 812 samples
 *              1 {1,2,3,4} x  97 samples
 *              2 {0,3}     x   4 samples   (could not be unwound to its root)
 *
 * Beside them the sample log keeps every sample, in the order it was added,
 * in 12 bytes: when it was taken, on which thread, which stack, and what
 * it weighs. The per-stack totals are its aggregate (kept up to date as
 * samples are logged; a rewrite of the stacks, such as the process roots
 * of fold_proc.c, remaps every record's stack: pp_profile_take_samples):
 *
 *     time (µs since time_base_ns) | thread | stack | weight (ns)
 *           0                      |   0    |   0   | 2506265      thread 0: 4609/4609 "MainThread"
 *        2506                      |   1    |   1   | 2506265      thread 1: 4609/4612 "worker-1"
 *        2507                      |   0    |   0   | 2506265
 *
 * What a sample weighs is the kind of value the profile holds (p->value):
 * CPU time (each sample one period of the thread's CPU: writers count
 * samples) or wall time (on-CPU samples weigh their period, off-CPU ones
 * the time they stand for: writers count periods of p->period_ns). One
 * accessor, pp_stack_value(), gives a stack's number either way.
 *
 * Strings live in an arena owned by the profile: pointers stay valid until
 * pp_profile_free(). All counts are 64-bit. Errors are values (0 or -errno).
 */
#ifndef PERFPY_PROFILE_H
#define PERFPY_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PP_NONE UINT32_MAX         /* no index: no frame, node or stack */

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
    uint64_t period;       /* sum of their weights (ns for cpu-clock and wall time) */
    uint32_t wait;         /* its samples are waits, each a marker on its thread's
                              timeline (pp_profile_stack_wait): the marker's name's
                              index + 1 in p->marker_names; 0 not a wait */
    uint32_t wait_kind;    /* that marker's pp_marker_kind */
} pp_stack;

/* What a sample stands for. */
typedef enum pp_value_kind {
    PP_VALUE_CPU = 0,      /* one period of its thread's CPU time (or of perf's event) */
    PP_VALUE_WALL = 1,     /* wall time: on-CPU samples weigh their period, off-CPU
                              samples the time they stand for */
    PP_VALUE_EVENTS = 2,   /* a period of an event's own occurrences (page faults,
                              system calls: perfpy record -e): p->event names it,
                              pp_profile_event_unit says what one is */
} pp_value_kind;

/* One thread of the recording, interned by (pid, tid) in order of its
 * first sample. */
typedef struct pp_thread {
    int32_t pid, tid;              /* -1 when unknown */
    const char *name;              /* its last comm, or the name a reader of
                                      the program gave it (name_set); arena */
    int name_set;                  /* pp_profile_thread_name: comms no longer rename it */
    uint64_t first_ns, last_ns;    /* its first and last sample (perf clock; 0 unknown) */
    uint64_t samples;
} pp_thread;

/* One record of the sample log: 12 bytes. Its time and weight are its
 * chunk's (pp_log_chunk): read records with pp_profile_rec. A weight above
 * UINT32_MAX is logged as several records, each at the time its part begins. */
typedef struct pp_sample_rec {
    uint32_t stack;                /* the stack's index */
    uint32_t time;                 /* µs since p->time_base_ns: its chunk's
                                      base_us + time - 2^31 */
    uint32_t thread_weight;        /* bits 31..12: the thread's index;
                                      bits 11..0: its weight's in the chunk's weights */
} pp_sample_rec;

/* Up to 1 << PP_LOG_CHUNK_BITS records with what they share: the time they
 * are counted from and their distinct weights (a CPU profile has one or a
 * few). A record that does not fit (its time more than 35 minutes from
 * base_us, a weight past PP_LOG_WEIGHTS distinct ones) starts a new chunk. */
typedef struct pp_log_chunk {
    pp_sample_rec *recs;
    uint32_t *weights;             /* ns for time events (pp_profile_time_weights),
                                      else the event's own unit */
    uint64_t first;                /* recs[0]'s index in the log */
    uint64_t base_us;
    uint32_t n, nweights;
} pp_log_chunk;

/* A record as the writers read it (pp_profile_rec). */
typedef struct pp_logged {
    uint64_t time_ns;              /* perf clock, to the µs (rounded up) */
    uint64_t weight;
    uint32_t stack, thread;
} pp_logged;

/* Something that happened on a thread at a time, or over a time: what a
 * timeline shows beside the samples. */
typedef enum pp_marker_kind {
    PP_MARKER_PROCESS = 0,         /* process started (fork), ran a program (exec), ended */
    PP_MARKER_WAIT = 1,            /* off CPU, and why ("[sleep]", "[I/O]", ...) */
    PP_MARKER_GIL = 2,             /* waiting for the GIL */
} pp_marker_kind;

/* Markers are stored (p->markers: processes started, exec'd, ended) or
 * made from the log when a writer asks (a wall-clock profile's waits, one
 * or two for each stack off the CPU, hundreds a second: pp_thread_waits).
 * The name is an index into the profile's interned names (pp_marker_name). */
typedef struct pp_marker {
    uint64_t start_ns, end_ns;     /* perf clock; equal for an instant */
    uint32_t thread;               /* its thread's index */
    uint32_t kind : 8;             /* pp_marker_kind */
    uint32_t name : 24;            /* its name's index in p->marker_names */
} pp_marker;

#define PP_MAX_MARKER_NAMES (1u << 24)

#define PP_LOG_CHUNK_BITS 16       /* 65536 records (768 KiB) per chunk: no giant realloc */
#define PP_LOG_WEIGHT_BITS 12
#define PP_LOG_WEIGHTS (1u << PP_LOG_WEIGHT_BITS)    /* distinct weights per chunk */
#define PP_THREAD_BITS (32 - PP_LOG_WEIGHT_BITS)
#define PP_MAX_THREADS (1u << PP_THREAD_BITS)

/* One process of the recording (fold_proc.c), for the summary. */
typedef struct pp_process {
    int pid;                       /* -1 when perf gave none */
    char comm[64];
    uint64_t samples;
    uint64_t truncated;            /* of its samples, those not unwound to a root */
    uint64_t python;               /* of its samples, those with a Python frame */
    /* what a profile store labels it with (sample mode says; NULL unknown):
     * its command line, its service (the script or module it runs), the
     * root of its container as the host sees it, and its pid there (0) */
    const char *command, *service, *container;
    int ns_pid;
} pp_process;

/* A label every sample of the profile carries (`--label k=v`). */
typedef struct pp_label {
    const char *key, *value;       /* in the profile's arena */
} pp_label;

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
    uint64_t period;               /* sum of weights */
    pp_value_kind value;           /* PP_VALUE_CPU unless the recording says otherwise */
    int exec_lines;                /* Python frames carry the line they were executing
                                      (sample and read modes), not their def line */
    uint64_t period_ns;            /* the nominal period (1e9 / rate); 0 unknown */
    uint64_t truncated;            /* samples whose stack did not reach a root */
    uint64_t lost;                 /* events perf reported lost (PERF_RECORD_LOST) */
    uint64_t bad_lines;            /* input lines that were not understood */
    uint64_t time_first_ns, time_last_ns;   /* perf clock; 0 when unknown */
    char program[64];              /* the most common comm, "" when unknown */
    char event[64];                /* "cpu-clock", "cycles", ... */
    pp_process *procs;             /* the processes sampled, most samples first */
    uint32_t nprocs;

    /* What a profile store needs beside the stacks (sample mode sets them):
     * the span the profile covers in Unix time, and per-sample labels
     * (labelled: each sample says its pid, thread, process's service and
     * container, and carries labels[]; pprof writes them) */
    uint64_t time_unix_ns;         /* when its span began; 0 unknown */
    uint64_t duration_ns;          /* its length; 0: first to last sample */
    int labelled;
    pp_label *labels;
    uint32_t nlabels;

    pp_thread *threads;
    uint32_t nthreads, threads_cap;
    pp_log_chunk *log;             /* the sample log, in chunks of up to 1 << PP_LOG_CHUNK_BITS */
    size_t log_chunks, log_chunks_cap;
    uint64_t nlog;                 /* records */
    uint16_t *log_whash;           /* the last chunk's weights by value (index + 1) */
    uint32_t log_wlast;            /* the last chunk's latest weight's index */
    int log_split;                 /* a chunk ended before it was full */
    uint64_t time_base_ns;         /* the first logged time (perf clock); records
                                      before it (reordered by microseconds) are at it */
    pp_marker *markers;            /* in order of addition (pp_marker_order: by time) */
    size_t nmarkers, markers_cap;
    const char **marker_names;     /* the markers' distinct names ("process start",
                                      "[off-CPU: sleep]", ...), each once; arena */
    size_t nmarker_names, marker_names_cap;

    pp_strings *strings;
    pp_htab *frame_index, *stack_index, *thread_index, *marker_name_index;
    uint32_t last_thread;          /* the thread of the previous lookup */
} pp_profile;

int pp_profile_init(pp_profile *p);
void pp_profile_free(pp_profile *p);

/* A copy of s[0..len) in the profile's arena (NUL-terminated), or NULL. */
const char *pp_profile_strdup(pp_profile *p, const char *s, size_t len);

/* Adds the label key=value to every sample (copied). 0 or -ENOMEM. */
int pp_profile_label(pp_profile *p, const char *key, const char *value);
/* The process pid of p->procs, or NULL. */
const pp_process *pp_profile_process(const pp_profile *p, int pid);

/* The id of the frame (kind, name, file, line), interned: >= 0, or -ENOMEM.
 * file may be NULL. The label is made here: Python frames read
 * "qualname (file:line)", or "qualname (file)" without a line. */
int64_t pp_profile_frame(pp_profile *p, pp_frame_kind kind, const char *name,
                         size_t name_len, const char *file, size_t file_len,
                         int line);

/* Adds count samples (total weight period) to the stack ids[0..n), root
 * first. Interned: the same stack twice adds to one entry. The stack's
 * index (>= 0), or -ENOMEM/-EINVAL/-ENOSPC. Only the aggregate: a sample
 * is logged with pp_profile_log against that index (pp_profile_sample does
 * both). */
int64_t pp_profile_add(pp_profile *p, const uint32_t *ids, size_t n,
                       uint64_t count, uint64_t period);

static inline const uint32_t *pp_stack_ids(const pp_profile *p, const pp_stack *s)
{
    return p->ids + s->first;
}

/* A stack's number, what every writer counts: its samples for CPU values,
 * its weight in periods of p->period_ns (rounded) for wall time. */
uint64_t pp_stack_value(const pp_profile *p, const pp_stack *s);
/* The sum of pp_stack_value over the stacks (p->samples for CPU values). */
uint64_t pp_profile_value_total(const pp_profile *p);
/* Whether the weights are nanoseconds: wall time, or a cpu-clock or
 * task-clock event (sample mode's is cpu-clock); otherwise they are the
 * event's own unit (cycles, instructions). */
int pp_profile_time_weights(const pp_profile *p);
/* What one occurrence of the event named event is, in a word the summary
 * and writers print beside the counts: "faults" (page-faults,
 * minor-faults, major-faults), "switches" (context-switches),
 * "migrations" (cpu-migrations), "calls" (a system call's tracepoint:
 * syscalls:sys_enter_*, sys_exit_*, raw_syscalls), "events" (any other
 * event that is no time; "" and the clocks: "ns"). */
const char *pp_profile_event_unit(const char *event);
/* The word for what p's counts are: its samples' unit for PP_VALUE_EVENTS
 * ("faults", "calls"), else "samples". */
const char *pp_profile_unit(const pp_profile *p);
/* The unit said of n of them: "1 fault", "1 switch", "10 faults". */
const char *pp_profile_unit_n(const pp_profile *p, uint64_t n);
/* Each sample's period of its event (PP_VALUE_EVENTS: -c), else 0. */
uint64_t pp_profile_every(const pp_profile *p);

/* Whether a summary's accounting note is said: always with -v (verbose),
 * otherwise only when what it counts moves a figure of the profile by
 * PP_NOTE_SAID_PCT percent or more (a loss, a gap, samples left out). */
#define PP_NOTE_SAID_PCT 1.0
static inline int pp_note_said(int verbose, double pct)
{
    return verbose || pct >= PP_NOTE_SAID_PCT;
}
/* part of whole in percent (0 of nothing), what a note's share is. */
static inline double pp_note_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- threads and the sample log (samples.c) --------------------------- */

/* The index of thread (pid, tid), interned; comm (may be NULL) becomes its
 * name unless one was set. >= 0, or -ENOMEM, -ENOSPC past PP_MAX_THREADS. */
int64_t pp_profile_thread(pp_profile *p, int32_t pid, int32_t tid, const char *comm,
                          size_t comm_len);
/* "worker-1 (tid 4612)": a thread's name and id, as roots and tracks show
 * it ("[unknown]" without a name, no tid when unknown); snprintf's length. */
int pp_thread_label(const pp_thread *t, char *buf, size_t cap);

/* What roots the folder gives threads (pp_fold_opts.threads; roots.c). */
enum {
    PP_THREAD_ROOTS_NONE = 0,      /* none */
    PP_THREAD_ROOTS_PATTERN = 1,   /* a root per name pattern: a pool's workers,
                                      short-lived request threads, one root each */
    PP_THREAD_ROOTS_SPLIT = 2,     /* a root per thread, "worker-1 (tid 4612)" */
};

/* name with the number that tells threads of one kind apart taken out:
 * the last run of digits after '-', '_' or ' ' (or starting it), before a
 * target suffix " (...)", becomes '*' ("ThreadPoolExecutor-0_3" ->
 * "ThreadPoolExecutor-0_*", "Thread-12 (handler)" -> "Thread-* (handler)",
 * "worker-3" -> "worker-*"); a name without one is its own pattern
 * ("MainThread"). Into buf (cut to cap); snprintf's length. Pure. */
int pp_thread_pattern(const char *name, char *buf, size_t cap);
/* A thread root's label for mode PP_THREAD_ROOTS_*: its name's pattern, or
 * with SPLIT its name and tid (pp_thread_label). */
int pp_thread_root_label(const pp_thread *t, int mode, char *buf, size_t cap);
/* That label as a marker frame of p: its id, or a negative errno. among
 * (may be NULL): the patterns of the threads named in full
 * (pp_thread_patterns_known), which a name the kernel cut to its comm's 15
 * bytes ("Thread-12 (proc", of a thread whose threading name was never
 * read; CPython 3.14+ names its threads' comms) takes when it begins one,
 * so that the two share a root. */
typedef struct pp_thread_patterns {
    char **v;                      /* malloc'ed, each once */
    size_t n;
} pp_thread_patterns;
int64_t pp_profile_thread_root(pp_profile *p, const pp_thread *t, int mode,
                               const pp_thread_patterns *among);
/* That root's name alone, into buf (cut to cap): its length, or < 0. */
int pp_thread_root_name(const pp_thread *t, int mode, const pp_thread_patterns *among,
                        char *buf, size_t cap);
/* The patterns of p's threads named by a reader (name_set), at most
 * PP_THREAD_PATTERNS_KNOWN of them: 0 or -ENOMEM. */
#define PP_THREAD_PATTERNS_KNOWN 64
int pp_thread_patterns_known(const pp_profile *p, pp_thread_patterns *out);
void pp_thread_patterns_free(pp_thread_patterns *k);

/* The index of thread (pid, tid), or -1 when it has none. */
int64_t pp_profile_find_thread(const pp_profile *p, int32_t pid, int32_t tid);

/* Names a thread as the program named it (Python's threading name, read by
 * whoever can): later comms do not rename it. A name with a control
 * character is taken for a misread and left out (0). 0 or -ENOMEM/-EINVAL. */
int pp_profile_thread_name(pp_profile *p, uint32_t thread, const char *name, size_t len);

/* Logs one sample of stack on thread at time_ns (perf clock; 0 unknown)
 * weighing weight (ns for time events). The aggregate is not touched (see
 * pp_profile_add). 0, or -ENOMEM/-EINVAL. */
int pp_profile_log(pp_profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns,
                   uint64_t weight);
/* Both: one sample of stack ids[0..n) on thread, aggregated and logged.
 * The stack's index, or a negative errno. */
int64_t pp_profile_sample(pp_profile *p, const uint32_t *ids, size_t n, uint32_t thread,
                          uint64_t time_ns, uint64_t weight);

/* Record i (< p->nlog) of the log. */
pp_logged pp_profile_rec(const pp_profile *p, uint64_t i);

/* Adds a marker on thread from start_ns to end_ns (equal: an instant).
 * 0, or -ENOMEM/-EINVAL (-ENOSPC past PP_MAX_MARKER_NAMES distinct names). */
int pp_profile_marker(pp_profile *p, uint32_t thread, pp_marker_kind kind, uint64_t start_ns,
                      uint64_t end_ns, const char *name, size_t len);
/* name[0..len) among the markers' names, interned (its index in
 * p->marker_names): >= 0, or -ENOMEM/-ENOSPC. */
int64_t pp_profile_marker_name(pp_profile *p, const char *name, size_t len);
/* A marker's name. */
static inline const char *pp_marker_name(const pp_profile *p, const pp_marker *m)
{
    return p->marker_names[m->name];
}

/* Marks stack's samples as waits (a wall-clock profile's off-CPU stacks):
 * each is a marker of kind, named name, over its span on its thread's
 * timeline, derived from the log when a writer asks (pp_thread_waits)
 * rather than stored, as a recording adds hundreds a second. 0, or
 * -ENOMEM/-EINVAL/-ENOSPC. */
int pp_profile_stack_wait(pp_profile *p, uint32_t stack, pp_marker_kind kind, const char *name);

/* Moves src's threads, markers and sample log to dst (a profile made from src's
 * stacks), each record's stack index through stack_map (src stack ->
 * dst stack); src keeps none. 0, or -EINVAL when the map names a stack
 * dst lacks (dst is then unchanged). */
int pp_profile_take_samples(pp_profile *dst, pp_profile *src, const uint32_t *stack_map);
/* Frees the log (pp_profile_free's part). */
void pp__log_free(pp_profile *p);

/* The log by thread, one thread at a time (what the timeline writers
 * need):
 *     pp_thread_order_build(p, &o);
 *     for each thread t with samples:
 *         pp_thread_order_load(&o, t);    o.recs[0 .. o.n): t's record indexes
 *     pp_thread_order_free(&o);
 * each thread's in time order (the log's order among equal times). Loading
 * thread t gathers, in one pass over the log, the records of t and of the
 * threads after it while they total at most an eighth of the log (or t's
 * own when more): 4 bytes a gathered record, at most half a byte a sample
 * or 4 bytes a sample of the largest thread, and at most about 16 passes. */
typedef struct pp_thread_order {
    const pp_profile *p;
    uint32_t *own;                 /* the batch's record indexes, thread by thread */
    size_t own_cap;
    uint64_t *first;               /* own[first[t - lo] .. first[t - lo + 1]) are t's */
    size_t first_cap;
    uint32_t lo, hi;               /* the batch: threads [lo, hi) */
    const uint32_t *recs;          /* the loaded thread's */
    uint64_t n;
    uint32_t thread;               /* the loaded thread; UINT32_MAX: none */
} pp_thread_order;

int pp_thread_order_build(const pp_profile *p, pp_thread_order *o);
/* 0, or -ENOMEM/-EINVAL. */
int pp_thread_order_load(pp_thread_order *o, uint32_t thread);

void pp_thread_order_free(pp_thread_order *o);

/* The wait markers of the thread o holds (pp_thread_order_load), in *out
 * (grown as needed; *cap its capacity), *n of them, by start: one per
 * sample of a wait stack (pp_profile_stack_wait) over its span [time -
 * weight, time], a sample that continues the thread's previous wait
 * marker of the same name (starting at most p->period_ns after its end:
 * a wait sampled tick by tick) stretching it instead. 0 or -ENOMEM. */
int pp_thread_waits(const pp_profile *p, const pp_thread_order *o, pp_marker **out,
                    size_t *n, size_t *cap);

/* The markers by thread, in time order: idx holds every marker's index,
 * thread 0's first; idx[first[t] .. first[t + 1]) are thread t's, by start
 * time (the order of addition among equal starts). Markers come in the
 * order their sources give them (perf.data's task events per CPU buffer,
 * not by time), so every view that shows them in time takes this order. */
typedef struct pp_marker_order {
    uint32_t *idx;
    uint64_t *first;               /* nthreads + 1 entries */
} pp_marker_order;

int pp_marker_order_build(const pp_profile *p, pp_marker_order *o);
/* qsort's order of markers by start, then end. */
int pp_marker_by_start(const void *a, const void *b);
void pp_marker_order_free(pp_marker_order *o);

/* A record's number, as pp_stack_value counts: 1 for CPU values, its weight
 * in periods of p->period_ns (rounded) for wall time. */
uint64_t pp_rec_value(const pp_profile *p, const pp_logged *r);

/* ---- a thread's timeline (timeline.c) ----------------------------------- */

/* One run of a thread's timeline: a stack for as long as consecutive
 * samples had it (value: the sum of their pp_rec_value), or a gap
 * (stack PP_NONE, value 0) where the thread was not sampled. */
typedef struct pp_span {
    uint64_t start_ns, dur_ns;     /* perf clock */
    uint32_t stack;
    uint64_t value;
} pp_span;

typedef struct pp_timeline {
    const pp_profile *p;
    const uint32_t *recs;          /* the thread's records, in time order */
    uint64_t n, i;
    uint64_t spacing;              /* without time weights: a sample's span */
    pp_span run, gap;              /* the run being extended; a gap to give first */
    int started;
    int merge;                     /* consecutive samples of one stack: one run */
} pp_timeline;

/* Thread `thread`'s runs in time order, from the log by thread o (with
 * that thread loaded):
 *     pp_timeline_start(&tl, p, &o, t, 1);
 *     while (pp_timeline_next(&tl, &span)) ...   (1: a span in *span, 0: the end)
 * merge 0: a span per sample (its stack may be the one before's). */
void pp_timeline_start(pp_timeline *tl, const pp_profile *p, const pp_thread_order *o,
                       uint32_t thread, int merge);
int pp_timeline_next(pp_timeline *tl, pp_span *out);

/* ---- views the writers share (views.c) --------------------------------- */

/* Per frame id: samples where the frame is the leaf (self), where it is the
 * innermost Python frame (own: a Python function's own time, the native code
 * it calls directly included; 0 for other kinds), and where it appears at all
 * (total, counted once per sample even under recursion); in pp_stack_value's
 * numbers. */
typedef struct pp_func_stat {
    uint64_t self, own, total;
} pp_func_stat;

/* calloc'ed array of p->nframes entries, or NULL (out of memory). */
pp_func_stat *pp_profile_func_stats(const pp_profile *p);

/* The same per function rather than per frame: frames of one (kind, name,
 * file) are one function, unless by_line (then a frame is a function: the
 * trampoline modes' frames carry the def line). Sample mode's frames carry
 * the executing line, so there one function has a frame per line it was
 * seen at; by_line 0 groups them (two functions of one name in one file,
 * lambdas, are then one row). Each counted once per sample. */
typedef struct pp_func {
    uint32_t frame;                /* its first frame: the name, file and label */
    uint64_t self, own, total;
    uint64_t own_waiting;          /* of own, the samples of wait stacks (a wall-clock
                                      profile's time off the CPU: pp_stack.wait) */
} pp_func;

/* malloc'ed array in *out of *n functions (those with samples), in frame
 * order; 0 or -ENOMEM. */
int pp_profile_functions(const pp_profile *p, int by_line, pp_func **out, uint32_t *n);

/* The call tree (what flame graphs draw): node 0 is the root ("all"),
 * children sorted by label, so the same profile draws the same picture. */
typedef struct pp_tree_node {
    uint32_t frame;        /* frame id; UINT32_MAX for the root */
    uint32_t parent;       /* node index; UINT32_MAX for the root */
    uint32_t first_child;  /* node index, UINT32_MAX when none */
    uint32_t next_sibling; /* node index, UINT32_MAX when none */
    uint32_t depth;        /* root 0 */
    uint64_t total, self;  /* pp_stack_value's numbers */
} pp_tree_node;

typedef struct pp_tree {
    pp_tree_node *nodes;
    uint32_t n;
    uint32_t max_depth;
} pp_tree;


int pp_tree_build(const pp_profile *p, pp_tree *t);
void pp_tree_free(pp_tree *t);

/* ---- two profiles compared (diff.c) ----------------------------------- */

/* A function in either of two profiles, its shares of each profile in
 * percent (0 where it is absent), each stack's time a share of its own
 * process's (the processes of one name together: diff.c). own: its own time for a Python
 * function, its self time for the others. Named by frame of profile p (the
 * new one when it is there). */
typedef struct pp_diff_func {
    const pp_profile *p;
    uint32_t frame;
    double base_own, new_own, base_total, new_total;
} pp_diff_func;

/* Every function of base or nw, matched by (kind, name, file); malloc'ed
 * in *out. 0 or -ENOMEM. */
int pp_diff_functions(const pp_profile *base, const pp_profile *nw, pp_diff_func **out,
                      uint32_t *n);
/* For each node of tn (pp_tree_build(nw)): the base profile's share in
 * percent of the node with the same path of labels (0 when base has none),
 * and the node's own share of nw, each of its process's time (diff.c);
 * malloc'ed in *base_share and *new_share. 0 or -ENOMEM. */
int pp_diff_tree(const pp_profile *base, const pp_profile *nw, const pp_tree *tn,
                 double **base_share, double **new_share);

/* ---- source paths as a developer reads them (paths.c) ------------------ */

/* What a Python file is, told by its path alone. */
typedef enum pp_path_kind {
    PP_PATH_PROGRAM = 0,   /* the program's own (anything not below) */
    PP_PATH_LIBRARY = 1,   /* .../site-packages/X, .../dist-packages/X */
    PP_PATH_STDLIB = 2,    /* .../lib/python3.11/X (lib64, python3.13t, pypy3.10) */
    PP_PATH_SPECIAL = 3,   /* "<frozen ...>", "<string>", "": no file on disk */
} pp_path_kind;

/* path's kind; *cut the length of its directory part below which a library
 * or stdlib file is named ("flask/app.py", "threading.py"), else 0. Pure. */
pp_path_kind pp_path_kind_of(const char *path, size_t *cut);

/* The program's directories: each script's run as __main__, and the
 * common directory of its other files when at least two levels deep. */
typedef struct pp_path_roots {
    char **dirs;           /* each ending in '/' */
    uint32_t n;
} pp_path_roots;

int pp_path_roots_find(const pp_profile *p, pp_path_roots *r);
void pp_path_roots_free(pp_path_roots *r);
/* path relative to its sys.path entry as told above (r may be NULL: no
 * program directory): a pointer into path, path itself when nothing is
 * cut. Pure. */
const char *pp_path_rel(const pp_path_roots *r, const char *path);

/* Every frame's label with its file relative ("handle (flask/app.py:12)"),
 * what the views show; the full path stays in the frame. */
typedef struct pp_labels {
    const char **label;    /* per frame id */
    const char **rel;      /* per frame id: its file relative (a suffix of file) */
    char *arena;
    pp_path_roots roots;
} pp_labels;

int pp_labels_make(const pp_profile *p, pp_labels *l);
void pp_labels_free(pp_labels *l);

/* Stack indexes sorted by their frames' labels, root first, byte order
 * (frame id breaks ties): deterministic outputs. malloc'ed, or NULL. */
uint32_t *pp_profile_stack_order(const pp_profile *p);

#endif
