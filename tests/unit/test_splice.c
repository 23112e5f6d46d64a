/*
 * The splice (src/native/splice.c) on synthetic samples: where each run of
 * Python frames lands in the native stack, and what the folder makes of
 * the result (the executing line in the label, "[truncated]" when cut).
 */
#include "report_helpers.h"
#include "native/splice.h"
#include "test.h"

#define K(name) {0xffffffff81000000ull, name, "[kernel.kallsyms]"}
#define N(name, dso) {0x7f0000001000ull, name, dso}
#define LIBPY "/usr/lib/libpython3.12.so.1.0"
#define PYEXE "/usr/bin/python3.12"
#define EVAL N("_PyEval_EvalFrameDefault", LIBPY)

/* A whole native stack with three evaluations (leaf first). */
static const pp_native_frame native3[] = {
    N("PyLong_FromLong", LIBPY), EVAL, N("_PyFunction_Vectorcall", LIBPY), EVAL,
    N("PyObject_Call", LIBPY), EVAL, N("PyRun_SimpleFileObject", LIBPY),
    N("Py_BytesMain", LIBPY), N("main", PYEXE), N("__libc_start_call_main", "/usr/lib/libc.so.6"),
    N("_start", PYEXE),
};
#define NN(a) (sizeof(a) / sizeof(a[0]))

static const pp_native_frame kernel2[] = {K("clear_page_erms"), K("asm_exc_page_fault")};

static pp_sample sample(const pp_pyframe *py, size_t npy)
{
    pp_sample s;

    memset(&s, 0, sizeof(s));
    s.pid = 42;
    s.tid = 43;
    s.period = 1000;
    s.have_user = 1;
    memcpy(s.comm, "python3", 8);
    s.py = py;
    s.npy = npy;
    return s;
}

/* The frames of out as one "sym|sym|..." line, leaf first; a Python frame
 * written "py::qualname:file" (as a trampoline would be named: for the
 * eye only, the splice hands it over as its parts), after checking that
 * it is one. */
static char *syms(const pp_raw_sample *out)
{
    static char buf[4096];
    size_t at = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < out->nframes; i++) {
        const pp_raw_frame *x = &out->frames[i];

        if (x->kind == PP_RAW_PYTHON) {
            ASSERT_EQ_INT(x->sym_len, 0);
            at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%spy::%.*s:%.*s", i ? "|" : "",
                                   (int)x->qualname_len, x->qualname, (int)x->file_len,
                                   x->file);
        } else {
            at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%.*s", i ? "|" : "",
                                   (int)x->sym_len, x->sym);
        }
    }
    return buf;
}

/* out folded alone, as collapsed text. */
static char *folded(const pp_raw_sample *out)
{
    pp_profile p;
    pp_folder *f;
    char *text;

    ASSERT_OK(pp_profile_init(&p));
    ASSERT_OK(pp_fold_open(&f, &p, NULL));
    ASSERT_OK(pp_fold_sample(f, out));
    pp_fold_close(f);
    text = collapsed_of(&p);
    pp_profile_free(&p);
    return text;
}

/* 3.8-3.10: every Python frame is an evaluation of its own. */
static const pp_pyframe py310[] = {
    {"foo", "/app/x.py", 3, 1, 1, 0}, {"bar", "/app/x.py", 12, 10, 1, 0},
    {"<module>", "/app/x.py", 30, 1, 1, 0},
};

