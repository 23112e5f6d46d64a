/*
 * What the collector's ring hands over, each kind to its part: samples
 * (folded: records.c; in wall-clock mode a stretch still open is kept until
 * its end comes), a process's fork, exec and exit (what is known of it
 * follows: targets.c), and the BPF program's copies of code objects it
 * sampled first (named from them, before the sample that needs them).
 */
#include "record.h"
#include "collect/codename.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void on_sample(const struct pp_bpf_sample *s, void *ctx)
{
    state *st = ctx;

    if (st->gil_only && !(s->flags & PP_BPF_GIL_HELD)) {
        const proc *p = pp__targets_of(st, (pid_t)s->pid);

        if (!p || !p->no_gil) {
            st->not_holding++;
            return;
        }
    }
    if (s->kind == PP_BPF_OFF_OPEN) {
        if (pp_wall_open_keep(st->open, s) != 0)
            st->failed++;
    } else if (s->kind == PP_BPF_OFF_CPU) {
        pp__records_fold(st, s, s->block_ns, s->runq_ns);
    } else {
        pp__records_fold(st, s, 0, st->wall ? s->runq_ns : 0);
    }
}

/* A process forked, exec'd or ended: what is known of it follows. */
static void on_event(const struct pp_bpf_event *e, void *ctx)
{
    state *st = ctx;
    proc *p, *parent;
    int kept;

    /* the timelines' markers (a failure loses a marker, never a sample) */
    if (e->kind == PP_BPF_EV_FORK || e->kind == PP_BPF_EV_EXIT)
        pp_fold_marker(st->fold, (int32_t)e->pid, (int32_t)e->pid, PP_MARKER_PROCESS, e->time_ns,
                       e->time_ns, e->kind == PP_BPF_EV_FORK ? "process start" : "process exit");
    switch (e->kind) {
    case PP_BPF_EV_WALL_END:
        pp__waits_end(st, (const struct pp_bpf_wall_end *)e);
        break;
    case PP_BPF_EV_FORK:
        parent = pp__targets_of(st, (pid_t)e->ppid);
        if (parent && (p = pp__targets_of(st, (pid_t)e->pid))) {
            parent = pp__targets_of(st, (pid_t)e->ppid);    /* the table may have moved */
            *p = *parent;                              /* the same memory */
            p->names = NULL;                           /* its own, read anew */
            p->nnames = 0;
            p->names_ns = 0;
            p->pid = (pid_t)e->pid;
            p->mem = pp_mem_of_pid(p->pid);            /* its own (the same bytes) */
            p->told = 0;                               /* its root is its own */
            p->counted = p->sampled = 0;
            p->forked_from = (pid_t)e->ppid;
            /* -a (CPU time only): not primed. A host's Python runners
             * fork thousands of children a minute, most to exec at once,
             * and each prime read their maps and opened every file they
             * map (30% of the recorder's CPU); a child's are read at its
             * first sample instead */
            if (!st->host)
                pp_unwind_prime(st->u, (int)e->pid);
        }
        st->children++;
        break;
    case PP_BPF_EV_EXEC:
    case PP_BPF_EV_EXIT:
        pp_unwind_forget(st->u, (int)e->pid);
        p = pp__targets_of(st, (pid_t)e->pid);
        /* the new image's _PyRuntime may have been found (at the exec
         * stop of a held program, or by a look) before its exec's event is
         * read here, and the BPF program's
         * copies of its first code objects taken into the cache since:
         * forgetting them would leave each one the BPF side already sent
         * to a read of memory, [unknown] once the object is freed */
        kept = e->kind == PP_BPF_EV_EXEC && p && p->runtime && p->found_ns > e->time_ns;
        if (!kept && p && p->coded)
            pp_pycode_forget(st->codes, (pid_t)e->pid);
        if (!p)
            break;
        if (kept && !st->host) {                       /* what was found is the new image's */
            p->forked_from = 0;
            /* but where it runs is placed again: a look before the exec
             * placed the image before it (a container's launcher, in its
             * new PID namespace, its chroot not made yet) */
            p->placed = 0;
            break;
        }
        if (e->kind == PP_BPF_EV_EXEC) {
            pp__names_forget(p);
            pp__targets_reset(p, (pid_t)e->pid);       /* its _PyRuntime is looked for */
            p->coded = kept;
            if (st->host)
                pp__targets_host_decide(st, p, 1);
        } else {
            pp__targets_count_seen(st, p);                         /* a forked child that lived as one */
            pp__names_forget(p);
            *p = st->procs[--st->nprocs];
        }
        break;
    }
}

/* The BPF program's copy of a code object it sampled first (codename.h):
 * named from it, before the sample that needs it. A process with no
 * layout here yet is left to be read as before. */
void pp__ring_on_code(const struct pp_bpf_code *r, size_t len, void *ctx)
{
    state *st = ctx;

    if (len < sizeof(*r))
        return;
    for (size_t i = 0; i < st->nprocs; i++) {
        proc *p = &st->procs[i];

        if (p->pid != (pid_t)r->key.pid)
            continue;
        /* the BPF side knows the layout before this side does (-a: set
         * by the last look, then forgotten at the exec's event): found again
         * first, as python_frames does, or the copy, which the BPF side
         * will not send again, is dropped */
        if (!p->runtime && !p->refused)
            pp__targets_look(st, p);
        if (p->runtime)
            pp_codename_take(st->codes, &p->mem, r, len, &p->layout.off,
                             p->have_types ? &p->types : NULL);
        break;
    }
}

/* Every record the ring holds now, handed on (waiting up to timeout_ms for
 * one); threading's names read again when it is time. */
int pp__ring_take(state *st, int timeout_ms)
{
    int n = pp_collect_poll(st->c, timeout_ms, on_sample, on_event, st);

    if (st->threads)
        pp__names_read(st);
    return n;
}
