/*
 * perfpy dump --async PID: the asyncio task graph of a running program, as
 * `python -m asyncio pstree PID` draws it (CPython 3.14+), read from
 * outside (src/cpython/pyasync.c: nothing installed, the program never
 * stopped):
 *
 *   └── (T) Task-1
 *       └──  serve /srv/app.py:46                  the awaiting task's coroutines,
 *           └──  Queue.get .../asyncio/queues.py:186  outermost first
 *               ├── (T) handler-1                  a task it awaits (await, TaskGroup,
 *               │   └──  handler /srv/app.py:29    gather): its own coroutines down to
 *               │       └──  helper /srv/app.py:22 where it waits now, each at the
 *               │           └──  sleep .../tasks.py:702   line it is at
 *
 * The tree is built as asyncio's own tool builds it (Lib/asyncio/tools.py):
 * a task awaited by another hangs under the awaiting task's coroutine
 * frames, frames of one parent with the same text are one node, a task
 * that awaits no task shows its own coroutines, the roots are the tasks no
 * task awaits. A graph that changed under every read is printed with a
 * line saying so, never as if it were whole.
 */
#include "request.h"
#include "sampler.h"
#include "profile/htab.h"
#include "native/maps.h"
#include "cpython/pyasync.h"
#include "cpython/pycode.h"
#include "cpython/pylayout.h"
#include "cpython/pyread.h"
#include "cpython/pysyms.h"
#include "cpython/pytables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRIES 16                 /* reads of a graph that keeps changing */

typedef struct node {
    const char *label;           /* "(T) name" or " qualname file:line" */
    size_t *kids, nkids, cap;
    int is_child;
    size_t task;                 /* a task node: its index in the graph, else SIZE_MAX */
} node;

typedef struct tree {
    node *v;
    size_t n, cap;
    pp_htab index;               /* (parent, label) -> coroutine node */
    char *text;                  /* the labels, back to back */
    size_t text_len, text_cap;
} tree;

typedef struct target {
    pid_t pid;
    pp_mem mem;                  /* its memory */
    uint64_t runtime;
    pp_pylayout layout;
    pp_pyread_types types;
    pp_pyobj r;
    pp_pyasync_offsets a;
    pp_pyasync_types ty;
    char file[4096];
} target;

/* ---- the program ----------------------------------------------------------- */

static int find(target *t, char *why, size_t len)
{
    pp_maps maps = {0};
    int rc;

    if ((rc = pp_maps_read(t->pid, &maps)) != 0) {
        snprintf(why, len, "%s", rc == -ENOENT || rc == -ESRCH ? "no such process"
                                                               : strerror(-rc));
        return rc;
    }
    if (pp_py_symbol_address(&maps, "_PyRuntime", &t->runtime, t->file, sizeof(t->file)) != 0) {
        snprintf(why, len, "no CPython runs in it (no _PyRuntime in the files it maps)");
        rc = -ENOENT;
    } else if ((rc = pp_pysyms_layout(&t->mem, &maps, t->runtime, t->file, 0, &t->layout, why,
                                      len)) == 0 &&
               (rc = pp_pysyms_async(&t->mem, &maps, &t->a, why, len)) == 0 &&
               ((rc = pp_pysyms_types(&maps, &t->types)) != 0 ||
                (rc = pp_pysyms_objtypes(&maps, &t->r.t)) != 0 ||
                (rc = pp_pysyms_async_types(&maps, &t->ty)) != 0))
        snprintf(why, len, "CPython's types are not in the symbols of the files it maps");
    t->r.m = &t->mem;
    t->r.o = &t->layout.off;
    pp_maps_free(&maps);
    return rc;
}

/* ---- the tree ---------------------------------------------------------------- */

static size_t add_text(tree *tr, const char *s)
{
    size_t at = tr->text_len, n = strlen(s) + 1;

    if (pp__grow((void **)&tr->text, &tr->text_cap, at + n, 1) < 0)
        return SIZE_MAX;
    memcpy(tr->text + at, s, n);
    tr->text_len += n;
    return at;
}

/* A node with its label's offset in the text (labels become pointers once
 * the text stops moving). */
