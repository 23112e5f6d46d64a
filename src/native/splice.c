/*
 * The splice (see splice.h for the picture and the rules): the Python
 * frames split into runs, each ending at an entry frame; then the kernel
 * and native frames copied leaf first, each run put after its
 * evaluation's frame; the runs no evaluation took go last, then the
 * --async tail. Every frame is said for what it is (profile/raw.h): the
 * names are the caller's, never written into text to be parsed again.
 */
#include "splice.h"
#include "profile/htab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_NAME "_PyEval_EvalFrameDefault"

struct pp_splicer {
    pp_raw_frame *frames;
    size_t frames_cap;
    size_t *run_end;           /* per run: index in s->py past its last frame */
    size_t run_cap;
    pp_splice_stats stats;
    pp_splice_opts o;
};

int pp_splice_open(pp_splicer **out, const pp_splice_opts *opts)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return -ENOMEM;
    if (opts)
        (*out)->o = *opts;
    return 0;
}

/* "_PyEval_EvalFrameDefault", or one of its split parts (".cold"). */
static int is_eval(const char *sym)
{
    size_t n = sizeof(EVAL_NAME) - 1;

    return strncmp(sym, EVAL_NAME, n) == 0 && (sym[n] == '\0' || sym[n] == '.');
}

static void push_native(pp_splicer *sp, size_t *n, const pp_native_frame *f, pp_raw_kind kind)
{
    pp_raw_frame *x = &sp->frames[(*n)++];

    memset(x, 0, sizeof(*x));
    x->kind = kind;
    x->ip = f->pc;
    x->sym = f->sym;
    x->dso = f->dso;
    x->sym_len = (uint32_t)strlen(f->sym);
    x->dso_len = (uint32_t)strlen(f->dso);
}

/* Python frame py[i] (of npy) as frame *n, or a task of the --async tail
 * (py->task: its label). */
static void push_python(pp_splicer *sp, size_t *n, const pp_pyframe *py, size_t i, size_t npy)
{
    const pp_pyframe *f = &py[i];
    pp_raw_frame *x = &sp->frames[(*n)++];

    memset(x, 0, sizeof(*x));
    if (f->task) {
        x->kind = PP_RAW_TASK;
        x->ip = 1;
        x->sym = f->qualname;
        x->sym_len = (uint32_t)strlen(f->qualname);
        x->dso = "";
        return;
    }
    x->kind = PP_RAW_PYTHON;
    x->ip = npy - i;                  /* 1 for the outermost: distinct neighbours */
    x->qualname = f->qualname;
    x->qualname_len = (uint32_t)strlen(f->qualname);
    x->file = f->file;
    x->file_len = (uint32_t)strlen(f->file);
    x->line = sp->o.def_lines ? f->def_line : f->line;
    x->def_line = f->def_line;
}

static void push_tail(pp_splicer *sp, size_t *n, const pp_sample *s)
{
    for (size_t i = 0; i < s->ntasks; i++)
        push_python(sp, n, s->tasks, i, s->ntasks);
}

static void push_run(pp_splicer *sp, size_t *n, const pp_sample *s, size_t run)
{
    size_t from = run ? sp->run_end[run - 1] : 0;

    for (size_t i = from; i < sp->run_end[run]; i++)
        push_python(sp, n, s->py, i, s->npy);
}

/* Splits s->py into runs, each ending at an entry frame (a last run of
 * frames with no entry frame is a run too). Returns their number. */
static size_t split_runs(pp_splicer *sp, const pp_sample *s)
{
    size_t nruns = 0;

    for (size_t i = 0; i < s->npy; i++)
        if (s->py[i].entry || i + 1 == s->npy)
            sp->run_end[nruns++] = i + 1;
    return nruns;
}

static int reserve(pp_splicer *sp, size_t nframes, size_t npy)
{
    if (pp__grow((void **)&sp->frames, &sp->frames_cap, nframes, sizeof(*sp->frames)) < 0 ||
        pp__grow((void **)&sp->run_end, &sp->run_cap, npy ? npy : 1, sizeof(*sp->run_end)) < 0)
        return -ENOMEM;
    return 0;
}

/* --async: the runs end with the one that holds the running task's
 * outermost coroutine frame, cut after it. The number of runs left. */
static size_t cut_runs(pp_splicer *sp, const pp_sample *s, size_t nruns)
{
    size_t last = 0;

    while (last + 1 < nruns && sp->run_end[last] <= s->task_cut)
        last++;
    sp->run_end[last] = s->task_cut + 1;
    return last + 1;
}

int pp_splice(pp_splicer *sp, const pp_sample *s, const pp_native_frame *kernel, size_t nk,
              const pp_native_frame *native, size_t nn, pp_raw_sample *out)
{
    size_t total = nk + nn + s->npy + s->ntasks, n = 0, nruns, run = 0;
    int tasks = s->ntasks > 0 && (s->npy == 0 || s->task_cut < s->npy);

    memset(out, 0, sizeof(*out));
    if (reserve(sp, total ? total : 1, s->npy) < 0)
        return -ENOMEM;
    nruns = split_runs(sp, s);
    if (tasks && nruns)
        nruns = cut_runs(sp, s, nruns);
    for (size_t i = 0; i < nk; i++)
        push_native(sp, &n, &kernel[i], PP_RAW_KERNEL);
    for (size_t i = 0; i < nn && !(tasks && run == nruns); i++) {
        push_native(sp, &n, &native[i], PP_RAW_NATIVE);
        if (run < nruns && is_eval(native[i].sym))
            push_run(sp, &n, s, run++);
    }
    sp->stats.samples++;
    sp->stats.runs += nruns;
    sp->stats.runs_at_root += nruns - run;
    for (; run < nruns; run++)
        push_run(sp, &n, s, run);
    if (tasks)
        push_tail(sp, &n, s);
    out->comm = s->comm;
    out->comm_len = strnlen(s->comm, sizeof(s->comm));
    out->pid = s->pid;
    out->tid = s->tid;
    out->time_ns = s->time_ns;
    out->period = s->period ? s->period : 1;
    out->event = "cpu-clock";
    out->event_len = 9;
    out->frames = sp->frames;
    out->nframes = n;
    out->frames_dropped = !tasks && s->py_truncated != 0;
    out->origin = tasks ? s->tasks_whole : s->py_whole && s->npy > 0 && !s->py_truncated;
    return 0;
}

const pp_splice_stats *pp_splice_stats_of(const pp_splicer *sp)
{
    return &sp->stats;
}

void pp_splice_close(pp_splicer *sp)
{
    if (!sp)
        return;
    free(sp->frames);
    free(sp->run_end);
    free(sp);
}
