/*
 * perfpy-sample: `perfpy record --mode sample`'s recorder (issue 15), a
 * program of its own so that only it links libbpf and elfutils (the CLI
 * and the module build and run without them). cmd_record.c runs it as
 *
 *   perfpy-sample FORMAT OUTPUT RATE NO_NATIVE DURATION PROCESSES THREADS CLOCK -- PROGRAM [ARGS...]
 *   perfpy-sample FORMAT OUTPUT RATE NO_NATIVE DURATION PROCESSES THREADS CLOCK -p PID
 *   perfpy-sample FORMAT OUTPUT RATE NO_NATIVE DURATION PROCESSES THREADS CLOCK -a EVERY
 *                 KEEP_FILES KEEP_BYTES ALL_PROCESSES [KEY=VALUE...]
 *   perfpy-sample --check          (perfpy doctor: can it sample here?)
 *   perfpy-sample --tables         (the compiled structure offsets, as JSON
 *                                   lines: the tests hold them against headers)
 *
 * It starts PROGRAM, or follows the running process PID (attached: until
 * it ends, DURATION seconds pass (0: none) or Ctrl-C), with nothing
 * installed in it (no module, no environment, no signal, no write; a
 * program it starts is held at its exec until its _PyRuntime is found,
 * sample_hold.h),
 * samples it with the BPF collector (collect.c) at RATE Hz, and for each
 * sample names the Python frames from outside (pycode.c: each code object
 * read once), with the structure offsets of the CPython each process runs
 * (pylayout.c: its own _Py_DebugOffsets on 3.13+, the tables compiled into
 * perfpy for 3.8-3.12; no perfpy module of its version is needed), unwinds
 * the native stack (unwind.c), names kernel frames
 * (kallsyms.c), splices them (splice.c) and folds the result (fold.c, a
 * root per process as PROCESSES says, one per thread if THREADS is 1) into
 * the profile that FORMAT's writer
 * writes to OUTPUT; then the summary, and PROGRAM's exit status as its own.
 * Frames carry their executing line (linetable.c: the code object's line
 * table at the frame's instruction).
 *
 * Children are followed: the collector samples every process a sampled
 * one forks. One that execs is sampled for its native frames, and for its
 * Python frames again once its new image shows a _PyRuntime, whichever
 * CPython it is. A process whose CPython perfpy does not read (a version it
 * does not know, debug offsets that do not match their version, a
 * free-threaded build) is sampled for its native frames, and one line on
 * stderr says why.
 *
 * -a, the whole host (record -a): every process that runs a CPython now
 * or execs one later (sample_host.c says which), sampled by an event per
 * CPU, each under a root that names its command line, labelled for a
 * profile store (pid, thread, service, container, KEY=VALUE); with
 * ALL_PROCESSES 1 the other processes too. Until Ctrl-C, SIGTERM or
 * DURATION; with EVERY seconds (0: one profile at the end) OUTPUT is a
 * directory that gets one profile per interval (sample_every.c): each
 * sample folded into the interval its time falls in, a new folder and
 * profile for the next, so memory is that of one interval.
 *
 * CLOCK is "cpu" (samples of CPU time), with ",async" for stacks as
 * asyncio's tasks see them (CPython 3.14+): a sample in a task reads as
 * the chain of tasks awaiting it, each with its coroutines, in place of the
 * event loop that runs it (src/sample/async.bpf.c reads the chain at the
 * sample; pyasync.h draws the graph).
 *
 * CLOCK is "cpu" (samples of CPU time) or "wall" (wall-clock mode: the time
 * each thread spends off the CPU too, each stretch with its stack and the
 * reason's marker, wall.h), with ",gil" for the samples of threads that
 * held the GIL only. In wall-clock mode a sample's period is the time it
 * stands for, in ns: one period of CPU time (1e9 / RATE) on the CPU, its
 * share of a stretch off it.
 */
#include "cli.h"
#include "sample_int.h"
#include "output/output.h"
#include "sample_every.h"
#include "sample_hold.h"
#include "sample_host.h"
#include "top_view.h"
#include "report/fold.h"
#include "report/report.h"
#include "sample/codename.h"
#include "sample/collect.h"
#include "sample/kallsyms.h"
#include "sample/maps.h"
#include "sample/procs.h"
#include "sample/pycode.h"
#include "sample/pylayout.h"
#include "sample/pytables.h"
#include "sample/pyread.h"
#include "sample/splice.h"
#include "sample/unwind.h"
#include "sample/wall.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* what a started program has after SIGINT (-d), then after SIGTERM: record's
 * --grace default (perfpy-sample is not told --grace) */
#define RECORD_GRACE 5.0

