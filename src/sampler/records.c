/*
 * One record of the collector, as the ring hands it over, spliced and
 * folded into the profile: its Python frames named from the code cache
 * (pycode.c; the process's layout from targets.c), its native stack
 * unwound (unwind.c), its kernel frames named (kallsyms.c), the three
 * spliced (splice.c) and folded (fold.c). --async: the running task's
 * chain in place of the event loop's frames, and in wall-clock mode each
 * waiting task a stack of its own.
 */
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernel frames a capture at the scheduler's tracepoint begins with: the
 * BPF program's own and the switch itself (a thread taken off the CPU
 * later, by the task iterator, shows none of them). */
static int tracing_frame(const char *sym)
{
    return strncmp(sym, "bpf_", 4) == 0 || strncmp(sym, "__bpf_", 6) == 0 ||
           strncmp(sym, "__traceiter_", 12) == 0 || strncmp(sym, "__schedule", 10) == 0;
}

/* Its frames as the splice wants them, named from the cache (pycode.c).
 * The BPF program may know the process's layout before this side does
 * (-a: set just before an exec's event is read here, which forgets it):
 * the layout is found again first (at once: the BPF side has it), and
 * without one nothing is named or kept in the cache (a name read with no
 * layout would be kept as freed). */
static void python_frames(state *st, proc *p, const struct pp_bpf_sample *s,
                          pp_pyframe *py)
{
    if (s->npy && !p->runtime && !p->refused)
        pp__targets_look(st, p);
    /* a forked child gone before its samples are read (its last wait is
     * captured as it ends): its code objects were its parent's, and the
     * identity check keeps a name that is not the object's from it */
    pp_mem from = p->forked_from && pp__targets_gone(p->pid) ? pp_mem_of_pid(p->forked_from)
                                                               : p->mem;

    for (unsigned i = 0; i < s->npy_all && i < PP_BPF_MAX_PY; i++) {
        const struct pp_bpf_pyframe *f = &s->py[i];
        pp_pycode_id id = {f->code, {f->name, f->file, f->table, f->name_id, 0,
                                     (int32_t)f->firstlineno}};
        const pp_py_offsets *o = &p->layout.off;
        const pp_pycode_entry *e = !p->runtime ? NULL :
            pp_pycode_get(st->codes, &from, o, p->have_types ? &p->types : NULL, &id);
        int named = e && e->qualname[0];
        uint64_t start = named ? pp_pyread_code_start(&from, o, f->code, f->tlbc) : 0;

        py[i] = (pp_pyframe){named ? e->qualname : "[unknown]", named ? e->file : "",
                             named ? pp_pycode_line(e, o, start, f->instr) : 0,
                             named ? e->def_line : 0, (int)f->entry, 0};
    }
}

/* --async: one stack of the tasks of s, from tasks[from] to the next stack
 * (PP_BPF_TASK_STACK), as the splice's tail (sample.h): each task after its
 * coroutines (innermost first), all named from what the sample copied, into
 * tail (from its k-th entry; labels: a task's). The index past the stack. */
static size_t stack_tail(const proc *p, const struct pp_bpf_sample *s, const pp_pyframe *py,
                         size_t from, pp_pyframe *tail, size_t *k, char (*labels)[160])
{
    size_t nt = s->ntasks < PP_BPF_MAX_TASKS ? s->ntasks : PP_BPF_MAX_TASKS, t;
    char name[128];

    for (t = from; t < nt && (t == from || !(s->tasks[t].flags & PP_BPF_TASK_STACK)); t++) {
        const struct pp_bpf_task *r = &s->tasks[t];

        for (size_t j = r->n; j-- > 0;)
            if ((size_t)r->first + j < s->npy_all && (size_t)r->first + j < PP_BPF_MAX_PY)
                tail[(*k)++] = py[r->first + j];
        pp_pyasync_name_copy(&p->layout.off, &p->as.names, r->name_type, r->name,
                             sizeof(r->name), name, sizeof(name));
        snprintf(labels[t], sizeof(labels[t]), "<task '%s'>", name);
        tail[(*k)++] = (pp_pyframe){labels[t], "", 0, 0, 0, 1};
    }
    return t;
}

