/*
 * Sample mode's recorder, inside perfpy-sample: its state and the parts it
 * is made of, each a file, calling one way (no part calls back into one
 * that calls it):
 *
 *   record.c     the recording: open the collector, follow, write the profile
 *    ├─ follow.c     a program started (held at its exec: hold.c) or a
 *    │               process attached to, until it ends; top's ticks
 *    ├─ host_run.c   -a: every CPython process of the host
 *    ├─ waits.c      wall-clock mode: a stretch's end, the counts of what was lost
 *    └─ ring.c       what the collector's ring hands over: samples, process
 *        │           events, code objects' copies
 *        └─ records.c   one record spliced and folded (its Python frames
 *            │          named, its native stack unwound, its tasks)
 *            ├─ targets.c   the processes followed: each one's _PyRuntime,
 *            │              layout, container, whether it runs a CPython
 *            ├─ names.c     threading's names of the threads
 *            └─ interval.c  --every's and top's intervals: a profile each
 */
#ifndef PERFPY_SAMPLER_RECORD_H
#define PERFPY_SAMPLER_RECORD_H

#include "clock.h"
#include "request.h"
#include "report/fold.h"
#include "every.h"
#include "top_view.h"
#include "collect/collect.h"
#include "collect/wall.h"
#include "cpython/pyasync.h"
#include "cpython/pycode.h"
#include "cpython/pylayout.h"
#include "cpython/pyobj.h"
#include "cpython/pyread.h"
#include "cpython/tnames.h"
#include "native/kallsyms.h"
#include "native/splice.h"
#include "native/unwind.h"
#include "profile/htab.h"

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* One process being sampled: the program (or the process attached to) and
 * each child it forks. */
typedef struct proc {
    pid_t pid;
    pp_mem mem;                    /* its memory (pp_mem_of_pid) */
    uint64_t runtime;              /* 0 until found in its maps */
    int coded;                     /* the code cache may hold entries of its pid
                                      (forgotten at its end only then: a host
                                      ends thousands of others a minute) */
    uint64_t found_ns;             /* CLOCK_MONOTONIC: when the maps it was found in
                                      were read */
    int looks;                     /* -a: times its maps were searched for it */
    double first_look;             /* now_s() of the first search (0: none yet) */
    int gave_up;                   /* searched for 2 s (-a: 100 times): no more */
    uint64_t set_ns;               /* CLOCK_MONOTONIC: when the BPF side was given it */
    uint64_t early;                /* samples before then (native frames only) */
    double next_look;              /* not before (20 ms apart) */
    int waits;                     /* -a: times its interpreter was looked for */
    int refused;                   /* its CPython is not read (pylayout.c said why) */
    int placed;                    /* its container (if any) looked for */
    int ns_pid;                    /* its pid in its container (0: none) */
    char root[256];                /* its container's root ("": not in one) */
    unsigned told;                 /* the folder (st->gen) told of it */
    int python;                    /* -a: 1 runs a CPython, 0 not (left out), 2 links
                                      libpython: left out until its interpreter is */
    int counted, sampled;          /* -a: counted as seen; as sampled */
    char command[160], service[64];   /* -a: what it runs */
    pp_pylayout layout;            /* its structure offsets, once runtime is found */
    int no_gil;                    /* a free-threaded CPython: --gil keeps every sample */
    pid_t forked_from;             /* its parent, while it runs the parent's image */
    int have_types;
    pp_pyread_types types;         /* to tell a code object from what is not */
    int have_obj;                  /* obj_types: what a reader of its objects needs
                                      (threading's names of its threads): 1 found,
                                      -1 not found, 0 not looked for yet */
    pp_pyobj_types obj_types;
    pp_tname *names;               /* threading._active as last read, at names_ns */
    size_t nnames;
    uint64_t names_ns;             /* CLOCK_MONOTONIC, as the samples' times */
    pp_tnames_gone gone;           /* names a read saw and the next did not (the
                                      thread ended, or was renamed) */
    struct {                       /* --async: where its CPython keeps its tasks */
        int state;                 /* 0 looking (asyncio not imported yet), 1 read,
                                      -1 not readable (said why) */
        size_t maps_n;             /* its mappings at the last look */
        unsigned ticks;            /* looks are every 10th tick (200 ms) */
        pp_pyasync_offsets a;
        pp_pyasync_types ty;
        pp_pyobj_types names;      /* a task's name: a str, or an int (Task-N) */
        struct {
            uint64_t addr;
            char name[64];
        } types[32];               /* the names of the types waiting tasks await */
        size_t ntypes;
    } as;
} proc;

