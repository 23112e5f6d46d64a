/*
 * The summary of a wall-clock profile (sample mode's --idle): where the
 * time went. Each stack of such a profile ends in its reason's marker when
 * it is time off the CPU (fold.h, pp_wait_marker), so the split is read
 * from the leaves:
 *
 *   perfpy: wall time: on-CPU 32.9%, off-CPU 67.1%: sleep 25.2%, I/O 22.4%,
 *           lock 19.0%, GIL 0.0%, CPU wait 0.5%, other 0.0%
 *   perfpy: top Python functions by total time, and where it went:
 *        own   total  on-CPU sleep   I/O  lock   GIL  CPU wait other  function
 *       0.0%   23.0%      0%    0%  100%    0%    0%     0%    0%  drain (app.py)
 *
 * The shares of a function's row are of its own total time.
 *
 * A recording of several processes (a program and its children, each
 * under its own root) gets one such block per process, its percentages of
 * that process's own time (its threads'), the processes with the most
 * time first: a parent waiting 98% of its time for a child reads 98%,
 * not half of it because the child's own time was added to the whole.
 *
 *   perfpy: process python3 (pid 4568): 3.9 s of its threads' time, the
 *           basis of its shares:
 *   perfpy: wall time: on-CPU 1.2%, off-CPU 98.8%: ... child 97.1%, ...
 *   perfpy: top Python functions ...
 *   perfpy: process sleep (pid 4570): 1.5 s ..., no Python function
 *   perfpy: wall time: on-CPU 0.1%, off-CPU 99.9%: sleep 99.8%, ...
 *
 * When stacks hold samples of several processes (merged under no root),
 * there is one block, of all of them together, and the summary says so.
 *
 * With --async, the tasks that wait are stacks of their own (each one's
 * own time, under what it awaits: fold.h's PP_TASK_AWAITING leaves): their
 * time is said apart, the split above stays the threads', and the table
 * gains a column for it:
 *
 *   perfpy: asyncio tasks waiting (--async): 311.2 s of their own time, beside
 *           the threads' 3.0 s (each task under what it awaits)
 */
#include "summary_int.h"

#include <stdlib.h>
#include <string.h>

#define TASKS PP_WAIT_N          /* the reasons' index of the tasks' waits */
#define NBY (PP_WAIT_N + 1)

struct pp__wall_split {
    uint64_t by[NBY];            /* all the time, by reason, then the tasks' waits */
    uint64_t all;
    uint32_t n;                  /* functions */
    pp__func *fn;                /* their own and total time, a copy */
    uint64_t *fn_by;             /* n rows of NBY */
};

/* The reason of a stack: its leaf's marker, PP_WAIT_NONE on the CPU,
 * TASKS for a waiting task's. */
static int reason_of(const pp_profile *p, const pp_stack *s)
{
    const pp_frame *leaf;

    if (!s->depth)
        return PP_WAIT_NONE;
    leaf = &p->frames[pp_stack_ids(p, s)[s->depth - 1]];
    if (leaf->kind != PP_FRAME_MARKER)
        return PP_WAIT_NONE;
    return pp_task_wait_marker(leaf->name) ? TASKS : pp_wait_of_marker(leaf->name);
}

static double pct(uint64_t part, uint64_t all)
{
    return all ? 100.0 * (double)part / (double)all : 0.0;
}

/* Adds stack si to w: its time by reason, each function's once (seen),
 * and with own_too each function's own and total time too. */
static void add_stack(pp__wall_split *w, const pp_profile *p, const pp__funcs *f, uint32_t si,
                      uint32_t *seen, int own_too)
{
    const pp_stack *s = &p->stacks[si];
    const uint32_t *ids = pp_stack_ids(p, s);
    uint64_t v = pp_stack_value(p, s);
    uint32_t own = PP_NONE;
    int r = reason_of(p, s);

    w->by[r] += v;
    w->all += v;
    for (uint32_t k = 0; k < s->depth; k++) {
        uint32_t g = f->of[ids[k]];

        if (g == PP_NONE)
            continue;
        own = g;
        if (seen[g] != si + 1) {                         /* once under recursion */
            seen[g] = si + 1;
            w->fn_by[(size_t)g * NBY + (size_t)r] += v;
            if (own_too)
                w->fn[g].total += v;
        }
    }
    if (own_too && own != PP_NONE)
        w->fn[own].own += v;
}

pp__wall_split *pp__wall_split_make(const pp_profile *p, const pp__funcs *f)
{
    return pp__wall_split_of(p, f, NULL, 0);
}