TEST(splice_one_frame_per_evaluation)
{
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(py310, 3);

    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, kernel2, 2, native3, NN(native3), &out));
    ASSERT_EQ_STR(syms(&out),
                  "clear_page_erms|asm_exc_page_fault|PyLong_FromLong|_PyEval_EvalFrameDefault|"
                  "py::foo:/app/x.py|_PyFunction_Vectorcall|_PyEval_EvalFrameDefault|"
                  "py::bar:/app/x.py|PyObject_Call|_PyEval_EvalFrameDefault|"
                  "py::<module>:/app/x.py|PyRun_SimpleFileObject|Py_BytesMain|main|"
                  "__libc_start_call_main|_start");
    ASSERT_EQ_INT(out.frames[4].kind, PP_RAW_PYTHON);
    ASSERT_EQ_INT(out.frames[4].line, 3);
    ASSERT_EQ_INT(out.frames[4].def_line, 1);
    ASSERT_EQ_INT(out.frames[0].kind, PP_RAW_KERNEL);
    ASSERT_EQ_INT(out.frames[2].kind, PP_RAW_NATIVE);
    ASSERT_EQ_INT(out.pid, 42);
    ASSERT_EQ_INT(out.frames_dropped, 0);
    ASSERT_EQ_STR(folded(&out), "<module> (/app/x.py:30);bar (/app/x.py:12);foo (/app/x.py:3);"
                                "PyLong_FromLong;asm_exc_page_fault;clear_page_erms 1\n");
    ASSERT_EQ_UINT(pp_splice_stats_of(sp)->runs_at_root, 0);
    pp_splice_close(sp);
}

TEST(splice_def_lines_on_request)
{
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(py310, 3);
    pp_splice_opts o = {1};

    ASSERT_OK(pp_splice_open(&sp, &o));
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, native3, NN(native3), &out));
    ASSERT_EQ_STR(folded(&out), "<module> (/app/x.py:1);bar (/app/x.py:10);foo (/app/x.py:1);"
                                "PyLong_FromLong 1\n");
    pp_splice_close(sp);
}

/* 3.11+: one evaluation runs frames until an entry frame; recursion within
 * one evaluation gives neighbours of one name, which stay two frames. */
static const pp_pyframe py312[] = {
    {"fib", "/app/x.py", 5, 4, 0, 0}, {"fib", "/app/x.py", 6, 4, 0, 0}, {"bar", "/app/x.py", 12, 10, 1, 0},
    {"cb", "/app/x.py", 20, 19, 1, 0}, {"<module>", "/app/x.py", 30, 1, 1, 0},
};

TEST(splice_runs_up_to_entry_frames)
{
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(py312, 5);

    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, native3, NN(native3), &out));
    ASSERT_EQ_STR(syms(&out),
                  "PyLong_FromLong|_PyEval_EvalFrameDefault|py::fib:/app/x.py|py::fib:/app/x.py|"
                  "py::bar:/app/x.py|_PyFunction_Vectorcall|_PyEval_EvalFrameDefault|"
                  "py::cb:/app/x.py|PyObject_Call|_PyEval_EvalFrameDefault|"
                  "py::<module>:/app/x.py|PyRun_SimpleFileObject|Py_BytesMain|main|"
                  "__libc_start_call_main|_start");
    ASSERT_EQ_STR(folded(&out), "<module> (/app/x.py:30);cb (/app/x.py:20);bar (/app/x.py:12);"
                                "fib (/app/x.py:6);fib (/app/x.py:5);PyLong_FromLong 1\n");
    pp_splice_close(sp);
}

TEST(splice_cut_native_stack_puts_outer_runs_at_the_root)
{
    static const pp_native_frame cut[] = {N("PyLong_FromLong", LIBPY), EVAL,
                                          N("_PyFunction_Vectorcall", LIBPY)};
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(py312, 5);

    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, cut, NN(cut), &out));
    ASSERT_EQ_STR(syms(&out), "PyLong_FromLong|_PyEval_EvalFrameDefault|py::fib:/app/x.py|"
                              "py::fib:/app/x.py|py::bar:/app/x.py|_PyFunction_Vectorcall|"
                              "py::cb:/app/x.py|py::<module>:/app/x.py");
    ASSERT_EQ_UINT(pp_splice_stats_of(sp)->runs, 3);
    ASSERT_EQ_UINT(pp_splice_stats_of(sp)->runs_at_root, 2);
    ASSERT_EQ_STR(folded(&out), "[truncated];<module> (/app/x.py:30);cb (/app/x.py:20);"
                                "bar (/app/x.py:12);fib (/app/x.py:6);fib (/app/x.py:5);"
                                "PyLong_FromLong 1\n");
    pp_splice_close(sp);
}