static proc *find_proc(state *st, pid_t pid)
{
    proc *p;

    for (size_t i = 0; i < st->nprocs; i++)
        if (st->procs[i].pid == pid)
            return &st->procs[i];
    if (st->nprocs == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 16;
        proc *more = realloc(st->procs, cap * sizeof(*more));

        if (!more)
            return NULL;
        st->procs = more;
        st->cap = cap;
    }
    p = &st->procs[st->nprocs++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    return p;
}

static void find_runtime(state *st, proc *p);
static void look(state *st, proc *p);
static void place(state *st, proc *p);
static void rotate(state *st, uint64_t t);
static void top_tick(state *st);
static void top_end(state *st);
static uint64_t mono_ns(void);

/* -a: a process that runs a CPython, counted once (the summary's "seen").
 * A CPython's forked child is one more only if it lives as one: counted
 * at its first sample or as it ends, not at its fork (a host's Python
 * runners fork thousands of children a minute, most to exec at once). */
static void count_seen(state *st, proc *p)
{
    if (st->host && p->python == 1 && !p->counted) {
        p->counted = 1;
        st->seen++;
    }
}

/* -a: whether p runs a CPython (kept as a target, its command line read)
 * or not (no longer a target: left out, unless every process is asked).
 * At its exec (exec 1) its maps hold no dlopen'd libpython yet: not read. */
static void host_decide(state *st, proc *p, int exec)
{
    int python = pp_host_is_python(p->pid, !exec);

    p->python = python > 0 ? python : 0;
    if (p->python || st->host_all)
        pp_host_command(p->pid, p->command, sizeof(p->command), p->service,
                        sizeof(p->service));
    if (p->python)
        pp_collect_set(st->c, p->pid, NULL, 0);   /* its _PyRuntime looked for next */
    else
        pp_collect_remove(st->c, p->pid);
    count_seen(st, p);
}

/* The folder of this interval told of p once: its container, its command. */
static void tell(state *st, proc *p)
{
    if (!p->placed)
        place(st, p);
    p->told = st->gen;
    if (p->root[0])
        pp_fold_process_container(st->fold, (int)p->pid, p->ns_pid, p->root);
    if (p->command[0])
        pp_fold_process_command(st->fold, (int)p->pid, p->command, p->service);
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
        look(st, p);
    /* a forked child gone before its samples are read (its last wait is
     * captured as it ends): its code objects were its parent's, and the
     * identity check keeps a name that is not the object's from it */
    pid_t from = p->forked_from && pp__sample_gone(p->pid) ? p->forked_from : p->pid;

    for (unsigned i = 0; i < s->npy_all && i < PP_BPF_MAX_PY; i++) {
        const struct pp_bpf_pyframe *f = &s->py[i];
        pp_pycode_id id = {f->code, {f->name, f->file, f->table, f->name_id, 0,
                                     (int32_t)f->firstlineno}};
        const pp_py_offsets *o = &p->layout.off;
        const pp_pycode_entry *e = !p->runtime ? NULL :
            pp_pycode_get(st->codes, from, o, p->have_types ? &p->types : NULL, &id);
        int named = e && e->qualname[0];
        uint64_t start = named ? pp_pyread_code_start(from, o, f->code, f->tlbc) : 0;

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
    pp_pyobj r = {p->pid, &p->layout.off, p->as.names};
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
    pp_script_sample out;

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

/* s spliced, then folded: on the CPU with its period as its weight, or off
 * it in two parts: block ns with its reason, runq ns waiting for a CPU.
 * Every record is stamped with the end of the time it stands for, as a
 * CPU sample is (its period ends as it is taken): a stretch off the CPU
 * comes stamped with its start, so its blocked part ends block ns later
 * and its wait for a CPU runq ns after that (a timeline's markers and
 * samples are placed by it, and an interval of --every takes a record by
 * its end). */
void pp__sample_fold_record(state *st, const struct pp_bpf_sample *s, uint64_t block,
                            uint64_t runq)
{
    static pp_pyframe py[PP_BPF_MAX_PY];
    static pp_native_frame nat[512], kern[PP_BPF_MAX_KERNEL];
    size_t known = st->nprocs;
    proc *p = find_proc(st, (pid_t)s->pid);
    pp_sample ps;
    pp_script_sample out;
    size_t nn = 0, nk = 0, skip = 0;
    unsigned flags = 0;
    int reason, early;
    /* wall-clock mode's samples on the CPU weigh the thread's CPU time
     * since its last (wall.bpf.c); 0: a period */
    uint64_t on_cpu = s->kind == PP_BPF_ON_CPU ? s->block_ns : 0;

    if (!p) {
        st->failed++;
        return;
    }
    if (st->host && st->nprocs > known)
        host_decide(st, p, 0);          /* not seen before: sampled as any process */
    if (st->host && p->python != 1 && !st->host_all) {
        st->left_out++;
        return;
    }
    st->taken++;
    if (st->host && !p->sampled) {
        p->sampled = 1;
        st->sampled++;
        count_seen(st, p);
    }
    if (st->every && !st->ending && s->time_ns + block + runq >= st->next_ns &&
        (!st->stop_ns || st->next_ns < st->stop_ns))
        rotate(st, s->time_ns + block + runq);  /* (past -d's end: the last interval's) */
    if (p->told != st->gen)
        tell(st, p);
    /* its GIL's size from its own CPython's layout (s->gil is 0 until the
     * collector knows that) */
    reason = s->kind == PP_BPF_ON_CPU ? PP_WAIT_NONE
             : pp_wall_reason_of(s, p->runtime && p->layout.off.gil_size > 0
                                    ? (uint64_t)p->layout.off.gil_size : 0);
    memset(&ps, 0, sizeof(ps));
    ps.pid = (int32_t)s->pid;
    ps.tid = (int32_t)s->tid;
    ps.time_ns = s->time_ns;
    ps.period = st->period_ns;
    memcpy(ps.comm, s->comm, sizeof(ps.comm));
    ps.have_user = (s->flags & PP_BPF_USER) != 0;
    memcpy(ps.regs, s->regs, sizeof(ps.regs));
    ps.stack = s->stack + s->stack_skip;
    ps.stack_len = s->stack_len > s->stack_skip ? s->stack_len - s->stack_skip : 0;
    /* sampled before the BPF side had its _PyRuntime: no Python frame
     * could be read */
    early = ps.have_user && !(s->flags & PP_BPF_PY_THREAD) &&
            (!p->runtime || s->time_ns < p->set_ns) &&
            !(p->pid == st->pid && s->time_ns < st->held_ns);   /* ld.so's, held */
    python_frames(st, p, s, py);
    ps.py = py;
    ps.npy = s->npy < PP_BPF_MAX_PY ? s->npy : PP_BPF_MAX_PY;
    ps.py_truncated = (s->flags & PP_BPF_PY_TRUNCATED) != 0;
    ps.py_whole = (s->flags & PP_BPF_PY_THREAD) && !ps.py_truncated;
    if (st->async)
        task_tail(st, p, s, py, &ps);
    if (st->have_ks)
        nk = pp_kallsyms_frames(&st->ks, (const uint64_t *)s->kips, s->nkernel, kern, PP_BPF_MAX_KERNEL);
    if (s->kind != PP_BPF_ON_CPU)
        while (skip < nk && pp__sample_tracing_frame(kern[skip].sym))
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
    if (st->wall)
        out.event = "wall-clock", out.event_len = 10;
    out.weight_ns = block ? block : on_cpu;    /* 0: its period */
    out.wait = reason;
    out.time_ns = s->time_ns + block;
    if ((reason == PP_WAIT_NONE || block) && pp_fold_sample(st->fold, &out) != 0)
        st->failed++;
    out.weight_ns = runq;
    out.wait = PP_WAIT_CPU;
    out.time_ns = s->time_ns + block + runq;
    if (runq && pp_fold_sample(st->fold, &out) != 0)
        st->failed++;
    /* the tasks waiting meanwhile waited as long as the thread's record
     * stands for: its period on the CPU, its stretch off it */
    if (st->async && s->nwaiting)
        fold_waiting(st, p, s, py, s->kind == PP_BPF_ON_CPU ? (on_cpu ? on_cpu : st->period_ns)
                                                            : block + runq);
    if (st->threads)
        pp__sample_name_thread(st, p, s);
}

static void on_sample(const struct pp_bpf_sample *s, void *ctx)
{
    state *st = ctx;

    if (st->gil_only && !(s->flags & PP_BPF_GIL_HELD)) {
        const proc *p = find_proc(st, (pid_t)s->pid);

        if (!p || !p->no_gil) {
            st->not_holding++;
            return;
        }
    }
    if (s->kind == PP_BPF_OFF_OPEN) {
        if (pp_wall_open_keep(st->open, s) != 0)
            st->failed++;
    } else if (s->kind == PP_BPF_OFF_CPU) {
        pp__sample_fold_record(st, s, s->block_ns, s->runq_ns);
    } else {
        pp__sample_fold_record(st, s, 0, 0);
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
        pp__sample_wall_end(st, (const struct pp_bpf_wall_end *)e);
        break;
    case PP_BPF_EV_FORK:
        parent = find_proc(st, (pid_t)e->ppid);
        if (parent && (p = find_proc(st, (pid_t)e->pid))) {
            parent = find_proc(st, (pid_t)e->ppid);    /* the table may have moved */
            *p = *parent;                              /* the same memory */
            p->names = NULL;                           /* its own, read anew */
            p->nnames = 0;
            p->names_ns = 0;
            p->pid = (pid_t)e->pid;
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
        p = find_proc(st, (pid_t)e->pid);
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
            pp__sample_proc_free(p);
            memset(p, 0, sizeof(*p));                  /* its _PyRuntime is looked for */
            p->pid = (pid_t)e->pid;
            p->coded = kept;
            if (st->host)
                host_decide(st, p, 1);
        } else {
            count_seen(st, p);                         /* a forked child that lived as one */
            pp__sample_proc_free(p);
            *p = st->procs[--st->nprocs];
        }
        break;
    }
}

/* The BPF program's copy of a code object it sampled first (codename.h):
 * named from it, before the sample that needs it. A process with no
 * layout here yet is left to be read as before. */
static void on_code(const struct pp_bpf_code *r, size_t len, void *ctx)
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
            look(st, p);
        if (p->runtime)
            pp_codename_take(st->codes, r, len, &p->layout.off, p->have_types ? &p->types : NULL);
        break;
    }
}

/* A process whose Python is not read: why, on stderr, once per reason. */
#define HOST_LISTED 20              /* -a: refused processes listed, then counted */

static void say_refused(state *st, const proc *p, const char *file, const char *why)
{
    st->refused++;
    if (st->host ? st->refused > HOST_LISTED : strcmp(why, st->refused_why) == 0)
        return;
    snprintf(st->refused_why, sizeof(st->refused_why), "%s", why);
    fprintf(stderr, "perfpy: the process %d (%s): %s; its Python frames are not read "
            "(its native frames are)\n", (int)p->pid, st->host && p->command[0] ?
            p->command : file, why);
    if (st->host && st->refused == HOST_LISTED)
        fprintf(stderr, "perfpy: more processes whose Python is not read are counted at "
                "the end, not listed\n");
}

/* Its pid in its own PID namespace (the last of /proc/PID/status's NSpid),
 * 0 when it is in ours. */
static int ns_pid_of(pid_t pid)
{
    char path[64], line[256];
    FILE *f;
    int ns = 0;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "NSpid:", 6) == 0) {
            char *last = strrchr(line, '\t');
            int n = last ? atoi(last + 1) : 0;

            ns = n != (int)pid ? n : 0;
            break;
        }
    fclose(f);
    return ns;
}