static size_t add_node(tree *tr, size_t label_at, size_t task)
{
    if (label_at == SIZE_MAX ||
        pp__grow((void **)&tr->v, &tr->cap, tr->n + 1, sizeof(*tr->v)) < 0)
        return SIZE_MAX;
    memset(&tr->v[tr->n], 0, sizeof(tr->v[0]));
    tr->v[tr->n].label = (const char *)(uintptr_t)label_at;
    tr->v[tr->n].task = task;
    return tr->n++;
}

static int add_kid(tree *tr, size_t parent, size_t kid)
{
    node *p = &tr->v[parent];

    for (size_t i = 0; i < p->nkids; i++)
        if (p->kids[i] == kid)
            return 0;
    if (pp__grow((void **)&p->kids, &p->cap, p->nkids + 1, sizeof(*p->kids)) < 0)
        return -ENOMEM;
    p->kids[p->nkids++] = kid;
    tr->v[kid].is_child = 1;
    return 0;
}

static const char *label_of(const tree *tr, size_t i)
{
    return tr->text + (uintptr_t)tr->v[i].label;
}

/* The coroutine node labelled `label` under parent, made on first sight. */
static size_t coro_node(tree *tr, size_t parent, const char *label)
{
    uint64_t h = pp__hash(label, strlen(label), parent + 1);
    pp_htab_iter it;
    uint32_t *slot;
    size_t k;

    for (slot = pp__htab_first(&tr->index, h, &it); slot;
         slot = pp__htab_next(&tr->index, h, &it))
        if (strcmp(label_of(tr, *slot), label) == 0)
            return *slot;
    if ((k = add_node(tr, add_text(tr, label), SIZE_MAX)) == SIZE_MAX ||
        pp__htab_insert(&tr->index, h, (uint32_t)k) < 0 || add_kid(tr, parent, k) < 0)
        return SIZE_MAX;
    return k;
}

/* A frame as asyncio's tool writes it: "qualname file:line". */
static void frame_label(const target *t, pp_pycode *codes, const pp_pystack_frame *f,
                        char *out, size_t len)
{
    const pp_py_offsets *o = &t->layout.off;
    const pp_pycode_entry *e = pp_pycode_get(codes, &t->mem, o, &t->types, &f->id);
    uint64_t start;

    if (!e || !e->qualname[0]) {
        snprintf(out, len, " [unknown]");
        return;
    }
    start = pp_pyread_code_start(&t->mem, o, f->id.code, 0);
    snprintf(out, len, " %s %s:%d", e->qualname, e->file, pp_pycode_line(e, o, start, f->instr));
}

/* The frames f[0..n) (innermost first) as a path of coroutine nodes from
 * parent, outermost first; the last node. */
static size_t coro_path(tree *tr, const target *t, pp_pycode *codes, size_t parent,
                        const pp_pystack_frame *f, size_t n)
{
    char label[1024];

    for (size_t i = n; i-- > 0 && parent != SIZE_MAX;) {
        frame_label(t, codes, &f[i], label, sizeof(label));
        parent = coro_node(tr, parent, label);
    }
    return parent;
}

static int build(tree *tr, const target *t, pp_pycode *codes, const pp_pyasync_graph *g)
{
    char label[200];
    size_t *task_node = calloc(g->n ? g->n : 1, sizeof(*task_node));
    unsigned char *awaits = calloc(g->n ? g->n : 1, 1);
    int rc = -ENOMEM;

    if (!task_node || !awaits || pp__htab_init(&tr->index, 1024) < 0)
        goto out;
    for (size_t i = 0; i < g->n; i++) {
        snprintf(label, sizeof(label), "(T) %s", g->t[i].name);
        if ((task_node[i] = add_node(tr, add_text(tr, label), i)) == SIZE_MAX)
            goto out;
    }
    /* each awaiter: the awaiting task's coroutines, then the awaited task */
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = 0; k < g->t[i].nawaiters; k++) {
            const pp_pyasync_task *p = pp_pyasync_find_task(g, g->t[i].awaiter[k]);
            size_t at;

            if (!p)
                continue;                /* not a task of the lists: a future */
            awaits[p - g->t] = 1;
            at = coro_path(tr, t, codes, task_node[p - g->t], p->f, p->nframes);
            if (at == SIZE_MAX || add_kid(tr, at, task_node[i]) < 0)
                goto out;
        }
    /* a task that awaits no task: its own coroutines */
    for (size_t i = 0; i < g->n; i++)
        if (!awaits[i] && coro_path(tr, t, codes, task_node[i], g->t[i].f, g->t[i].nframes) ==
                              SIZE_MAX)
            goto out;
    rc = 0;