TEST(splice_cut_native_stack_with_the_whole_python_chain_is_whole)
{
    static const pp_native_frame cut[] = {N("PyLong_FromLong", LIBPY), EVAL,
                                          N("_PyFunction_Vectorcall", LIBPY)};
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(py312, 5);

    s.py_whole = 1;                        /* read to <module>, the chain's first */
    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, cut, NN(cut), &out));
    ASSERT_EQ_INT(out.origin, 1);
    ASSERT_EQ_STR(folded(&out), "<module> (/app/x.py:30);cb (/app/x.py:20);"
                                "bar (/app/x.py:12);fib (/app/x.py:6);fib (/app/x.py:5);"
                                "PyLong_FromLong 1\n");
    /* no Python frame read: the native stack's own rule, cut */
    s = sample(py312, 0);
    s.py_whole = 1;
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, cut, NN(cut), &out));
    ASSERT_EQ_INT(out.origin, 0);
    ASSERT_CONTAINS(folded(&out), "[truncated];");
    pp_splice_close(sp);
}

TEST(splice_deeper_python_chain_than_read_is_truncated)
{
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(py310, 2);        /* <module> not read */

    s.py_truncated = 1;
    s.py_whole = 1;                        /* ignored: the chain was cut */
    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, native3, NN(native3), &out));
    ASSERT_EQ_INT(out.frames_dropped, 1);
    ASSERT_EQ_STR(folded(&out), "[truncated];bar (/app/x.py:12);foo (/app/x.py:3);"
                                "PyLong_FromLong 1\n");
    pp_splice_close(sp);
}

TEST(splice_without_python_frames_keeps_the_native_stack)
{
    static const pp_native_frame n[] = {N("deflate_slow", "/usr/lib/libz.so.1"),
                                        N("main", "/usr/bin/gzip"),
                                        N("_start", "/usr/bin/gzip")};
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(NULL, 0);

    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, kernel2, 2, n, 3, &out));
    ASSERT_EQ_STR(syms(&out), "clear_page_erms|asm_exc_page_fault|deflate_slow|main|_start");
    ASSERT_EQ_STR(folded(&out), "_start;main;deflate_slow;asm_exc_page_fault;clear_page_erms 1\n");
    pp_splice_close(sp);
}

TEST(splice_kernel_only_sample)
{
    static const pp_native_frame k[] = {K("schedule"), K("kthread"), K("ret_from_fork")};
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(NULL, 0);

    s.have_user = 0;
    memcpy(s.comm, "kworker/0:1", 12);
    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, k, 3, NULL, 0, &out));
    ASSERT_EQ_STR(syms(&out), "schedule|kthread|ret_from_fork");
    ASSERT_EQ_INT((int)out.comm_len, 11);
    ASSERT_EQ_STR(folded(&out), "ret_from_fork;kthread;schedule 1\n");
    /* and a cut one: no root, so "[truncated]" */
    ASSERT_OK(pp_splice(sp, &s, k, 1, NULL, 0, &out));
    ASSERT_EQ_STR(folded(&out), "[truncated];schedule 1\n");
    pp_splice_close(sp);
}

/* --async: the running task (its coroutines: bar, whose evaluation cb's C
 * code started, and fib) under the tasks awaiting it: what ran it (cb,
 * <module>: the event loop) and the natives rootward of bar's evaluation
 * give way to <task 'handler-1'>, then serve's coroutines (innermost
 * first) and <task 'Task-1'>, the root. */
static const pp_pyframe tail2[] = {
    {"<task 'handler-1'>", "", 0, 0, 0, 1},
    {"Queue.get", "/lib/queues.py", 186, 180, 0, 0},
    {"serve", "/app/x.py", 46, 40, 0, 0},
    {"<task 'Task-1'>", "", 0, 0, 0, 1},
};