pp__wall_split *pp__wall_split_of(const pp_profile *p, const pp__funcs *f,
                                  const uint32_t *proc_of, uint32_t proc)
{
    pp__wall_split *w;
    uint32_t *seen;

    if (p->value != PP_VALUE_WALL || !(w = calloc(1, sizeof(*w))))
        return NULL;
    w->n = f->n;
    w->fn = malloc((f->n ? f->n : 1) * sizeof(*w->fn));
    w->fn_by = calloc((size_t)(f->n ? f->n : 1) * NBY, sizeof(*w->fn_by));
    seen = calloc(f->n ? f->n : 1, sizeof(*seen));
    if (!w->fn || !w->fn_by || !seen) {
        free(seen);
        pp__wall_split_free(w);
        return NULL;
    }
    memcpy(w->fn, f->v, f->n * sizeof(*w->fn));
    if (proc_of)                /* each function's time in this process alone */
        for (uint32_t g = 0; g < f->n; g++)
            w->fn[g].own = w->fn[g].total = 0;
    for (uint32_t si = 0; si < p->nstacks; si++)
        if (!proc_of || proc_of[si] == proc)
            add_stack(w, p, f, si, seen, proc_of != NULL);
    free(seen);
    return w;
}

static int cmp_total(const void *a, const void *b, void *ctx)
{
    const pp__func *fn = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    if (fn[x].total != fn[y].total)
        return fn[x].total > fn[y].total ? -1 : 1;
    return (fn[x].frame > fn[y].frame) - (fn[x].frame < fn[y].frame);
}

void pp__wall_split_print(FILE *out, const pp_profile *p, const pp__wall_split *w, int top,
                          int no_line)
{
    uint32_t *idx = malloc((w->n ? w->n : 1) * sizeof(*idx));
    uint64_t threads = w->all - w->by[TASKS];
    int ncol = w->by[TASKS] ? NBY : PP_WAIT_N;

    fprintf(out, "perfpy: wall time: on-CPU %.1f%%, off-CPU %.1f%%:", pct(w->by[0], threads),
            pct(threads - w->by[0], threads));
    for (int r = 1; r < PP_WAIT_N; r++)
        fprintf(out, "%s %s %.1f%%", r > 1 ? "," : "", pp_wait_name(r), pct(w->by[r], threads));
    fputc('\n', out);
    if (w->by[TASKS])
        fprintf(out, "perfpy: asyncio tasks waiting (--async): %.1f s of their own time, beside "
                "the threads' %.1f s (each task under what it awaits)\n",
                (double)w->by[TASKS] * (double)p->period_ns / 1e9,
                (double)threads * (double)p->period_ns / 1e9);
    if (!idx)
        return;
    for (uint32_t g = 0; g < w->n; g++)
        idx[g] = g;
    if (!w->n || !w->all || top <= 0) {
        free(idx);
        return;
    }
    qsort_r(idx, w->n, sizeof(*idx), cmp_total, w->fn);
    fprintf(out, "perfpy: top Python functions by total time, and where it went "
            "(own = innermost Python frame):\n     own   total ");
    for (int r = 0; r < ncol; r++)
        fprintf(out, " %7s", r == TASKS ? "awaiting" : pp_wait_name(r));
    fputs("  function\n", out);
    for (uint32_t i = 0; i < w->n && (int)i < top && w->fn[idx[i]].total; i++) {
        const pp__func *s = &w->fn[idx[i]];
        const pp_frame *fr = &p->frames[s->frame];

        fprintf(out, "  %5.1f%%  %5.1f%% ", pct(s->own, w->all), pct(s->total, w->all));
        for (int r = 0; r < ncol; r++)
            fprintf(out, r == TASKS ? " %7.0f%%" : " %6.0f%%",
                    pct(w->fn_by[(size_t)idx[i] * NBY + (size_t)r], s->total));
        if (no_line)
            fprintf(out, "  %s (%s)\n", fr->name, fr->file);
        else
            fprintf(out, "  %s\n", fr->label);
    }
    free(idx);
}

/* ---- one block per process ---------------------------------------------- */

#define REAL_PID_MASK ((1u << 22) - 1)    /* perf_data.c's IMAGE_PID_STEP - 1 */