/* The running task's stack of s (tasks[0], not a waiting one's), in ps:
 * it replaces the frames of what runs it, rootward of its coroutine. */
static void task_tail(state *st, const proc *p, const struct pp_bpf_sample *s,
                      const pp_pyframe *py, pp_sample *ps)
{
    static pp_pyframe tail[PP_BPF_MAX_TASKS + PP_BPF_MAX_PY];
    static char labels[PP_BPF_MAX_TASKS][160];
    size_t k = 0, end;

    if (p->as.state != 1 || !s->ntasks || (s->tasks[0].flags & PP_BPF_TASK_WAITING) ||
        s->task_frame < 0 || (uint32_t)s->task_frame >= s->npy)
        return;
    end = stack_tail(p, s, py, 0, tail, &k, labels);
    ps->task_cut = (size_t)s->task_frame;
    ps->tasks = tail;
    ps->ntasks = k;
    ps->tasks_whole = (s->tasks[end - 1].flags & PP_BPF_TASK_ROOT) != 0;
    st->async_samples += ps->tasks_whole;
}

/* The name of a type of p's ("_asyncio.Future"), read once per type. */
static const char *type_name(proc *p, uint64_t type)
{
    pp_pyobj r = {&p->mem, &p->layout.off, p->as.names};
    size_t i;

    for (i = 0; i < p->as.ntypes; i++)
        if (p->as.types[i].addr == type)
            return p->as.types[i].name;
    if (!type || i == sizeof(p->as.types) / sizeof(p->as.types[0]))
        return "?";
    p->as.types[i].addr = type;
    if (pp_pyobj_type_name_at(&r, type, p->as.types[i].name, sizeof(p->as.types[i].name)))
        snprintf(p->as.types[i].name, sizeof(p->as.types[i].name), "?");
    p->as.ntypes++;
    return p->as.types[i].name;
}

/* "[awaiting Future]": what a waiting task's innermost coroutine awaits (a
 * future's iterator says its future's type); a task that awaits nothing
 * is scheduled to run. */
static void awaiting(proc *p, const struct pp_bpf_task *t, char *out, size_t len)
{
    const char *name = type_name(p, t->awaits_type), *dot;

    if (!t->awaits) {                /* not started, or at a bare yield: its turn next */
        snprintf(out, len, "%s", PP_TASK_READY);
        return;
    }
    if (strstr(name, "FutureIter") && t->inner_type)
        name = type_name(p, t->inner_type);
    dot = strrchr(name, '.');
    snprintf(out, len, PP_TASK_AWAITING "%s]", dot ? dot + 1 : name);
}

/* Wall-clock mode (--async): each task chosen of those waiting at s, a
 * stack of its own (the tasks awaiting it, its coroutines, what it awaits
 * at the leaf), weighing its share of weight_ns: of nwaiting tasks, those
 * chosen stand for them all. */
static void fold_waiting(state *st, proc *p, const struct pp_bpf_sample *s,
                         const pp_pyframe *py, uint64_t weight_ns)
{
    static pp_pyframe tail[PP_BPF_MAX_TASKS + PP_BPF_MAX_PY + 1];
    static char labels[PP_BPF_MAX_TASKS][160], leaf[96];
    size_t nt = s->ntasks < PP_BPF_MAX_TASKS ? s->ntasks : PP_BPF_MAX_TASKS, chosen = 0;
    pp_raw_sample out;

    for (size_t t = 0; t < nt; t++)
        chosen += (s->tasks[t].flags & PP_BPF_TASK_WAITING) != 0;
    for (size_t t = 0; t < nt && chosen && p->as.state == 1;) {
        pp_sample ps;
        size_t k = 1, end;

        if (!(s->tasks[t].flags & PP_BPF_TASK_WAITING)) {
            t++;
            continue;
        }
        awaiting(p, &s->tasks[t], leaf, sizeof(leaf));
        tail[0] = (pp_pyframe){leaf, "", 0, 0, 0, 1};
        end = stack_tail(p, s, py, t, tail, &k, labels);
        memset(&ps, 0, sizeof(ps));
        ps.pid = (int32_t)s->pid;
        ps.tid = (int32_t)s->tid;
        ps.time_ns = s->time_ns;
        ps.period = st->period_ns;
        memcpy(ps.comm, s->comm, sizeof(ps.comm));
        ps.tasks = tail;
        ps.ntasks = k;
        ps.tasks_whole = (s->tasks[end - 1].flags & PP_BPF_TASK_ROOT) != 0;
        if (pp_splice(st->sp, &ps, NULL, 0, NULL, 0, &out) == 0) {
            out.event = "wall-clock", out.event_len = 10;
            out.weight_ns = weight_ns * s->nwaiting / chosen;
            if (pp_fold_sample(st->fold, &out) != 0)
                st->failed++;
        }
        t = end;
    }
}

