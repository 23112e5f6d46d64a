/*
 * A dump's target and its resolution (see dump.h): what every engine
 * shares. The engines (dump_ptrace.c, dump_bpf.c) only read.
 */
#include "dump.h"
#include "read_wall.h"
#include "collect/wall.h"
#include "profile/raw.h"
#include "collect/collect_bpf.h"
#include "native/kallsyms.h"
#include "native/procs.h"
#include "cpython/pycode.h"
#include "cpython/pylayout.h"
#include "cpython/pyread.h"
#include "cpython/pysyms.h"
#include "report/fold.h"
#include "native/splice.h"
#include "native/unwind.h"
#include "profile/htab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NATIVE_MAX 512             /* native frames unwound per thread */

/* No _PyRuntime in pid: an old Python (named by its files), or no Python. */
static int no_runtime(pp_dump *d, pp_error *e)
{
    char exe[512], link[64];
    ssize_t n;

    for (size_t i = 0; i < d->maps.n; i++) {
        uint32_t v = pp_pylayout_version_of_name(d->maps.v[i].path);

        if (v && (d->maps.v[i].prot & PP_MAP_X))
            return pp_error_set(e, -ENOTSUP, "the process %d runs Python %u.%u (%s): perfpy "
                                "reads CPython 3.8 to 3.15", (int)d->pid, v >> 24,
                                (v >> 16) & 0xff, d->maps.v[i].path);
    }
    snprintf(link, sizeof(link), "/proc/%d/exe", (int)d->pid);
    n = readlink(link, exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    return pp_error_set(e, -ENOEXEC, "the process %d (%s) is not a Python program: no "
                        "CPython interpreter is loaded in it", (int)d->pid,
                        exe[0] ? exe : d->comm);
}

static int gone(pp_dump *d, pp_error *e)
{
    return pp_error_set(e, -ESRCH, "the process %d ended during the dump", (int)d->pid);
}

static int list_threads(pp_dump *d, pp_error *e)
{
    char path[64];
    DIR *dir;
    struct dirent *de;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)d->pid);
    if (!(dir = opendir(path)))
        return gone(d, e);
    if (!(d->threads = calloc(PP_DUMP_THREADS, sizeof(*d->threads)))) {
        closedir(dir);
        return pp_error_set(e, -ENOMEM, "out of memory");
    }
    while ((de = readdir(dir)) && d->nthreads < PP_DUMP_THREADS) {
        pid_t tid = (pid_t)atoi(de->d_name);
        pp_dump_thread *t;

        if (tid <= 0)
            continue;
        t = &d->threads[d->nthreads++];
        t->tid = tid;
        t->syscall = -1;
        t->gil = -1;
        snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)d->pid, (int)tid);
        pp_procs_small_file(path, t->os_name, sizeof(t->os_name));
    }
    closedir(dir);
    /* the main thread first (readdir's order is the kernel's: it is) */
    for (size_t i = 1; i < d->nthreads; i++)
        if (d->threads[i].tid == d->pid) {
            pp_dump_thread main_thread = d->threads[i];

            memmove(&d->threads[1], &d->threads[0], i * sizeof(*d->threads));
            d->threads[0] = main_thread;
        }
    return d->nthreads ? 0 : gone(d, e);
}

