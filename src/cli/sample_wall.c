/*
 * perfpy-sample's helpers for wall-clock mode (the notes, the events lost,
 * the ends of stretches captured as they began, the frames a capture at
 * the scheduler begins with) and for the threads' names (threading's, read
 * from the process: pyobj.c), beside sample_main.c.
 */
#include "sample_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Whether pid's memory is gone: it ended (a zombie keeps its pid, not its
 * memory). */
int pp__sample_gone(pid_t pid)
{
    char path[64], buf[256], *close_paren;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 1;
    buf[n] = '\0';
    close_paren = strrchr(buf, ')');        /* the state follows the comm */
    return close_paren && close_paren[1] == ' ' &&
           (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

/* Kernel frames a capture at the scheduler's tracepoint begins with: the
 * BPF program's own and the switch itself (a thread taken off the CPU
 * later, by the task iterator, shows none of them). */
int pp__sample_tracing_frame(const char *sym)
{
    return strncmp(sym, "bpf_", 4) == 0 || strncmp(sym, "__bpf_", 6) == 0 ||
           strncmp(sym, "__traceiter_", 12) == 0 || strncmp(sym, "__schedule", 10) == 0;
}

/* The end of a stretch whose stack was captured as it began. */
void pp__sample_wall_end(state *st, const struct pp_bpf_wall_end *e)
{
    struct pp_bpf_sample *s = pp_wall_open_take(st->open, e->pid, e->tid);

    if (!s)
        return;        /* its capture did not fit in the ring (counted there), or
                          it held no GIL and --gil left it out */
    pp__sample_fold_record(st, s, e->block_ns, e->runq_ns);
    pp_wall_open_done(st->open, s);
}

/* Wall-clock mode: the scheduler's events seen, and every one lost. */
void pp__sample_wall_notes(const state *st, pp_collector *c)
{
    uint64_t lost_caps = pp_collect_count(c, PP_BPF_N_LOST_CAPTURES);
    uint64_t lost_ends = pp_collect_count(c, PP_BPF_N_LOST_ENDS);
    uint64_t lost_threads = pp_collect_count(c, PP_BPF_N_LOST_THREADS);
    uint64_t unended = pp_wall_open_unended(st->open);

    fprintf(stderr, "perfpy: wall clock: the program's threads stopped running %llu times; "
            "%llu stacks off the CPU captured\n",
            (unsigned long long)pp_collect_count(c, PP_BPF_N_SWITCHES),
            (unsigned long long)pp_collect_count(c, PP_BPF_N_CAPTURED));
    if (pp_collect_count(c, PP_BPF_N_MISSED))
        fprintf(stderr, "perfpy: wall clock: the kernel did not report %llu of the switches "
                "(found from the threads' CPU time); %.1f ms off the CPU around them have "
                "no stack and are missing\n",
                (unsigned long long)pp_collect_count(c, PP_BPF_N_MISSED),
                (double)pp_collect_missed_ns(c) / 1e6);
    if (pp_collect_count(c, PP_BPF_N_UNCAPTURED))
        fprintf(stderr, "perfpy: wall clock: %llu stacks off the CPU were not captured as "
                "their threads ran again (the switch's end unseen, or the thread exiting); "
                "%.1f ms off the CPU (as sampled) have no stack and are missing\n",
                (unsigned long long)pp_collect_count(c, PP_BPF_N_UNCAPTURED),
                (double)pp_collect_count(c, PP_BPF_N_UNCAPTURED_NS) / 1e6);
    if (lost_caps || lost_ends || lost_threads || unended)
        fprintf(stderr, "perfpy: wall clock: lost %llu stacks off the CPU and %llu ends of "
                "one (the ring buffer was full), %llu stacks whose end never came, %llu "
                "threads not followed (no memory for their state): that time is missing\n",
                (unsigned long long)lost_caps, (unsigned long long)lost_ends,
                (unsigned long long)unended, (unsigned long long)lost_threads);
}

/* Every event the kernel could not hand over: samples, and in wall-clock
 * mode stacks off the CPU, their ends, threads not followed, and stacks
 * whose end never came. */
uint64_t pp__sample_lost_events(const state *st)
{
    uint64_t n = pp_collect_lost(st->c);

    if (st->wall)
        n += pp_collect_count(st->c, PP_BPF_N_LOST_CAPTURES) +
             pp_collect_count(st->c, PP_BPF_N_LOST_ENDS) +
             pp_collect_count(st->c, PP_BPF_N_LOST_THREADS) + pp_wall_open_unended(st->open);
    return n;
}

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

    if (p->nnames == rd->cap) {
        size_t cap = rd->cap ? rd->cap * 2 : 16;
        pp_tname *more = cap <= NAMES_MAX ? realloc(p->names, cap * sizeof(*more)) : NULL;

        if (!more)
            return 1;
        p->names = more;
        rd->cap = cap;
    }
    if (pp_pyobj_int(rd->r, key, &ident) == 0 &&
        pp_pyobj_attr(rd->r, thread, "_name", &name) == 0 &&
        pp_pyread_str(p->pid, rd->r->o, name, rd->r->t.str_type, p->names[p->nnames].name,
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
    pp_pyobj r;

    if (!p->have_obj && p->runtime) {
        p->have_obj = -1;
        if (pp_maps_read(p->pid, &maps) == 0 &&
            pp_pyobj_open(&r, p->pid, &p->layout.off, &maps) == 0) {
            p->obj_types = r.t;
            p->have_obj = 1;
        }
        pp_maps_free(&maps);
    }
    return p->have_obj == 1;
}

static int read_names(proc *p)
{
    const pp_py_offsets *o = &p->layout.off;
    pp_pyobj r = {p->pid, o, p->obj_types};
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
    if (pp_pyread_peek(p->pid, p->runtime + (uint64_t)o->runtime_interpreters_head, &interp,
                       sizeof(interp)) != 0 ||
        pp_pyread_peek(p->pid, interp + (uint64_t)o->interp_modules, &modules,
                       sizeof(modules)) != 0 ||
        pp_pyobj_dict_get(&r, modules, "threading", &threading) != 0 ||
        pp_pyread_peek(p->pid, threading + (uint64_t)o->module_dict, &dict, sizeof(dict)) != 0 ||
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

void pp__sample_read_names(state *st)
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
    if (st->nnamed == st->named_cap) {
        size_t cap = st->named_cap ? st->named_cap * 2 : 16;
        named_thread *more = realloc(st->named, cap * sizeof(*more));

        if (!more)
            return NULL;
        st->named = more;
        st->named_cap = cap;
    }
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
void pp__sample_name_thread(state *st, proc *p, const struct pp_bpf_sample *s)
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

void pp__sample_proc_free(proc *p)
{
    free(p->names);
    p->names = NULL;
    p->nnames = 0;
    pp_tnames_gone_free(&p->gone);
}
