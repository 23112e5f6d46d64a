/*
 * Wall-clock mode's user-space half: the reason of each stretch off the
 * CPU (wall.c), the captures kept until their end, the reason's marker at
 * the leaf of a folded stack (fold.c rule 10), and the summary's split
 * (summary_wall.c), the waiting asyncio tasks' time apart from it.
 */
#include "report/fold.h"
#include "report/report.h"
#include "report/summary_int.h"
#include "sample/wall.h"
#include "test.h"

#include <stdio.h>

#define GIL 0x7f0000001000ull
#define GIL_SIZE 208

TEST(wall_reason_from_the_system_call)
{
    /* preempted, whatever the call */
    ASSERT_EQ_INT(pp_wall_reason(0, 202, GIL, 0, GIL, GIL_SIZE), PP_WAIT_CPU);
    ASSERT_EQ_INT(pp_wall_reason(1, -1, 0, 0, GIL, GIL_SIZE), PP_WAIT_OTHER);  /* a page fault */
    ASSERT_EQ_INT(pp_wall_reason(1, 230, 0, 0, 0, 0), PP_WAIT_SLEEP);          /* clock_nanosleep */
    ASSERT_EQ_INT(pp_wall_reason(1, 35, 0, 0, 0, 0), PP_WAIT_SLEEP);           /* nanosleep */
    ASSERT_EQ_INT(pp_wall_reason(1, 23, 0, 0, 0, 0), PP_WAIT_SLEEP);   /* select, no fd: 3.8-3.10 */
    ASSERT_EQ_INT(pp_wall_reason(1, 23, 5, 0, 0, 0), PP_WAIT_IO);      /* select on fds */
    ASSERT_EQ_INT(pp_wall_reason(1, 7, 0x1000, 0, 0, 0), PP_WAIT_SLEEP);       /* poll, nfds 0 */
    ASSERT_EQ_INT(pp_wall_reason(1, 7, 0x1000, 2, 0, 0), PP_WAIT_IO);
    ASSERT_EQ_INT(pp_wall_reason(1, 0, 3, 0, 0, 0), PP_WAIT_IO);               /* read */
    ASSERT_EQ_INT(pp_wall_reason(1, 288, 3, 0, 0, 0), PP_WAIT_IO);             /* accept4 */
    ASSERT_EQ_INT(pp_wall_reason(1, 232, 3, 0, 0, 0), PP_WAIT_IO);             /* epoll_wait */
    ASSERT_EQ_INT(pp_wall_reason(1, 61, 0, 0, 0, 0), PP_WAIT_OTHER);           /* wait4 */
    ASSERT_EQ_INT(pp_wall_reason(1, 72, 3, 7, 0, 0), PP_WAIT_LOCK);   /* fcntl F_SETLKW */
    ASSERT_EQ_INT(pp_wall_reason(1, 72, 3, 1, 0, 0), PP_WAIT_IO);
}

TEST(wall_futex_inside_the_gil_is_the_gil)
{
    ASSERT_EQ_INT(pp_wall_reason(1, 202, GIL, 0, GIL, GIL_SIZE), PP_WAIT_GIL);
    ASSERT_EQ_INT(pp_wall_reason(1, 202, GIL + 72, 0, GIL, GIL_SIZE), PP_WAIT_GIL);
    ASSERT_EQ_INT(pp_wall_reason(1, 202, GIL + GIL_SIZE - 4, 0, GIL, GIL_SIZE), PP_WAIT_GIL);
    /* just past it, just before it, and with the GIL unknown: a lock */
    ASSERT_EQ_INT(pp_wall_reason(1, 202, GIL + GIL_SIZE, 0, GIL, GIL_SIZE), PP_WAIT_LOCK);
    ASSERT_EQ_INT(pp_wall_reason(1, 202, GIL - 4, 0, GIL, GIL_SIZE), PP_WAIT_LOCK);
    ASSERT_EQ_INT(pp_wall_reason(1, 202, GIL, 0, 0, GIL_SIZE), PP_WAIT_LOCK);
}

