/*
 * Processes told apart. A recording of `python3 app.py` often holds more
 * than one process: multiprocessing workers, a `subprocess` child, gzip, the
 * shell of a pyenv shim. Folded together, a worker's `<module> (<string>:1)`
 * merges with the parent's stacks and a non-Python child's stacks read as
 * anonymous "[truncated];[unknown];..." in the middle of the program's. So
 * every sample's stack starts with a root that names its process:
 *
 *   python3 (pid 4609);<module> (app.py:1);main (app.py:9);...
 *   python3 (pid 4613);<module> (<string>:1);...;worker (app.py:3);...
 *   gzip (pid 4620);[truncated];[gzip];...
 *
 * While folding the root is a placeholder per process (its name is known
 * only at the end: the main thread's last comm, after its exec); at the end
 * the profile is rebuilt once, with the named roots, or without any when the
 * recording has a single process (pp_fold_opts.processes AUTO: a one-process
 * profile reads as before) or merging was asked for (MERGE: no root is ever
 * made). The per-process counts (samples, truncated, with a Python frame)
 * go to the profile for the summary either way.
 *
 * A process is its real pid: the earlier images of a process that execs,
 * which perf_data.c moves to pid + k * 2^22, belong to it.
 */
#include "fold_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REAL_PID_MASK ((1u << 22) - 1)    /* perf_data.c's IMAGE_PID_STEP - 1 */

static void set_comm(pp__fold_proc *p, const pp_script_sample *s)
{
    size_t n = s->comm_len < sizeof(p->comm) - 1 ? s->comm_len : sizeof(p->comm) - 1;

    memcpy(p->comm, s->comm, n);
    p->comm[n] = '\0';
}

static pp__fold_proc *find_proc(pp_folder *f, int pid)
{
    if (f->last_proc < f->nprocs && f->procs[f->last_proc].pid == pid)
        return &f->procs[f->last_proc];
    for (size_t i = 0; i < f->nprocs; i++)
        if (f->procs[i].pid == pid) {
            f->last_proc = i;
            return &f->procs[i];
        }
    return NULL;
}

static pp__fold_proc *add_proc(pp_folder *f, int pid, const pp_script_sample *s)
{
    pp__fold_proc *p;
    char name[32];
    int n;

    if (pp__grow((void **)&f->procs, &f->procs_cap, f->nprocs + 1, sizeof(*p)) < 0)
        return NULL;
    p = &f->procs[f->nprocs];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->root = -1;
    set_comm(p, s);
    if (f->o.processes != PP_PROCESSES_MERGE) {
        /* a placeholder, unique per process; named in pp__fold_proc_finish */
        n = snprintf(name, sizeof(name), "\001pid %d", pid);
        p->root = pp_profile_frame(f->p, PP_FRAME_MARKER, name, (size_t)n, NULL, 0, 0);
        if (p->root < 0)
            return NULL;
    }
    f->last_proc = f->nprocs++;
    return p;
}

pp__fold_proc *pp__fold_proc_of(pp_folder *f, const pp_script_sample *s, int64_t *root)
{
    int pid = s->pid < 0 ? -1 : (int)((uint32_t)s->pid & REAL_PID_MASK);
    pp__fold_proc *p = find_proc(f, pid);

    if (!p && !(p = add_proc(f, pid, s)))
        return NULL;
    if (s->tid == s->pid && s->comm_len)    /* the main thread names it */
        set_comm(p, s);
    p->samples++;
    *root = p->root;
    return p;
}

/* "python3 (pid 4609)": the process root's label. */
static int64_t root_frame(pp_profile *nw, const pp__fold_proc *p)
{
    char label[96];
    int n = p->pid < 0 ? snprintf(label, sizeof(label), "%s", p->comm[0] ? p->comm : "[unknown]")
                       : snprintf(label, sizeof(label), "%s (pid %d)",
                                  p->comm[0] ? p->comm : "[unknown]", p->pid);

    return pp_profile_frame(nw, PP_FRAME_MARKER, label, (size_t)n, NULL, 0, 0);
}