/* A process in a container (another root, another PID namespace) gets a
 * root of its container in the profile, named by its root directory as we
 * see it, or by its mount namespace when that is not reachable from ours. */
static void place(state *st, proc *p)
{
    char link[64], root[256];
    ssize_t n;
    int ns = ns_pid_of(p->pid);

    (void)st;
    p->placed = 1;
    if (!ns && !pp_maps_other_root(p->pid))
        return;
    snprintf(link, sizeof(link), "/proc/%d/root", (int)p->pid);
    n = readlink(link, root, sizeof(root) - 1);
    if (n <= 1) {
        snprintf(link, sizeof(link), "/proc/%d/ns/mnt", (int)p->pid);
        n = readlink(link, root, sizeof(root) - 1);
    }
    if (n <= 0)
        return;
    root[n] = '\0';
    p->ns_pid = ns;
    snprintf(p->root, sizeof(p->root), "%s", root);
    p->told = 0;                    /* the folder is told at its next sample */
}

/* Whether pid's program is named like a Python (a shell or a launcher that
 * starts one is recorded too: its own lack of a _PyRuntime is no news). */
static int runs_python(pid_t pid)
{
    char link[64], exe[4096];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
    if ((n = readlink(link, exe, sizeof(exe) - 1)) <= 0)
        return 1;
    exe[n] = '\0';
    return strstr(strrchr(exe, '/') ? strrchr(exe, '/') : exe, "python") != NULL;
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* --async: where p's CPython keeps its tasks (3.14+: _asyncio's debug
 * offsets, in its files once asyncio is imported: looked for whenever its
 * mappings change), told to the BPF program. */
static void find_async_in(state *st, proc *p, const pp_maps *maps)
{
    char why[512], v[32];
    pp_pyobj r;
    int rc;

    p->as.maps_n = maps->n;
    if (p->layout.version_hex < 0x030e0000) {
        rc = -ENOTSUP;
        snprintf(why, sizeof(why), "it runs CPython %s, whose tasks are not read (asyncio's "
                 "task graph is published from 3.14 on)",
                 pp_py_version_text(p->layout.version_hex, v, sizeof(v)));
    } else if ((rc = pp_pyasync_offsets_find(p->pid, maps, &p->as.a, why, sizeof(why))) == 0 &&
               ((rc = pp_pyasync_types_find(maps, &p->as.ty)) != 0 ||
                (rc = pp_pyobj_open(&r, p->pid, &p->layout.off, maps)) != 0)) {
        snprintf(why, sizeof(why), "CPython's types are not in the symbols it maps");
    } else if (rc == 0) {
        p->as.names = r.t;
        rc = pp_collect_set_async(st->c, p->pid, &p->layout.off, &p->as.a, &p->as.ty,
                                  st->wall);
        snprintf(why, sizeof(why), "the BPF program could not be told: %s", strerror(-rc));
    }
    if (rc == -ENOENT)
        return;                      /* asyncio not imported yet */
    p->as.state = rc == 0 ? 1 : -1;
    if (rc && !st->async_said++)
        fprintf(stderr, "perfpy: --async: the process %d: %s; its stacks are its threads'\n",
                (int)p->pid, why);
}

/* The same, looked for again whenever its mappings change (asyncio
 * imported after perfpy began), every 10th tick. */
static void find_async(state *st, proc *p)
{
    pp_maps maps = {0};

    if (!st->async || p->as.state || p->as.ticks++ % 10 || pp_maps_read(p->pid, &maps) != 0)
        return;
    if (maps.n != p->as.maps_n)
        find_async_in(st, p, &maps);
    pp_maps_free(&maps);
}

/* A free-threaded CPython has no GIL: with --idle or --gil that is said
 * (once), rather than a profile without a GIL wait or, with --gil, without
 * its samples. */
static void no_gil(state *st, proc *p)
{
    p->no_gil = 1;
    if ((st->wall || st->gil_only) && !st->said_no_gil) {
        st->said_no_gil = 1;
        fprintf(stderr, "perfpy: the process %d runs a free-threaded CPython: it has no GIL, "
                "so none of its waits is one%s\n", (int)p->pid,
                st->gil_only ? ", and --gil keeps all of its samples" : "");
    }
}

/* p's _PyRuntime, once its image (and its libpython) is mapped, and the
 * layout of the CPython it runs. */
/* Tests only: PERFPY_SAMPLE_LOOK_DELAY_MS holds the looks for a _PyRuntime
 * back that long from the first, as a loaded machine does when this
 * process waits for a CPU while the program runs on another. */
static int look_delayed(void)
{
    static double until = -1;
    const char *ms;

    if (until < 0)
        until = (ms = getenv("PERFPY_SAMPLE_LOOK_DELAY_MS")) ? now_s() + atof(ms) / 1000 : 0;
    return until > 0 && now_s() < until;
}

/* Looks give up 2 s after the first: the start of a process that never
 * shows a _PyRuntime (gzip, a shell). They are 20 ms apart: 1 ms apart for
 * a process's first 100 ms cost perfpy-sample 5 ms of CPU per exec'd
 * child (20 children of a 3 s program: 0.3 s against 0.2) and cut no
 * fewer stacks of a child under load (a starved perfpy-sample looks late
 * either way; the program it starts is held instead, sample_hold.h). */
#define LOOK_FOR 2.0