uint32_t *pp__stack_procs(const pp_profile *p)
{
    uint32_t *of, *thread_proc;
    int mixed = 0;

    if (p->nprocs < 2 || !p->nlog || !(of = malloc((p->nstacks ? p->nstacks : 1) *
                                                   sizeof(*of))))
        return NULL;
    if (!(thread_proc = malloc((p->nthreads ? p->nthreads : 1) * sizeof(*thread_proc)))) {
        free(of);
        return NULL;
    }
    for (uint32_t t = 0; t < p->nthreads; t++) {
        int32_t pid = p->threads[t].pid;
        const pp_process *x = pid < 0 ? NULL
                              : pp_profile_process(p, (int)((uint32_t)pid & REAL_PID_MASK));

        thread_proc[t] = x ? (uint32_t)(x - p->procs) : PP_NONE;
    }
    for (uint32_t s = 0; s < p->nstacks; s++)
        of[s] = PP_NONE;
    for (uint64_t i = 0; i < p->nlog && !mixed; i++) {
        pp_logged r = pp_profile_rec(p, i);
        uint32_t x = r.thread < p->nthreads ? thread_proc[r.thread] : PP_NONE;

        if (r.stack >= p->nstacks || x == PP_NONE)
            continue;
        if (of[r.stack] == PP_NONE)
            of[r.stack] = x;
        else if (of[r.stack] != x)
            mixed = 1;                  /* one stack, two processes: merged */
    }
    free(thread_proc);
    if (mixed) {
        free(of);
        return NULL;
    }
    return of;
}

typedef struct proc_time {
    uint32_t proc;
    uint64_t v;
} proc_time;

static int cmp_time(const void *a, const void *b)
{
    const proc_time *x = a, *y = b;

    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return (x->proc > y->proc) - (x->proc < y->proc);
}

/* The processes with time, the most first; *n of them. */
static proc_time *procs_by_time(const pp_profile *p, const uint32_t *proc_of, uint32_t *n)
{
    proc_time *t = calloc(p->nprocs, sizeof(*t));

    *n = 0;
    if (!t)
        return NULL;
    for (uint32_t x = 0; x < p->nprocs; x++)
        t[x].proc = x;
    for (uint32_t s = 0; s < p->nstacks; s++)
        if (proc_of[s] < p->nprocs)
            t[proc_of[s]].v += pp_stack_value(p, &p->stacks[s]);
    qsort(t, p->nprocs, sizeof(*t), cmp_time);
    while (*n < p->nprocs && t[*n].v)
        (*n)++;
    return t;
}

/* Whether the i-th process by time (of n, all together all_v) gets a block:
 * the first PP_WALL_BLOCKS; without -v only those that ran Python or took
 * PP_WALL_QUIET_PCT of all the time (a shell or a pyenv shim does not). */
static int has_block(const pp_profile *p, const proc_time *t, uint32_t i, uint32_t *blocks,
                     uint64_t all_v, int verbose)
{
    if (*blocks == PP_WALL_BLOCKS)
        return 0;
    if (!verbose && !p->procs[t[i].proc].python &&
        100.0 * (double)t[i].v < PP_WALL_QUIET_PCT * (double)all_v)
        return 0;
    (*blocks)++;
    return 1;
}

int pp__wall_blocks_print(FILE *out, const pp_profile *p, const pp__funcs *f, int top,
                          int no_line, int verbose)
{
    uint32_t *proc_of = pp__stack_procs(p), n, blocks = 0, others = 0;
    proc_time *t;
    uint64_t rest = 0, all_v = 0;

    if (!proc_of)
        return -1;
    if (!(t = procs_by_time(p, proc_of, &n))) {
        free(proc_of);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        all_v += t[i].v;
    for (uint32_t i = 0; i < n; i++) {
        const pp_process *x = &p->procs[t[i].proc];
        pp__wall_split *w;

        if (!has_block(p, t, i, &blocks, all_v, verbose)) {
            rest += t[i].v;
            others++;
            continue;
        }
        fprintf(out, "perfpy: process %s (pid %d): %.2f s of its threads' time, the basis of "
                "its shares%s\n", x->comm, x->pid,
                (double)t[i].v * (double)p->period_ns / 1e9,
                x->python ? ":" : ", no Python frame:");
        if ((w = pp__wall_split_of(p, f, proc_of, t[i].proc))) {
            pp__wall_split_print(out, p, w, x->python ? top : 0, no_line);
            pp__wall_split_free(w);
        }
    }
    if (others)
        fprintf(out, "perfpy: ... and %u more process%s, %.2f s of their threads' time%s\n",
                others, others == 1 ? "" : "es", (double)rest * (double)p->period_ns / 1e9,
                verbose || blocks == PP_WALL_BLOCKS ? "" : " (-v: a block each)");
    free(t);
    free(proc_of);
    return 0;
}

void pp__wall_split_free(pp__wall_split *w)
{
    if (!w)
        return;
    free(w->fn);
    free(w->fn_by);
    free(w);
}
