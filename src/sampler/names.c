/*
 * threading's names of the threads, for every format and the thread roots: read
 * from the process's memory, never by running code in it
 * (sys.modules["threading"]._active, each Thread's _name: pyobj.c), again
 * every 100 ms while it runs, and kept for the threads that ended
 * (tnames.c), so that a thread whose stacks are read after its end is
 * still named as it was.
 */
#include "record.h"
#include "cpython/pysyms.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- threading's names of the threads ------------------------------------- */

#define NAMES_EVERY_NS 100000000ull

#define NAMES_MAX 4096

static uint64_t monotonic_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

typedef struct reading {
    const pp_pyobj *r;
    proc *p;
    size_t cap;
} reading;

static int one_thread(uint64_t key, uint64_t thread, void *ctx)
{
    reading *rd = ctx;
    proc *p = rd->p;
    int64_t ident;
    uint64_t name;

    if (p->nnames == NAMES_MAX ||
        pp__grow((void **)&p->names, &rd->cap, p->nnames + 1, sizeof(*p->names)) < 0)
        return 1;
    if (pp_pyobj_int(rd->r, key, &ident) == 0 &&
        pp_pyobj_attr(rd->r, thread, "_name", &name) == 0 &&
        pp_pyread_str(&p->mem, rd->r->o, name, rd->r->t.str_type, p->names[p->nnames].name,
                      sizeof(p->names[p->nnames].name)) == 1) {
        p->names[p->nnames].ident = (uint64_t)ident;
        p->nnames++;
    }
    return 0;
}

/* threading._active of p now: sys.modules["threading"]._active, its keys
 * the threads' idents, its values their Thread objects. 0, or -1 (gone,
 * no threading yet: the names read before are kept). */
/* The types a reader of p's objects tells apart, found once in the files it
 * maps (their symbol tables: slow enough to be looked for only when names
 * are wanted). 1 found, else 0. */
static int obj_types(proc *p)
{
    pp_maps maps = {0};

    if (!p->have_obj && p->runtime) {
        p->have_obj = -1;
        if (pp_maps_read(p->pid, &maps) == 0 && pp_pysyms_objtypes(&maps, &p->obj_types) == 0)
            p->have_obj = 1;
        pp_maps_free(&maps);
    }
    return p->have_obj == 1;
}

static int read_names(proc *p)
{
    const pp_py_offsets *o = &p->layout.off;
    pp_pyobj r = {&p->mem, o, p->obj_types};
    uint64_t interp, modules, threading, dict, active;
    reading rd = {&r, p, 0};
    pp_tname *old = p->names;
    size_t nold = p->nnames;
    /* its time: as it began, so that a thread it saw lived then or after
     * (a read stamped as it ended could cross a thread's start) */
    uint64_t at = monotonic_ns();

    if (!p->runtime || !obj_types(p) || o->interp_modules < 0 || o->module_dict < 0)
        return -1;
    r.t = p->obj_types;
    if (pp_mem_read(&p->mem, p->runtime + (uint64_t)o->runtime_interpreters_head, &interp,
                       sizeof(interp)) != 0 ||
        pp_mem_read(&p->mem, interp + (uint64_t)o->interp_modules, &modules,
                       sizeof(modules)) != 0 ||
        pp_pyobj_dict_get(&r, modules, "threading", &threading) != 0 ||
        pp_mem_read(&p->mem, threading + (uint64_t)o->module_dict, &dict, sizeof(dict)) != 0 ||
        pp_pyobj_dict_get(&r, dict, "_active", &active) != 0)
        return -1;
    p->names = NULL;
    p->nnames = 0;
    if (pp_pyobj_dict_each(&r, active, one_thread, &rd) != 0 || !p->nnames) {
        free(p->names);
        p->names = old;                 /* nothing read: what was is kept */
        p->nnames = nold;
        return -1;
    }
    /* no memory: the names lost are not kept, as before there were any */
    (void)pp_tnames_keep_gone(&p->gone, old, nold, p->names, p->nnames, p->names_ns);
    free(old);
    p->names_ns = at;
    return 0;
}

static const char *name_of(const proc *p, uint64_t ident)
{
    for (size_t i = 0; i < p->nnames; i++)
        if (p->names[i].ident == ident)
            return p->names[i].name;
    return NULL;
}

/* The threads of p already named, named again as threading names them now
 * (a pool renames its workers once they run: the name a thread had at its
 * first sample, read then, was kept for good), each while it lives (its
 * ident is another thread's once it ends). */
static void rename_threads(state *st, const proc *p)
{
    const char *name;

    for (size_t i = 0; i < st->nnamed; i++) {
        named_thread *t = &st->named[i];

        if (t->pid != p->pid || !t->done || t->thread < 0 ||
            !(name = name_of(p, t->ident)) || syscall(SYS_tgkill, t->pid, t->tid, 0) != 0)
            continue;
        pp_profile_thread_name(st->prof, (uint32_t)t->thread, name, strlen(name));
    }
}

void pp__names_read(state *st)
{
    uint64_t now = monotonic_ns();

    for (size_t i = 0; i < st->nprocs; i++)
        if (st->procs[i].runtime && now - st->procs[i].names_ns >= NAMES_EVERY_NS &&
            read_names(&st->procs[i]) == 0)
            rename_threads(st, &st->procs[i]);
}

static named_thread *named_of(state *st, pid_t pid, pid_t tid)
{
    named_thread *t;

    for (size_t i = st->nnamed; i-- > 0;)
        if (st->named[i].pid == pid && st->named[i].tid == tid)
            return &st->named[i];
    if (pp__grow((void **)&st->named, &st->named_cap, st->nnamed + 1, sizeof(*st->named)) < 0)
        return NULL;
    t = &st->named[st->nnamed++];
    *t = (named_thread){pid, tid, 0, -1, 0};
    return t;
}

/* A thread's ident may be another's once it ends (its stack reused): the
 * names are taken from a read made after the stack's time, or read again
 * now, while the process lives; else from a read made while the thread
 * lived (after it started: no other live thread had its ident then) that
 * saw it. A thread that waited and then ended is named so: its wait's
 * stack comes as the wait ends, and on a loaded machine perfpy-sample can
 * take it after a read that no longer had the thread (a CI run: "alpha"
 * named by its comm). */
void pp__names_thread(state *st, proc *p, const struct pp_bpf_sample *s)
{
    named_thread *t;
    const char *name = NULL;
    int64_t thread;

    if (!p->runtime || p->have_obj < 0 || !s->ident ||
        !(t = named_of(st, (pid_t)s->pid, (pid_t)s->tid)) || t->done)
        return;
    if (p->names_ns >= s->time_ns)
        name = name_of(p, s->ident);
    if (!name && read_names(p) == 0)
        name = name_of(p, s->ident);
    if (!name && s->born_ns && p->names_ns >= s->born_ns)
        name = name_of(p, s->ident);    /* the last read, the process gone since */
    if (!name && s->born_ns)
        name = pp_tnames_gone_name(&p->gone, s->ident, s->born_ns, s->time_ns);
    if (!name)
        return;
    t->done = 1;
    t->ident = s->ident;
    thread = pp_profile_thread(st->prof, (int32_t)s->pid, (int32_t)s->tid, NULL, 0);
    if (thread >= 0) {
        t->thread = (int32_t)thread;
        pp_profile_thread_name(st->prof, (uint32_t)thread, name, strlen(name));
    }
}

void pp__names_forget(proc *p)
{
    free(p->names);
    p->names = NULL;
    p->nnames = 0;
    pp_tnames_gone_free(&p->gone);
}