/* The process of s, counted (-a: decided on at its first sample, left out
 * when it runs no CPython: NULL), its interval begun (--every: a record is
 * the interval's its end falls in) and its folder told of it. */
static proc *process_of(state *st, const struct pp_bpf_sample *s, uint64_t end)
{
    size_t known = st->nprocs;
    proc *p = pp__targets_of(st, (pid_t)s->pid);

    if (!p) {
        st->failed++;
        return NULL;
    }
    if (st->host && st->nprocs > known)
        pp__targets_host_decide(st, p, 0);      /* not seen before: sampled as any process */
    if (st->host && p->python != 1 && !st->host_all) {
        st->left_out++;
        return NULL;
    }
    st->taken++;
    if (st->host && !p->sampled) {
        p->sampled = 1;
        st->sampled++;
        pp__targets_count_seen(st, p);
    }
    if (st->every && !st->ending && end >= st->next_ns &&
        (!st->stop_ns || st->next_ns < st->stop_ns))
        pp__interval_rotate(st, end);           /* (past -d's end: the last interval's) */
    if (p->told != st->gen)
        pp__targets_tell(st, p);
    return p;
}

/* s as the splice wants it (its Python frames named into py, --async its
 * tasks); whether it was sampled before the BPF side had its process's
 * _PyRuntime (no Python frame could be read). */
static int sample_of(state *st, proc *p, const struct pp_bpf_sample *s, pp_pyframe *py,
                     pp_sample *ps)
{
    int early;

    memset(ps, 0, sizeof(*ps));
    ps->pid = (int32_t)s->pid;
    ps->tid = (int32_t)s->tid;
    ps->time_ns = s->time_ns;
    ps->period = st->period_ns;
    memcpy(ps->comm, s->comm, sizeof(ps->comm));
    ps->have_user = (s->flags & PP_BPF_USER) != 0;
    memcpy(ps->regs, s->regs, sizeof(ps->regs));
    ps->stack = s->stack + s->stack_skip;
    ps->stack_len = s->stack_len > s->stack_skip ? s->stack_len - s->stack_skip : 0;
    early = ps->have_user && !(s->flags & PP_BPF_PY_THREAD) &&
            (!p->runtime || s->time_ns < p->set_ns) &&
            !(p->pid == st->pid && s->time_ns < st->held_ns);   /* ld.so's, held */
    python_frames(st, p, s, py);
    ps->py = py;
    ps->npy = s->npy < PP_BPF_MAX_PY ? s->npy : PP_BPF_MAX_PY;
    ps->py_truncated = (s->flags & PP_BPF_PY_TRUNCATED) != 0;
    ps->py_whole = (s->flags & PP_BPF_PY_THREAD) && !ps->py_truncated;
    if (st->async)
        task_tail(st, p, s, py, ps);
    return early;
}

/* The spliced record folded: block ns with its reason (on the CPU: its
 * weight, 0 for a period), then runq ns waiting for a CPU, each stamped
 * with its end. A sample on the CPU in wall-clock mode may bring runq ns
 * the hypervisor took from its thread on the CPU since its last (wall.bpf.c:
 * uncharged_of), waiting for a CPU too, placed before its CPU time. */