TEST(wall_reason_of_a_record_reads_its_arguments)
{
    static struct pp_bpf_sample s;

    s.state = 1;
    s.syscall = 202;
    s.regs[5] = GIL + 8;            /* rdi: the futex */
    s.gil = GIL;
    ASSERT_EQ_INT(pp_wall_reason_of(&s, GIL_SIZE), PP_WAIT_GIL);
    s.syscall = 7;                  /* poll(fds, nfds = rsi) */
    s.regs[4] = 0;
    ASSERT_EQ_INT(pp_wall_reason_of(&s, GIL_SIZE), PP_WAIT_SLEEP);
    s.regs[4] = 1;
    ASSERT_EQ_INT(pp_wall_reason_of(&s, GIL_SIZE), PP_WAIT_IO);
}

TEST(wall_open_captures_wait_for_their_end)
{
    static struct pp_bpf_sample a, b;
    pp_wall_open *w;
    struct pp_bpf_sample *got;

    ASSERT_EQ_INT(pp_wall_open_new(&w), 0);
    a.pid = 10, a.tid = 11, a.stack_len = 4096, a.stack[4095] = 7, a.npy = 3;
    b = a;
    b.tid = 12;
    ASSERT_EQ_INT(pp_wall_open_keep(w, &a), 0);
    ASSERT_EQ_INT(pp_wall_open_keep(w, &b), 0);
    ASSERT_EQ_PTR(pp_wall_open_take(w, 10, 13), NULL);
    got = pp_wall_open_take(w, 10, 11);
    ASSERT_TRUE(got != NULL);
    ASSERT_EQ_INT(got->tid, 11);
    ASSERT_EQ_INT(got->npy, 3);
    ASSERT_EQ_INT(got->stack[4095], 7);     /* the stack read is kept */
    pp_wall_open_done(w, got);
    ASSERT_EQ_PTR(pp_wall_open_take(w, 10, 11), NULL);
    /* a second one for a thread whose end never came replaces it, counted */
    b.npy = 4;
    ASSERT_EQ_INT(pp_wall_open_keep(w, &b), 0);
    ASSERT_EQ_UINT(pp_wall_open_unended(w), 2);     /* the dropped one, the one kept */
    got = pp_wall_open_take(w, 10, 12);
    ASSERT_EQ_INT(got->npy, 4);                     /* the later one */
    pp_wall_open_done(w, got);
    pp_wall_open_free(w);
}

/* A capture's buffer given back is the next capture's: none allocated per
 * capture once a thread's first came (thousands a second on a server). */
TEST(wall_open_buffers_are_used_again)
{
    static struct pp_bpf_sample a;
    pp_wall_open *w;
    struct pp_bpf_sample *got[3];

    ASSERT_EQ_INT(pp_wall_open_new(&w), 0);
    a.pid = 10, a.stack_len = 64;
    for (int i = 0; i < 1000; i++) {
        for (uint32_t t = 0; t < 3; t++) {     /* three threads wait at once */
            a.tid = 11 + t;
            a.npy = (uint32_t)i + t;
            ASSERT_EQ_INT(pp_wall_open_keep(w, &a), 0);
        }
        for (uint32_t t = 0; t < 3; t++) {
            got[t] = pp_wall_open_take(w, 10, 11 + t);
            ASSERT_TRUE(got[t] != NULL);
            ASSERT_EQ_INT(got[t]->npy, i + (int)t);
        }
        for (uint32_t t = 0; t < 3; t++)
            pp_wall_open_done(w, got[t]);
    }
    ASSERT_EQ_UINT(pp_wall_open_made(w), 3);
    ASSERT_EQ_UINT(pp_wall_open_unended(w), 0);
    pp_wall_open_free(w);
}