int pp_dump_open(pp_dump *d, pid_t pid, pp_error *e)
{
    char path[64], why[512], state = 0;
    const char *ft = getenv("PERFPY_FREE_THREADED");
    int rc;

    memset(d, 0, sizeof(*d));
    d->pid = pid;
    d->mem = pp_mem_of_pid(pid);
    d->tid_off = -1;
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH) ||
        pp_procs_small_file(path, d->comm, sizeof(d->comm)) < 0)
        return pp_error_set(e, -ESRCH, "no process %d: it does not exist (or has ended)",
                            (int)pid);
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    for (long i = 0, n = pp_procs_small_file(path, d->cmdline, sizeof(d->cmdline)); i < n - 1; i++)
        if (!d->cmdline[i])
            d->cmdline[i] = ' ';
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (pp_procs_small_file(path, why, sizeof(why)) > 0 && strrchr(why, ')'))
        state = strrchr(why, ')')[2];
    if (state == 'Z' || state == 'X')
        return pp_error_set(e, -ESRCH, "the process %d (%s) has ended: it is a zombie its "
                            "parent has not waited for", (int)pid, d->comm);
    if ((rc = pp_maps_read(pid, &d->maps)) != 0)
        return rc == -ENOENT || rc == -ESRCH ? gone(d, e)
            : pp_error_set(e, -EPERM, "cannot read the process %d (%s): not permitted (it is "
                           "another user's, or kernel.yama.ptrace_scope forbids it): run "
                           "perfpy dump as its user, or as root", (int)pid, d->comm);
    if (pp_py_symbol_address(&d->maps, "_PyRuntime", &d->runtime, d->exe, sizeof(d->exe)) != 0)
        return no_runtime(d, e);
    rc = pp_pysyms_layout(&d->mem, &d->maps, d->runtime, d->exe,
                          ft && strcmp(ft, "1") == 0 ? PP_PYLAYOUT_FREE_THREADED : 0,
                          &d->layout, why, sizeof(why));
    if (rc == -ESRCH)
        return gone(d, e);
    if (rc != 0 && pp_mem_read(&d->mem, d->runtime, path, 8) == -EPERM)
        return pp_error_set(e, -EPERM, "cannot read the memory of the process %d (%s): not "
                            "permitted (it is another user's, or kernel.yama.ptrace_scope "
                            "allows only children): run perfpy dump as its user, or as root",
                            (int)pid, d->comm);
    if (rc != 0)
        return pp_error_set(e, -ENOTSUP, "the process %d (%s): %s", (int)pid, d->exe, why);
    d->version_hex = d->layout.version_hex;
    if (pp_mem_read(&d->mem, d->runtime + (uint64_t)d->layout.off.runtime_interpreters_head,
                    &d->interp, sizeof(d->interp)) != 0)
        return gone(d, e);
    /* without them: no locals, no threading names */
    d->have_obj = pp_pysyms_objtypes(&d->maps, &d->obj.t) == 0;
    d->obj.m = &d->mem;
    d->obj.o = &d->layout.off;
    d->tid_off = pp_pystack_tid_offset(&d->mem, &d->layout.off, d->runtime);
    return list_threads(d, e);
}

int pp_dump_read_locals(pp_dump *d, pp_dump_thread *t)
{
    static pp_pylocal buf[PP_DUMP_LOCALS];

    for (size_t i = 0; i < t->py.n && d->have_obj; i++) {
        long n = pp_pyobj_locals(&d->obj, t->py.f[i].frame, t->py.f[i].id.code, buf,
                                 PP_DUMP_LOCALS);

        t->py_first_local[i] = t->nlocals;
        t->py_nlocals[i] = 0;
        if (n <= 0)
            continue;
        if (pp__grow((void **)&t->locals, &t->locals_cap, t->nlocals + (size_t)n,
                     sizeof(*t->locals)) < 0)
            return -ENOMEM;
        memcpy(t->locals + t->nlocals, buf, (size_t)n * sizeof(*buf));
        t->nlocals += (size_t)n;
        t->py_nlocals[i] = (size_t)n;
    }
    return 0;
}

/* ---- resolving ----------------------------------------------------------- */

typedef struct resolver {
    pp_dump *d;
    const pp_dump_opts *o;
    pp_pycode *codes;
    pp_unwinder *u;
    pp_splicer *sp;
    pp_kallsyms ks;
    int have_ks, have_types;
    pp_pyread_types types;         /* to tell a code object from what is not */
} resolver;

static const char *keep(pp_dump *d, const char *s)
{
    char *copy = strdup(s ? s : "");

    if (!copy || pp__grow((void **)&d->strings, &d->strings_cap, d->nstrings + 1,
                          sizeof(*d->strings)) < 0) {
        free(copy);
        return "";
    }
    d->strings[d->nstrings++] = copy;
    return copy;
}

/* Its Python frames named, innermost first. */
static void name_python(resolver *r, const pp_dump_thread *t, pp_pyframe *py)
{
    const pp_py_offsets *o = &r->d->layout.off;

    for (size_t i = 0; i < t->py.n; i++) {
        const pp_pystack_frame *f = &t->py.f[i];
        const pp_pycode_entry *en = pp_pycode_get(r->codes, &r->d->mem, o,
                                                  r->have_types ? &r->types : NULL, &f->id);
        int named = en && en->qualname[0];

        py[i] = (pp_pyframe){named ? en->qualname : "[unknown]", named ? en->file : "",
                             named ? pp_pycode_line(en, o, pp_pyread_code_start(
                                                        &r->d->mem, o, f->id.code, 0),
                                                    f->instr) : 0,
                             named ? en->def_line : 0, f->entry, 0};
    }
}