/* One search of p's maps for its _PyRuntime, and its layout once found. */
static void look(state *st, proc *p)
{
    pp_maps maps = {0};
    char file[4096], why[512];
    uint64_t runtime, looked = mono_ns();
    const pp_map *m;

    if (pp_maps_read(p->pid, &maps) != 0)
        return;
    /* ld.so maps a library's text before its data, where _PyRuntime lies:
     * until then its address reads other bytes of the file (a 3.13+
     * layout would be refused for good) */
    if (pp_py_symbol_address(&maps, "_PyRuntime", &runtime, file, sizeof(file)) == 0 &&
        (m = pp_maps_find(&maps, runtime)) && (m->prot & PP_MAP_W)) {
        int rc = pp_pylayout_find(p->pid, &maps, runtime, file, st->layout_flags, &p->layout,
                                  why, sizeof(why));

        if (p->layout.free_threaded)
            no_gil(st, p);
        if (rc != 0) {
            if (kill(p->pid, 0) == 0 || errno == EPERM) {     /* not just gone */
                p->refused = 1;
                say_refused(st, p, file, why);
            }
        } else {
            p->runtime = runtime;
            p->coded = 1;
            p->found_ns = looked;
            p->have_types = pp_pyread_types_find(&maps, &p->types) == 0;
            pp_collect_set(st->c, p->pid, &p->layout.off, runtime);
            p->set_ns = mono_ns();
            st->before_python += p->early;
            if (st->async)
                find_async_in(st, p, &maps);
        }
    }
    pp_maps_free(&maps);
}

static void find_runtime(state *st, proc *p)
{
    double now;

    if (p->runtime)
        find_async(st, p);

    /* each look opens the ELF files the process maps: while its image and
     * libpython load (the first milliseconds), not for the whole run of a
     * process that never shows a _PyRuntime (gzip, a shell) */
    if (st->host && !p->python)
        return;                     /* -a: not a target (placed if it is told) */
    if (!p->placed)
        place(st, p);
    if (p->runtime || p->refused || p->gave_up)
        return;
    if (look_delayed())
        return;
    now = now_s();
    if (!p->first_look)
        p->first_look = now;
    /* the ring wakes us at every exec (-a: of the host): 20 ms apart
     * (-a: 100 looks) */
    if (now < p->next_look)
        return;
    p->next_look = now + 0.02;
    if (st->host ? ++p->looks == 100 : now - p->first_look >= LOOK_FOR) {
        p->gave_up = 1;             /* this look is the last */
        if ((p->pid == st->pid || st->host) && runs_python(p->pid)) {
            if (st->host)
                say_refused(st, p, p->command, "no _PyRuntime found in it (not a CPython "
                            "3.8+, or one built without it)");
            else
                fprintf(stderr, "perfpy: no _PyRuntime in the process %d after 2 s: its "
                        "Python frames are not read (native frames only)\n", (int)p->pid);
        }
    }
    look(st, p);
}

/* -a: a program that links libpython (python 2) runs Python once its
 * main interpreter exists; one that never makes it (perf, gdb) is left
 * out after as many looks as a _PyRuntime gets. */
static void confirm(state *st, proc *p)
{
    uint64_t head = 0;

    if (p->runtime && pp_pyread_peek(p->pid, p->runtime +
                                     (uint64_t)p->layout.off.runtime_interpreters_head,
                                     &head, sizeof(head)) == 0 && head) {
        p->python = 1;
        count_seen(st, p);
    } else if (++p->waits >= 100) {
        p->python = 0;
        pp_collect_remove(st->c, p->pid);
    }
}

static void find_runtimes(state *st)
{
    for (size_t i = 0; i < st->nprocs; i++) {
        proc *p = &st->procs[i];

        find_runtime(st, p);
        if (p->python == 2)
            confirm(st, p);
    }
}

static int take(state *st, int timeout_ms)
{
    int n = pp_collect_poll(st->c, timeout_ms, on_sample, on_event, st);

    if (st->threads)
        pp__sample_read_names(st);
    return n;
}

