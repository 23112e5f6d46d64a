/*
 * pyasync.c on live interpreters: a program with a known asyncio task graph
 * (a main task awaiting one task directly and two of a TaskGroup, each
 * child suspended three coroutines deep; a str name, a non-ASCII one, an
 * int one; a task awaited by two others, which CPython keeps as a set) is read from outside on every interpreter of the build from
 * 3.14 (those that publish the graph: _asyncio's AsyncioDebug section),
 * and must be that graph: its tasks, their names, their awaiters, each
 * child's coroutine frames innermost first with their def lines, what the
 * innermost awaits, read once while nothing ran. On older interpreters the
 * offsets are not there, and the reason says why; offsets that lie (a
 * section too short, a field past its structure) are refused.
 */
#include "test.h"

#if PP_UNWIND
#include "native/maps.h"
#include "cpython/pyasync.h"
#include "cpython/pysyms.h"
#include "cpython/pycode.h"
#include "cpython/pylayout.h"
#include "cpython/pyread.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static const char PROGRAM[] =
    "import asyncio\n"                                         /* 1 */
    "async def leaf(ev):\n"                                    /* 2 */
    "    await ev.wait()\n"                                    /* 3 */
    "async def mid(ev):\n"                                     /* 4 */
    "    await leaf(ev)\n"                                     /* 5 */
    "async def child(ev):\n"                                   /* 6 */
    "    await mid(ev)\n"                                      /* 7 */
    "async def main():\n"                                      /* 8 */
    "    ev = asyncio.Event()\n"                               /* 9 */
    "    async with asyncio.TaskGroup() as tg:\n"              /* 10 */
    "        tg.create_task(child(ev), name='child-1')\n"      /* 11 */
    "        tg.create_task(child(ev), name='na\xc3\xafve-2')\n"
    "        t = asyncio.create_task(child(ev))\n"             /* 13 */
    "        shared = asyncio.create_task(leaf(ev), name='shared')\n"
    "        async def waiter():\n"                            /* 15 */
    "            await shared\n"                               /* 16 */
    "        asyncio.create_task(waiter(), name='waiter-a')\n"
    "        asyncio.create_task(waiter(), name='waiter-b')\n"
    "        await asyncio.sleep(0)\n"                         /* 19 */
    "        await asyncio.sleep(0)\n"                         /* 20 */
    "        print('ready', flush=True)\n"                     /* 21 */
    "        await t\n"                                        /* 22 */
    "asyncio.run(main())\n";

typedef struct reader {
    pid_t pid;
    int fd;
    pp_maps maps;
    pp_mem mem;
    uint64_t runtime;
    pp_pylayout layout;
    pp_pyobj r;
    pp_pyasync_offsets a;
    pp_pyasync_types ty;
    pp_pyread_types types;
} reader;

static void start_reader(const test_python *py, reader *x)
{
    char buf[16], file[512], why[512];

    memset(x, 0, sizeof(*x));
    x->pid = test_start_python(py->path, PROGRAM, &x->fd);
    x->mem = pp_mem_of_pid(x->pid);
    if (read(x->fd, buf, sizeof(buf)) < 5)
        TEST_FAIL_("%s did not start", py->path);
    usleep(100000);                      /* main is in `await t` by now */
    ASSERT_EQ_INT(pp_maps_read(x->pid, &x->maps), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&x->maps, "_PyRuntime", &x->runtime, file,
                                       sizeof(file)), 0);
    ASSERT_EQ_INT(pp_pysyms_layout(&x->mem, &x->maps, x->runtime, file, 0, &x->layout, why,
                                   sizeof(why)), 0);
    x->r = (pp_pyobj){&x->mem, &x->layout.off, {0}};
    ASSERT_EQ_INT(pp_pysyms_objtypes(&x->maps, &x->r.t), 0);
    ASSERT_EQ_INT(pp_pysyms_async_types(&x->maps, &x->ty), 0);
    ASSERT_EQ_INT(pp_pysyms_types(&x->maps, &x->types), 0);
}

static void stop_reader(reader *x)
{
    int status;

    kill(x->pid, SIGKILL);
    waitpid(x->pid, &status, 0);
    close(x->fd);
    pp_maps_free(&x->maps);
}

static const pp_pyasync_task *named(const pp_pyasync_graph *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->t[i].name, name) == 0)
            return &g->t[i];
    TEST_FAIL_("no task named %s among the %zu read", name, g->n);
    return NULL;
}

/* A child: Event.wait, leaf, mid, child (innermost first), awaited by main. */
static void check_child(const reader *x, pp_pycode *codes, const pp_pyasync_task *t,
                        const pp_pyasync_task *main_task)
{
    static const char *const want[] = {"Event.wait", "leaf", "mid", "child"};
    static const int lines[] = {0, 2, 4, 6};

    ASSERT_EQ_INT(t->nframes, 4);
    for (size_t i = 0; i < 4; i++) {
        const pp_pycode_entry *e = pp_pycode_get(codes, &x->mem, &x->layout.off, &x->types,
                                                 &t->f[i].id);
        ASSERT_EQ_STR(e->qualname, want[i]);
        if (lines[i])
            ASSERT_EQ_INT(e->def_line, lines[i]);
    }
    ASSERT_EQ_INT(t->nawaiters, 1);
    ASSERT_EQ_UINT(t->awaiter[0], main_task->addr);
    ASSERT_EQ_STR(t->awaits, "_asyncio.FutureIter");
    ASSERT_EQ_INT(t->running, 0);
}

