/*
 * Read mode's recorder, for a request (request.h) of record or top in read
 * mode. No hook, no privilege: the program's Python frames are read from
 * outside (process_vm_readv, pystack.c) on a timer, the request's rate
 * times a second, as py-spy reads them. The kernel lets a user read the
 * memory of its own processes that it may ptrace: the program perfpy
 * starts (its child) and that program's children, and with -p a process
 * of the same user where kernel.yama.ptrace_scope allows it.
 *
 * At each tick, for the program and each of its descendants (found in
 * /proc, so the workers of a pool started before an attach are read too)
 * running a CPython (each with its own layout, pylayout.c; no perfpy
 * module of its version is needed): every thread's Python stack, named once
 * per code object (pycode.c) with its executing line (linetable.c). A
 * thread counts when the kernel says it is running (its state in
 * /proc/PID/task/TID/stat is R), for the CPU time it ran since the last
 * read (/proc/PID/task/TID/schedstat): a sample per period of it, so that
 * a thread waiting for a CPU on a busy machine (R too, but not running)
 * counts only what it ran. The profile is of CPU time, as in the other
 * modes; the reads that find a thread waiting are counted apart. The program is
 * never stopped, so no native frame is read (that needs its registers);
 * a stack read to its thread's first frame is whole.
 *
 * --idle (read_wall.h): every thread at every tick, running or not, its
 * time since the last read split by /proc's account into time on a CPU,
 * blocked (with its reason) and waiting for a CPU, each part a sample of
 * the stack read now weighing its nanoseconds, as sample mode's wall clock
 * weighs them. --gil: only the thread the GIL's state names as its holder.
 */
#include "clock.h"
#include "sampler.h"
#include "output/output.h"
#include "profile/htab.h"
#include "report/fold.h"
#include "report/report.h"
#include "native/maps.h"
#include "native/procs.h"
#include "cpython/pycode.h"
#include "cpython/pylayout.h"
#include "cpython/pyobj.h"
#include "cpython/pyread.h"
#include "cpython/pysyms.h"
#include "cpython/pystack.h"
#include "native/splice.h"
#include "top_view.h"
#include "read_wall.h"
#include "profile/raw.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SCAN_NS 100000000ull        /* descendants looked for every 100 ms */
#define NAMES_NS 100000000ull       /* threading's names read every 100 ms */
#define LOOKS 200                   /* maps searched for _PyRuntime, per process */
#define PP_READ_PROCS 1024          /* processes of the tree read */

typedef struct rproc {
    pid_t pid;
    pp_mem mem;                     /* its memory */
    unsigned long long start;       /* its start time: a reused pid is another */
    uint64_t runtime;
    int looks, refused, tid_off, have_types, gone;
    uint64_t gil;                   /* its GIL's state (read_wall.h); 0: not known yet */
    pp_pylayout layout;             /* its structure offsets, once runtime is found */
    pp_pyread_types types;
    int have_obj;                   /* obj_types found: threading's names can be read */
    pp_pyobj_types obj_types;
    uint64_t names_ns;              /* the last read of threading's names */
    char comm[16];
} rproc;

/* A thread's CPU time at the last read, and what of it is not yet a sample. */
typedef struct ran {
    pid_t pid, tid;
    uint64_t run_ns;
    int64_t credit_ns;              /* may be below 0: a sample taken early */
} ran;

typedef struct reader {
    pid_t pid;                      /* the program, or the process attached to */
    char refused_why[512];          /* the last reason a Python was not read */
    rproc *procs;
    size_t nprocs, cap;
    pp_pycode *codes;
    pp_splicer *sp;
    pp_folder *fold;
    pp_pystack_thread *threads;
    uint64_t ticks, samples, waiting, failed, refused;
    int wall, gil_only;             /* --idle, --gil */
    int verbose;                    /* -v: every note (pp_note_said) */
    pp_readwall *rw;                /* --idle: each thread's last read */
    uint64_t not_holding, unread;   /* --gil: reads left out; --idle: threads not read */
    int said_no_gil, said_no_holder;
    ran *ran;                       /* per thread read, by (pid, tid) in ran_index */
    size_t nran, ran_cap;
    pp_htab ran_index;
    int attached;                   /* CPU time before the first read is not ours */
    int denied;                     /* -EPERM reading the program */
    uint64_t period_ns;             /* a tick: what a running thread's sample weighs */
    int stopped;                    /* the duration or Ctrl-C ended it */
    double seconds;                 /* how long it ran */
    /* perfpy top: each interval shown, not written */
    pp_profile *prof;               /* what the folder fills */
    pp_fold_opts fo;
    pp_top *top;                    /* the view, opened at the first tick */
    char top_title[256], top_how[192];
    size_t top_rows;                /* functions in a plain table (0: all) */
    uint64_t every_ns, start_ns, next_ns;
} reader;