/* The frame old id of the old profile in nw, interned on first use. */
static int64_t copy_frame(pp_profile *nw, const pp_profile *old, uint32_t *map, uint32_t id)
{
    const pp_frame *fr = &old->frames[id];
    int64_t n;

    if (map[id] != PP_NONE)
        return map[id];
    n = pp_profile_frame(nw, fr->kind, fr->name, strlen(fr->name), fr->file, strlen(fr->file),
                         fr->line);
    if (n >= 0)
        map[id] = (uint32_t)n;
    return n;
}

static int copy_stacks(pp_profile *nw, const pp_profile *old, uint32_t *map, int roots)
{
    uint32_t *buf = malloc(((size_t)old->nids + 1) * sizeof(*buf));
    int rc = 0;

    if (!buf)
        return -ENOMEM;
    for (uint32_t si = 0; si < old->nstacks && rc == 0; si++) {
        const pp_stack *s = &old->stacks[si];
        const uint32_t *ids = pp_stack_ids(old, s);
        size_t n = 0;
        for (uint32_t d = roots ? 0 : 1; d < s->depth && rc == 0; d++) {
            int64_t id = copy_frame(nw, old, map, ids[d]);
            if (id < 0)
                rc = (int)id;
            else
                buf[n++] = (uint32_t)id;
        }
        if (rc == 0)
            rc = pp_profile_add(nw, buf, n, s->count, s->period);
    }
    free(buf);
    return rc;
}

/* The profile again, each stack's placeholder root named (roots) or left
 * out; the totals the folder and the pipeline set carried over. */
static int rebuild(pp_folder *f, int roots)
{
    pp_profile *old = f->p, nw;
    uint32_t *map = malloc(((size_t)old->nframes + 1) * sizeof(*map));
    int rc = map ? pp_profile_init(&nw) : -ENOMEM;

    if (rc < 0) {
        free(map);
        return rc;
    }
    memset(map, 0xff, ((size_t)old->nframes + 1) * sizeof(*map));
    for (size_t i = 0; roots && i < f->nprocs && rc == 0; i++) {
        int64_t id = root_frame(&nw, &f->procs[i]);
        if (id < 0)
            rc = (int)id;
        else if (f->procs[i].root >= 0)
            map[f->procs[i].root] = (uint32_t)id;
    }
    if (rc == 0)
        rc = copy_stacks(&nw, old, map, roots);
    free(map);
    if (rc < 0) {
        pp_profile_free(&nw);
        return rc;
    }
    nw.truncated = old->truncated;
    nw.lost = old->lost;
    nw.bad_lines = old->bad_lines;
    nw.time_first_ns = old->time_first_ns;
    nw.time_last_ns = old->time_last_ns;
    memcpy(nw.program, old->program, sizeof(nw.program));
    memcpy(nw.event, old->event, sizeof(nw.event));
    pp_profile_free(old);
    *old = nw;
    return 0;
}

static int by_samples(const void *a, const void *b)
{
    const pp_process *x = a, *y = b;

    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

int pp__fold_proc_finish(pp_folder *f)
{
    pp_profile *p = f->p;
    int rc = 0;

    if (f->o.processes != PP_PROCESSES_MERGE && f->nprocs)
        rc = rebuild(f, f->o.processes == PP_PROCESSES_SPLIT || f->nprocs > 1);
    if (rc < 0)
        return rc;
    free(p->procs);
    p->nprocs = 0;
    if (!f->nprocs || !(p->procs = calloc(f->nprocs, sizeof(*p->procs))))
        return f->nprocs ? -ENOMEM : 0;
    for (size_t i = 0; i < f->nprocs; i++) {
        pp_process *o = &p->procs[i];
        o->pid = f->procs[i].pid;
        memcpy(o->comm, f->procs[i].comm, sizeof(o->comm));
        o->samples = f->procs[i].samples;
        o->truncated = f->procs[i].truncated;
        o->python = f->procs[i].python;
    }
    p->nprocs = (uint32_t)f->nprocs;
    qsort(p->procs, p->nprocs, sizeof(*p->procs), by_samples);
    return 0;
}