out:
    free(task_node);
    free(awaits);
    return rc;
}

static void render(FILE *out, const tree *tr, size_t i, char *prefix, size_t plen, int last)
{
    const node *v = &tr->v[i];

    fprintf(out, "%.*s%s%s\n", (int)plen, prefix, last ? "└── " : "├── ", label_of(tr, i));
    if (plen + 8 > 4000)
        return;                          /* deeper than any tree a terminal shows */
    memcpy(prefix + plen, last ? "    " : "│   ", last ? 4 : 6);
    for (size_t k = 0; k < v->nkids; k++)
        render(out, tr, v->kids[k], prefix, plen + (last ? 4 : 6), k + 1 == v->nkids);
}

static void free_tree(tree *tr)
{
    for (size_t i = 0; i < tr->n; i++)
        free(tr->v[i].kids);
    free(tr->v);
    free(tr->text);
    pp__htab_free(&tr->index);
}

/* ---- the command --------------------------------------------------------------- */

static void say_graph(FILE *out, const target *t, const pp_pyasync_graph *g)
{
    size_t threads = 0, running = 0;
    char v[32];

    for (size_t i = 0; i < g->n; i++) {      /* each list's tasks are together */
        threads += i == 0 || g->t[i].tstate != g->t[i - 1].tstate;
        running += g->t[i].running;
    }
    fprintf(out, "Process %d: CPython %s, %zu asyncio task%s on %zu thread%s, %zu running; ",
            (int)t->pid, pp_py_version_text(t->layout.version_hex, v, sizeof(v)), g->n,
            g->n == 1 ? "" : "s", threads, threads == 1 ? "" : "s", running);
    if (!g->consistent)
        fprintf(out, "THE GRAPH CHANGED UNDER EACH OF %d READS: what follows is the last "
                "read, which may mix two moments\n", g->reads);
    else if (g->quiet)
        fprintf(out, "read while none of its threads ran\n");
    else
        fprintf(out, "read %d times, the last two agreeing\n", g->reads);
    if (g->truncated)
        fprintf(out, "(only the first %d tasks were read)\n", PP_PYASYNC_TASKS);
}

int pp__dump_async(pid_t pid, FILE *out)
{
    target t = {.pid = pid, .mem = pp_mem_of_pid(pid)};
    pp_pyasync_graph g = {0};
    tree tr = {0};
    pp_pycode *codes = NULL;
    char why[512], prefix[4096];
    int rc;

    if ((rc = find(&t, why, sizeof(why))) != 0) {
        fprintf(stderr, "perfpy: cannot read the asyncio tasks of the process %d: %s\n",
                (int)pid, why);
        return PP_EXIT_FAIL;
    }
    if ((rc = pp_pycode_open(&codes)) != 0 ||
        (rc = pp_pyasync_read(&t.r, &t.a, &t.ty, t.runtime,
                              pp_pystack_tid_offset(&t.mem, &t.layout.off, t.runtime), TRIES,
                              &g)) != 0) {
        fprintf(stderr, "perfpy: cannot read the asyncio tasks of the process %d: %s\n",
                (int)pid, rc == -ESRCH ? "it ended" : rc == -EPERM ?
                "not permitted (run as its user, or as root)" : rc == -ENOMEM ?
                "out of memory" : "its memory did not hold what its CPython's layout says");
        pp_pycode_close(codes);
        return PP_EXIT_FAIL;
    }
    say_graph(out, &t, &g);
    if (build(&tr, &t, codes, &g) != 0) {
        fprintf(stderr, "perfpy: out of memory\n");
        rc = -ENOMEM;
    } else {
        for (size_t i = 0; i < tr.n; i++)
            if (!tr.v[i].is_child)
                render(out, &tr, i, prefix, 0, 1);
    }
    free_tree(&tr);
    pp_pyasync_graph_free(&g);
    pp_pycode_close(codes);
    return rc ? PP_EXIT_FAIL : 0;
}