static rproc *add_proc(reader *r, pid_t pid, unsigned long long start)
{
    rproc *p;

    for (size_t i = 0; i < r->nprocs; i++)
        if (r->procs[i].pid == pid) {
            if (r->procs[i].start == start)
                return &r->procs[i];
            pp_pycode_forget(r->codes, pid);       /* its pid reused */
            p = &r->procs[i];
            goto fill;
        }
    if (pp__grow((void **)&r->procs, &r->cap, r->nprocs + 1, sizeof(*r->procs)) < 0)
        return NULL;
    p = &r->procs[r->nprocs++];
fill:
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->mem = pp_mem_of_pid(pid);
    p->start = start;
    p->tid_off = -1;
    return p;
}

/* The program and its descendants now (procs.c); those gone are kept,
 * marked, for the notes. */
static void scan(reader *r)
{
    pp_proc_info tree[PP_READ_PROCS];
    long n = pp_procs_tree(r->pid, tree, PP_READ_PROCS);

    for (size_t i = 0; i < r->nprocs; i++)
        r->procs[i].gone = 1;
    for (long i = 0; i < n; i++) {
        rproc *p = add_proc(r, tree[i].pid, tree[i].start);

        if (p)
            p->gone = 0;
    }
}

/* p's _PyRuntime and its layout (pylayout.c), once its image and
 * libpython are mapped; a CPython perfpy does not read is said once per
 * reason (free-threaded builds are not read in this mode). */
static void find_runtime(reader *r, rproc *p)
{
    pp_maps maps = {0};
    char file[4096], path[64], why[512];
    uint64_t runtime;
    FILE *f;

    if (p->runtime || p->refused || p->looks >= LOOKS)
        return;
    p->looks++;
    if (pp_maps_read(p->pid, &maps) != 0)
        return;
    if (pp_py_symbol_address(&maps, "_PyRuntime", &runtime, file, sizeof(file)) == 0) {
        if (pp_pysyms_layout(&p->mem, &maps, runtime, file, 0, &p->layout, why,
                             sizeof(why)) != 0) {
            p->refused = 1;
            r->refused++;
            if (p->layout.free_threaded && (r->wall || r->gil_only) && !r->said_no_gil++)
                fprintf(stderr, "perfpy: the process %d runs a free-threaded CPython: it has "
                        "no GIL, so none of its waits is one%s\n", (int)p->pid,
                        r->gil_only ? ", and --gil would keep all of its samples" : "");
            if (strcmp(why, r->refused_why) != 0) {
                snprintf(r->refused_why, sizeof(r->refused_why), "%s", why);
                fprintf(stderr, "perfpy: the process %d (%s): %s; its Python frames are "
                        "not read\n", (int)p->pid, file, why);
            }
        } else {
            p->runtime = runtime;
            p->have_types = pp_pysyms_types(&maps, &p->types) == 0;
            p->have_obj = pp_pysyms_objtypes(&maps, &p->obj_types) == 0;
        }
    }
    pp_maps_free(&maps);
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
    if ((f = fopen(path, "r"))) {
        if (fgets(p->comm, sizeof(p->comm), f))
            p->comm[strcspn(p->comm, "\n")] = '\0';
        fclose(f);
    }
}

/* One thread's stack into the profile: a CPU sample of a period, or with
 * --idle a part of its time (weighing part->ns, ending at part->end_ns). */
