/*
 * The summary a command prints after a report: samples, lost events, the
 * truncated share, the top Python functions by own and by total time, and
 * where the profile went. A formatter over a pp_report_result; the command
 * chooses the stream. Beside it, the lines every recorder says as a
 * recording ends (perfpy record's hook modes, perfpy-sample's sample and
 * read modes): how it ended, or that nothing was sampled.
 */
#include "summary_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

typedef struct funcs_ctx {
    const pp_profile *p;
    const pp__funcs *f;
} funcs_ctx;

/* by name and file */
static int cmp_func_name(const void *a, const void *b, void *ctx)
{
    const funcs_ctx *c = ctx;
    const pp_frame *x = &c->p->frames[c->f->v[*(const uint32_t *)a].frame];
    const pp_frame *y = &c->p->frames[c->f->v[*(const uint32_t *)b].frame];
    int r = strcmp(x->name, y->name);

    return r ? r : strcmp(x->file, y->file);
}

/* f->of: each Python frame's function (grouped as pp_profile_functions
 * groups: by name and file, or each frame its own with by_line), for the
 * wall-clock split, which reads the stacks again. 0 or -1. */
static int funcs_of(const pp_profile *p, int by_line, pp__funcs *f)
{
    uint32_t *idx = malloc((f->n ? f->n : 1) * sizeof(*idx));
    funcs_ctx c = {p, f};

    if (!(f->of = malloc((p->nframes ? p->nframes : 1) * sizeof(*f->of))) || !idx) {
        free(idx);
        return -1;
    }
    for (uint32_t i = 0; i < p->nframes; i++)
        f->of[i] = PP_NONE;
    for (uint32_t g = 0; g < f->n; g++) {
        idx[g] = g;
        if (by_line)
            f->of[f->v[g].frame] = g;
    }
    if (!by_line) {
        qsort_r(idx, f->n, sizeof(*idx), cmp_func_name, &c);
        for (uint32_t i = 0; i < p->nframes; i++) {
            const pp_frame *fr = &p->frames[i];
            uint32_t lo = 0, hi = f->n;

            if (fr->kind != PP_FRAME_PYTHON)
                continue;
            while (lo < hi) {           /* the first function not before fr */
                uint32_t mid = lo + (hi - lo) / 2;
                const pp_frame *m = &p->frames[f->v[idx[mid]].frame];
                int r = strcmp(m->name, fr->name);

                if (!r)
                    r = strcmp(m->file, fr->file);
                if (r < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < f->n && strcmp(p->frames[f->v[idx[lo]].frame].name, fr->name) == 0 &&
                strcmp(p->frames[f->v[idx[lo]].frame].file, fr->file) == 0)
                f->of[i] = idx[lo];
        }
    }
    free(idx);
    return 0;
}

/* The Python functions: 0, or -1 out of memory. */
int pp__funcs_make(const pp_profile *p, int by_line, pp__funcs *f)
{
    uint32_t k = 0;

    f->of = NULL;
    if (pp_profile_functions(p, by_line, &f->v, &f->n) < 0) {
        f->v = NULL;
        return -1;
    }
    for (uint32_t i = 0; i < f->n; i++)
        if (p->frames[f->v[i].frame].kind == PP_FRAME_PYTHON)
            f->v[k++] = f->v[i];
    f->n = k;
    return funcs_of(p, by_line, f);
}

void pp__funcs_free(pp__funcs *f)
{
    free(f->v);
    free(f->of);
}

static int cmp_func(const void *a, const void *b, void *ctx)
{
    const pp_func *x = a, *y = b;
    int by_own = *(const int *)ctx;
    uint64_t vx = by_own ? x->own : x->total, vy = by_own ? y->own : y->total;

    if (vx != vy)
        return vx > vy ? -1 : 1;
    return (x->frame > y->frame) - (x->frame < y->frame);
}

static void print_top(FILE *out, const pp_profile *p, pp__funcs *f, int by_own, int top,
                      int no_line)
{
    uint64_t total = pp_profile_value_total(p);
    double all = total ? (double)total : 1.0;

    qsort_r(f->v, f->n, sizeof(*f->v), cmp_func, &by_own);
    fprintf(out, "perfpy: top Python functions by %s %s (own = innermost Python frame):\n"
            "     own   total  function\n", by_own ? "own" : "total",
            p->value == PP_VALUE_EVENTS ? pp_profile_unit(p) : "time");
    for (uint32_t i = 0; i < f->n && (int)i < top; i++) {
        const pp_func *s = &f->v[i];
        const pp_frame *fr = &p->frames[s->frame];
        if (!(by_own ? s->own : s->total))
            break;
        if (no_line)
            fprintf(out, "  %5.1f%%  %5.1f%%  %s (%s)\n", 100.0 * (double)s->own / all,
                    100.0 * (double)s->total / all, fr->name, fr->file);
        else
            fprintf(out, "  %5.1f%%  %5.1f%%  %s\n", 100.0 * (double)s->own / all,
                    100.0 * (double)s->total / all, fr->label);
    }
}

static void print_totals(FILE *out, const pp_profile *p)
{
    /* wall time: periods, the unit every writer counts (a long wait is one
     * record of many periods) */
    int wall = p->value == PP_VALUE_WALL && p->period_ns;

    fprintf(out, "perfpy: %llu samples", (unsigned long long)(wall ? pp_profile_value_total(p)
                                                                   : p->samples));
    if (wall)
        fprintf(out, " of %.3g ms", (double)p->period_ns / 1e6);
    if (p->value == PP_VALUE_EVENTS)     /* what they count: "of 10 faults", "of 1 call" */
        fprintf(out, " of %llu %s", (unsigned long long)pp_profile_every(p),
                pp_profile_unit_n(p, pp_profile_every(p)));
    fprintf(out, "%s%s%s, %llu lost events, %.1f%% of stacks truncated",
            p->event[0] ? " (" : "", p->event,
            p->event[0] ? ")" : "", (unsigned long long)p->lost,
            p->samples ? 100.0 * (double)p->truncated / (double)p->samples : 0.0);
    if (p->time_last_ns > p->time_first_ns)
        fprintf(out, ", %.2f s recorded", (double)(p->time_last_ns - p->time_first_ns) / 1e9);
    fputc('\n', out);
    if (p->bad_lines)
        fprintf(out, "perfpy: %llu lines of perf script output were not understood\n",
                (unsigned long long)p->bad_lines);
}

/* How many processes, and of which kind, print_processes lists by name. */
#define PROCS_LISTED 8

static double share(uint64_t part, uint64_t all)
{
    return all ? 100.0 * (double)part / (double)all : 0.0;
}

/* With more than one process: each (most samples first) with its truncated
 * share, then the truncated share of the Python processes apart from the
 * others (a stripped gzip child's stacks are not the program's). */
static void print_processes(FILE *out, const pp_profile *p)
{
    uint64_t py = 0, py_trunc = 0, other = 0, other_trunc = 0;

    if (p->nprocs < 2)
        return;
    fprintf(out, "perfpy: %u processes:\n", p->nprocs);
    for (uint32_t i = 0; i < p->nprocs; i++) {
        const pp_process *x = &p->procs[i];
        if (x->python) {
            py += x->samples;
            py_trunc += x->truncated;
        } else {
            other += x->samples;
            other_trunc += x->truncated;
        }
        if (i < PROCS_LISTED)
            fprintf(out, "  %7llu samples  %5.1f%% truncated  %s (pid %d)%s\n",
                    (unsigned long long)x->samples, share(x->truncated, x->samples), x->comm,
                    x->pid, x->python ? "" : ", no Python frame");
    }
    if (p->nprocs > PROCS_LISTED)
        fprintf(out, "  ... and %u more\n", p->nprocs - PROCS_LISTED);
    fprintf(out, "perfpy: truncated: %.1f%% of the Python processes' %llu samples",
            share(py_trunc, py), (unsigned long long)py);
    if (other)
        fprintf(out, ", %.1f%% of the other processes' %llu", share(other_trunc, other),
                (unsigned long long)other);
    fputc('\n', out);
}

/* Files whose code perf could not name (their frames read "[libz.so.1]"),
 * with the share of samples whose stack holds such a frame, the files with
 * the most first; the folder already dropped the interpreter's unnamed
 * frames between Python frames, so what is counted here is what a reader
 * sees. A file is usually stripped of its symbol table. */
#define UNNAMED_FILES 16
#define UNNAMED_SHARE_SAID 5.0   /* percent of samples */

typedef struct unnamed_file {
    const char *file;
    uint64_t samples;
} unnamed_file;

static int unnamed_frame(const pp_frame *fr)
{
    size_t n = strlen(fr->name);

    /* a file perf itself could not tell ("[unknown]") names no file */
    return fr->kind == PP_FRAME_NATIVE && fr->file[0] && fr->file[0] != '[' && n > 2 &&
           fr->name[0] == '[' && fr->name[n - 1] == ']';
}

/* Adds s's samples once to each file of an unnamed frame in it. */
static void count_unnamed(const pp_profile *p, const pp_stack *s, unnamed_file *u, size_t *nu)
{
    const uint32_t *ids = pp_stack_ids(p, s);
    char counted[UNNAMED_FILES] = {0};

    for (uint32_t k = 0; k < s->depth; k++) {
        const pp_frame *fr = &p->frames[ids[k]];
        size_t j;

        if (!unnamed_frame(fr))
            continue;
        for (j = 0; j < *nu && strcmp(u[j].file, fr->file) != 0; j++)
            ;
        if (j == *nu) {
            if (*nu == UNNAMED_FILES)
                continue;   /* past the table: not said */
            u[(*nu)++] = (unnamed_file){fr->file, 0};
        }
        if (!counted[j]) {
            counted[j] = 1;
            u[j].samples += pp_stack_value(p, s);
        }
    }
}

static void print_unnamed(FILE *out, const pp_profile *p, int sample_mode)
{
    unnamed_file u[UNNAMED_FILES];
    size_t nu = 0;

    for (uint32_t i = 0; i < p->nstacks; i++)
        count_unnamed(p, &p->stacks[i], u, &nu);
    for (size_t i = 0; i < nu; i++) {
        double pc = share(u[i].samples, pp_profile_value_total(p));
        if (pc < UNNAMED_SHARE_SAID)
            continue;
        fprintf(out, "perfpy: %.1f%% of samples pass through code %s could not name in %s "
                "(shown as its file, '[%s]'): it is stripped of its symbols; install its "
                "debug symbols to see its functions (for the interpreter, `perfpy doctor "
                "-- PYTHON` says how)\n", pc, sample_mode ? "perfpy" : "perf", u[i].file,
                strrchr(u[i].file, '/') ? strrchr(u[i].file, '/') + 1 : u[i].file);
    }
}

/* How long the profile took to make, and whose time it was. */
static void print_time(FILE *out, const pp_report_result *r)
{
    if (r->seconds <= 0)
        return;
    if (r->sample_mode) {
        fprintf(out, "perfpy: the profile took %.1f s to make after the recording ended "
                "(samples were folded as they came: perfpy-sample's CPU, %.1f s in all)\n",
                r->seconds, r->own_cpu_s);
        return;
    }
    fprintf(out, "perfpy: the profile took %.1f s to make:", r->seconds);
    if (r->injected)
        fprintf(out, " perf inject --jit %.1f s,", r->inject_s);
    fprintf(out, " perf script %.1f s (perf's CPU %.1f s in all); perfpy's own CPU %.2f s\n",
            r->script_s, r->perf_cpu_s, r->own_cpu_s);
}

void pp_summary_print(FILE *out, const pp_report_result *r, int top)
{
    const pp_profile *p = &r->profile;
    pp__funcs f;

    print_totals(out, p);
    if (r->verbose)
        print_processes(out, p);
    print_unnamed(out, p, r->sample_mode);
    if (pp__funcs_make(p, !r->sample_mode, &f) == 0) {
        if (f.n && p->value == PP_VALUE_WALL &&
            pp__wall_blocks_print(out, p, &f, top, r->sample_mode, r->verbose) == 0) {
            /* one block per process, each of its own time */
        } else if (f.n) {
            /* made before print_top sorts the functions: it reads them by frame */
            pp__wall_split *w = pp__wall_split_make(p, &f);

            if (p->nprocs > 1)
                fprintf(out, "perfpy: the shares below are of all %u processes' %s together%s\n",
                        p->nprocs, w ? "time" : "samples",
                        w ? " (their stacks are merged)" : "");
            /* the wall table has an own column: the one by own time is -v's */
            if (!w || r->verbose)
                print_top(out, p, &f, 1, top, r->sample_mode);
            if (w)
                pp__wall_split_print(out, p, w, top, r->sample_mode);
            else
                print_top(out, p, &f, 0, top, r->sample_mode);
            pp__wall_split_free(w);
        } else if (r->sample_mode) {
            fprintf(out, "perfpy: no Python function in the samples (the threads sampled "
                    "ran no Python code then: C code, or the interpreter's start-up)\n");
        } else {
            fprintf(out, "perfpy: no Python function in the samples (was the program run "
                    "with perfpy's engine active?)\n");
        }
    }
    pp__funcs_free(&f);
    if (r->kept[0])
        fprintf(out, "perfpy: kept intermediate files in %s\n", r->kept);
    if (r->jitted_kept)
        fprintf(out, "perfpy: kept the %zu jitted-*.so files next to %s: `perf report -i %s` "
                "reads them\n", r->jitted_kept, r->info.jitdumps[0],
                r->jitted_for[0] ? r->jitted_for : r->output);
    if (r->verbose)
        print_time(out, r);
    fprintf(out, "perfpy: wrote %s\n", strcmp(r->output, "-") == 0 ? "standard output" : r->output);
}

void pp_summary_end(FILE *out, int stopped, double seconds, int wait_status)
{
    if (stopped)
        fprintf(out, "perfpy: recording stopped after %.1f s\n", seconds);
    else if (WIFSIGNALED(wait_status))
        fprintf(out, "perfpy: the program was killed by signal %d (%s); its profile "
                "is still written\n", WTERMSIG(wait_status), strsignal(WTERMSIG(wait_status)));
    else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0)
        fprintf(out, "perfpy: the program exited with status %d; its profile is still "
                "written\n", WEXITSTATUS(wait_status));
}

void pp_summary_no_samples(FILE *out, long pid, double seconds)
{
    if (pid)
        fprintf(out, "perfpy: no samples: the process %ld used no CPU in the %.1f s "
                "recorded; nothing is written\n", pid, seconds);
    else
        fprintf(out, "perfpy: no samples: the program used no CPU that could be sampled "
                "in its %.1f s; nothing is written\n", seconds);
}
