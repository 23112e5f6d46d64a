/*
 * The splice (see splice.h for the picture and the rules). Two passes over
 * the native frames: count the evaluation frames, then copy frames and put
 * each matched run after its evaluation; the runs no evaluation took go
 * last. Python names are built into one growing text buffer as offsets,
 * made pointers once it stops moving.
 */
#include "splice.h"
#include "profile/htab.h"
#include "report/fold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_NAME "_PyEval_EvalFrameDefault"

struct pp_splicer {
    pp_script_frame *frames;
    size_t frames_cap;
    size_t *text_at;           /* per frame: offset of its Python name, or SIZE_MAX */
    size_t text_at_cap;
    char *text;
    size_t text_len, text_cap;
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

static void push_native(pp_splicer *sp, size_t *n, const pp_native_frame *f)
{
    pp_script_frame *x = &sp->frames[*n];

    memset(x, 0, sizeof(*x));
    x->ip = f->pc;
    x->sym = f->sym;
    x->dso = f->dso;
    x->sym_len = (uint32_t)strlen(f->sym);
    x->dso_len = (uint32_t)strlen(f->dso);
    sp->text_at[(*n)++] = SIZE_MAX;
}

/* Python frame py[i] (of npy) as frame *n: its name into the text buffer. */
static int push_python(pp_splicer *sp, size_t *n, const pp_pyframe *py, size_t i, size_t npy)
{
    const pp_pyframe *f = &py[i];
    size_t need = 4 + strlen(f->qualname) + 1 + strlen(f->file) + 1;
    pp_script_frame *x;

    if (pp__grow((void **)&sp->text, &sp->text_cap, sp->text_len + need, 1) < 0)
        return -ENOMEM;
    snprintf(sp->text + sp->text_len, need, "py::%s:%s", f->qualname, f->file);
    x = &sp->frames[*n];
    memset(x, 0, sizeof(*x));
    x->ip = npy - i;                  /* 1 for the outermost: distinct neighbours */
    x->sym_len = (uint32_t)(need - 1);
    x->dso = "[python]";
    x->dso_len = 8;
    x->py_line = sp->o.def_lines ? f->def_line : f->line;
    x->py_def_line = f->def_line;
    sp->text_at[(*n)++] = sp->text_len;
    sp->text_len += need;
    return 0;
}

/* A task of the --async tail (py->task): its label, in DSO "[task]". */
static int push_task(pp_splicer *sp, size_t *n, const pp_pyframe *f)
{
    size_t need = strlen(f->qualname) + 1;
    pp_script_frame *x;

    if (pp__grow((void **)&sp->text, &sp->text_cap, sp->text_len + need, 1) < 0)
        return -ENOMEM;
    memcpy(sp->text + sp->text_len, f->qualname, need);
    x = &sp->frames[*n];
    memset(x, 0, sizeof(*x));
    x->ip = 1;
    x->sym_len = (uint32_t)(need - 1);
    x->dso = PP_TASK_DSO;
    x->dso_len = sizeof(PP_TASK_DSO) - 1;
    sp->text_at[(*n)++] = sp->text_len;
    sp->text_len += need;
    return 0;
}

static int push_tail(pp_splicer *sp, size_t *n, const pp_sample *s)
{
    for (size_t i = 0; i < s->ntasks; i++)
        if ((s->tasks[i].task ? push_task(sp, n, &s->tasks[i])
                              : push_python(sp, n, s->tasks, i, s->ntasks)) < 0)
            return -ENOMEM;
    return 0;
}

static int push_run(pp_splicer *sp, size_t *n, const pp_sample *s, size_t run)
{
    size_t from = run ? sp->run_end[run - 1] : 0;

    for (size_t i = from; i < sp->run_end[run]; i++)
        if (push_python(sp, n, s->py, i, s->npy) < 0)
            return -ENOMEM;
    return 0;
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
        pp__grow((void **)&sp->text_at, &sp->text_at_cap, nframes, sizeof(*sp->text_at)) < 0 ||
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
              const pp_native_frame *native, size_t nn, pp_script_sample *out)
{
    size_t total = nk + nn + s->npy + s->ntasks, n = 0, nruns, run = 0;
    int tasks = s->ntasks > 0 && (s->npy == 0 || s->task_cut < s->npy);

    memset(out, 0, sizeof(*out));
    if (reserve(sp, total ? total : 1, s->npy) < 0)
        return -ENOMEM;
    sp->text_len = 0;
    nruns = split_runs(sp, s);
    if (tasks && nruns)
        nruns = cut_runs(sp, s, nruns);
    for (size_t i = 0; i < nk; i++)
        push_native(sp, &n, &kernel[i]);
    for (size_t i = 0; i < nn && !(tasks && run == nruns); i++) {
        push_native(sp, &n, &native[i]);
        if (run < nruns && is_eval(native[i].sym) && push_run(sp, &n, s, run++) < 0)
            return -ENOMEM;
    }
    sp->stats.samples++;
    sp->stats.runs += nruns;
    sp->stats.runs_at_root += nruns - run;
    for (; run < nruns; run++)
        if (push_run(sp, &n, s, run) < 0)
            return -ENOMEM;
    if (tasks && push_tail(sp, &n, s) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (sp->text_at[i] != SIZE_MAX)
            sp->frames[i].sym = sp->text + sp->text_at[i];
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
    free(sp->text_at);
    free(sp->text);
    free(sp->run_end);
    free(sp);
}