static void fold_thread(reader *r, const rproc *p, const pp_pystack_thread *t, uint64_t now,
                        const pp_readwall_part *part)
{
    static pp_pyframe py[PP_PYSTACK_DEPTH];
    pp_sample ps;
    pp_raw_sample out;

    for (size_t i = 0; i < t->n; i++) {
        const pp_py_offsets *o = &p->layout.off;
        const pp_pycode_entry *e = pp_pycode_get(r->codes, &p->mem, o,
                                                 p->have_types ? &p->types : NULL,
                                                 &t->f[i].id);
        int named = e && e->qualname[0];

        py[i] = (pp_pyframe){named ? e->qualname : "[unknown]", named ? e->file : "",
                             named ? pp_pycode_line(e, o, pp_pyread_code_start(
                                                        &p->mem, o, t->f[i].id.code, 0),
                                                    t->f[i].instr) : 0,
                             named ? e->def_line : 0, t->f[i].entry, 0};
    }
    memset(&ps, 0, sizeof(ps));
    ps.pid = p->pid;
    ps.tid = t->tid ? t->tid : p->pid;
    ps.time_ns = now;
    ps.period = r->period_ns;
    memcpy(ps.comm, p->comm, sizeof(ps.comm));
    ps.py = py;
    ps.npy = t->n;
    ps.py_truncated = t->truncated;
    ps.py_whole = t->whole;
    if (part)
        ps.time_ns = part->end_ns;
    if (pp_splice(r->sp, &ps, NULL, 0, NULL, 0, &out) != 0) {
        r->failed++;
        return;
    }
    if (part) {
        out.event = "wall-clock", out.event_len = 10;
        out.weight_ns = part->ns;
        out.wait = part->wait;
    }
    if (pp_fold_sample(r->fold, &out) != 0)
        r->failed++;
    r->samples++;
}

/* How many samples thread tid of pid has earned since the last read: its
 * CPU time since then in periods, taken when it is found running (its
 * stack then is running code). A thread found waiting keeps what it ran
 * for the next read that finds it running, up to two periods: threads
 * taking turns at the GIL are each found waiting half the time, and
 * their CPU time is theirs; what a thread ran long before is not. A
 * thread first seen counts from 0 (it began in the recording); at the
 * first read of an attach, what it ran before is not known: 1 when
 * running, as without schedstat. */
static unsigned cpu_samples(reader *r, pid_t pid, pid_t tid, char state)
{
    uint64_t h = pp__hash(&tid, sizeof(tid), (uint64_t)pid), now;
    pp_htab_iter it;
    uint32_t *slot;
    ran *t = NULL;
    unsigned n = 0;

    if (pp_procs_run_ns(pid, tid, &now) != 0)
        return state == 'R';
    for (slot = pp__htab_first(&r->ran_index, h, &it); slot && !t;
         slot = pp__htab_next(&r->ran_index, h, &it))
        if (r->ran[*slot].pid == pid && r->ran[*slot].tid == tid)
            t = &r->ran[*slot];
    if (!t) {
        if (pp__grow((void **)&r->ran, &r->ran_cap, r->nran + 1, sizeof(*r->ran)) < 0 ||
            pp__htab_insert(&r->ran_index, h, (uint32_t)r->nran) < 0)
            return state == 'R';
        t = &r->ran[r->nran++];
        *t = (ran){pid, tid, now, 0};
        if (r->attached && r->ticks == 1)
            return state == 'R';
        t->run_ns = 0;
    }
    if (now < t->run_ns)                      /* the tid was reused */
        t->run_ns = 0;
    t->credit_ns += (int64_t)(now - t->run_ns);
    t->run_ns = now;
    if (state != 'R') {
        if (t->credit_ns > (int64_t)(2 * r->period_ns))
            t->credit_ns = (int64_t)(2 * r->period_ns);
        return 0;
    }
    /* from half a period on it is a sample (the scheduler's account moves
     * in ticks); what is over or short carries to the next read */
    while (t->credit_ns >= (int64_t)(r->period_ns / 2) && n < 16) {
        n++;
        t->credit_ns -= (int64_t)r->period_ns;
    }
    return n;
}

/* --gil: the PyThreadState holding p's GIL now (0: none), or 1 when that
 * is not known: every thread kept, said once where the layout has no
 * `locked` or `last_holder` (a free-threaded CPython, which has no GIL, is
 * not read in this mode: find_runtime says so). */