static pid_t start_program(char **argv, int *go)
{
    int p[2];
    pid_t pid;
    char c;

    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    if ((pid = fork()) == 0) {
        /* started once the collector follows it: its first sample counts */
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
            _exit(127);
        signal(SIGINT, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "perfpy: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(p[0]);
    *go = p[1];
    return pid;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}


/* Attached: until the process ends, the duration passes, or Ctrl-C.
 * The duration's end (CLOCK_MONOTONIC s), or 0. */
static double follow(state *st, double duration)
{
    double end = duration > 0 ? now_s() + duration : 0;

    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    find_runtimes(st);
    while (!interrupted && (!end || now_s() < end) &&
           (kill(st->pid, 0) == 0 || errno == EPERM)) {
        take(st, 20);
        find_runtimes(st);
        if (st->top_mode)
            top_tick(st);
    }
    st->stopped = interrupted || (end && now_s() >= end);
    /* its children stop being sampled with it: the map is freed on close */
    return end;
}

/* What the profile does not say by itself: children, code objects gone
 * before they were named, samples lost or not folded. */
static void notes(const state *st, pp_collector *c)
{
    pp_pycode_stats cs = pp_pycode_stats_of(st->codes);

    if (st->children && !st->host)
        fprintf(stderr, "perfpy: followed %u child process%s of the process %d\n",
                st->children, st->children == 1 ? "" : "es", (int)st->pid);
    if (st->refused > 1)
        fprintf(stderr, "perfpy: %u processes ran a Python perfpy does not read (the "
                "reasons are above): their native frames are in the profile, their Python "
                "frames are not\n", st->refused);
    if (st->left_out)
        fprintf(stderr, "perfpy: %llu samples of processes that run no CPython were left "
                "out (--all-processes keeps them)\n", (unsigned long long)st->left_out);
    if (st->host)
        fprintf(stderr, "perfpy: %llu CPython processes seen, %llu of them sampled (a process "
                "that used less CPU than a period may get no sample)\n",
                (unsigned long long)st->seen, (unsigned long long)st->sampled);
    if (cs.freed)
        fprintf(stderr, "perfpy: %llu code objects were freed before they could be named: "
                "their frames are [unknown] (%llu named; %llu copies of names did not fit "
                "in their ring)\n", (unsigned long long)cs.freed,
                (unsigned long long)cs.named, (unsigned long long)pp_collect_code_lost(c));
    if (st->before_python)
        fprintf(stderr, "perfpy: %llu samples were taken before their process's Python was "
                "found (its _PyRuntime, looked for every 20 ms from its exec on), deeper "
                "than the stack copied: [truncated], with native frames only\n",
                (unsigned long long)st->before_python);
    if (pp_collect_lost(c))
        fprintf(stderr, "perfpy: %llu samples lost (the ring buffer was full)\n",
                (unsigned long long)pp_collect_lost(c));
    if (st->wall)
        pp__sample_wall_notes(st, c);
    if (st->gil_only)
        fprintf(stderr, "perfpy: --gil: %llu samples of threads that did not hold the GIL "
                "were left out\n", (unsigned long long)st->not_holding);
    if (st->failed)
        fprintf(stderr, "perfpy: %llu samples could not be folded (out of memory)\n",
                (unsigned long long)st->failed);
}

/* The program's exit status as perfpy's own (0 when attached). */
static int program_status(const state *st, int status)
{
    if (st->attached || st->stopped)
        return 0;                  /* as record's other modes: -d ended it */
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : PP_EXIT_FAIL;
}

/* The profile of [start_ns, end_ns) (sample clock) made ready to write:
 * the folder closed, its span in Unix time, its labels. */
static void seal(state *st, pp_profile *prof, uint64_t start_ns, uint64_t end_ns)
{
    pp_fold_close(st->fold);
    st->fold = NULL;
    prof->time_unix_ns = (uint64_t)((int64_t)start_ns + st->unix_offset_ns);
    prof->duration_ns = end_ns > start_ns ? end_ns - start_ns : 0;
    prof->labelled = st->host || st->nlabels;
    for (int i = 0; i < st->nlabels; i++) {
        char *eq = strchr(st->labels[i], '=');

        if (eq) {
            *eq = '\0';
            pp_profile_label(prof, st->labels[i], eq + 1);
            *eq = '=';
        }
    }
}

/* A new profile and folder for samples from now on; 0 or -ENOMEM. */
static int begin(state *st)
{
    if (!(st->prof = calloc(1, sizeof(*st->prof))) || pp_profile_init(st->prof) != 0 ||
        pp_fold_open(&st->fold, st->prof, &st->fo) != 0)
        return -ENOMEM;
    st->prof->period_ns = st->period_ns;
    st->prof->exec_lines = 1;       /* its Python frames' lines: the executing ones */
    if (st->wall)
        st->prof->value = PP_VALUE_WALL;   /* samples weigh the time they stand for */
    st->gen++;                      /* every process is told to it again */
    return 0;
}

/* --every: the interval ended (a sample at t, or the clock, is past it):
 * its profile goes to be written, the interval t falls in begins (those
 * between, without a sample, make no file). */
static void rotate(state *st, uint64_t t)
{
    pp_profile *done = st->prof;

    seal(st, done, st->start_ns, st->next_ns);
    st->prof = NULL;
    pp_every_put(st->every, done);
    while (t >= st->next_ns) {
        st->start_ns = st->next_ns;
        st->next_ns += st->every_ns;
    }
    if (begin(st) != 0) {
        fprintf(stderr, "perfpy: out of memory for the next interval\n");
        exit(PP_EXIT_FAIL);
    }
}

/* perfpy top --idle: the waits still going on end with the interval, and
 * each thread still blocked is captured again for the next (the task
 * iterator's two passes, as at the recording's end and start), so that a
 * thread blocked for longer than an interval shows in each. */
static void top_cut_waits(state *st)
{
    for (size_t i = 0; i < st->nprocs; i++)
        if (pp_collect_threads(st->c, st->procs[i].pid, 1) == 0)
            pp_collect_threads(st->c, st->procs[i].pid, 0);
    take(st, 0);
}

/* perfpy top: the view opened once the program is followed (what went
 * wrong before is said on the normal screen), its keys read, and each
 * interval shown once it is over, the next begun. */
static void top_tick(state *st)
{
    uint64_t now = mono_ns(), lost;
    pp_top_counts c = {0, 0, 0, 0};

    if (!st->top && pp_top_open(&st->top, st->top_title, st->top_how, st->top_rows) != 0) {
        fprintf(stderr, "perfpy: out of memory\n");
        exit(PP_EXIT_FAIL);
    }
    if (pp_top_keys(st->top) == PP_TOP_QUIT)
        interrupted = 1;
    if (now < st->next_ns)
        return;
    if (st->wall)
        top_cut_waits(st);
    seal(st, st->prof, st->start_ns, now);
    lost = pp_collect_lost(st->c);
    c.seconds = (double)(now - st->start_ns) / 1e9;
    c.lost = lost - st->top_lost;
    st->top_lost = lost;
    for (size_t i = 0; i < st->nprocs; i++) {
        unsigned n = pp_top_threads_of(st->procs[i].pid);

        c.threads += n;
        c.processes += n > 0;
    }
    pp_top_show(st->top, st->prof, &c);
    pp_profile_free(st->prof);
    free(st->prof);
    st->prof = NULL;
    st->start_ns = now;
    while (st->next_ns <= now)      /* on the grid: a late wake-up does not drift */
        st->next_ns += st->every_ns;
    if (begin(st) != 0) {
        pp_top_close(st->top);
        fprintf(stderr, "perfpy: out of memory for the next interval\n");
        exit(PP_EXIT_FAIL);
    }
}

/* The terminal as it was, before anything more is said on it. */
static void top_end(state *st)
{
    pp_top_close(st->top);
    st->top = NULL;
}

static double cpu_seconds(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* --every's end: the last interval written, what became of them said. */
static int finish_every(state *st, const char *dir)
{
    pp_every_stats es;
    uint64_t end = st->t0_ns + (uint64_t)(st->seconds * 1e9);

    seal(st, st->prof, st->start_ns, end > st->next_ns ? st->next_ns : end);
    pp_every_put(st->every, st->prof);
    st->prof = NULL;
    es = pp_every_close(st->every);
    st->every = NULL;
    fprintf(stderr, "perfpy: recorded for %.1f s: %llu samples taken, %llu profiles of %llu "
            "samples written to %s", st->seconds, (unsigned long long)st->taken,
            (unsigned long long)es.written, (unsigned long long)es.samples, dir);
    if (es.removed)
        fprintf(stderr, ", %llu older ones removed (--keep)", (unsigned long long)es.removed);
    fprintf(stderr, "; perfpy's CPU %.2f s (%.2f%% of one core)\n", cpu_seconds(),
            st->seconds > 0 ? 100 * cpu_seconds() / st->seconds : 0);
    if (es.dropped)
        fprintf(stderr, "perfpy: %llu intervals (%llu samples) could not be written and "
                "were dropped\n", (unsigned long long)es.dropped,
                (unsigned long long)es.dropped_samples);
    return es.dropped || !es.written ? PP_EXIT_FAIL : 0;
}

static int finish(state *st, const char *format, const char *output, int status)
{
    pp_report_result rr;
    pp_error e;
    const pp_format *f = pp_format_find(format);
    pp_write_opts wo = {NULL};
    pp_profile *prof = st->prof;
    int rc;

    if (st->have_ks)
        pp_kallsyms_free(&st->ks);
    if (st->every)
        return finish_every(st, output);
    if (st->top_mode) {             /* shown as it went: nothing to write */
        pp_fold_close(st->fold);    /* the interval under way */
        st->fold = NULL;
        pp_profile_free(prof);
        free(prof);
        return program_status(st, status);
    }
    seal(st, prof, st->start_ns, st->start_ns + (uint64_t)(st->seconds * 1e9));
    memset(&rr, 0, sizeof(rr));
    pp__record_say_end(st->stopped, st->seconds, st->attached ? 0 : status);
    if (prof->samples == 0) {     /* nothing to write: said so, not an empty profile */
        if (st->host)
            fprintf(stderr, "perfpy: no CPython process was sampled in %.1f s: nothing "
                    "to write\n", st->seconds);
        else
            pp__record_say_no_samples(st->attached ? (long)st->pid : 0, st->seconds);
        pp_profile_free(prof);
        free(prof);
        rc = program_status(st, status);
        return rc ? rc : PP_EXIT_FAIL;
    }
    if (!f || pp_output_write(prof, f, output, &wo, &e) != 0) {
        fprintf(stderr, "perfpy: cannot write %s: %s\n", output, f ? e.message : "unknown format");
        pp_profile_free(prof);
        free(prof);
        return PP_EXIT_FAIL;
    }
    rr.profile = *prof;
    rr.sample_mode = 1;
    rr.seconds = now_s() - (st->t0 + st->seconds);
    rr.own_cpu_s = cpu_seconds();
    snprintf(rr.output, sizeof(rr.output), "%s", output);
    pp_summary_print(stderr, &rr, 10);
    pp_profile_free(prof);
    free(prof);
    return program_status(st, status);
}

/* Follows the running process pid (see follow). */
static int attach(state *st, pid_t pid, long rate, double duration)
{
    pp_proc_info tree[256];
    double end;
    long n;
    int rc;

    st->pid = pid;
    st->attached = 1;
    find_proc(st, pid);
    if ((rc = pp_collect_add(st->c, pid, NULL, 0)) != 0) {
        fprintf(stderr, "perfpy: cannot sample the process %d: %s\n", (int)pid,
                rc == -ENOENT ? "no such process" : strerror(-rc));
        return PP_EXIT_FAIL;
    }
    /* its children already running (a pool's workers): the fork
     * tracepoint follows only those it starts from now on */
    if ((n = pp_procs_tree(pid, tree, sizeof(tree) / sizeof(tree[0]))) > 1)
        for (long i = 1; i < n; i++) {
            find_proc(st, tree[i].pid);
            if (pp_collect_add(st->c, tree[i].pid, NULL, 0) == 0)
                st->children++;
        }
    if (st->wall) {
        find_runtimes(st);         /* their Python frames, before the iterator reads them */
        for (size_t i = 0; i < st->nprocs; i++)
            if ((rc = pp_collect_threads(st->c, st->procs[i].pid, 0)) != 0)
                fprintf(stderr, "perfpy: the threads of the process %d that were waiting "
                        "when perfpy attached could not be read (%s): their time off the "
                        "CPU counts from their next wake-up\n", (int)st->procs[i].pid,
                        strerror(-rc));
    }
    if (!st->top_mode)
        fprintf(stderr, "perfpy: recording the process %d in sample mode (%ld Hz, BPF%s; "
                "nothing installed in it); Ctrl-C stops\n", (int)pid, rate,
                st->wall ? ", wall clock" : "");
    end = follow(st, duration);
    if (st->wall) {                /* what is still off the CPU ends now */
        /* or with the duration, if the last poll took this process past
         * it (a loaded machine: polls of 0.3-0.6 s seen): -d 3 is 3 s of
         * each wait */
        if (end > 0)
            pp_collect_end_at(st->c, (uint64_t)(end * 1e9));
        for (size_t i = 0; i < st->nprocs; i++)
            pp_collect_threads(st->c, st->procs[i].pid, 1);
    }
    return 0;
}

/* The held program's look at each of its stops: its maps searched, not
 * held back as the other looks may be (PERFPY_SAMPLE_LOOK_DELAY_MS). The
 * ring is not read: the program waits for this, and its first samples'
 * unwinding opens its files (5 ms for 3.8); its exec's event, read later,
 * keeps what was found after it (on_event). */
static int hold_look(void *ctx)
{
    state *st = ctx;
    proc *p;

    if (!(p = find_proc(st, st->pid)))
        return -1;
    if (!p->runtime && !p->refused)
        look(st, p);
    return p->runtime ? 1 : p->refused ? -1 : 0;
}

/* The program running between two execs of its hold (env), or to its
 * entry point: recorded, its children looked for (it is looked at in its
 * next stop: a first look at a new image opens its files, milliseconds
 * the program would wait stopped). */
static void hold_idle(void *ctx)
{
    state *st = ctx;

    take(st, 0);
    for (size_t i = 0; i < st->nprocs; i++) {
        proc *p = &st->procs[i];

        if (p->pid != st->pid)
            find_runtime(st, p);
    }
}

/* The program held at its exec until its _PyRuntime is found, at most
 * HOLD_BOUND seconds (sample_hold.h). 1 when it ended meanwhile. */
#define HOLD_BOUND 1.0

static int hold(state *st, int *status)
{
    static const char *const why[] = {"", "found", "not a CPython", "refused", "the bound",
                                      "a signal", "its end", "not found at its entry"};
    pp_hold_stats hs = {0};
    int rc;

    st->held_ns = UINT64_MAX;      /* its samples read meanwhile are ld.so's */
    rc = pp__hold_run(st->pid, HOLD_BOUND, hold_look, hold_idle, st, status, &hs);
    if (getenv("PERFPY_SAMPLE_HOLD_SAY"))        /* tests: what the hold took */
        fprintf(stderr, "perfpy: held %.3f ms (stopped %.3f ms), %u looks, %u images run "
                "through; let go: %s\n", (double)hs.held_ns / 1e6,
                (double)hs.stopped_ns / 1e6, hs.looks, hs.execs, hs.why >= 0 && hs.why <= PP_HOLD_MISSED ? why[hs.why] : "?");
    st->held_ns = mono_ns();
    return rc == 1;
}

/* Starts the program, once the collector follows it, and waits for its end. */
static int run_program(state *st, char **argv, int *status, double duration)
{
    double end = duration > 0 ? now_s() + duration : 0;
    uint64_t started;
    int go, rc, held, sent = 0;

    signal(SIGINT, SIG_IGN);       /* the program gets Ctrl-C; it ends, then we do */
    if ((st->pid = start_program(argv, &go)) < 0) {
        fprintf(stderr, "perfpy: cannot start %s: %s\n", argv[0], strerror(errno));
        return PP_EXIT_FAIL;
    }
    find_proc(st, st->pid);
    if ((rc = pp_collect_add(st->c, st->pid, NULL, 0)) != 0) {
        fprintf(stderr, "perfpy: cannot sample %s: %s\n", argv[0], strerror(-rc));
        kill(st->pid, SIGKILL);
        waitpid(st->pid, status, 0);
        return PP_EXIT_FAIL;
    }
    started = (uint64_t)(now_s() * 1e9);          /* the samples' clock, CLOCK_MONOTONIC */
    pp_fold_marker(st->fold, (int32_t)st->pid, (int32_t)st->pid, PP_MARKER_PROCESS, started,
                   started, "process start");
    held = pp__hold_seize(st->pid) == 0;
    if (write(go, "g", 1) != 1)
        kill(st->pid, SIGKILL);
    close(go);
    if (held && hold(st, status))
        return 0;                  /* it ended before it was let go (exec failed) */
    if (!st->top_mode)
        fprintf(stderr, "perfpy: recording %s in sample mode (BPF%s; nothing installed in "
                "the program)\n", argv[0], st->wall ? ", wall clock" : "");
    for (;;) {
        pid_t w = waitpid(st->pid, status, WNOHANG);

        /* top's q or SIGTERM: the terminal back, then the program ended
         * as -d ends it */
        if (st->top_mode && w == 0 && interrupted && !end) {
            top_end(st);
            end = now_s();
        }

        /* past the duration: SIGINT, as on Ctrl-C, then SIGTERM and
         * SIGKILL RECORD_GRACE seconds apart if it goes on */
        if (w == 0 && end && now_s() >= end + sent * RECORD_GRACE && sent < 3) {
            kill(st->pid, sent == 0 ? SIGINT : sent == 1 ? SIGTERM : SIGKILL);
            st->stopped = 1;
            sent++;
        }
        find_runtimes(st);
        take(st, w == 0 ? 20 : 0);
        if (st->top_mode && w == 0 && !end)
            top_tick(st);
        if (w == st->pid || (w < 0 && errno != EINTR))
            return 0;
    }
}

static int open_all(state *st, long rate)
{
    char why[512];

    if (pp_collect_open(&st->c, (int)rate, st->wall ? PP_COLLECT_WALL : 0, why,
                        sizeof(why)) != 0) {
        if (st->top_mode)
            fprintf(stderr, "perfpy: perfpy top samples in sample mode, which cannot sample "
                    "here (%s): it needs root, or the capabilities CAP_BPF and CAP_PERFMON, "
                    "and a kernel with BPF and BTF\n", why);
        else if (st->host)
            fprintf(stderr, "perfpy: record -a cannot sample here (%s): reading every "
                    "process of the host needs root, or the capabilities CAP_BPF, "
                    "CAP_PERFMON and CAP_SYS_PTRACE, and a kernel with BPF and BTF\n", why);
        else if (st->wall)     /* the trampoline modes record no time off the CPU */
            fprintf(stderr, "perfpy: a wall-clock profile (--idle) cannot be recorded here "
                    "(%s): it needs root, or the capabilities CAP_BPF and CAP_PERFMON, and "
                    "a kernel with BPF and BTF\n", why);
        else
            fprintf(stderr, "perfpy: sample mode cannot sample here (%s): it needs root, or "
                    "the capabilities CAP_BPF and CAP_PERFMON, and a kernel with BPF and "
                    "BTF; the trampoline modes work without them: --mode perf or --mode "
                    "jit\n", why);
        return PP_EXIT_FAIL;
    }
    st->period_ns = rate > 0 ? (uint64_t)(1e9 / (double)rate + 0.5) : 1;
    st->rate = rate;
    if (begin(st) != 0 || pp_unwind_open(&st->u) != 0 || pp_splice_open(&st->sp, NULL) != 0 ||
        pp_pycode_open(&st->codes) != 0 || pp_wall_open_new(&st->open) != 0) {
        fprintf(stderr, "perfpy: out of memory\n");
        return PP_EXIT_FAIL;
    }
    pp_collect_on_code(st->c, on_code, st);
    st->have_ks = pp_kallsyms_load(&st->ks) == 0;
    if (st->have_ks && !pp_kallsyms_usable(&st->ks)) {
        pp_kallsyms_free(&st->ks);      /* addresses hidden: it names nothing */
        st->have_ks = 0;
    }
    return 0;
}

/* ---- -a: the whole host --------------------------------------------------- */

static uint64_t mono_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void drop_proc(state *st, size_t i)
{
    pp_unwind_forget(st->u, (int)st->procs[i].pid);
    if (st->procs[i].coded)
        pp_pycode_forget(st->codes, st->procs[i].pid);
    st->procs[i] = st->procs[--st->nprocs];
}

/* A process running when the recording began: kept if it runs a CPython. */
static void found(pid_t pid, void *ctx)
{
    state *st = ctx;
    size_t known = st->nprocs;
    proc *p = find_proc(st, pid);

    if (!p || st->nprocs == known)
        return;                         /* told of already (it exec'd meanwhile) */
    host_decide(st, p, 0);
    if (!p->python)
        drop_proc(st, st->nprocs - 1);
}

/* What is known of processes that run no CPython (they get no exit event:
 * they are no targets), once they are gone. */
static void sweep(state *st)
{
    for (size_t i = st->nprocs; i-- > 0;)
        if (!st->procs[i].python && kill(st->procs[i].pid, 0) != 0 && errno == ESRCH)
            drop_proc(st, i);
    st->last_sweep = now_s();
}

/* Processes whose native unwinding state is kept (1-3 MB each): a host
 * runs hundreds; those sampled again after others went make it anew. */
#define HOST_UNWOUND 64

/* Until Ctrl-C, SIGTERM or the duration: the processes that run a CPython
 * now, and those that exec one later (the BPF program tells each exec). */
static int host(state *st, unsigned flags, double duration)
{
    double end = duration > 0 ? now_s() + duration : 0;
    int rc;
    size_t n = 0;

    st->stop_ns = duration > 0 ? st->start_ns + (uint64_t)(duration * 1e9) : 0;
    st->attached = 1;
    pp_unwind_limit(st->u, HOST_UNWOUND);
    if ((rc = pp_collect_host(st->c, flags)) != 0) {
        fprintf(stderr, "perfpy: cannot open a cpu-clock event on each CPU: %s\n",
                strerror(-rc));
        return PP_EXIT_FAIL;
    }
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    pp_host_each(found, st);
    for (size_t i = 0; i < st->nprocs; i++)
        n += st->procs[i].python != 0;
    fprintf(stderr, "perfpy: recording every CPython process of the host (%zu running now, "
            "and those that start) in sample mode (%ld Hz per CPU, BPF; nothing installed "
            "in them); Ctrl-C stops\n", n, st->rate);
    while (!interrupted && (!end || now_s() < end)) {
        take(st, 50);
        find_runtimes(st);
        /* an interval ends by the clock too, once its samples are read */
        if (st->every && mono_ns() >= st->next_ns + 50000000ull &&
            (!st->stop_ns || st->next_ns < st->stop_ns))
            rotate(st, mono_ns());
        if (now_s() - st->last_sweep >= 1)
            sweep(st);
        /* what the processes that came and went left free in the heap
         * (their unwinders' ELF data, their code objects' names) given
         * back each minute: without it the heap stays at its highest,
         * and a host's busiest minute sets the memory for the rest of
         * the run */
        if (now_s() - st->last_trim >= 60) {
            malloc_trim(0);
            st->last_trim = now_s();
        }
    }
    st->stopped = 1;
    return 0;
}

/* The ring's size for a host: half a second of samples of every CPU (its
 * samples come without a wake-up and are read every 50 ms), at least 8 MB;
 * a power of two. At the agents' rate a 2-CPU host makes 38 samples a
 * second, 87 KB each: 32 MB (one program's, for 999 Hz) would only add to
 * our memory. */
static const char *host_ring(long rate)
{
    static char buf[32];
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    uint64_t want = (uint64_t)(cpus > 0 ? cpus : 1) * (uint64_t)(rate > 0 ? rate : 1) *
                    sizeof(struct pp_bpf_sample) / 2, bytes = 8u << 20;

    while (bytes < want && bytes < PP_BPF_RING_BYTES)
        bytes <<= 1;
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)bytes);
    return buf;
}

/* -a's arguments: EVERY KEEP_FILES KEEP_BYTES ALL_PROCESSES [KEY=VALUE...]. */
static int host_args(state *st, int argc, char **argv, const char *format, const char *output,
                     long rate, unsigned *flags)
{
    double every = strtod(argv[0], NULL);
    pp_every_opts eo = {.dir = output, .format = pp_format_find(format),
                        .keep_files = strtol(argv[1], NULL, 10),
                        .keep_bytes = strtoull(argv[2], NULL, 10)};
    pp_error e;

    st->host = 1;
    st->host_all = strcmp(argv[3], "1") == 0;
    setenv("PERFPY_SAMPLE_RING_BYTES", host_ring(rate), 0);
    *flags = PP_BPF_HOST_EXEC | (st->host_all ? PP_BPF_HOST_ALL : 0);
    st->labels = argv + 4;
    st->nlabels = argc - 4;
    if (every > 0) {
        if (!eo.format || pp_every_open(&st->every, &eo, &e) != 0) {
            fprintf(stderr, "perfpy: %s\n", eo.format ? e.message : "unknown format");
            return PP_EXIT_FAIL;
        }
        st->every_ns = (uint64_t)(every * 1e9);
    }
    return 0;
}

/* perfpy doctor's question: can sample mode sample here? The BPF program
 * loaded and attached as a recording would (a perf event on a thread,
 * its tracepoints), then closed. */
static int check(void)
{
    pp_collector *c;
    char why[512];

    if (pp_collect_open(&c, 99, 0, why, sizeof(why)) != 0) {
        printf("%s\n", why);
        return PP_EXIT_FAIL;
    }
    pp_collect_close(c);
    printf("the BPF program loads and attaches (privileges, BPF, BTF)\n");
    return 0;
}

/* The compiled tables as JSON lines, one per version and flavour, in the
 * form scripts/gen-pytables --print gives the headers' (the tests compare
 * them field by field). */
static int print_tables(void)
{
    for (size_t i = 0; i < pp_py_ntables; i++) {
        const pp_py_table *t = &pp_py_tables[i];

#define JSON(name, headers, debug) \
        printf(", \"%s\": [%d, %d, %d]", #name, t->off.name, t->debug_at.name, t->debug_zero.name);
        printf("{\"table\": {\"version_hex\": %u, \"free_threaded\": %u, \"debug_size\": %u}",
               t->version_hex, t->free_threaded, t->debug_size);
        PP_PY_FIELDS(JSON)
        printf("}\n");
#undef JSON
    }
    return 0;
}

int main(int argc, char **argv)
{
    state st;
    const char *ft = getenv("PERFPY_FREE_THREADED");
    long rate;
    unsigned flags = 0;
    int rc, status = 0;
    double top_every = 0;
    size_t top_rows = 0;

    /* Blocks of 128 KiB and more are mapped on their own, at a fixed
     * threshold. glibc's own threshold rises to the largest mapped block
     * freed (megabytes, at the start), after which the profile's growing
     * arrays and the sample log's chunks came from the heap, each realloc
     * or shrink leaving a hole the heap kept: 2 minutes of a 50-thread
     * server in wall-clock mode left 9.7 MB free inside a 21 MB heap
     * (mallinfo2), with the threshold fixed 0.1 MB. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    if (argc == 2 && strcmp(argv[1], "--check") == 0)
        return check();
    if (argc > 1 && strcmp(argv[1], "--read") == 0)
        return pp__read_main(argc - 1, argv + 1);      /* read mode: read_main.c */
    if (argc > 1 && strcmp(argv[1], "--dump") == 0)
        return pp__dump_main(argc - 1, argv + 1);      /* perfpy dump: dump_main.c */
    if (argc == 2 && strcmp(argv[1], "--tables") == 0)
        return print_tables();
    if (argc > 4 && strcmp(argv[1], "--top") == 0 && strcmp(argv[4], "--read") == 0)
        return pp__read_top(strtod(argv[2], NULL), strtoul(argv[3], NULL, 10), argc - 4,
                            argv + 4);                                  /* read_main.c */
    if (argc > 3 && strcmp(argv[1], "--top") == 0) {
        /* perfpy top: --top INTERVAL ROWS, then a recording's arguments */
        top_every = strtod(argv[2], NULL);
        top_rows = strtoul(argv[3], NULL, 10);
        argc -= 3;
        argv += 3;
        if (top_every <= 0 || (argc > 9 && strcmp(argv[9], "-a") == 0))
            argc = 0;                   /* refused below */
    }
    if (argc < 11 || (strcmp(argv[9], "--") != 0 && strcmp(argv[9], "-p") != 0 &&
                      (strcmp(argv[9], "-a") != 0 || argc < 14))) {
        fprintf(stderr, "perfpy-sample is run by `perfpy record --mode sample`\n");
        return PP_EXIT_USAGE;
    }
    memset(&st, 0, sizeof(st));
    rate = strtol(argv[3], NULL, 10);
    if (top_every > 0) {
        st.top_mode = 1;
        st.every_ns = (uint64_t)(top_every * 1e9);
        st.top_rows = top_rows;
        pp_top_title(st.top_title, sizeof(st.top_title), argv + 9);
        snprintf(st.top_how, sizeof(st.top_how), "sample mode (BPF, %ld Hz per busy thread, "
                 "%s; nothing installed in the program)", rate,
                 strncmp(argv[8], "wall", 4) == 0 ? "wall clock: time off the CPU too, by "
                 "its reason" : "CPU time");
        signal(SIGTERM, on_interrupt);
        signal(SIGHUP, on_interrupt);
    }
    st.wall = strncmp(argv[8], "wall", 4) == 0;
    st.gil_only = strstr(argv[8], ",gil") != NULL;
    st.fo.no_native = strcmp(argv[4], "1") == 0;
    st.fo.processes = (int)strtol(argv[6], NULL, 10);
    st.fo.threads = strcmp(argv[7], "1") == 0;
    st.async = strstr(argv[8], "async") != NULL;
    st.layout_flags = ft && strcmp(ft, "1") == 0 ? PP_PYLAYOUT_FREE_THREADED : 0;
    if (strcmp(argv[9], "-a") == 0 &&
        (rc = host_args(&st, argc - 10, argv + 10, argv[1], argv[2], rate, &flags)) != 0)
        return rc;
    /* threading's names for the thread roots: one program's (a host's
     * intervals each start a profile of their own) */
    st.threads = st.fo.threads && !st.host;
    if ((rc = open_all(&st, rate)) != 0)
        return rc;
    st.t0 = now_s();
    st.t0_ns = st.start_ns = mono_ns();
    st.next_ns = st.start_ns + st.every_ns;
    {
        struct timespec rt;

        clock_gettime(CLOCK_REALTIME, &rt);
        st.unix_offset_ns = (int64_t)rt.tv_sec * 1000000000ll + rt.tv_nsec -
                            (int64_t)mono_ns();
    }
    if (st.host)
        rc = host(&st, flags, strtod(argv[5], NULL));
    else if (strcmp(argv[9], "-p") == 0)
        rc = attach(&st, (pid_t)strtol(argv[10], NULL, 10), rate, strtod(argv[5], NULL));
    else
        rc = run_program(&st, argv + 10, &status, strtod(argv[5], NULL));
    st.seconds = now_s() - st.t0;
    top_end(&st);
    if (rc == 0) {
        st.ending = 1;              /* what is left goes to the last interval */
        while (take(&st, 0) > 0)
            ;
        if (!st.top_mode)           /* top said its counts as it went */
            notes(&st, st.c);
        st.prof->lost = pp__sample_lost_events(&st);   /* the summary's "lost events" */
    }
    pp_collect_close(st.c);
    pp_unwind_close(st.u);
    pp_splice_close(st.sp);
    pp_pycode_close(st.codes);
    pp_wall_open_free(st.open);
    for (size_t i = 0; i < st.nprocs; i++)
        pp__sample_proc_free(&st.procs[i]);
    free(st.procs);
    free(st.named);
    if (rc != 0) {                 /* nothing recorded: no profile written */
        pp_fold_close(st.fold);
        if (st.have_ks)
            pp_kallsyms_free(&st.ks);
        if (st.prof)
            pp_profile_free(st.prof);
        free(st.prof);
        if (st.every)
            pp_every_close(st.every);
        return rc;
    }
    return finish(&st, argv[1], argv[2], status);
}
