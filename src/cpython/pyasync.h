/*
 * asyncio's task graph, read from outside the process: which tasks exist,
 * what each one's coroutines are doing, which task awaits which, and which
 * one a thread runs now. What `python -m asyncio pstree` shows, read the
 * way pyread.c reads stacks (process_vm_readv; nothing installed, nothing
 * written), and what names the tasks of samples.
 *
 * CPython 3.14+ keep what an outside reader needs, and publish where it is
 * (_asyncio's AsyncioDebug section, beside _Py_DebugOffsets):
 *
 *   thread state ── asyncio_running_loop, asyncio_running_task
 *                └─ asyncio_tasks_head ⇄ task.task_node ⇄ task.task_node ⇄ ...
 *   interpreter  ── asyncio_tasks_head: the tasks of threads that ended
 *   task ── task_name: a str, or an int N ("Task-N", formatted when asked)
 *        ── task_coro ─► coroutine ── gi_iframe: its own frame (code, line)
 *        │                  │ suspended in an await (gi_frame_state)
 *        │                  ▼ on its frame's value stack, yf_depth below the top
 *        │               coroutine ─► ... ─► what it waits on (a future, a
 *        │                                   task's iterator, a generator)
 *        ── task_awaited_by: the task awaiting it, or a set of them
 *           (await, TaskGroup, gather, shield)
 *
 * The running task's coroutines run on its thread's own frame chain: from
 * the top of that chain down to the frame inside its coroutine object.
 *
 * The program runs on while it is read: a task ends, another begins, a
 * coroutine moves to its next await. A graph is therefore read until two
 * reads agree, or until a read during which none of the process's threads
 * ran (each one off the CPU before and after, its context switches
 * unchanged); one that never settles is returned marked (consistent 0),
 * for the caller to say so, never shown as if it were whole.
 *
 * 3.8-3.13 publish none of this: their task objects' layout is private to
 * _asynciomodule.c, the running task is an entry of a dict in the module's
 * state, and a task awaiting another is not recorded at all before 3.14.
 */
#ifndef PERFPY_CPYTHON_PYASYNC_H
#define PERFPY_CPYTHON_PYASYNC_H

#include "pyobj.h"
#include "pyoffsets.h"
#include "pystack.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PP_PYASYNC_SECTION ".AsyncioDebug"
#define PP_PYASYNC_DEBUG_SIZE 104    /* 13 uint64_t: the struct of 3.14 and 3.15 */
#define PP_PYASYNC_DEPTH 64          /* coroutine frames read per task */
#define PP_PYASYNC_AWAITERS 16       /* awaiting tasks read per task */
#define PP_PYASYNC_TASKS 65536       /* tasks read per process */

/* _asyncio's debug offsets (Modules/_asynciomodule.c, 3.14+), each an
 * offset in bytes. */
typedef struct pp_pyasync_offsets {
    int32_t task_size, task_name, task_awaited_by, task_is_task, task_awaited_by_is_set,
            task_coro, task_node;
    int32_t interp_size, interp_tasks_head;
    int32_t tstate_size, tstate_running_loop, tstate_running_task, tstate_tasks_head;
} pp_pyasync_offsets;

/* From the section's bytes (n of them): 0, or -ENOTSUP with the sentence
 * in why (size len): too short, or an offset past its structure. */
int pp_pyasync_offsets_from(const void *bytes, size_t n, pp_pyasync_offsets *out, char *why,
                            size_t len);
/* What an awaitable is: a coroutine, a generator (the types' addresses,
 * PyCoro_Type and PyGen_Type), or anything else, where a chain ends. */
typedef struct pp_pyasync_types {
    uint64_t coro, gen;
} pp_pyasync_types;


typedef struct pp_pyasync_task {
    uint64_t addr;                   /* the task object */
    uint64_t tstate;                 /* the thread state whose list holds it (0: the
                                        interpreter's list: its thread ended) */
    pid_t tid;                       /* that thread's id (0: unknown) */
    int running;                     /* its thread runs it now */
    char name[128];                  /* as task.get_name() gives it */
    size_t nframes;                  /* its coroutines' frames, INNERMOST FIRST */
    int frames_cut;                  /* more than PP_PYASYNC_DEPTH */
    pp_pystack_frame f[PP_PYASYNC_DEPTH];
    char awaits[64];                 /* the type of what its innermost coroutine
                                        waits on ("" when none: running, done) */
    size_t nawaiters;                /* tasks awaiting it (task_awaited_by) */
    int awaiters_cut;                /* more than PP_PYASYNC_AWAITERS */
    uint64_t awaiter[PP_PYASYNC_AWAITERS];
} pp_pyasync_task;

typedef struct pp_pyasync_graph {
    pp_pyasync_task *t;              /* in the order of the lists: each thread's, then
                                        the interpreter's */
    size_t n, cap;
    int truncated;                   /* more than PP_PYASYNC_TASKS */
    int reads;                       /* reads it took */
    int consistent;                  /* two reads agreed, or nothing ran while read */
    int quiet;                       /* it was read while no thread ran */
} pp_pyasync_graph;

/* The graph of the main interpreter (_PyRuntime at runtime) of the
 * process r reads (pyobj.h), read until it is consistent or `tries` reads
 * have been made. tid_off as pp_pystack_read. 0 (see g->consistent), or
 * -errno (-ESRCH gone, -EPERM not ours, -ENOMEM, -EFAULT its memory is not
 * what the offsets say). */
int pp_pyasync_read(const pp_pyobj *r, const pp_pyasync_offsets *a,
                    const pp_pyasync_types *ty, uint64_t runtime, int tid_off, int tries,
                    pp_pyasync_graph *g);
/* The task at addr in g, or NULL. */
const pp_pyasync_task *pp_pyasync_find_task(const pp_pyasync_graph *g, uint64_t addr);
void pp_pyasync_graph_free(pp_pyasync_graph *g);

/* A task's name object at name: a str, or an int N ("Task-N"). 1 when
 * read, 0 ("?") when it is neither. */
int pp_pyasync_task_name(const pp_pyobj *r, uint64_t name, char *out, size_t len);
/* The same from a copy of the name object's first n bytes (what the BPF
 * program copied at a sample), its type's address type told by t; a str
 * longer than the copy ends in "...". */
void pp_pyasync_name_copy(const pp_py_offsets *o, const pp_pyobj_types *t, uint64_t type,
                          const void *copy, size_t n, char *out, size_t len);

#endif