static uint64_t gil_holder(reader *r, rproc *p)
{
    const pp_py_offsets *o = &p->layout.off;
    uint64_t holder;

    if (p->gil && pp__readwall_holder(&p->mem, o, p->gil, &holder) == 0)
        return holder;
    if (o->gil_size > 0 && o->gil_locked >= 0 && o->gil_last_holder >= 0)
        return 1;                   /* not made yet (3.12+: at the interpreter's start) */
    if (!r->said_no_holder) {
        r->said_no_holder = 1;
        fprintf(stderr, "perfpy: --gil: who holds the GIL of the process %d cannot be read: "
                "all of its samples are kept\n", (int)p->pid);
    }
    return 1;
}

/* --idle: thread t's time since its last read, each part a sample. */
static void wall_thread(reader *r, rproc *p, const pp_pystack_thread *t, uint64_t now, int keep)
{
    pp_readwall_part parts[3];
    int n = pp__readwall_parts(r->rw, p->pid, t->tid, now, p->gil,
                               p->gil ? (uint64_t)p->layout.off.gil_size : 0, parts);

    if (n < 0 && n != -ENOENT)
        r->unread++;
    for (int i = 0; i < n && keep; i++)
        fold_thread(r, p, t, now, &parts[i]);
}

/* CPU time: thread t's samples earned since its last read. */
static void cpu_thread(reader *r, rproc *p, const pp_pystack_thread *t, uint64_t now, int keep)
{
    char state = 'R';
    unsigned earned = 1;

    /* a thread whose tid is not known counts as running */
    if (t->tid && pp_procs_stat(p->pid, t->tid, &state, NULL, NULL) != 0)
        return;
    if (t->tid)
        earned = cpu_samples(r, p->pid, t->tid, state);
    if (!earned)
        r->waiting++;
    while (keep && earned--)
        fold_thread(r, p, t, now, NULL);
}

/* threading's names of the n threads just read, on their tracks and roots
 * in every format (as sample mode and the hook modes name them), read from
 * the process's memory every 100 ms: a pool renames its workers once they
 * run. A thread threading does not know keeps its comm. */
static void name_threads(reader *r, rproc *p, int n, uint64_t now)
{
    pp_pyobj obj = {&p->mem, &p->layout.off, p->obj_types};
    uint64_t idents[PP_PYSTACK_THREADS], interp;
    char (*names)[64];

    if (!p->have_obj || n <= 0 || now - p->names_ns < NAMES_NS ||
        pp_mem_read(&p->mem, p->runtime + (uint64_t)p->layout.off.runtime_interpreters_head,
                    &interp, sizeof(interp)) != 0 || !(names = calloc((size_t)n, sizeof(*names))))
        return;
    p->names_ns = now;
    for (int k = 0; k < n; k++)
        idents[k] = r->threads[k].thread_id;
    if (pp_pyobj_thread_names(&obj, interp, idents, names, (size_t)n) > 0)
        for (int k = 0; k < n; k++) {
            int64_t th = names[k][0] ? pp_profile_find_thread(
                             r->prof, p->pid, r->threads[k].tid ? r->threads[k].tid : p->pid)
                                     : -1;
            if (th >= 0)
                pp_profile_thread_name(r->prof, (uint32_t)th, names[k], strlen(names[k]));
        }
    free(names);
}