static void fold_parts(state *st, pp_raw_sample *out, const struct pp_bpf_sample *s,
                       int reason, uint64_t block, uint64_t runq, uint64_t on_cpu)
{
    if (st->wall)
        out->event = "wall-clock", out->event_len = 10;
    else if (st->event)
        out->event = st->event->name, out->event_len = strlen(st->event->name);
    out->weight_ns = block ? block : on_cpu;    /* 0: its period */
    out->wait = reason;
    out->time_ns = s->time_ns + block;
    if ((reason == PP_WAIT_NONE || block) && pp_fold_sample(st->fold, out) != 0)
        st->failed++;
    else if (reason == PP_WAIT_NONE || block)
        st->folded_ns += out->weight_ns ? out->weight_ns : st->period_ns;
    out->weight_ns = runq;
    out->wait = PP_WAIT_CPU;
    out->time_ns = s->time_ns + block + runq;
    if (s->kind == PP_BPF_ON_CPU) {
        uint64_t ran = on_cpu ? on_cpu : st->period_ns;

        out->time_ns = s->time_ns > ran ? s->time_ns - ran : 0;
    }
    if (runq && pp_fold_sample(st->fold, out) != 0)
        st->failed++;
    else if (runq)
        st->folded_ns += runq;
}

/* s spliced, then folded: on the CPU with its period as its weight, or off
 * it in two parts: block ns with its reason, runq ns waiting for a CPU.
 * Every record is stamped with the end of the time it stands for, as a
 * CPU sample is (its period ends as it is taken): a stretch off the CPU
 * comes stamped with its start, so its blocked part ends block ns later
 * and its wait for a CPU runq ns after that (a timeline's markers and
 * samples are placed by it, and an interval of --every takes a record by
 * its end). */
void pp__records_fold(state *st, const struct pp_bpf_sample *s, uint64_t block, uint64_t runq)
{
    static pp_pyframe py[PP_BPF_MAX_PY];
    static pp_native_frame nat[512], kern[PP_BPF_MAX_KERNEL];
    proc *p = process_of(st, s, s->kind == PP_BPF_ON_CPU ? s->time_ns
                                                         : s->time_ns + block + runq);
    pp_sample ps;
    pp_raw_sample out;
    size_t nn = 0, nk = 0, skip = 0;
    unsigned flags = 0;
    int reason, early;
    /* samples on the CPU weigh the thread's CPU time since its last
     * (wall.bpf.c), or in plain sample mode their period less what the
     * thread was not charged (sample.bpf.c's cpu_sampled); 0: a period */
    uint64_t on_cpu = s->kind == PP_BPF_ON_CPU ? s->block_ns : 0;

    if (!p)
        return;
    /* its GIL's size from its own CPython's layout (s->gil is 0 until the
     * collector knows that) */
    reason = s->kind == PP_BPF_ON_CPU ? PP_WAIT_NONE
             : pp_wall_reason_of(s, p->runtime && p->layout.off.gil_size > 0
                                    ? (uint64_t)p->layout.off.gil_size : 0);
    early = sample_of(st, p, s, py, &ps);
    if (st->have_ks)
        nk = pp_kallsyms_frames(&st->ks, (const uint64_t *)s->kips, s->nkernel, kern,
                                PP_BPF_MAX_KERNEL);
    if (s->kind != PP_BPF_ON_CPU)
        while (skip < nk && tracing_frame(kern[skip].sym))
            skip++;
    if (ps.have_user && pp_unwind(st->u, &ps, nat, 512, &nn, &flags) != 0)
        nn = 0;
    /* and deeper than the stack copied (or than the frames kept): cut,
     * with nothing to splice on (a process still looked for counts once
     * it is found) */
    if (early && !(flags & PP_UNWIND_WHOLE)) {
        if (p->runtime)
            st->before_python++;
        else
            p->early++;
    }
    st->samples++;
    if (pp_splice(st->sp, &ps, kern + skip, nk - skip, nat, nn, &out) != 0) {
        st->failed++;
        return;
    }
    reason = pp_wall_reason_python(reason, &out);      /* subprocess's waits */
    fold_parts(st, &out, s, reason, block, runq, on_cpu);
    /* the tasks waiting meanwhile waited as long as the thread's record
     * stands for: its period on the CPU, its stretch off it */
    if (st->async && s->nwaiting)
        fold_waiting(st, p, s, py, s->kind == PP_BPF_ON_CPU
                                       ? (on_cpu ? on_cpu : st->period_ns) + runq
                                       : block + runq);
    if (st->threads)
        pp__names_thread(st, p, s);
}