static void graph_one(const test_python *py, const char *dir)
{
    reader x;
    pp_pyasync_graph g = {0};
    pp_pycode *codes;
    const pp_pyasync_task *main_task, *third = NULL, *shared;
    uint64_t wa, wb;
    char why[512];

    (void)dir;
    start_reader(py, &x);
    ASSERT_EQ_INT(pp_pysyms_async(&x.mem, &x.maps, &x.a, why, sizeof(why)), 0);
    ASSERT_EQ_INT(pp_pyasync_read(&x.r, &x.a, &x.ty, x.runtime, -1, 8, &g), 0);
    ASSERT_EQ_INT(g.consistent, 1);
    ASSERT_EQ_INT(g.quiet, 1);                 /* every thread asleep in its selector */
    ASSERT_EQ_INT(g.n, 7);
    ASSERT_EQ_INT(pp_pycode_open(&codes), 0);
    main_task = named(&g, "Task-1");
    ASSERT_EQ_INT(main_task->nawaiters, 0);    /* the root */
    ASSERT_EQ_INT(main_task->nframes, 1);      /* main, awaiting t */
    ASSERT_EQ_STR(pp_pycode_get(codes, &x.mem, &x.layout.off, &x.types,
                                &main_task->f[0].id)->qualname, "main");
    check_child(&x, codes, named(&g, "child-1"), main_task);
    check_child(&x, codes, named(&g, "na\xc3\xafve-2"), main_task);
    for (size_t i = 0; i < g.n; i++)           /* the unnamed one: Task-N from its int */
        if (strncmp(g.t[i].name, "Task-", 5) == 0 && &g.t[i] != main_task)
            third = &g.t[i];
    ASSERT_TRUE(third != NULL);
    check_child(&x, codes, third, main_task);
    /* awaited by two tasks: a set of them */
    shared = named(&g, "shared");
    ASSERT_EQ_INT(shared->nawaiters, 2);
    wa = named(&g, "waiter-a")->addr;
    wb = named(&g, "waiter-b")->addr;
    ASSERT_TRUE((shared->awaiter[0] == wa && shared->awaiter[1] == wb) ||
                (shared->awaiter[0] == wb && shared->awaiter[1] == wa));
    printf("    %s: 7 tasks, main awaited by none, 3 children 4 frames deep, each awaited "
           "by main, one awaited by a set of two (read %d time%s)\n", py->path, g.reads,
           g.reads == 1 ? "" : "s");
    pp_pycode_close(codes);
    pp_pyasync_graph_free(&g);
    stop_reader(&x);
}

TEST(pyasync_reads_the_task_graph_of_every_interpreter_from_3_14)
{
    test_each_python(graph_one, 14);
}

/* The negative twin: before 3.14 no file holds the section, and that is
 * what the reason says. */
static void absent_one(const test_python *py, const char *dir)
{
    reader x;
    char why[512];

    (void)dir;
    if (py->minor >= 14)
        return;
    start_reader(py, &x);
    ASSERT_EQ_INT(pp_pysyms_async(&x.mem, &x.maps, &x.a, why, sizeof(why)), -ENOENT);
    ASSERT_CONTAINS(why, "AsyncioDebug");
    stop_reader(&x);
}

TEST(pyasync_before_3_14_no_offsets_and_says_why)
{
    test_each_python(absent_one, 11);
}

TEST(pyasync_offsets_that_lie_are_refused)
{
    /* 3.14's values (a task of 168 bytes, a thread state of 936) */
    static const uint64_t good[13] = {168, 136, 96, 108, 109, 128, 152, 225864, 10880, 936,
                                      864, 872, 880};
    uint64_t bad[13];
    pp_pyasync_offsets a;
    char why[512];

    ASSERT_EQ_INT(pp_pyasync_offsets_from(good, sizeof(good), &a, why, sizeof(why)), 0);
    ASSERT_EQ_INT(a.task_coro, 128);
    ASSERT_EQ_INT(a.tstate_running_task, 872);
    ASSERT_EQ_INT(pp_pyasync_offsets_from(good, 96, &a, why, sizeof(why)), -ENOTSUP);
    ASSERT_CONTAINS(why, "holds 96 bytes");
    memcpy(bad, good, sizeof(bad));
    bad[5] = 4096;                             /* task_coro past a task of 168 bytes */
    ASSERT_EQ_INT(pp_pyasync_offsets_from(bad, sizeof(bad), &a, why, sizeof(why)), -ENOTSUP);
    ASSERT_CONTAINS(why, "past the end of its structure");
    memcpy(bad, good, sizeof(bad));
    bad[11] = 1ull << 40;                      /* no structure is this large */
    ASSERT_EQ_INT(pp_pyasync_offsets_from(bad, sizeof(bad), &a, why, sizeof(why)), -ENOTSUP);
    ASSERT_CONTAINS(why, "asyncio_running_task");
}
#endif