/* The folded stack (one sample, one stack) as the thread's frames. */
static int take_stack(resolver *r, pp_dump_thread *t, const pp_profile *p)
{
    const pp_stack *s;
    const uint32_t *ids;
    size_t python = 0;

    if (p->nstacks != 1)
        return 0;
    s = &p->stacks[0];
    ids = pp_stack_ids(p, s);
    if (!(t->frames = calloc(s->depth ? s->depth : 1, sizeof(*t->frames))))
        return -ENOMEM;
    for (uint32_t i = s->depth; i-- > 0;) {
        const pp_frame *f = &p->frames[ids[i]];
        pp_dump_frame *df = &t->frames[t->nframes++];

        df->kind = f->kind;
        df->name = keep(r->d, f->name);
        df->file = keep(r->d, f->file);
        df->line = f->kind == PP_FRAME_PYTHON ? f->line : 0;
        python += f->kind == PP_FRAME_PYTHON;
    }
    /* each Python frame's locals, when the fold kept every Python frame */
    if (python == t->py.n && t->nlocals)
        for (size_t i = 0, k = 0; i < t->nframes; i++)
            if (t->frames[i].kind == PP_FRAME_PYTHON) {
                t->frames[i].first_local = t->py_first_local[k];
                t->frames[i].nlocals = t->py_nlocals[k++];
            }
    return 0;
}

static int resolve_one(resolver *r, pp_dump_thread *t)
{
    static pp_pyframe py[PP_PYSTACK_DEPTH];
    static pp_native_frame nat[NATIVE_MAX], kern[PP_DUMP_KERNEL];
    pp_fold_opts fo = {0};
    pp_folder *fold = NULL;
    pp_profile p;
    pp_sample ps;
    pp_raw_sample out;
    size_t nn = 0, nk = 0;
    unsigned flags = 0;
    int rc;

    memset(&ps, 0, sizeof(ps));
    ps.pid = (int32_t)r->d->pid;
    ps.tid = (int32_t)t->tid;
    ps.period = 1;
    memcpy(ps.comm, t->os_name, sizeof(ps.comm));
    ps.have_user = t->native;
    memcpy(ps.regs, t->regs, sizeof(ps.regs));
    ps.stack = t->stack;
    ps.stack_len = t->stack_len;
    name_python(r, t, py);
    ps.py = py;
    ps.npy = t->py.n;
    ps.py_truncated = t->py.truncated;
    ps.py_whole = t->py.whole;
    if (t->nkernel && r->have_ks)
        nk = pp_kallsyms_frames(&r->ks, t->kips, t->nkernel, kern, PP_DUMP_KERNEL);
    for (size_t i = 0; !t->nkernel && i < t->nkernel_names && nk < PP_DUMP_KERNEL; i++)
        kern[nk++] = (pp_native_frame){0, t->kernel_names[i], "[kernel.kallsyms]"};
    if (t->native && pp_unwind(r->u, &ps, nat, NATIVE_MAX, &nn, &flags) != 0)
        nn = 0;
    fo.no_native = r->o->no_native;
    fo.processes = PP_PROCESSES_MERGE;
    fo.show_perfpy = 1;
    if ((rc = pp_profile_init(&p)) != 0)
        return rc;
    if ((rc = pp_fold_open(&fold, &p, &fo)) == 0 &&
        (rc = pp_splice(r->sp, &ps, kern, nk, nat, nn, &out)) == 0 &&
        (rc = pp_fold_sample(fold, &out)) == 0) {
        rc = pp_fold_close(fold);
        fold = NULL;
        if (rc == 0)
            rc = take_stack(r, t, &p);
    }
    pp_fold_close(fold);
    pp_profile_free(&p);
    return rc;
}