/* One sample through the folder: a Python frame over a kernel frame. */
static void fold_one(pp_folder *f, int wait, uint64_t period, const char *py)
{
    pp_script_frame fr[3];
    pp_script_sample s;

    memset(fr, 0, sizeof(fr));
    fr[0] = (pp_script_frame){.ip = 0xffffffff81000000ull, .sym = "do_nanosleep",
                              .dso = "[kernel.kallsyms]", .sym_len = 12, .dso_len = 17};
    fr[1] = (pp_script_frame){.ip = 2, .sym = py, .dso = "[python]",
                              .sym_len = (uint32_t)strlen(py), .dso_len = 8, .py_line = 3};
    fr[2] = (pp_script_frame){.ip = 1, .sym = "_start", .dso = "/usr/bin/python3",
                              .sym_len = 6, .dso_len = 16};
    memset(&s, 0, sizeof(s));
    s.comm = "python3", s.comm_len = 7, s.pid = 1, s.tid = 1, s.period = 1000, s.weight_ns = period;
    s.event = "wall-clock", s.event_len = 10, s.frames = fr, s.nframes = 3, s.wait = wait;
    ASSERT_EQ_INT(pp_fold_sample(f, &s), 0);
}

TEST(wall_marker_is_the_leaf_even_without_native_frames)
{
    pp_profile p;
    pp_folder *f;
    pp_fold_opts o = {0};
    const pp_frame *leaf;

    for (int no_native = 0; no_native < 2; no_native++) {
        o.no_native = no_native;
        ASSERT_EQ_INT(pp_profile_init(&p), 0);
        ASSERT_EQ_INT(pp_fold_open(&f, &p, &o), 0);
        fold_one(f, PP_WAIT_SLEEP, 5000, "py::doze:/a.py");
        ASSERT_EQ_INT(pp_fold_close(f), 0);
        ASSERT_EQ_INT(p.nstacks, 1);
        leaf = &p.frames[pp_stack_ids(&p, &p.stacks[0])[p.stacks[0].depth - 1]];
        ASSERT_EQ_STR(leaf->name, "[off-CPU: sleep]");
        ASSERT_EQ_INT(leaf->kind, PP_FRAME_MARKER);
        ASSERT_EQ_INT(pp_wait_of_marker(leaf->name), PP_WAIT_SLEEP);
        ASSERT_EQ_INT(p.stacks[0].depth, no_native ? 2 : 3);    /* doze, [do_nanosleep,] marker */
        ASSERT_EQ_UINT(p.stacks[0].period, 5000);       /* the weight it was given */
        pp_profile_free(&p);
    }
    for (int w = 1; w < PP_WAIT_N; w++)          /* each marker says off-CPU, and is told back */
        ASSERT_EQ_INT(pp_wait_of_marker(pp_wait_marker(w)), w);
    ASSERT_EQ_INT(pp_wait_of_marker("[truncated]"), PP_WAIT_NONE);
    ASSERT_EQ_PTR(pp_wait_marker(PP_WAIT_NONE), NULL);
}

/* The summary's split of p (a wall-clock profile), printed into buf. */
static void print_split(pp_profile *p, char *buf, size_t size)
{
    FILE *out = fmemopen(buf, size - 1, "w");
    pp__funcs fn;
    pp__wall_split *w;

    ASSERT_EQ_INT(pp__funcs_make(p, 0, &fn), 0);
    w = pp__wall_split_make(p, &fn);
    ASSERT_TRUE(w != NULL);
    pp__wall_split_print(out, p, w, 10, 1);
    fclose(out);
    pp__wall_split_free(w);
    pp__funcs_free(&fn);
}

TEST(wall_summary_splits_time_by_reason)
{
    pp_profile p;
    pp_folder *f;
    pp__funcs fn;
    char buf[4096] = "";

    ASSERT_EQ_INT(pp_profile_init(&p), 0);
    p.value = PP_VALUE_WALL;
    p.period_ns = 1000;
    ASSERT_EQ_INT(pp_fold_open(&f, &p, NULL), 0);
    fold_one(f, PP_WAIT_NONE, 1000, "py::crunch:/a.py");  /* 1 on the CPU, 2 asleep, 1 GIL */
    fold_one(f, PP_WAIT_SLEEP, 1000, "py::doze:/a.py");
    fold_one(f, PP_WAIT_SLEEP, 1000, "py::doze:/a.py");
    fold_one(f, PP_WAIT_GIL, 1000, "py::doze:/a.py");
    ASSERT_EQ_INT(pp_fold_close(f), 0);
    print_split(&p, buf, sizeof(buf));
    ASSERT_CONTAINS(buf, "wall time: on-CPU 25.0%, off-CPU 75.0%: sleep 50.0%, I/O 0.0%, "
                         "lock 0.0%, GIL 25.0%, CPU wait 0.0%, other 0.0%");
    /* doze: 75% of all, own and total; of its time 67% asleep, 33% GIL */
    ASSERT_CONTAINS(buf, "   75.0%   75.0%       0%     67%      0%      0%     33%      0%"
                         "      0%  doze (/a.py)");
    /* a profile of CPU time gets none of it */
    p.value = PP_VALUE_CPU;
    ASSERT_EQ_INT(pp__funcs_make(&p, 0, &fn), 0);
    ASSERT_EQ_PTR(pp__wall_split_make(&p, &fn), NULL);
    pp__funcs_free(&fn);
    pp_profile_free(&p);
}