/* One tick: every thread of every process, read now. */
static void tick(reader *r)
{
    uint64_t now = pp__mono_ns();

    r->ticks++;
    for (size_t i = 0; i < r->nprocs; i++) {
        rproc *p = &r->procs[i];
        uint64_t holder = 1;
        int n;

        if (p->gone)
            continue;
        find_runtime(r, p);
        if (!p->runtime)
            continue;
        if (p->tid_off < 0)
            p->tid_off = pp_pystack_tid_offset(&p->mem, &p->layout.off, p->runtime);
        if ((r->wall || r->gil_only) && !p->gil)
            p->gil = pp__readwall_gil(&p->mem, &p->layout.off, p->runtime);
        n = pp_pystack_read(&p->mem, &p->layout.off, p->runtime, p->tid_off, r->threads,
                            PP_PYSTACK_THREADS);
        if (n == -EPERM && p->pid == r->pid)
            r->denied = 1;
        if (r->gil_only && n > 0)
            holder = gil_holder(r, p);
        for (int k = 0; k < n; k++) {
            const pp_pystack_thread *t = &r->threads[k];
            int keep = holder == 1 || t->tstate == holder;

            if (!t->n)
                continue;
            r->not_holding += !keep;
            if (r->wall && t->tid)
                wall_thread(r, p, t, now, keep);
            else if (r->wall)
                r->unread++;
            else
                cpu_thread(r, p, t, now, keep);
        }
        name_threads(r, p, n, now);
    }
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* perfpy top: its keys, and each interval shown once it is over (the
 * folder closed, the profile shown, a new one begun). 0, or -ENOMEM. */
static int top_tick(reader *r)
{
    uint64_t now = pp__mono_ns();
    pp_top_counts c = {0, 0, 0, 0};

    if (!r->top && pp_top_open(&r->top, r->top_title, r->top_how, r->top_rows) != 0)
        return -ENOMEM;
    if (pp_top_keys(r->top) == PP_TOP_QUIT || (r->denied && !r->samples))
        interrupted = 1;            /* (not ours to read: said once the view is gone) */
    if (now < r->next_ns)
        return 0;
    pp_fold_close(r->fold);
    r->fold = NULL;
    c.seconds = (double)(now - r->start_ns) / 1e9;
    for (size_t i = 0; i < r->nprocs; i++) {
        unsigned n = r->procs[i].gone ? 0 : pp_top_threads_of(r->procs[i].pid);

        c.threads += n;
        c.processes += n > 0;
    }
    pp_top_show(r->top, r->prof, &c);
    pp_profile_free(r->prof);
    r->start_ns = now;
    while (r->next_ns <= now)       /* on the grid: a late wake-up does not drift */
        r->next_ns += r->every_ns;
    if (pp_profile_init(r->prof) != 0 || pp_fold_open(&r->fold, r->prof, &r->fo) != 0)
        return -ENOMEM;
    r->prof->period_ns = r->period_ns;  /* as the first interval's (open_reader) */
    r->prof->exec_lines = 1;
    if (r->wall)
        r->prof->value = PP_VALUE_WALL;
    return 0;
}

static void top_end(reader *r)
{
    pp_top_close(r->top);
    r->top = NULL;
}

/* Whether a process attached to has ended: gone, or a zombie its parent
 * has not reaped yet. */
static int ended(pid_t pid)
{
    char state = 0;

    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 1;
    return pp_procs_stat(pid, 0, &state, NULL, NULL) == 0 && (state == 'Z' || state == 'X');
}

/* Ticks until the program ends (started: *status its wait status), or,
 * attached, until it ends, the duration passes or Ctrl-C. A started
 * program past its duration gets SIGINT, as on Ctrl-C, then SIGTERM and
 * SIGKILL a second apart if it goes on. */
static void run(reader *r, long rate, double duration, int started, int *status)
{
    uint64_t period = 1000000000ull / (uint64_t)(rate > 0 ? rate : 1), next = pp__mono_ns();
    uint64_t end = duration > 0 ? next + (uint64_t)(duration * 1e9) : 0, scanned = 0;
    int sent = 0;

    for (;;) {
        uint64_t now = pp__mono_ns();
        struct timespec ts;

        if (started) {
            pid_t w = waitpid(r->pid, status, WNOHANG);

            if (w == r->pid || (w < 0 && errno != EINTR))
                return;
            /* top's q or SIGTERM: the terminal back, then the program
             * ended as -d ends it */
            if (r->every_ns && interrupted && !end) {
                top_end(r);
                end = now;
            }
        } else if (interrupted || ended(r->pid)) {
            r->stopped = interrupted;
            return;
        }
        if (end && now >= end + (uint64_t)sent * 1000000000ull) {
            r->stopped = 1;
            if (!started)
                return;
            kill(r->pid, sent == 0 ? SIGINT : sent == 1 ? SIGTERM : SIGKILL);
            sent += sent < 2;
        }
        if (now - scanned >= SCAN_NS) {
            scan(r);
            scanned = now;
        }
        tick(r);
        if (r->every_ns && !(started && end) && top_tick(r) != 0) {
            top_end(r);
            fprintf(stderr, "perfpy: out of memory\n");
            exit(PP_EXIT_FAIL);
        }
        next += period;
        if (next < pp__mono_ns())
            next = pp__mono_ns() + period;          /* behind: the missed ticks are gone */
        ts.tv_sec = (time_t)(next / 1000000000ull);
        ts.tv_nsec = (long)(next % 1000000000ull);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
}

static pid_t start(char **argv)
{
    pid_t pid = fork();

    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "perfpy: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

/* Accounting said with -v; reads that failed, also when they are 1% or
 * more of the samples (pp_note_said); a failure, always. */
static void notes(const reader *r)
{
    pp_pycode_stats cs = pp_pycode_stats_of(r->codes);
    int v = r->verbose;

    if (v && r->nprocs > 1)
        fprintf(stderr, "perfpy: read %zu processes (the process %d and its descendants)\n",
                r->nprocs, (int)r->pid);
    if (v && r->waiting)
        fprintf(stderr, "perfpy: %llu reads found a thread waiting (not running): they are "
                "not in this CPU profile\n", (unsigned long long)r->waiting);
    if (v && r->refused > 1)
        fprintf(stderr, "perfpy: %llu processes ran a Python perfpy does not read (the "
                "reasons are above): their Python frames are not read\n",
                (unsigned long long)r->refused);
    if (v && cs.freed)
        fprintf(stderr, "perfpy: %llu code objects were freed before they could be named: "
                "their frames are [unknown]\n", (unsigned long long)cs.freed);
    if (r->unread && pp_note_said(v, pp_note_pct(r->unread, r->unread + r->samples)))
        fprintf(stderr, "perfpy: wall clock: %llu reads of a thread's /proc account failed "
                "(its tid not known, or its files not readable): that time is not in the "
                "profile\n", (unsigned long long)r->unread);
    if (v && r->gil_only)
        fprintf(stderr, "perfpy: --gil: %llu reads of threads that did not hold the GIL "
                "were left out\n", (unsigned long long)r->not_holding);
    if (r->failed)
        fprintf(stderr, "perfpy: %llu samples could not be folded (out of memory)\n",
                (unsigned long long)r->failed);
}

/* The profile written and summed up, or "no samples" said; the program's
 * status (wait_status; attached: 0) as perfpy's. */
static int finish(reader *r, pp_profile *prof, const char *format, const char *output,
                  int attached, int wait_status)
{
    pp_report_result rr;
    pp_error e;
    const pp_format *f = pp_format_find(format);
    pp_write_opts wo = {.threads = r->fo.threads};
    int rc = attached || r->stopped ? 0      /* as record's other modes: -d ended it */
             : WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status)
             : WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : PP_EXIT_FAIL;

    pp_fold_close(r->fold);
    r->fold = NULL;
    if (r->every_ns) {              /* top: shown as it went, nothing to write */
        pp_profile_free(prof);
        return rc;
    }
    memset(&rr, 0, sizeof(rr));
    pp_summary_end(stderr, r->stopped, r->seconds, attached ? 0 : wait_status);
    if (attached && !r->stopped)
        fprintf(stderr, "perfpy: the process %d ended after %.1f s: the profile is of what "
                "was read until then\n", (int)r->pid, r->seconds);
    if (prof->samples == 0) {
        pp_summary_no_samples(stderr, attached ? (long)r->pid : 0, r->seconds);
        rc = rc ? rc : PP_EXIT_FAIL;
    } else if (!f || pp_output_write(prof, f, output, &wo, &e) != 0) {
        fprintf(stderr, "perfpy: cannot write %s: %s\n", output, f ? e.message : "unknown format");
        rc = PP_EXIT_FAIL;
    } else {
        rr.profile = *prof;
        rr.sample_mode = 1;
        rr.verbose = r->verbose;
        snprintf(rr.output, sizeof(rr.output), "%s", output);
        pp_summary_print(stderr, &rr, 10);
    }
    pp_profile_free(prof);
    return rc;
}

/* What a read-mode profile weighs, in the words of its first line. */
static const char *clock_words(const pp_request *rq)
{
    return rq->wall && rq->gil ? "wall clock of the thread holding the GIL"
           : rq->wall          ? "wall clock: time off the CPU too, by its reason"
           : rq->gil           ? "CPU time of the thread holding the GIL"
                               : "CPU time";
}

/* The reader for rq, its profile prof and folder open; perfpy top's
 * view made ready. 0, or PP_EXIT_FAIL (out of memory, said). */
static int open_reader(reader *r, const pp_request *rq, pp_profile *prof)
{
    memset(r, 0, sizeof(*r));
    r->fo.no_native = 1;
    r->fo.processes = rq->processes;
    r->fo.threads = rq->threads;
    r->attached = rq->target == PP_TARGET_PID;
    r->wall = rq->wall;
    r->gil_only = rq->gil;
    r->verbose = rq->verbose;
    r->period_ns = 1000000000ull / (uint64_t)(rq->rate > 0 ? rq->rate : 1);
    r->prof = prof;
    if (rq->what == PP_REQUEST_TOP) {
        r->every_ns = (uint64_t)(rq->interval * 1e9);
        r->top_rows = (size_t)rq->rows;
        pp_top_title(r->top_title, sizeof(r->top_title), rq->pid, rq->argv);
        snprintf(r->top_how, sizeof(r->top_how), "read mode (no root: Python frames read from "
                 "outside, %ld Hz, %s; no C frames)", rq->rate, clock_words(rq));
        signal(SIGTERM, on_interrupt);
        signal(SIGHUP, on_interrupt);
    }
    if (pp_profile_init(prof) != 0 || pp_fold_open(&r->fold, prof, &r->fo) != 0 ||
        pp_splice_open(&r->sp, NULL) != 0 || pp_pycode_open(&r->codes) != 0 ||
        (r->wall && pp__readwall_open(&r->rw) != 0) ||
        !(r->threads = calloc(PP_PYSTACK_THREADS, sizeof(*r->threads)))) {
        fprintf(stderr, "perfpy: out of memory\n");
        return PP_EXIT_FAIL;
    }
    prof->period_ns = r->period_ns;
    prof->exec_lines = 1;
    if (r->wall)
        prof->value = PP_VALUE_WALL;    /* samples weigh the time they stand for */
    return 0;
}

/* The process attached to, or the program started. 0, or PP_EXIT_FAIL. */
static int begin_target(reader *r, const pp_request *rq)
{
    if (r->attached) {
        r->pid = (pid_t)rq->pid;
        signal(SIGINT, on_interrupt);
        signal(SIGTERM, on_interrupt);
        if (!r->every_ns)
            fprintf(stderr, "perfpy: recording the process %d in read mode (%ld Hz, %s; no "
                "hook, no root: its Python frames read from outside); Ctrl-C stops\n",
                (int)r->pid, rq->rate, clock_words(rq));
        return 0;
    }
    signal(SIGINT, SIG_IGN);       /* the program gets Ctrl-C; it ends, then we do */
    if (!r->every_ns)
        fprintf(stderr, "perfpy: recording %s in read mode (%ld Hz, %s; no hook, no root: "
                "its Python frames read from outside)\n", rq->argv[0], rq->rate,
                clock_words(rq));
    fflush(stderr);
    if ((r->pid = start(rq->argv)) < 0) {
        fprintf(stderr, "perfpy: cannot start %s: %s\n", rq->argv[0], strerror(errno));
        return PP_EXIT_FAIL;
    }
    return 0;
}

int pp__read_main(const pp_request *rq)
{
    reader r;
    pp_profile prof;
    uint64_t t0;
    int status = 0, rc;

    if ((rc = open_reader(&r, rq, &prof)) != 0 || (rc = begin_target(&r, rq)) != 0)
        return rc;
    t0 = pp__mono_ns();
    r.start_ns = t0;
    r.next_ns = t0 + r.every_ns;
    run(&r, rq->rate, rq->duration, !r.attached, &status);
    r.seconds = (double)(pp__mono_ns() - t0) / 1e9;
    top_end(&r);
    if (r.denied && !r.samples) {
        fprintf(stderr, "perfpy: cannot read the memory of the process %d: not permitted (a "
                "user may read only its own processes, and kernel.yama.ptrace_scope may "
                "allow only children: run perfpy as that process's user, or as root for "
                "sample mode)\n", (int)r.pid);
        rc = PP_EXIT_FAIL;
    } else {
        if (!r.every_ns)            /* top said its counts as it went */
            notes(&r);
        rc = finish(&r, &prof, rq->format, rq->output, r.attached, status);
    }
    if (r.fold) {
        pp_fold_close(r.fold);
        pp_profile_free(&prof);
    }
    pp_splice_close(r.sp);
    pp_pycode_close(r.codes);
    free(r.threads);
    free(r.procs);
    free(r.ran);
    pp__htab_free(&r.ran_index);
    pp__readwall_close(r.rw);
    return rc;
}