TEST(splice_async_tasks_replace_what_runs_the_task)
{
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(py312, 5);

    s.task_cut = 2;                        /* bar: the running task's coroutine */
    s.tasks = tail2;
    s.ntasks = NN(tail2);
    s.tasks_whole = 1;
    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, kernel2, NN(kernel2), native3, NN(native3), &out));
    ASSERT_EQ_STR(syms(&out),
                  "clear_page_erms|asm_exc_page_fault|PyLong_FromLong|"
                  "_PyEval_EvalFrameDefault|py::fib:/app/x.py|py::fib:/app/x.py|"
                  "py::bar:/app/x.py|<task 'handler-1'>|py::Queue.get:/lib/queues.py|"
                  "py::serve:/app/x.py|<task 'Task-1'>");
    ASSERT_EQ_STR(folded(&out), "<task 'Task-1'>;serve (/app/x.py:46);"
                                "Queue.get (/lib/queues.py:186);<task 'handler-1'>;"
                                "bar (/app/x.py:12);fib (/app/x.py:6);fib (/app/x.py:5);"
                                "PyLong_FromLong;asm_exc_page_fault;clear_page_erms 1\n");
    /* a chain not read to its root: marked, never taken for whole */
    s.tasks_whole = 0;
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, native3, NN(native3), &out));
    ASSERT_CONTAINS(folded(&out), "[truncated];<task 'Task-1'>;serve (");
    pp_splice_close(sp);
}

TEST(splice_async_task_frames_stay_without_native_frames)
{
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(py312, 5);
    pp_profile p;
    pp_folder *f;
    pp_fold_opts fo = {0};
    char *text;

    s.task_cut = 2;
    s.tasks = tail2;
    s.ntasks = NN(tail2);
    s.tasks_whole = 1;
    fo.no_native = 1;
    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, native3, NN(native3), &out));
    ASSERT_OK(pp_profile_init(&p));
    ASSERT_OK(pp_fold_open(&f, &p, &fo));
    ASSERT_OK(pp_fold_sample(f, &out));
    pp_fold_close(f);
    text = collapsed_of(&p);
    ASSERT_EQ_STR(text, "<task 'Task-1'>;serve (/app/x.py:46);Queue.get (/lib/queues.py:186);"
                        "<task 'handler-1'>;bar (/app/x.py:12);fib (/app/x.py:6);"
                        "fib (/app/x.py:5) 1\n");
    free(text);
    pp_profile_free(&p);
    pp_splice_close(sp);
}

/* Wall-clock --async: a task waiting is a stack of tasks alone (no thread
 * frames, no native ones), its leaf what it awaits. */
TEST(splice_async_waiting_task_is_its_tasks_alone)
{
    static const pp_pyframe waiting[] = {
        {"[awaiting Future]", "", 0, 0, 0, 1},
        {"sleep", "/lib/tasks.py", 702, 690, 0, 0},
        {"helper", "/app/x.py", 22, 20, 0, 0},
        {"handler", "/app/x.py", 29, 26, 0, 0},
        {"<task 'handler-7'>", "", 0, 0, 0, 1},
        {"serve", "/app/x.py", 46, 40, 0, 0},
        {"<task 'Task-1'>", "", 0, 0, 0, 1},
    };
    pp_splicer *sp;
    pp_raw_sample out;
    pp_sample s = sample(NULL, 0);

    s.have_user = 0;
    s.tasks = waiting;
    s.ntasks = NN(waiting);
    s.tasks_whole = 1;
    ASSERT_OK(pp_splice_open(&sp, NULL));
    ASSERT_OK(pp_splice(sp, &s, NULL, 0, NULL, 0, &out));
    ASSERT_EQ_STR(folded(&out), "<task 'Task-1'>;serve (/app/x.py:46);<task 'handler-7'>;"
                                "handler (/app/x.py:29);helper (/app/x.py:22);"
                                "sleep (/lib/tasks.py:702);[awaiting Future] 1\n");
    pp_splice_close(sp);
}
