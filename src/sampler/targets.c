/*
 * The processes sample mode follows: the program (or the process attached
 * to) and each child it forks, or with -a every process of the host that
 * runs a CPython. For each: its _PyRuntime, found in its maps once its
 * image and libpython are mapped (looked for every 20 ms for 2 s from its
 * exec), the layout of the CPython it runs (pylayout.c), told to the BPF
 * program; its container; with --async where its tasks are. A process
 * whose CPython is not read is said once per reason, its native frames
 * still sampled.
 */
#include "record.h"
#include "host.h"
#include "native/maps.h"
#include "cpython/pysyms.h"
#include "profile/htab.h"
#include "cpython/pytables.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pp__targets_reset(proc *p, pid_t pid)
{
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->mem = pp_mem_of_pid(pid);
}

proc *pp__targets_of(state *st, pid_t pid)
{
    proc *p;

    for (size_t i = 0; i < st->nprocs; i++)
        if (st->procs[i].pid == pid)
            return &st->procs[i];
    if (pp__grow((void **)&st->procs, &st->cap, st->nprocs + 1, sizeof(*st->procs)) < 0)
        return NULL;
    p = &st->procs[st->nprocs++];
    pp__targets_reset(p, pid);
    return p;
}

/* -a: a process that runs a CPython, counted once (the summary's "seen").
 * A CPython's forked child is one more only if it lives as one: counted
 * at its first sample or as it ends, not at its fork (a host's Python
 * runners fork thousands of children a minute, most to exec at once). */
void pp__targets_count_seen(state *st, proc *p)
{
    if (st->host && p->python == 1 && !p->counted) {
        p->counted = 1;
        st->seen++;
    }
}

/* -a: whether p runs a CPython (kept as a target, its command line read)
 * or not (no longer a target: left out, unless every process is asked).
 * At its exec (exec 1) its maps hold no dlopen'd libpython yet: not read. */
void pp__targets_host_decide(state *st, proc *p, int exec)
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
    pp__targets_count_seen(st, p);
}

static void place(state *st, proc *p);

/* The folder of this interval told of p once: its container, its command. */
void pp__targets_tell(state *st, proc *p)
{
    if (!p->placed)
        place(st, p);
    p->told = st->gen;
    if (p->root[0])
        pp_fold_process_container(st->fold, (int)p->pid, p->ns_pid, p->root);
    if (p->command[0])
        pp_fold_process_command(st->fold, (int)p->pid, p->command, p->service);
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

/* --async: where p's CPython keeps its tasks (3.14+: _asyncio's debug
 * offsets, in its files once asyncio is imported: looked for whenever its
 * mappings change), told to the BPF program. */
static void find_async_in(state *st, proc *p, const pp_maps *maps)
{
    char why[512], v[32];
    int rc;

    p->as.maps_n = maps->n;
    if (p->layout.version_hex < 0x030e0000) {
        rc = -ENOTSUP;
        snprintf(why, sizeof(why), "it runs CPython %s, whose tasks are not read (asyncio's "
                 "task graph is published from 3.14 on)",
                 pp_py_version_text(p->layout.version_hex, v, sizeof(v)));
    } else if ((rc = pp_pysyms_async(&p->mem, maps, &p->as.a, why, sizeof(why))) == 0 &&
               ((rc = pp_pysyms_async_types(maps, &p->as.ty)) != 0 ||
                (rc = pp_pysyms_objtypes(maps, &p->as.names)) != 0)) {
        snprintf(why, sizeof(why), "CPython's types are not in the symbols it maps");
    } else if (rc == 0) {
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
        until = (ms = getenv("PERFPY_SAMPLE_LOOK_DELAY_MS")) ? pp__now_s() + atof(ms) / 1000 : 0;
    return until > 0 && pp__now_s() < until;
}

/* Looks give up 2 s after the first: the start of a process that never
 * shows a _PyRuntime (gzip, a shell). They are 20 ms apart: 1 ms apart for
 * a process's first 100 ms cost perfpy-sample 5 ms of CPU per exec'd
 * child (20 children of a 3 s program: 0.3 s against 0.2) and cut no
 * fewer stacks of a child under load (a starved perfpy-sample looks late
 * either way; the program it starts is held instead, hold.h). */
#define LOOK_FOR 2.0

/* One search of p's maps for its _PyRuntime, and its layout once found. */
void pp__targets_look(state *st, proc *p)
{
    pp_maps maps = {0};
    char file[4096], why[512];
    uint64_t runtime, looked = pp__mono_ns();
    const pp_map *m;

    if (pp_maps_read(p->pid, &maps) != 0)
        return;
    /* ld.so maps a library's text before its data, where _PyRuntime lies:
     * until then its address reads other bytes of the file (a 3.13+
     * layout would be refused for good) */
    if (pp_py_symbol_address(&maps, "_PyRuntime", &runtime, file, sizeof(file)) == 0 &&
        (m = pp_maps_find(&maps, runtime)) && (m->prot & PP_MAP_W)) {
        int rc = pp_pysyms_layout(&p->mem, &maps, runtime, file, st->layout_flags, &p->layout,
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
            p->have_types = pp_pysyms_types(&maps, &p->types) == 0;
            pp_collect_set(st->c, p->pid, &p->layout.off, runtime);
            p->set_ns = pp__mono_ns();
            st->before_python += p->early;
            if (st->async)
                find_async_in(st, p, &maps);
        }
    }
    pp_maps_free(&maps);
}

void pp__targets_find(state *st, proc *p)
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
    now = pp__now_s();
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
    pp__targets_look(st, p);
}

/* -a: a program that links libpython (python 2) runs Python once its
 * main interpreter exists; one that never makes it (perf, gdb) is left
 * out after as many looks as a _PyRuntime gets. */
static void confirm(state *st, proc *p)
{
    uint64_t head = 0;

    if (p->runtime && pp_mem_read(&p->mem, p->runtime +
                                     (uint64_t)p->layout.off.runtime_interpreters_head,
                                     &head, sizeof(head)) == 0 && head) {
        p->python = 1;
        pp__targets_count_seen(st, p);
    } else if (++p->waits >= 100) {
        p->python = 0;
        pp_collect_remove(st->c, p->pid);
    }
}

void pp__targets_find_all(state *st)
{
    for (size_t i = 0; i < st->nprocs; i++) {
        proc *p = &st->procs[i];

        pp__targets_find(st, p);
        if (p->python == 2)
            confirm(st, p);
    }
}

/* Whether pid's memory is gone: it ended (a zombie keeps its pid, not its
 * memory). */
int pp__targets_gone(pid_t pid)
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