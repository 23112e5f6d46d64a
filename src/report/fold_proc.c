/*
 * Processes and threads told apart. A recording of `python3 app.py` often
 * holds more than one process: multiprocessing workers, a `subprocess`
 * child, gzip, the shell of a pyenv shim. Folded together, a worker's
 * `<module> (<string>:1)` merges with the parent's stacks and a non-Python
 * child's stacks read as anonymous "[truncated];[unknown];..." in the
 * middle of the program's. So every sample's stack starts with a root that
 * names its process, and, when asked (--threads), then one that names its
 * thread:
 *
 *   python3 (pid 4609);MainThread (tid 4609);<module> (app.py:1);main (app.py:9);...
 *   python3 (pid 4609);worker-1 (tid 4612);run (threading.py:990);...
 *   python3 (pid 4613);MainThread (tid 4613);<module> (<string>:1);...
 *   gzip (pid 4620);gzip (tid 4620);[truncated];[gzip];...
 *
 * While folding the roots are placeholders (names are known only at the
 * end: a process's main thread's last comm, after its exec; a thread's last
 * comm, or the name a reader of the program gave it), and at the end the
 * profile is rebuilt once, with the named roots, or without the process
 * roots when the recording has a single process (pp_fold_opts.processes
 * AUTO: a one-process profile reads as before) or merging was asked for
 * (MERGE: no process root is ever made). The sample log follows the
 * rebuild (pp_profile_take_samples). The per-process counts (samples,
 * truncated, with a Python frame) go to the profile for the summary either
 * way.
 *
 * A thread is named as `threading` named it: a reader of the program
 * names it (sample mode reads threading's names: pp_profile_thread_name),
 * or perfpy record's startup hook wrote its name to perfpy-<pid>.threads
 * in the lines directory (the trampoline modes: name_threads), or
 * CPython 3.14+ gave it its Thread.name as OS name (15 bytes of it), the
 * comm perf reports; the main thread of a process with Python frames is
 * "MainThread" (its OS name stays the program's). Otherwise (a program
 * run without the hook, 3.8-3.13) the other threads carry the process's
 * comm.
 *
 * A process is its real pid: the earlier images of a process that execs,
 * which perf_data.c moves to pid + k * 2^22 (its tids with it), belong to it.
 *
 * A process in a container (sample mode says which, from its root and its
 * PID namespace) goes under a root of its container, and its own root says
 * the pid it has there:
 *
 *   [container /srv/app-root];python3 (pid 4613, 7 in the container);<module>...
 */
#include "fold_int.h"
#include "perfpy/lines_format.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REAL_PID_MASK ((1u << 22) - 1)    /* perf_data.c's IMAGE_PID_STEP - 1 */

static void set_comm(pp__fold_proc *p, const pp_raw_sample *s)
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

static pp__fold_proc *add_proc(pp_folder *f, int pid, const pp_raw_sample *s)
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

static int32_t real_id(int32_t id)
{
    return id < 0 ? -1 : (int32_t)((uint32_t)id & REAL_PID_MASK);
}

pp__fold_proc *pp__fold_proc_of(pp_folder *f, const pp_raw_sample *s, int64_t *root)
{
    int pid = real_id(s->pid);
    pp__fold_proc *p = find_proc(f, pid);

    if (!p && !(p = add_proc(f, pid, s)))
        return NULL;
    if (s->tid == s->pid && s->comm_len)    /* the main thread names it */
        set_comm(p, s);
    p->samples++;
    *root = p->root;
    return p;
}

int64_t pp__fold_thread_of(pp_folder *f, const pp_raw_sample *s, int64_t *root)
{
    int64_t t = pp_profile_thread(f->p, real_id(s->pid), real_id(s->tid), s->comm,
                                  s->comm_len);
    size_t old = f->nthread_roots;
    char name[32];
    int n;

    *root = -1;
    if (t < 0 || !f->o.threads)
        return t;
    if ((size_t)t >= old) {
        if (pp__grow((void **)&f->thread_roots, &f->thread_roots_cap, (size_t)t + 1,
                     sizeof(*f->thread_roots)) < 0)
            return -ENOMEM;
        for (size_t i = old; i <= (size_t)t; i++)
            f->thread_roots[i] = -1;
        f->nthread_roots = (size_t)t + 1;
    }
    if (f->thread_roots[t] < 0) {
        /* a placeholder, unique per thread; named in pp__fold_proc_finish */
        n = snprintf(name, sizeof(name), "\002thread %lld", (long long)t);
        f->thread_roots[t] = pp_profile_frame(f->p, PP_FRAME_MARKER, name, (size_t)n, NULL, 0, 0);
        if (f->thread_roots[t] < 0)
            return f->thread_roots[t];
    }
    *root = f->thread_roots[t];
    return t;
}