/* A thread of the profile and whether it was named: then its threading
 * ident and its index in the profile, to follow a rename. */
typedef struct named_thread {
    pid_t pid, tid;
    int done;
    int32_t thread;
    uint64_t ident;
} named_thread;

typedef struct state {
    pid_t pid;                     /* the program, or the process attached to */
    unsigned layout_flags;         /* PP_PYLAYOUT_*: PERFPY_FREE_THREADED=1 */
    proc *procs;
    size_t nprocs, cap;
    unsigned children, refused;    /* forked while recorded; whose Python is not read */
    char refused_why[512];         /* the last reason said (each said once) */
    pp_collector *c;
    pp_pycode *codes;
    pp_unwinder *u;
    pp_splicer *sp;
    pp_folder *fold;
    pp_kallsyms ks;
    int have_ks;
    uint64_t samples, failed;
    uint64_t folded_ns;            /* the weight of the samples folded (ns) */
    uint64_t before_python;        /* samples taken before their process's _PyRuntime was known */
    uint64_t held_ns;              /* CLOCK_MONOTONIC: the started program let go at its
                                      exec, its _PyRuntime found (hold.h) */
    double t0, seconds;            /* when the recording began; how long it ran */
    int attached;                  /* -p: the process was running already */
    int stopped;                   /* --duration (or, attached, Ctrl-C) ended it */
    uint64_t period_ns;            /* each sample's: 1e9 / rate ns of its thread's CPU
                                      (-e: its period of the event's own) */
    pp_event ev;                   /* -e: the event sampled */
    const pp_event *event;         /* &ev with -e, else NULL */
    long rate;
    pp_profile *prof;              /* what samples are folded into (--every: the interval's) */
    pp_fold_opts fo;
    unsigned gen;                  /* the folder's number: a new one per interval */
    /* -a */
    int host, host_all;            /* the whole host; its non-Python processes too */
    uint64_t left_out;             /* samples of processes that run no CPython */
    uint64_t taken;                /* samples kept, as the ring gave them */
    uint64_t seen, sampled;        /* CPython processes found; of them, sampled */
    const pp_request *rq;          /* what perfpy asked (its labels: KEY=VALUE on
                                      every sample) */
    double last_sweep;
    double last_trim;              /* -a: the heap's free pages last given back */
    pp_every *every;               /* --every: where the intervals go */
    uint64_t every_ns, start_ns, next_ns;   /* the current interval (sample clock) */
    uint64_t stop_ns;              /* -d: when the recording ends (0: when stopped) */
    uint64_t t0_ns;                /* when it began (sample clock) */
    int64_t unix_offset_ns;        /* Unix time - sample clock (CLOCK_MONOTONIC) */
    int ending;                    /* no new interval: the last takes what is left */
    /* perfpy top: each interval (every_ns) shown, not written */
    int top_mode;
    pp_top *top;                   /* the view, opened at the first tick */
    char top_title[256], top_how[192];
    size_t top_rows;               /* functions in a plain table (0: all) */
    uint64_t top_lost;             /* lost samples already shown */
    int wall, gil_only;            /* CLOCK: wall-clock mode, --gil */
    int verbose;                   /* -v: every note (pp_note_said) */
    pp_wall_open *open;            /* off-CPU captures waiting for their end */
    uint64_t not_holding;          /* samples left out: the thread held no GIL */
    int said_no_gil;               /* a free-threaded process was said to have none */
    int threads;                   /* threads named as threading names them (a program, -p) */
    named_thread *named;           /* threads asked for their threading name */
    size_t nnamed, named_cap;
    int async;                     /* --async: stacks as asyncio's tasks see them */
    int async_said;                /* why a process's tasks are not read: said once */
    uint64_t async_samples;        /* samples in a task, the chain whole */
} state;