/* A waiting task's stack (--wall --async): its task, a coroutine, what it
 * awaits at the leaf, all in DSO [task] but the coroutine. */
static void fold_task(pp_folder *f, uint64_t weight, const char *leaf)
{
    pp_script_frame fr[3];
    pp_script_sample s;

    memset(fr, 0, sizeof(fr));
    fr[0] = (pp_script_frame){.ip = 3, .sym = leaf, .dso = PP_TASK_DSO,
                              .sym_len = (uint32_t)strlen(leaf), .dso_len = 6};
    fr[1] = (pp_script_frame){.ip = 2, .sym = "py::doze:/a.py", .dso = "[python]",
                              .sym_len = 14, .dso_len = 8, .py_line = 3};
    fr[2] = (pp_script_frame){.ip = 4, .sym = "<task 'h-1'>", .dso = PP_TASK_DSO,
                              .sym_len = 12, .dso_len = 6};
    memset(&s, 0, sizeof(s));
    s.comm = "python3", s.comm_len = 7, s.pid = 1, s.tid = 1, s.period = 1000, s.weight_ns = weight;
    s.event = "wall-clock", s.event_len = 10, s.frames = fr, s.nframes = 3;
    ASSERT_EQ_INT(pp_fold_sample(f, &s), 0);
}

TEST(wall_summary_keeps_waiting_tasks_apart)
{
    pp_profile p;
    pp_folder *f;
    char buf[4096] = "";
    const uint64_t tenth = 100000000;

    ASSERT_TRUE(pp_task_wait_marker("[awaiting Future]"));
    ASSERT_TRUE(pp_task_wait_marker(PP_TASK_READY));
    ASSERT_TRUE(!pp_task_wait_marker("<task 'h-1'>"));
    ASSERT_TRUE(!pp_task_wait_marker("[off-CPU: sleep]"));
    ASSERT_EQ_INT(pp_profile_init(&p), 0);
    p.value = PP_VALUE_WALL;
    p.period_ns = tenth;
    ASSERT_EQ_INT(pp_fold_open(&f, &p, NULL), 0);
    fold_one(f, PP_WAIT_NONE, tenth, "py::crunch:/a.py");  /* the thread: 0.1 s each */
    fold_one(f, PP_WAIT_SLEEP, tenth, "py::doze:/a.py");
    fold_task(f, 2 * tenth, "[awaiting Future]");          /* its tasks: 0.3 s */
    fold_task(f, tenth, PP_TASK_READY);
    ASSERT_EQ_INT(pp_fold_close(f), 0);
    print_split(&p, buf, sizeof(buf));
    /* the split is the thread's alone; the tasks' time a line of its own */
    ASSERT_CONTAINS(buf, "wall time: on-CPU 50.0%, off-CPU 50.0%: sleep 50.0%, I/O 0.0%, "
                         "lock 0.0%, GIL 0.0%, CPU wait 0.0%, other 0.0%\n");
    ASSERT_CONTAINS(buf, "asyncio tasks waiting (--async): 0.3 s of their own time, beside "
                         "the threads' 0.2 s");
    /* doze: 4 of the 5 tenths, 1 of them asleep, 3 awaiting */
    ASSERT_CONTAINS(buf, "CPU wait   other awaiting  function\n");
    ASSERT_CONTAINS(buf, "   80.0%   80.0%       0%     25%      0%      0%      0%      0%"
                         "      0%      75%  doze (/a.py)");
    pp_profile_free(&p);
}