/* pid's entry, made when it has had no sample yet. */
static pp__fold_proc *told_proc(pp_folder *f, int pid)
{
    pp__fold_proc *p = find_proc(f, pid);
    pp_raw_sample none;

    if (!p) {
        memset(&none, 0, sizeof(none));
        p = add_proc(f, pid, &none);
    }
    return p;
}

int pp_fold_process_container(pp_folder *f, int pid, int ns_pid, const char *root)
{
    pp__fold_proc *p = told_proc(f, pid);

    if (!p)
        return -ENOMEM;
    p->ns_pid = ns_pid;
    snprintf(p->container, sizeof(p->container), "%s", root);
    return 0;
}

int pp_fold_process_command(pp_folder *f, int pid, const char *command, const char *service)
{
    pp__fold_proc *p = told_proc(f, pid);

    if (!p)
        return -ENOMEM;
    snprintf(p->command, sizeof(p->command), "%s", command);
    snprintf(p->service, sizeof(p->service), "%s", service);
    return 0;
}

/* "[container /srv/app-root]": the root above a container's processes. */
static int64_t container_frame(pp_profile *nw, const pp__fold_proc *p)
{
    char label[160];
    int n = snprintf(label, sizeof(label), "[container %s]", p->container);

    return pp_profile_frame(nw, PP_FRAME_MARKER, label, (size_t)n, NULL, 0, 0);
}

int pp_fold_marker(pp_folder *f, int32_t pid, int32_t tid, pp_marker_kind kind,
                   uint64_t start_ns, uint64_t end_ns, const char *name)
{
    int64_t t = pp_profile_thread(f->p, real_id(pid), real_id(tid), NULL, 0);

    if (t < 0)
        return (int)t;
    return pp_profile_marker(f->p, (uint32_t)t, kind, start_ns, end_ns, name, strlen(name));
}

/* "python3 (pid 4609)": the process root's label (its command line
 * instead of its comm when said). */
static int64_t root_frame(pp_profile *nw, const pp__fold_proc *p)
{
    char label[256];
    const char *comm = p->command[0] ? p->command : p->comm[0] ? p->comm : "[unknown]";
    int n = p->pid < 0 ? snprintf(label, sizeof(label), "%s", comm)
            : p->ns_pid ? snprintf(label, sizeof(label), "%s (pid %d, %d in the container)",
                                   comm, p->pid, p->ns_pid)
                        : snprintf(label, sizeof(label), "%s (pid %d)", comm, p->pid);

    return pp_profile_frame(nw, PP_FRAME_MARKER, label, (size_t)n, NULL, 0, 0);
}

/* A placeholder root that the rebuilt profile leaves out. */
#define DROP (PP_NONE - 1)

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

/* Each old stack again in nw, its frames through map (DROP: left out), a
 * process root under its container's root (above[old frame], PP_NONE:
 * none); stack_map[old stack] = its new index. */
static int copy_stacks(pp_profile *nw, const pp_profile *old, uint32_t *map,
                       const uint32_t *above, uint32_t *stack_map)
{
    uint32_t *buf = malloc(((size_t)old->nids + 2) * sizeof(*buf));
    int64_t rc = 0;

    if (!buf)
        return -ENOMEM;
    for (uint32_t si = 0; si < old->nstacks && rc >= 0; si++) {
        const pp_stack *s = &old->stacks[si];
        const uint32_t *ids = pp_stack_ids(old, s);
        size_t n = 0;
        for (uint32_t d = 0; d < s->depth && rc >= 0; d++) {
            if (map[ids[d]] == DROP)
                continue;
            if (above[ids[d]] != PP_NONE)
                buf[n++] = above[ids[d]];            /* the container's root */
            if ((rc = copy_frame(nw, old, map, ids[d])) >= 0)
                buf[n++] = (uint32_t)rc;
        }
        if (rc >= 0 && (rc = pp_profile_add(nw, buf, n, s->count, s->period)) >= 0) {
            stack_map[si] = (uint32_t)rc;
            /* its wait's name is an index into old's marker names, which
             * pp_profile_take_samples moves to nw */
            nw->stacks[rc].wait = s->wait;
            nw->stacks[rc].wait_kind = s->wait_kind;
        }
    }
    free(buf);
    return rc < 0 ? (int)rc : 0;
}