/* threading's names, by each Python thread's ident. */
static void thread_names(pp_dump *d)
{
    uint64_t *idents = calloc(d->nthreads, sizeof(*idents));
    char (*names)[64] = calloc(d->nthreads, sizeof(*names));

    if (idents && names && d->have_obj) {
        for (size_t i = 0; i < d->nthreads; i++)
            idents[i] = d->threads[i].py.thread_id;
        pp_pyobj_thread_names(&d->obj, d->interp, idents, names, d->nthreads);
        for (size_t i = 0; i < d->nthreads; i++)
            if (idents[i])
                memcpy(d->threads[i].name, names[i], sizeof(d->threads[i].name));
    }
    free(idents);
    free(names);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* The names of the threads' kernel addresses: none to name (read mode has
 * the kernel's own names from /proc), the engine's names of those few
 * addresses, or else the whole of /proc/kallsyms (5 MB of text the
 * kernel writes out: 160-270 ms of a dump here). 0, or -errno (no table). */
static int kernel_symbols(const pp_dump *d, const pp_dump_opts *o, pp_kallsyms *ks)
{
    uint64_t *addr;
    char *names = NULL;
    const char **each = NULL;
    size_t n = 0, m = 0;
    int rc = -ENOMEM;

    for (size_t i = 0; i < d->nthreads; i++)
        n += d->threads[i].nkernel;
    if (!n)
        return -ENOENT;
    if (!o->kernel_names)
        return pp_kallsyms_load(ks);
    if (!(addr = malloc(n * sizeof(*addr))))
        return -ENOMEM;
    for (size_t i = 0; i < d->nthreads; i++)
        for (size_t k = 0; k < d->threads[i].nkernel; k++)
            addr[m++] = d->threads[i].kips[k];
    qsort(addr, m, sizeof(*addr), cmp_u64);
    n = 0;
    for (size_t i = 0; i < m; i++)
        if (!n || addr[n - 1] != addr[i])
            addr[n++] = addr[i];
    if ((names = malloc(n * PP_BPF_KSYM_LEN)) && (each = malloc(n * sizeof(*each)))) {
        rc = o->kernel_names(o->kernel_names_ctx, addr, n, names, PP_BPF_KSYM_LEN);
        for (size_t i = 0; rc == 0 && i < n; i++)
            each[i] = names + i * PP_BPF_KSYM_LEN;
        if (rc == 0)
            rc = pp_kallsyms_named(ks, addr, each, n);
        else
            rc = pp_kallsyms_load(ks);
    }
    free(each);
    free(names);
    free(addr);
    if (rc != 0)
        pp_kallsyms_free(ks);
    return rc;
}

/* Why each waiting thread waits, with a wall-clock profile's reasons
 * (wall.h): its system call and arguments, a futex inside the GIL's state
 * the GIL (its address from the interpreter, read_wall.h). */
static void wait_reasons(pp_dump *d)
{
    uint64_t gil = pp__readwall_gil(&d->mem, &d->layout.off, d->runtime);
    uint64_t size = gil ? (uint64_t)d->layout.off.gil_size : 0;

    for (size_t i = 0; i < d->nthreads; i++) {
        pp_dump_thread *t = &d->threads[i];

        t->wait = t->state == 'S' || t->state == 'D'
                  ? pp_wall_reason(1, t->syscall, t->args[0], t->args[1], gil, size)
                  : PP_WAIT_NONE;
    }
}

int pp_dump_resolve(pp_dump *d, const pp_dump_opts *o)
{
    resolver r = {d, o, NULL, NULL, NULL, {0}, 0, 0, {0, 0}};
    int rc = -ENOMEM;

    if (pp_pycode_open(&r.codes) != 0 || pp_unwind_open(&r.u) != 0 ||
        pp_splice_open(&r.sp, NULL) != 0)
        goto out;
    r.have_ks = kernel_symbols(d, o, &r.ks) == 0;
    if (r.have_ks && !pp_kallsyms_usable(&r.ks)) {
        pp_kallsyms_free(&r.ks);
        r.have_ks = 0;
    }
    r.have_types = pp_pysyms_types(&d->maps, &r.types) == 0;
    thread_names(d);
    wait_reasons(d);
    for (size_t i = 0; i < d->nthreads; i++)
        if ((rc = resolve_one(&r, &d->threads[i])) != 0)
            goto out;
    rc = 0;
out:
    if (r.have_ks)
        pp_kallsyms_free(&r.ks);
    pp_splice_close(r.sp);
    pp_unwind_close(r.u);
    pp_pycode_close(r.codes);
    return rc;
}

void pp_dump_free(pp_dump *d)
{
    for (size_t i = 0; i < d->nthreads; i++) {
        free(d->threads[i].frames);
        free(d->threads[i].locals);
        free(d->threads[i].stack);
    }
    free(d->threads);
    for (size_t i = 0; i < d->nstrings; i++)
        free(d->strings[i]);
    free(d->strings);
    pp_maps_free(&d->maps);
    memset(d, 0, sizeof(*d));
}

/* ---- system calls, by name --------------------------------------------------- */

const char *pp_dump_syscall_name(int64_t nr)
{
    /* x86_64: the calls a thread waits in */
    static const struct {
        int nr;
        const char *name;
    } calls[] = {
        {0, "read"}, {1, "write"}, {7, "poll"}, {17, "pread64"}, {18, "pwrite64"},
        {19, "readv"}, {20, "writev"}, {23, "select"}, {34, "pause"}, {35, "nanosleep"},
        {42, "connect"}, {43, "accept"}, {44, "sendto"}, {45, "recvfrom"}, {46, "sendmsg"},
        {47, "recvmsg"}, {61, "wait4"}, {72, "fcntl"}, {73, "flock"}, {74, "fsync"},
        {202, "futex"}, {213, "epoll_create"}, {230, "clock_nanosleep"}, {232, "epoll_wait"},
        {247, "waitid"}, {257, "openat"}, {270, "pselect6"}, {271, "ppoll"},
        {281, "epoll_pwait"}, {288, "accept4"}, {299, "recvmmsg"}, {307, "sendmmsg"},
        {441, "epoll_pwait2"}, {449, "futex_waitv"},
    };

    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        if (calls[i].nr == nr)
            return calls[i].name;
    return NULL;
}