/* what a started program has after SIGINT (-d), then after SIGTERM: record's
 * --grace default (perfpy-sample is not told --grace) */
#define PP_RECORD_GRACE 5.0

/* follow.c: the program started (its end) or the process attached to;
 * Ctrl-C, SIGTERM or top's q set pp__interrupted. Each returns 0 once
 * it ended, or an exit status when nothing could be recorded. */
extern volatile sig_atomic_t pp__interrupted;
void pp__on_interrupt(int sig);
int pp__follow_program(state *st, char **argv, int *status, double duration);
int pp__follow_attach(state *st, pid_t pid, long rate, double duration);

/* host_run.c: -a, until Ctrl-C, SIGTERM or the duration; its arguments
 * (--every, --keep, --all-processes: st->every opened, *flags for the
 * collector). */
int pp__host_run(state *st, unsigned flags, double duration);
int pp__host_args(state *st, const pp_request *rq, unsigned *flags);

/* ring.c: what the ring holds, each record handed on (waiting up to
 * timeout_ms for one); the number of records, as pp_collect_poll. */
int pp__ring_take(state *st, int timeout_ms);
/* The BPF program's copy of a code object (codename.h), ctx the state. */
void pp__ring_on_code(const struct pp_bpf_code *r, size_t len, void *ctx);

/* records.c: one record of the collector spliced and folded: on the CPU
 * with its period as its weight, or off it in two parts, block ns with
 * its reason and runq ns waiting for a CPU. */
void pp__records_fold(state *st, const struct pp_bpf_sample *s, uint64_t block, uint64_t runq);

/* targets.c: the processes followed. */
proc *pp__targets_of(state *st, pid_t pid);          /* found or added; NULL: no memory */
void pp__targets_reset(proc *p, pid_t pid);          /* known of it: nothing */
void pp__targets_count_seen(state *st, proc *p);
/* -a: whether p runs a CPython (a target) or not (exec: at its exec). */
void pp__targets_host_decide(state *st, proc *p, int exec);
void pp__targets_tell(state *st, proc *p);           /* the folder told of its roots */
void pp__targets_look(state *st, proc *p);           /* its maps searched, once */
void pp__targets_find(state *st, proc *p);           /* looked for, if it is time */
void pp__targets_find_all(state *st);
int pp__targets_gone(pid_t pid);                     /* its memory is gone */

/* names.c: threading's names of the threads. pp__names_thread names s's
 * thread in the profile, once (its ident in threading._active of its
 * process, read from outside); pp__names_read reads threading._active of
 * each process again when the last read is older than 100 ms, so that a
 * thread that lives that long is named even when its stacks are read after
 * its end (its last wait). */
void pp__names_thread(state *st, proc *p, const struct pp_bpf_sample *s);
void pp__names_read(state *st);
void pp__names_forget(proc *p);

/* waits.c: wall-clock mode. */
void pp__waits_end(state *st, const struct pp_bpf_wall_end *e);
void pp__waits_notes(const state *st, pp_collector *c);
/* perfpy-sample's own thread at a higher priority (the program forked). */
void pp__waits_read_sooner(const state *st);
/* Every event the kernel could not hand over. */
uint64_t pp__waits_lost(const state *st);

/* interval.c: the profile samples are folded into, one per interval
 * (--every: written; top: shown). */
int pp__interval_begin(state *st);                   /* 0 or -ENOMEM */
void pp__interval_seal(state *st, pp_profile *prof, uint64_t start_ns, uint64_t end_ns);
void pp__interval_rotate(state *st, uint64_t t);     /* --every: a sample at t is past it */
int pp__interval_finish_every(state *st, const char *dir);
/* top: its view opened and its keys read (what pp_top_keys says); the
 * interval that is over at now shown, the next begun */
int pp__interval_top_keys(state *st);
void pp__interval_top_show(state *st, uint64_t now);
void pp__interval_top_end(state *st);

#endif