/* The roots' frames in nw, first: the processes' (named when proc_roots,
 * else left out; a container's root above those in one), then the
 * threads'. */
static int name_roots(pp_folder *f, pp_profile *nw, uint32_t *map, uint32_t *above,
                      int proc_roots)
{
    const pp_profile *old = f->p;
    pp_thread_patterns known = {NULL, 0};
    int64_t id = 0;

    for (size_t i = 0; i < f->nprocs; i++) {
        if (f->procs[i].root < 0)
            continue;
        if (!proc_roots) {
            map[f->procs[i].root] = DROP;
        } else if ((id = root_frame(nw, &f->procs[i])) < 0) {
            return (int)id;
        } else {
            map[f->procs[i].root] = (uint32_t)id;
            if (f->procs[i].container[0] && (id = container_frame(nw, &f->procs[i])) < 0)
                return (int)id;
            if (f->procs[i].container[0])
                above[f->procs[i].root] = (uint32_t)id;
        }
    }
    if (f->nthread_roots && pp_thread_patterns_known(old, &known) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < f->nthread_roots; i++) {
        if (f->thread_roots[i] < 0)
            continue;
        if ((id = pp_profile_thread_root(nw, &old->threads[i], f->o.threads, &known)) < 0)
            break;
        map[f->thread_roots[i]] = (uint32_t)id;
    }
    pp_thread_patterns_free(&known);
    return id < 0 ? (int)id : 0;
}

/* The profile again, each stack's placeholder roots named (proc_roots for
 * the processes') or left out, its sample log remapped; the totals the
 * folder and the pipeline set carried over. */
static int rebuild(pp_folder *f, int proc_roots)
{
    pp_profile *old = f->p, nw;
    size_t frames = ((size_t)old->nframes + 1) * sizeof(uint32_t);
    uint32_t *map = malloc(frames), *above = malloc(frames);
    uint32_t *stack_map = malloc(((size_t)old->nstacks + 1) * sizeof(*stack_map));
    int rc = map && above && stack_map ? pp_profile_init(&nw) : -ENOMEM;

    if (rc < 0) {
        free(map);
        free(above);
        free(stack_map);
        return rc;
    }
    memset(map, 0xff, frames);
    memset(above, 0xff, frames);
    rc = name_roots(f, &nw, map, above, proc_roots);
    if (rc == 0)
        rc = copy_stacks(&nw, old, map, above, stack_map);
    for (uint32_t i = 0; rc == 0 && i < old->nlabels; i++)
        rc = pp_profile_label(&nw, old->labels[i].key, old->labels[i].value);
    if (rc == 0)
        rc = pp_profile_take_samples(&nw, old, stack_map);
    free(map);
    free(above);
    free(stack_map);
    if (rc < 0) {
        pp_profile_free(&nw);
        return rc;
    }
    nw.truncated = old->truncated;
    nw.lost = old->lost;
    nw.bad_lines = old->bad_lines;
    nw.time_first_ns = old->time_first_ns;
    nw.time_last_ns = old->time_last_ns;
    nw.value = old->value;
    nw.exec_lines = old->exec_lines;
    nw.period_ns = old->period_ns;
    nw.time_unix_ns = old->time_unix_ns;
    nw.duration_ns = old->duration_ns;
    nw.labelled = old->labelled;
    memcpy(nw.program, old->program, sizeof(nw.program));
    memcpy(nw.event, old->event, sizeof(nw.event));
    pp_profile_free(old);
    *old = nw;
    return 0;
}

/* The names in pid's perfpy-<pid>.threads (lines_format.h) given to its
 * threads that no reader named: the last line of a tid wins. */
