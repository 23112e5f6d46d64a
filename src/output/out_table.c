/*
 * A table for a terminal, a pipe or a CI log: the functions by their own
 * time, as pstats and py-spy's summary print them, with their share and
 * their seconds (when the samples weigh time):
 *
 *   perfpy: python3, 4321 samples (cpu-clock) over 2.10 s, 3 threads
 *     own%   self%  total%     own s   total s  function
 *    52.5%    0.0%   52.5%     2.268     2.268  crunch (phases.py:38)
 *     0.0%   31.0%   31.0%     0.000     1.339  PyLong_FromLong (libpython3.13.so.1.0)
 *   ...
 *
 * own: the samples where the function is the innermost Python frame (the
 * native code it calls directly included; 0 for native functions); self:
 * where it is the leaf; total: where it is anywhere on the stack, once per
 * sample. Shares are of all the profile's samples (pp_stack_value). Rows:
 * by own, then self, then total; the first ROWS of them. Sample and read
 * modes' frames of one function at several lines are one row, named
 * without a line. Files are relative to their sys.path entry (paths.c).
 *
 * A wall-clock profile's samples are the threads' whole lives, most of it
 * waiting: a function's "own" would be mostly the time its thread slept in
 * it, and a leaf is then the kernel's or a wait's marker, never a Python
 * function (self 0). So its table splits own time instead, into what the
 * function ran on the CPU itself (own) and what it waited for (wait: its
 * samples off the CPU), ranked by the two together:
 *
 *   perfpy: server.py, 7169 samples (wall-clock) over 3.49 s, 773 threads
 *     own%   wait%  total%     own s    wait s   total s  function
 *     0.4%   38.1%   38.5%     0.124    11.828    11.955  SocketIO.readinto (socket.py)
 */
#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 100

static int cmp_row(const void *a, const void *b)
{
    const pp_func *x = a, *y = b;

    if (x->own != y->own)
        return x->own > y->own ? -1 : 1;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return (x->frame > y->frame) - (x->frame < y->frame);
}

/* A wall-clock profile's rows (own: on the CPU, self: waiting): by the two
 * together, then by time on the CPU. */
static int cmp_wall(const void *a, const void *b)
{
    const pp_func *x = a, *y = b;
    uint64_t tx = x->own + x->self, ty = y->own + y->self;

    if (tx != ty)
        return tx > ty ? -1 : 1;
    if (x->own != y->own)
        return x->own > y->own ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return (x->frame > y->frame) - (x->frame < y->frame);
}

static void name_of(FILE *out, const pp_profile *p, const pp_labels *l, uint32_t frame)
{
    const pp_frame *f = &p->frames[frame];
    const char *base = strrchr(f->file, '/');

    if (f->kind != PP_FRAME_PYTHON) {
        fputs(f->label, out);
        if (*f->file && strcmp(f->label, f->file) != 0 && f->label[0] != '[')
            fprintf(out, " (%s)", base ? base + 1 : f->file);
    } else if (p->exec_lines && *f->file) {
        fprintf(out, "%s (%s)", f->name, l->rel[frame]);
    } else {
        fputs(l->label[frame], out);
    }
}

static void header(FILE *out, const pp_profile *p, const pp_write_opts *o, int wall, int sec)
{
    uint32_t threads = 0;

    for (uint32_t t = 0; t < p->nthreads; t++)
        threads += p->threads[t].samples > 0;
    fprintf(out, "perfpy: %s, %llu samples", pp__title(p, o), (unsigned long long)p->samples);
    if (p->event[0])
        fprintf(out, " (%s)", p->event);
    if (p->time_last_ns > p->time_first_ns)
        fprintf(out, " over %.2f s", (double)(p->time_last_ns - p->time_first_ns) / 1e9);
    if (threads)
        fprintf(out, ", %u thread%s", threads, threads == 1 ? "" : "s");
    if (p->nprocs > 1)
        fprintf(out, ", %u processes", p->nprocs);
    if (wall)
        fprintf(out, "\n    own%%   wait%%  total%%%s  function\n",
                sec ? "     own s    wait s   total s" : "       own      wait     total");
    else
        fprintf(out, "\n    own%%   self%%  total%%%s  function\n",
                sec ? "     own s   total s" : "       own     total");
}

int pp_write_table(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    uint64_t all = pp_profile_value_total(p);
    double pc = all ? 100.0 / (double)all : 0.0;
    double sec = pp_profile_time_weights(p) && p->period_ns ? (double)p->period_ns / 1e9 : 0;
    int wall = p->value == PP_VALUE_WALL;
    pp_labels l;
    pp_func *v;
    uint32_t n;

    if (pp_profile_functions(p, !p->exec_lines, &v, &n) < 0)
        return -ENOMEM;
    if (pp_labels_make(p, &l) < 0) {
        free(v);
        return -ENOMEM;
    }
    for (uint32_t i = 0; wall && i < n; i++) {  /* own: on the CPU; self: waiting */
        v[i].self = v[i].own_waiting;
        v[i].own -= v[i].own_waiting;
    }
    qsort(v, n, sizeof(*v), wall ? cmp_wall : cmp_row);
    header(out, p, o, wall, sec != 0);
    for (uint32_t i = 0; i < n && i < ROWS; i++) {
        const pp_func *f = &v[i];
        fprintf(out, "  %5.1f%%  %5.1f%%  %5.1f%%", pc * (double)f->own, pc * (double)f->self,
                pc * (double)f->total);
        if (sec)
            fprintf(out, "  %8.3f", sec * (double)f->own);
        else
            fprintf(out, "  %8llu", (unsigned long long)f->own);
        if (wall && sec)
            fprintf(out, "  %8.3f", sec * (double)f->self);
        else if (wall)
            fprintf(out, "  %8llu", (unsigned long long)f->self);
        if (sec)
            fprintf(out, "  %8.3f  ", sec * (double)f->total);
        else
            fprintf(out, "  %8llu  ", (unsigned long long)f->total);
        name_of(out, p, &l, f->frame);
        fputc('\n', out);
    }
    if (n > ROWS)
        fprintf(out, "  ... and %u more functions\n", n - ROWS);
    free(v);
    pp_labels_free(&l);
    return pp__stream_status(out);
}
