/*
 * The engine: one arena of trampolines plus the backends that name them.
 *
 *   pp_engine_register(sym)
 *       lock
 *       arena slot  ->  sym.code          (read-execute memory)
 *       backend->write_entry(sym)         (perf map or jitdump: whole, now)
 *       lines->write_entry(sym)           (optional sidecar for perfpy record)
 *       unlock
 *       return the slot                   (the caller may run it from now on)
 *
 * The engine never branches on the format: backends are a table of
 * {open, write_entry, fork_child, close}. A failure is kept (sticky): later
 * registrations fail fast with the same error, and the binding falls back to
 * plain evaluation.
 *
 * Fork: the lock is taken around fork(2) by pthread_atfork handlers so a
 * child never inherits it held; the child's files are started by
 * pp_engine_fork_child(), which the binding calls right after fork, and
 * which registration also calls if it notices a new pid. The child's new
 * trampolines go into a chunk of its own (pp_arena_fork_child: perf names
 * inherited memory from the parent's map).
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PP_MAX_BACKENDS 2

struct pp_engine {
    pthread_mutex_t lock;
    pp_arena arena;
    pp_backend *backends[PP_MAX_BACKENDS];
    int nbackends;
    int err;                /* sticky */
    int failed;             /* the backend that failed, -1 if none did */
    pid_t pid;              /* whose files the backends write */
    int inherit_map;        /* a forked child's map copies the parent's */
    unsigned forks;         /* fork_generation when pid was last checked */
};

/* Bumped in every forked child (pthread_atfork), so registration notices a
 * fork without a getpid() system call per function. */
static volatile unsigned fork_generation;

/* Engines that exist, for the fork handlers. A process has one or two. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_engine *registry[4];
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void before_fork(void)
{
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < 4; i++)
        if (registry[i])
            pthread_mutex_lock(&registry[i]->lock);
}

static void after_fork_parent(void)
{
    for (int i = 3; i >= 0; i--)
        if (registry[i])
            pthread_mutex_unlock(&registry[i]->lock);
    pthread_mutex_unlock(&registry_lock);
}

static void after_fork_child(void)
{
    fork_generation++;
    /* The child has one thread; re-initialising is the portable unlock. */
    for (int i = 0; i < 4; i++)
        if (registry[i])
            pthread_mutex_init(&registry[i]->lock, NULL);
    pthread_mutex_init(&registry_lock, NULL);
}

static void install_atfork(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static int enrol(pp_engine *e, int add)
{
    int rc = add ? -EMFILE : 0;

    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < 4; i++) {
        if (add && registry[i] == NULL) {
            registry[i] = e;
            rc = 0;
            break;
        }
        if (!add && registry[i] == e)
            registry[i] = NULL;
    }
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

static int open_backend(pp_engine *e, const pp_backend_ops *ops,
                        const char *dir)
{
    int rc = ops->open(&e->backends[e->nbackends], dir);

    if (rc == 0)
        e->nbackends++;
    return rc;
}

int pp_engine_open(pp_engine **out, const pp_engine_config *cfg)
{
    pp_engine *e;
    int rc;

    if (!cfg || !cfg->backend)
        return -EINVAL;
    e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_init(&e->lock, NULL);
    e->failed = -1;
    e->pid = getpid();
    e->inherit_map = 1;
    e->forks = fork_generation;
    rc = pp_arena_init(&e->arena, cfg->backend->slot_size(pp_template_size()));
    if (rc < 0)
        goto fail;
    rc = open_backend(e, cfg->backend, cfg->dir);
    if (rc < 0)
        goto fail;
    if (cfg->lines_dir) {
        rc = open_backend(e, &pp_lines_ops, cfg->lines_dir);
        if (rc < 0)
            goto fail;
    }
    rc = enrol(e, 1);
    if (rc < 0)
        goto fail;
    *out = e;
    return 0;
fail:
    for (int i = 0; i < e->nbackends; i++)
        e->backends[i]->ops->close(e->backends[i]);
    pthread_mutex_destroy(&e->lock);
    free(e);
    return rc;
}

static int fork_child_locked(pp_engine *e)
{
    pid_t now;

    if (e->forks == fork_generation || e->err)
        return e->err;
    e->forks = fork_generation;
    now = getpid();
    if (now == e->pid)
        return 0;
    e->pid = now;
    pp_arena_fork_child(&e->arena);
    /* the last backend first: the lines sidecar, by which perfpy record
     * finds a process's files in /tmp to remove them; a child killed as
     * it forks (a pool ending) then leaves no map it cannot find */
    for (int i = e->nbackends - 1; i >= 0; i--) {
        int rc = e->backends[i]->ops->fork_child(e->backends[i], e->inherit_map);
        if (rc < 0) {
            e->failed = i;
            return e->err = rc;
        }
    }
    return 0;
}

int pp_engine_fork_child(pp_engine *e)
{
    int rc;

    pthread_mutex_lock(&e->lock);
    rc = fork_child_locked(e);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

void pp_engine_set_fork_inherit_map(pp_engine *e, int inherit)
{
    pthread_mutex_lock(&e->lock);
    e->inherit_map = inherit;
    pthread_mutex_unlock(&e->lock);
}

int pp_engine_register(pp_engine *e, pp_symbol *sym, pp_trampoline_fn *out)
{
    pp_trampoline_fn fn;
    int rc;

    pthread_mutex_lock(&e->lock);
    rc = fork_child_locked(e);
    if (rc < 0)
        goto out;
    rc = pp_arena_take(&e->arena, &fn);
    if (rc < 0)
        goto out;
    sym->code = (const void *)(uintptr_t)fn;
    sym->code_size = pp_template_size();
    for (int i = 0; i < e->nbackends && rc == 0; i++) {
        rc = e->backends[i]->ops->write_entry(e->backends[i], sym);
        if (rc < 0)
            e->failed = i;
    }
    if (rc == 0)
        *out = fn;
out:
    if (rc < 0)
        e->err = rc;
    pthread_mutex_unlock(&e->lock);
    return rc;
}

const char *pp_engine_backend_name(const pp_engine *e)
{
    return e->backends[0]->ops->name;
}

const char *pp_engine_failed_file(const pp_engine *e)
{
    return e->failed >= 0 ? e->backends[e->failed]->path : NULL;
}

size_t pp_engine_trampolines(const pp_engine *e)
{
    return e->arena.slots_used;
}

double pp_engine_bytes_per_trampoline(const pp_engine *e)
{
    return (double)e->arena.slot_size;
}

int pp_engine_close(pp_engine *e)
{
    int rc = e->err;

    enrol(e, 0);
    for (int i = 0; i < e->nbackends; i++) {
        int r = e->backends[i]->ops->close(e->backends[i]);
        if (r < 0 && rc == 0)
            rc = r;
    }
    /* The arena stays mapped: frames may still be running inside it. */
    pp_arena_retire(&e->arena);
    pthread_mutex_destroy(&e->lock);
    free(e);
    return rc;
}