static int name_threads_of(pp_folder *f, int pid, uint8_t *mine)
{
    char path[PATH_MAX], line[1024], name[512];
    pp_profile *p = f->p;
    FILE *in;
    int rc = 0;

    if (snprintf(path, sizeof(path), PP_THREADS_PATH, f->o.lines_dir, pid) >= (int)sizeof(path) ||
        !(in = fopen(path, "re")))
        return 0;
    while (rc == 0 && fgets(line, sizeof(line), in)) {
        char *end, *s;
        long tid = strtol(line, &end, 10);
        size_t n = 0;
        int64_t th;

        if (end == line || *end != ' ' || tid <= 0 || tid > INT32_MAX || !strchr(end, '\n'))
            continue;                   /* not a line of the format, or cut short */
        for (s = end + 1; *s && *s != '\n' && n < sizeof(name); s++) {
            if (*s == '\\' && (s[1] == '\\' || s[1] == 'n'))
                name[n++] = *++s == 'n' ? ' ' : '\\';   /* a label is one line */
            else
                name[n++] = *s;
        }
        th = pp_profile_find_thread(p, pid, (int32_t)tid);
        if (th >= 0 && n && (!p->threads[th].name_set || mine[th])) {
            rc = pp_profile_thread_name(p, (uint32_t)th, name, n);
            mine[th] = 1;
        }
    }
    fclose(in);
    return rc;
}

/* Every process's threads named from the thread-name files perfpy record's
 * startup hook wrote (in the trampoline modes: perf knows only OS names). */
static int name_threads(pp_folder *f)
{
    uint8_t *mine;              /* named from a file (a later line renames it) */
    int rc = 0;

    if (!f->o.lines_dir || !f->p->nthreads)
        return 0;
    if (!(mine = calloc(f->p->nthreads, 1)))
        return -ENOMEM;
    /* also a process whose stacks name no Python function (perf mode
     * without frame pointers, with perf's libdw): the hook ran in it */
    for (size_t i = 0; rc == 0 && i < f->nprocs; i++)
        if (f->procs[i].pid > 0)
            rc = name_threads_of(f, f->procs[i].pid, mine);
    free(mine);
    return rc;
}

/* A Python process's main thread is threading's "MainThread" (see the top). */
static int name_main_threads(pp_folder *f)
{
    pp_profile *p = f->p;

    for (uint32_t i = 0; i < p->nthreads; i++) {
        pp_thread *t = &p->threads[i];
        pp__fold_proc *proc;
        if (t->name_set || t->tid != t->pid || t->pid < 0)
            continue;
        proc = find_proc(f, t->pid);
        if (proc && proc->python && pp_profile_thread_name(p, i, "MainThread", 10) < 0)
            return -ENOMEM;
    }
    return 0;
}

static const char *dup(pp_profile *p, const char *s)
{
    return pp_profile_strdup(p, s, strlen(s));
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
    int rc = name_threads(f);

    if (rc == 0)
        rc = name_main_threads(f);

    if (rc == 0 && ((f->o.processes != PP_PROCESSES_MERGE && f->nprocs) || f->nthread_roots))
        rc = rebuild(f, f->o.processes == PP_PROCESSES_SPLIT ||
                        (f->o.processes == PP_PROCESSES_AUTO && f->nprocs > 1));
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
        o->ns_pid = f->procs[i].ns_pid;
        if ((f->procs[i].command[0] && !(o->command = dup(p, f->procs[i].command))) ||
            (f->procs[i].service[0] && !(o->service = dup(p, f->procs[i].service))) ||
            (f->procs[i].container[0] && !(o->container = dup(p, f->procs[i].container))))
            return -ENOMEM;
    }
    p->nprocs = (uint32_t)f->nprocs;
    qsort(p->procs, p->nprocs, sizeof(*p->procs), by_samples);
    return 0;
}

void pp_fold_service_of(char *const *argv, char *buf, size_t cap)
{
    const char *name = NULL, *slash, *dot;

    for (int i = 1; argv[0] && argv[i]; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-m") == 0 && argv[i + 1]) {
            name = argv[i + 1];
            break;
        }
        if (strcmp(a, "-c") == 0)
            break;
        if (a[0] != '-') {
            name = a;
            break;
        }
        if ((strcmp(a, "-X") == 0 || strcmp(a, "-W") == 0) && argv[i + 1])
            i++;
    }
    if (!name)
        name = argv[0] ? argv[0] : "";
    slash = strrchr(name, '/');
    name = slash && slash[1] ? slash + 1 : name;
    dot = strrchr(name, '.');
    if (dot && strcmp(dot, ".py") == 0)
        snprintf(buf, cap, "%.*s", (int)(dot - name), name);
    else
        snprintf(buf, cap, "%s", name);
}
