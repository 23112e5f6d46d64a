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

pp__wall_split *pp__wall_split_make(const pp_profile *p, const pp__funcs *f)
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
    for (uint32_t si = 0; si < p->nstacks; si++) {
        const pp_stack *s = &p->stacks[si];
        const uint32_t *ids = pp_stack_ids(p, s);
        uint64_t v = pp_stack_value(p, s);
        int r = reason_of(p, s);

        w->by[r] += v;
        w->all += v;
        for (uint32_t k = 0; k < s->depth; k++) {
            uint32_t g = f->of[ids[k]];

            if (g != PP_NONE && seen[g] != si + 1) {     /* once under recursion */
                seen[g] = si + 1;
                w->fn_by[(size_t)g * NBY + (size_t)r] += v;
            }
        }
    }
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

void pp__wall_split_free(pp__wall_split *w)
{
    if (!w)
        return;
    free(w->fn);
    free(w->fn_by);
    free(w);
}
