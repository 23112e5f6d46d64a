/*
 * The profile's per-sample side (src/profile/samples.c): every sample kept
 * with its time, thread and weight, in 12 bytes; the log through the
 * folder (threads named, roots per thread), through the rebuild of the
 * process roots (every record's stack remapped), long weights split, the
 * log by thread in time order, and what a stack's number is for CPU and
 * wall-clock profiles.
 */
#include "report_helpers.h"
#include "test.h"

#include <errno.h>

#define MAP "(/tmp/perf-100.map)"
#define AT(comm, pid, tid, time) comm " " #pid "/" #tid " " time ": 1000 cpu-clock:\n"
#define PY(fn) "\t  7f0000001009 py::" fn ":/app/x.py " MAP "\n\t  1080 _start (/usr/bin/python3)\n\n"

/* Two processes, three threads, out of the order perf would never give
 * within a thread but could across threads. */
static const char threads_text[] =
    AT("python3", 100, 100, "5.000100") PY("main_work")
    AT("worker-1", 100, 101, "5.000200") PY("crunch")
    AT("python3", 100, 100, "5.001100") PY("main_work")
    AT("worker-1", 100, 101, "5.001200") PY("crunch")
    AT("python3", 200, 200, "5.001500") PY("child")
    AT("worker-1", 100, 101, "5.002200") PY("idle");

/* The stack of a record as collapsed text ("a;b;c"). */
static void stack_text(const pp_profile *p, uint32_t si, char *buf, size_t cap)
{
    const pp_stack *s = &p->stacks[si];
    size_t n = 0;

    buf[0] = '\0';
    for (uint32_t d = 0; d < s->depth && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", d ? ";" : "",
                              p->frames[pp_stack_ids(p, s)[d]].label);
}

TEST(profile_log_record_is_12_bytes)
{
    ASSERT_EQ_INT(sizeof(pp_sample_rec), 12);
}

TEST(profile_log_keeps_each_sample_with_thread_and_time)
{
    pp_profile p;
    pp_fold_opts o = {.processes = PP_PROCESSES_MERGE};
    static const struct { int pid, tid; uint64_t us; const char *stack; } want[] = {
        {100, 100, 0, "main_work (/app/x.py)"}, {100, 101, 100, "crunch (/app/x.py)"},
        {100, 100, 1000, "main_work (/app/x.py)"}, {100, 101, 1100, "crunch (/app/x.py)"},
        {200, 200, 1400, "child (/app/x.py)"}, {100, 101, 2100, "idle (/app/x.py)"},
    };
    char buf[256];

    fold_text(&p, threads_text, &o, NULL);
    ASSERT_EQ_UINT(p.nlog, 6);
    ASSERT_EQ_UINT(p.nthreads, 3);
    /* the first span starts one period (1000 ns) before the first sample */
    ASSERT_EQ_UINT(p.time_base_ns, 5000100000ull - 1000);
    for (uint64_t i = 0; i < p.nlog; i++) {
        pp_logged r = pp_profile_rec(&p, i);
        const pp_thread *t = &p.threads[r.thread];
        ASSERT_EQ_INT(t->pid, want[i].pid);
        ASSERT_EQ_INT(t->tid, want[i].tid);
        /* µs resolution: the time comes back to the microsecond */
        ASSERT_EQ_UINT(r.time_ns / 1000, (5000100000ull + want[i].us * 1000) / 1000);
        ASSERT_EQ_UINT(r.weight, 1000);
        stack_text(&p, r.stack, buf, sizeof(buf));
        ASSERT_EQ_STR(buf, want[i].stack);
    }
    ASSERT_EQ_STR(p.threads[0].name, "MainThread");   /* a Python process's main thread */
    ASSERT_EQ_STR(p.threads[1].name, "worker-1");     /* its comm (3.14+: Thread.name) */
    ASSERT_EQ_UINT(p.threads[1].samples, 3);
    ASSERT_EQ_UINT(p.threads[1].first_ns, 5000200000ull);
    ASSERT_EQ_UINT(p.threads[1].last_ns, 5002200000ull);
    pp_profile_free(&p);
}

/* The aggregate is the log's sum, stack by stack. */
static void assert_log_sums_to_stacks(const pp_profile *p)
{
    uint64_t *w = calloc(p->nstacks + 1, sizeof(*w));
    uint64_t n = 0;

    for (uint64_t i = 0; i < p->nlog; i++)
        w[pp_profile_rec(p, i).stack] += pp_profile_rec(p, i).weight;
    for (uint32_t s = 0; s < p->nstacks; s++)
        ASSERT_EQ_UINT(w[s], p->stacks[s].period);
    for (uint32_t t = 0; t < p->nthreads; t++)
        n += p->threads[t].samples;
    ASSERT_EQ_UINT(n, p->samples);
    free(w);
}

TEST(profile_log_follows_the_process_roots_rebuild)
{
    pp_profile p;
    char buf[256];

    /* two processes: the profile is rebuilt with "python3 (pid N)" roots,
     * new frame and stack indexes; each record must name its new stack */
    fold_text(&p, threads_text, NULL, NULL);
    ASSERT_EQ_UINT(p.nlog, 6);
    for (uint64_t i = 0; i < p.nlog; i++) {
        pp_logged r = pp_profile_rec(&p, i);
        const pp_thread *t = &p.threads[r.thread];
        char root[64];
        snprintf(root, sizeof(root), "python3 (pid %d);", t->pid);
        stack_text(&p, r.stack, buf, sizeof(buf));
        ASSERT_TRUE(strncmp(buf, root, strlen(root)) == 0);
    }
    stack_text(&p, pp_profile_rec(&p, 5).stack, buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "python3 (pid 100);idle (/app/x.py)");
    assert_log_sums_to_stacks(&p);
    ASSERT_EQ_STR(p.threads[1].name, "worker-1");     /* names survive the old arena */
    pp_profile_free(&p);
}

TEST(fold_threads_gives_a_root_per_thread)
{
    pp_fold_opts o = {.threads = PP_THREAD_ROOTS_SPLIT};
    char *out = fold_to_collapsed(threads_text, &o);

    ASSERT_EQ_STR(out, "python3 (pid 100);MainThread (tid 100);main_work (/app/x.py) 2\n"
                       "python3 (pid 100);worker-1 (tid 101);crunch (/app/x.py) 2\n"
                       "python3 (pid 100);worker-1 (tid 101);idle (/app/x.py) 1\n"
                       "python3 (pid 200);MainThread (tid 200);child (/app/x.py) 1\n");
    free(out);
    o.processes = PP_PROCESSES_MERGE;
    out = fold_to_collapsed(threads_text, &o);
    ASSERT_EQ_STR(out, "MainThread (tid 100);main_work (/app/x.py) 2\n"
                       "MainThread (tid 200);child (/app/x.py) 1\n"
                       "worker-1 (tid 101);crunch (/app/x.py) 2\n"
                       "worker-1 (tid 101);idle (/app/x.py) 1\n");
    free(out);
}

/* By default (--threads) threads named alike share a root, their name's
 * pattern: a pool's workers, a server's short-lived request threads. */
TEST(fold_threads_of_one_name_pattern_share_a_root)
{
    static const char text[] =
        AT("python3", 100, 100, "5.000100") PY("main_work")
        AT("Thread-3 (handle)", 100, 101, "5.000200") PY("crunch")
        AT("Thread-12 (handle)", 100, 102, "5.000300") PY("crunch")
        AT("ThreadPoolExecutor-0_3", 100, 103, "5.000400") PY("idle")
        AT("ThreadPoolExecutor-0_7", 100, 104, "5.000500") PY("idle")
        AT("ThreadPoolExecutor-1_0", 100, 105, "5.000600") PY("idle")
        AT("python3", 200, 200, "5.000700") PY("child");
    pp_fold_opts o = {.threads = PP_THREAD_ROOTS_PATTERN};
    char *out = fold_to_collapsed(text, &o);

    ASSERT_EQ_STR(out, "python3 (pid 100);MainThread;main_work (/app/x.py) 1\n"
                       "python3 (pid 100);Thread-* (handle);crunch (/app/x.py) 2\n"
                       "python3 (pid 100);ThreadPoolExecutor-0_*;idle (/app/x.py) 2\n"
                       "python3 (pid 100);ThreadPoolExecutor-1_*;idle (/app/x.py) 1\n"
                       "python3 (pid 200);MainThread;child (/app/x.py) 1\n");
    free(out);
    /* one graph for all processes: their main threads one root too */
    o.processes = PP_PROCESSES_MERGE;
    out = fold_to_collapsed(text, &o);
    ASSERT_CONTAINS(out, "MainThread;child (/app/x.py) 1\nMainThread;main_work (/app/x.py) 1\n");
    free(out);
    /* split: one each, with its tid */
    o.threads = PP_THREAD_ROOTS_SPLIT;
    out = fold_to_collapsed(text, &o);
    ASSERT_CONTAINS(out, "Thread-12 (handle) (tid 102);crunch (/app/x.py) 1\n"
                         "Thread-3 (handle) (tid 101);crunch (/app/x.py) 1\n");
    free(out);
}

/* A thread whose threading name was never read keeps its comm, which the
 * kernel cut to 15 bytes (CPython 3.14+ sets it from that name): one per
 * width of the number ("Thread-1 (proce", "Thread-12 (proc"). Each joins
 * the root of a thread named in full whose pattern it begins; one that
 * begins none keeps its own; --threads split keeps each as it is. */
TEST(fold_threads_cut_by_the_kernel_join_their_whole_name)
{
    static const char text[] =
        AT("Thread-1 (proce", 100, 101, "5.000100") PY("crunch")
        AT("Thread-12 (proc", 100, 102, "5.000200") PY("crunch")
        AT("Thread-123 (pro", 100, 103, "5.000300") PY("crunch")
        AT("x", 100, 104, "5.000400") PY("crunch")
        AT("Thread-9 (other", 100, 105, "5.000500") PY("idle");
    pp_fold_opts o = {.threads = PP_THREAD_ROOTS_PATTERN, .processes = PP_PROCESSES_MERGE};
    pp_profile p;
    pp_folder *f;
    char *out;

    ASSERT_OK(pp_profile_init(&p));
    ASSERT_OK(pp_fold_open(&f, &p, &o));
    ASSERT_EQ_INT(pp_profile_thread(&p, 100, 104, "x", 1), 0);
    ASSERT_OK(pp_profile_thread_name(&p, 0, "Thread-500 (process_request)", 28));
    ASSERT_OK(pp_script_parse_buffer(text, strlen(text), pp_fold_sample, f, NULL));
    pp_fold_close(f);
    out = collapsed_of(&p);
    ASSERT_EQ_STR(out, "Thread-* (other;idle (/app/x.py) 1\n"
                       "Thread-* (process_request);crunch (/app/x.py) 4\n");
    free(out);
    pp_profile_free(&p);
}

/* The pattern of a name: its last number after '-', '_' or ' ' (or at its
 * start), before a target suffix, a '*'; a name without one is itself. */
TEST(thread_pattern_takes_out_the_number_that_tells_threads_apart)
{
    static const char *const cases[][2] = {
        {"ThreadPoolExecutor-0_3", "ThreadPoolExecutor-0_*"},
        {"Thread-12 (handler)", "Thread-* (handler)"},
        {"Thread-7", "Thread-*"},
        {"worker-3", "worker-*"},
        {"asyncio_0", "asyncio_*"},
        {"Dummy-5", "Dummy-*"},
        {"pool-3-thread-14", "pool-3-thread-*"},
        {"worker-1-io", "worker-*-io"},
        {"42", "*"},
        {"MainThread", "MainThread"},
        {"python3.11", "python3.11"},         /* an OS name: no separator before 11 */
        {"worker3", "worker3"},
        {"Thread-5 (run_2)", "Thread-* (run_2)"},
        {"(x)", "(x)"},
        {"", ""},
    };
    char buf[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int n = pp_thread_pattern(cases[i][0], buf, sizeof(buf));
        ASSERT_EQ_STR(buf, cases[i][1]);
        ASSERT_EQ_INT(n, (int)strlen(cases[i][1]));
    }
    ASSERT_EQ_INT(pp_thread_pattern("Thread-12 (handler)", buf, 4), 18);   /* cut, said */
    ASSERT_EQ_STR(buf, "Thr");
}

TEST(fold_thread_names_set_by_a_reader_stay)
{
    pp_profile p;
    pp_folder *f;
    pp_fold_opts o = {.threads = PP_THREAD_ROOTS_SPLIT, .processes = PP_PROCESSES_MERGE};
    char *out;

    /* a name given while folding (sample mode reading Python's) wins over
     * the comms that follow, and over "MainThread" */
    ASSERT_OK(pp_profile_init(&p));
    ASSERT_OK(pp_fold_open(&f, &p, &o));
    ASSERT_EQ_INT(pp_profile_thread(&p, 100, 101, "x", 1), 0);
    ASSERT_OK(pp_profile_thread_name(&p, 0, "pool-worker-7", 13));
    /* a name with a control character is a misread of freed memory (a
     * server thread once read as an HTTP header): the thread keeps its own */
    ASSERT_OK(pp_profile_thread_name(&p, 0, "Accept-Encoding: identity\r\n", 27));
    ASSERT_EQ_INT(pp_profile_thread(&p, 100, 100, "y", 1), 1);
    ASSERT_OK(pp_profile_thread_name(&p, 1, "Main", 4));
    ASSERT_EQ_INT(pp_profile_thread_name(&p, 7, "z", 1), -EINVAL);
    ASSERT_OK(pp_script_parse_buffer(threads_text, strlen(threads_text), pp_fold_sample, f, NULL));
    pp_fold_close(f);
    out = collapsed_of(&p);
    ASSERT_EQ_STR(out, "Main (tid 100);main_work (/app/x.py) 2\n"
                       "MainThread (tid 200);child (/app/x.py) 1\n"
                       "pool-worker-7 (tid 101);crunch (/app/x.py) 2\n"
                       "pool-worker-7 (tid 101);idle (/app/x.py) 1\n");
    free(out);
    pp_profile_free(&p);
}

/* perfpy record's startup hook writes each thread's threading name to
 * perfpy-<pid>.threads (the trampoline modes: perf knows only OS names):
 * the last whole line of a tid names it; other lines are skipped. */
TEST(fold_threads_named_from_the_hooks_file)
{
    pp_fold_opts o = {.threads = PP_THREAD_ROOTS_SPLIT, .processes = PP_PROCESSES_MERGE};
    char path[4096];
    FILE *w;
    char *out;

    o.lines_dir = test_tmpdir();
    snprintf(path, sizeof(path), "%s/perfpy-100.threads", o.lines_dir);
    ASSERT_TRUE((w = fopen(path, "w")) != NULL);
    fputs("101 starting\n"                  /* renamed below */
          "100 MainThread\n"
          "not a line of the format\n"
          "101 pool\\\\worker\\n7\n"       /* pool\\worker, newline: pool\worker 7 */
          "100 cut-short", w);               /* no newline: never finished */
    fclose(w);
    out = fold_to_collapsed(threads_text, &o);
    ASSERT_EQ_STR(out, "MainThread (tid 100);main_work (/app/x.py) 2\n"
                       "MainThread (tid 200);child (/app/x.py) 1\n"
                       "pool\\worker 7 (tid 101);crunch (/app/x.py) 2\n"
                       "pool\\worker 7 (tid 101);idle (/app/x.py) 1\n");
    free(out);
}

TEST(profile_log_splits_weights_past_32_bits)
{
    pp_profile p;
    uint32_t f, t;
    int64_t s;

    ASSERT_OK(pp_profile_init(&p));
    f = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "[sleep]", 7, NULL, 0, 0);
    t = (uint32_t)pp_profile_thread(&p, 1, 1, "t", 1);
    /* a 10 s wait ending at 100 s: three records covering [90 s, 100 s] */
    s = pp_profile_sample(&p, &f, 1, t, 100000000000ull, 10000000000ull);
    ASSERT_EQ_INT(s, 0);
    ASSERT_EQ_UINT(p.nlog, 3);
    ASSERT_EQ_UINT(p.time_base_ns, 90000000000ull);
    ASSERT_EQ_UINT(pp_profile_rec(&p, 0).weight, UINT32_MAX);
    ASSERT_EQ_UINT(pp_profile_rec(&p, 1).weight, UINT32_MAX);
    ASSERT_EQ_UINT(pp_profile_rec(&p, 2).weight, 10000000000ull - 2ull * UINT32_MAX);
    /* each part logged when it ends, to the microsecond above */
    ASSERT_EQ_UINT(pp_profile_rec(&p, 0).time_ns, 90000000000ull + (UINT32_MAX + 999ull) / 1000 * 1000);
    ASSERT_EQ_UINT(pp_profile_rec(&p, 2).time_ns, 100000000000ull);
    ASSERT_EQ_UINT(p.samples, 1);
    ASSERT_EQ_UINT(p.threads[0].samples, 1);
    assert_log_sums_to_stacks(&p);
    ASSERT_EQ_INT(pp_profile_log(&p, 1, 0, 1, 1), -EINVAL);   /* no stack 1 */
    ASSERT_EQ_INT(pp_profile_log(&p, 0, 1, 1, 1), -EINVAL);   /* no thread 1 */
    pp_profile_free(&p);
}

/* nthreads threads sampled in turn over a chunk and a half, the odd ones'
 * times running backwards: each thread loaded has its own records, all of
 * them, in time order. The number of threads gathered with thread 0. */
static int order_check(uint32_t nthreads)
{
    pp_profile p;
    pp_thread_order o;
    uint32_t f;
    uint64_t n = (3u << PP_LOG_CHUNK_BITS) / 2, seen = 0;     /* a chunk and a half */
    int batch = 0;

    ASSERT_OK(pp_profile_init(&p));
    f = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "x", 1, NULL, 0, 0);
    for (uint32_t t = 0; t < nthreads; t++)
        ASSERT_EQ_INT(pp_profile_thread(&p, 1, (int32_t)t + 1, "a", 1), t);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "a", 1), 0);       /* interned */
    for (uint64_t i = 0; i < n; i++)
        ASSERT_EQ_INT(pp_profile_sample(&p, &f, 1, (uint32_t)(i % nthreads),
                                        (i % nthreads) & 1 ? 1000000000ull - i * 1000
                                                           : 500000000ull + i * 1000,
                                        1000), 0);
    ASSERT_EQ_UINT(p.nlog, n);
    ASSERT_EQ_UINT(p.log_chunks, 2);
    ASSERT_EQ_UINT(pp_profile_rec(&p, n - 1).thread, (n - 1) % nthreads);
    ASSERT_OK(pp_thread_order_build(&p, &o));
    for (uint32_t t = 0; t < nthreads; t++) {
        ASSERT_OK(pp_thread_order_load(&o, t));
        if (t == 0)
            batch = (int)(o.hi - o.lo);
        ASSERT_EQ_UINT(o.n, n / nthreads + (t < n % nthreads));
        for (uint64_t k = 0; k < o.n; k++) {
            pp_logged b = pp_profile_rec(&p, o.recs[k]);
            ASSERT_EQ_UINT(b.thread, t);
            if (k)
                ASSERT_LE_INT(pp_profile_rec(&p, o.recs[k - 1]).time_ns, b.time_ns);
        }
        if (t == 1)        /* thread 1's latest record is its earliest */
            ASSERT_EQ_UINT(pp_profile_rec(&p, o.recs[0]).time_ns,
                           pp_profile_rec(&p, n - 1 - (n - 1 - 1) % nthreads).time_ns);
        seen += o.n;
    }
    ASSERT_EQ_UINT(seen, n);
    ASSERT_EQ_INT(pp_thread_order_load(&o, nthreads), -EINVAL);
    pp_thread_order_free(&o);
    pp_profile_free(&p);
    return batch;
}

TEST(profile_log_crosses_chunks_and_orders_by_thread)
{
    /* two threads, each half the log: gathered one at a time */
    ASSERT_EQ_INT(order_check(2), 1);
    /* forty of 2458 records: gathered four at a time (at most an eighth of
     * the log's 98304), ten passes over the log, not forty */
    ASSERT_EQ_INT(order_check(40), 4);
}

/* What a chunk's records share (the µs their times count from, their
 * distinct weights) ends a chunk early when a record does not fit: every
 * record still reads back as it was logged, in order. */
TEST(profile_log_starts_a_chunk_for_far_times_and_new_weights)
{
    pp_profile p;
    uint32_t f;
    uint64_t n = PP_LOG_WEIGHTS + 10, hour = 3600000000000ull;

    ASSERT_OK(pp_profile_init(&p));
    f = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "x", 1, NULL, 0, 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "a", 1), 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 2, "b", 1), 1);
    /* distinct weights: past PP_LOG_WEIGHTS of them, a second chunk */
    for (uint64_t i = 0; i < n; i++)
        ASSERT_EQ_INT(pp_profile_sample(&p, &f, 1, (uint32_t)(i & 1), hour + i * 1000000,
                                        1000 + i), 0);
    ASSERT_EQ_UINT(p.log_chunks, 2);
    ASSERT_EQ_UINT(p.log[0].n, PP_LOG_WEIGHTS);
    /* an hour later, then back: a chunk each (35 minutes each side of a base) */
    ASSERT_EQ_INT(pp_profile_sample(&p, &f, 1, 1, 2 * hour, 1000), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, &f, 1, 0, hour + 2000, 1000), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, &f, 1, 0, hour + 3000, 1001), 0);
    ASSERT_EQ_UINT(p.log_chunks, 4);
    ASSERT_EQ_UINT(p.nlog, n + 3);
    for (uint64_t i = 0; i < n; i++) {
        pp_logged r = pp_profile_rec(&p, i);
        ASSERT_EQ_UINT(r.time_ns, hour + i * 1000000);
        ASSERT_EQ_UINT(r.weight, 1000 + i);
        ASSERT_EQ_UINT(r.thread, i & 1);
    }
    ASSERT_EQ_UINT(pp_profile_rec(&p, n).time_ns, 2 * hour);
    ASSERT_EQ_UINT(pp_profile_rec(&p, n).thread, 1);
    ASSERT_EQ_UINT(pp_profile_rec(&p, n + 1).time_ns, hour + 2000);
    ASSERT_EQ_UINT(pp_profile_rec(&p, n + 2).time_ns, hour + 3000);
    ASSERT_EQ_UINT(pp_profile_rec(&p, n + 2).weight, 1001);
    assert_log_sums_to_stacks(&p);
    pp_profile_free(&p);
}

TEST(profile_wall_values_count_periods)
{
    pp_profile p;
    uint32_t a, b;
    char *out;

    ASSERT_OK(pp_profile_init(&p));
    a = (uint32_t)pp_profile_frame(&p, PP_FRAME_PYTHON, "work", 4, "x.py", 4, 1);
    b = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "[sleep]", 7, NULL, 0, 0);
    ASSERT_EQ_INT(pp_profile_add(&p, &a, 1, 3, 3000000), 0);     /* 3 on-CPU periods of 1 ms */
    ASSERT_EQ_INT(pp_profile_add(&p, &b, 1, 1, 250400000), 1);   /* one wait of 250.4 ms */
    out = collapsed_of(&p);                                     /* CPU: samples */
    ASSERT_EQ_STR(out, "[sleep] 1\nwork (x.py:1) 3\n");
    free(out);
    p.value = PP_VALUE_WALL;
    p.period_ns = 1000000;
    ASSERT_EQ_UINT(pp_stack_value(&p, &p.stacks[1]), 250);
    ASSERT_EQ_UINT(pp_profile_value_total(&p), 253);
    out = collapsed_of(&p);                                     /* wall: periods of 1 ms */
    ASSERT_EQ_STR(out, "[sleep] 250\nwork (x.py:1) 3\n");
    free(out);
    ASSERT_TRUE(pp_profile_time_weights(&p));
    p.value = PP_VALUE_CPU;
    snprintf(p.event, sizeof(p.event), "cycles");
    ASSERT_TRUE(!pp_profile_time_weights(&p));
    snprintf(p.event, sizeof(p.event), "cpu-clock:ppp");
    ASSERT_TRUE(pp_profile_time_weights(&p));
    pp_profile_free(&p);
}

TEST(profile_thread_names_bounded)
{
    pp_profile p;
    char big[1000];

    ASSERT_OK(pp_profile_init(&p));
    memset(big, 'a', sizeof(big));
    big[3] = '\0';      /* a NUL inside perf's comm field: the name ends there */
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, big, sizeof(big)), 0);
    ASSERT_EQ_STR(p.threads[0].name, "aaa");
    big[3] = 'a';
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, big, sizeof(big)), 0);
    ASSERT_EQ_UINT(strlen(p.threads[0].name), 255);
    pp_profile_free(&p);
}

/* A wall-clock profile's waits are markers made from the log: one per
 * sample of a wait stack, a wait sampled tick by tick one marker on its
 * thread; another reason, another thread, or a gap longer than a period
 * starts a new one, and a stack that is no wait makes none. */
TEST(profile_waits_are_markers_made_from_the_log)
{
    pp_profile p;
    pp_thread_order o;
    pp_marker *m = NULL;
    size_t n = 0, cap = 0;
    const uint64_t ms = 1000000, t0 = 1000 * ms;
    uint32_t ids[2];
    int64_t sleep, gil, cpu;

    ASSERT_OK(pp_profile_init(&p));
    p.period_ns = 2 * ms;
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "a", 1), 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 2, "b", 1), 1);
    ids[0] = (uint32_t)pp_profile_frame(&p, PP_FRAME_PYTHON, "f", 1, "x.py", 4, 1);
    ids[1] = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "[off-CPU: sleep]", 16, NULL, 0, 0);
    ASSERT_TRUE((sleep = pp_profile_add(&p, ids, 2, 0, 0)) >= 0);
    ids[1] = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "[off-CPU: GIL]", 14, NULL, 0, 0);
    ASSERT_TRUE((gil = pp_profile_add(&p, ids, 2, 0, 0)) >= 0);
    ASSERT_TRUE((cpu = pp_profile_add(&p, ids, 1, 0, 0)) >= 0);
    ASSERT_OK(pp_profile_stack_wait(&p, (uint32_t)sleep, PP_MARKER_WAIT, "[off-CPU: sleep]"));
    ASSERT_OK(pp_profile_stack_wait(&p, (uint32_t)gil, PP_MARKER_GIL, "[off-CPU: GIL]"));
    for (uint64_t t = 0; t < 10; t++)                 /* 10 ticks of one sleep */
        ASSERT_OK(pp_profile_log(&p, (uint32_t)sleep, 0, t0 + (t + 1) * ms, ms));
    ASSERT_OK(pp_profile_log(&p, (uint32_t)sleep, 1, t0 + 4 * ms, ms));   /* another thread */
    ASSERT_OK(pp_profile_log(&p, (uint32_t)gil, 0, t0 + 11 * ms, ms));    /* another reason */
    ASSERT_OK(pp_profile_log(&p, (uint32_t)gil, 0, t0 + 21 * ms, ms));    /* after a gap */
    ASSERT_OK(pp_profile_log(&p, (uint32_t)cpu, 0, t0 + 30 * ms, ms));    /* on the CPU */
    ASSERT_OK(pp_thread_order_build(&p, &o));
    ASSERT_OK(pp_thread_order_load(&o, 0));
    ASSERT_OK(pp_thread_waits(&p, &o, &m, &n, &cap));
    ASSERT_EQ_UINT(n, 3);
    ASSERT_EQ_UINT(m[0].start_ns, t0);
    ASSERT_EQ_UINT(m[0].end_ns, t0 + 10 * ms);
    ASSERT_EQ_STR(pp_marker_name(&p, &m[0]), "[off-CPU: sleep]");
    ASSERT_EQ_UINT(m[0].kind, PP_MARKER_WAIT);
    ASSERT_EQ_UINT(m[1].start_ns, t0 + 10 * ms);
    ASSERT_EQ_UINT(m[1].end_ns, t0 + 11 * ms);
    ASSERT_EQ_UINT(m[1].kind, PP_MARKER_GIL);
    ASSERT_EQ_STR(pp_marker_name(&p, &m[1]), "[off-CPU: GIL]");
    ASSERT_EQ_UINT(m[2].start_ns, t0 + 20 * ms);
    ASSERT_EQ_UINT(m[0].thread, 0);
    ASSERT_OK(pp_thread_order_load(&o, 1));
    ASSERT_OK(pp_thread_waits(&p, &o, &m, &n, &cap));
    ASSERT_EQ_UINT(n, 1);
    ASSERT_EQ_UINT(m[0].thread, 1);
    ASSERT_EQ_UINT(m[0].start_ns, t0 + 3 * ms);
    ASSERT_EQ_UINT(p.nmarkers, 0);                   /* none stored */
    ASSERT_EQ_UINT(p.nmarker_names, 2);
    ASSERT_EQ_INT(pp_profile_stack_wait(&p, 3, PP_MARKER_WAIT, "x"), -EINVAL);
    free(m);
    pp_thread_order_free(&o);
    pp_profile_free(&p);
}

/* A marker is 24 bytes and its name is interned: a recording's thousands
 * of markers of a few names hold each name once. */
TEST(profile_marker_names_are_interned)
{
    pp_profile p;

    ASSERT_EQ_UINT(sizeof(pp_marker), 24);
    ASSERT_OK(pp_profile_init(&p));
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "a", 1), 0);
    for (uint64_t t = 0; t < 1000; t++)
        ASSERT_OK(pp_profile_marker(&p, 0, PP_MARKER_PROCESS, t, t,
                                    t % 2 ? "thread start" : "thread exit", t % 2 ? 12 : 11));
    ASSERT_EQ_UINT(p.nmarkers, 1000);
    ASSERT_EQ_UINT(p.nmarker_names, 2);
    ASSERT_EQ_STR(pp_marker_name(&p, &p.markers[1]), "thread start");
    ASSERT_EQ_STR(pp_marker_name(&p, &p.markers[998]), "thread exit");
    pp_profile_free(&p);
}

/* Markers come in their sources' order (perf.data's task events by CPU
 * buffer: a thread's exit may come before its start); the order gives each
 * thread's in time, equal starts in the order they were added. */
TEST(profile_marker_order_is_by_thread_then_time)
{
    pp_profile p;
    pp_marker_order o;

    ASSERT_OK(pp_profile_init(&p));
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "a", 1), 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 2, "b", 1), 1);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 3, "c", 1), 2);
    ASSERT_OK(pp_profile_marker(&p, 1, PP_MARKER_PROCESS, 90, 90, "thread exit", 11));   /* 0 */
    ASSERT_OK(pp_profile_marker(&p, 0, PP_MARKER_WAIT, 50, 60, "w", 1));                 /* 1 */
    ASSERT_OK(pp_profile_marker(&p, 1, PP_MARKER_PROCESS, 10, 10, "thread start", 12));  /* 2 */
    ASSERT_OK(pp_profile_marker(&p, 1, PP_MARKER_WAIT, 10, 20, "w", 1));                 /* 3 */
    ASSERT_OK(pp_profile_marker(&p, 0, PP_MARKER_PROCESS, 5, 5, "process start", 13));   /* 4 */
    ASSERT_OK(pp_marker_order_build(&p, &o));
    ASSERT_EQ_UINT(o.first[0], 0);
    ASSERT_EQ_UINT(o.first[1], 2);
    ASSERT_EQ_UINT(o.first[2], 5);
    ASSERT_EQ_UINT(o.first[3], 5);                    /* c has none */
    ASSERT_EQ_UINT(o.idx[0], 4);
    ASSERT_EQ_UINT(o.idx[1], 1);
    ASSERT_EQ_UINT(o.idx[2], 2);                      /* start before the wait at 10 */
    ASSERT_EQ_UINT(o.idx[3], 3);
    ASSERT_EQ_UINT(o.idx[4], 0);
    pp_marker_order_free(&o);
    pp_profile_free(&p);
}

TEST(profile_take_samples_remaps_every_record)
{
    pp_profile src, dst;
    uint32_t f[3], map[3];
    const char *names[] = {"a", "b", "c"};

    ASSERT_OK(pp_profile_init(&src));
    ASSERT_OK(pp_profile_init(&dst));
    for (int i = 0; i < 3; i++) {
        f[i] = (uint32_t)pp_profile_frame(&src, PP_FRAME_MARKER, names[i], 1, NULL, 0, 0);
        ASSERT_EQ_INT(pp_profile_thread(&src, 1, 1 + i, names[i], 1), i);
    }
    for (int i = 0; i < 30; i++)
        ASSERT_EQ_INT(pp_profile_sample(&src, &f[i % 3], 1, (uint32_t)(i % 3),
                                        1000000 + (uint64_t)i * 1000, 1000), i % 3);
    /* dst holds the same stacks in another order: c, a, b */
    for (int i = 0; i < 3; i++) {
        uint32_t g = (uint32_t)pp_profile_frame(&dst, PP_FRAME_MARKER, names[(i + 2) % 3], 1,
                                                NULL, 0, 0);
        map[(i + 2) % 3] = (uint32_t)pp_profile_add(&dst, &g, 1, 10, 10000);
    }
    ASSERT_EQ_UINT(map[0], 1);
    ASSERT_OK(pp_profile_marker(&src, 2, PP_MARKER_PROCESS, 7, 7, "process exit", 12));
    ASSERT_EQ_INT(pp_profile_marker(&src, 3, PP_MARKER_PROCESS, 7, 7, "x", 1), -EINVAL);
    ASSERT_EQ_INT(pp_profile_marker(&src, 0, PP_MARKER_WAIT, 8, 7, "x", 1), -EINVAL);
    map[1] = 99;
    ASSERT_EQ_INT(pp_profile_take_samples(&dst, &src, map), -EINVAL);   /* no stack 99 */
    ASSERT_EQ_UINT(dst.nlog, 0);
    map[1] = 2;
    ASSERT_OK(pp_profile_take_samples(&dst, &src, map));
    ASSERT_EQ_UINT(src.nlog, 0);
    ASSERT_EQ_UINT(src.nthreads, 0);
    pp_profile_free(&src);                       /* dst keeps nothing of src's */
    ASSERT_EQ_UINT(dst.nlog, 30);
    ASSERT_EQ_UINT(dst.nthreads, 3);
    for (uint64_t i = 0; i < dst.nlog; i++) {
        pp_logged r = pp_profile_rec(&dst, i);
        ASSERT_EQ_STR(dst.frames[pp_stack_ids(&dst, &dst.stacks[r.stack])[0]].name,
                      names[i % 3]);
        ASSERT_EQ_STR(dst.threads[r.thread].name, names[i % 3]);
    }
    assert_log_sums_to_stacks(&dst);
    ASSERT_EQ_INT(pp_profile_thread(&dst, 1, 2, NULL, 0), 1);        /* its index came along */
    ASSERT_EQ_UINT(dst.nmarkers, 1);                                 /* and the markers */
    ASSERT_EQ_STR(pp_marker_name(&dst, &dst.markers[0]), "process exit");
    ASSERT_EQ_STR(dst.threads[dst.markers[0].thread].name, "c");
    pp_profile_free(&dst);
}

/* foo foo (busy, 3 µs of timer jitter between them) | 40 ms wait | bar foo */
/* A sample whose span overlaps the one before starts at its end and still
 * ends at its own time: the runs after it do not drift. */
TEST(profile_timeline_overlap_does_not_drift)
{
    pp_profile p;
    pp_thread_order o;
    pp_timeline tl;
    pp_span s[4];
    uint32_t a, b;
    int n = 0;
    const uint64_t P = 1000000, T = 1000000000;

    ASSERT_OK(pp_profile_init(&p));
    snprintf(p.event, sizeof(p.event), "cpu-clock");
    a = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "a", 1, NULL, 0, 0);
    b = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "b", 1, NULL, 0, 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "t", 1), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, &a, 1, 0, T + 10 * P, 10 * P), 0);   /* a wait */
    ASSERT_EQ_INT(pp_profile_sample(&p, &b, 1, 0, T + 10 * P + P / 2, P), 1); /* half inside */
    ASSERT_EQ_INT(pp_profile_sample(&p, &a, 1, 0, T + 11 * P + P / 2, P), 0);
    ASSERT_OK(pp_thread_order_build(&p, &o));
    ASSERT_OK(pp_thread_order_load(&o, 0));
    pp_timeline_start(&tl, &p, &o, 0, 1);
    while (n < 4 && pp_timeline_next(&tl, &s[n]))
        n++;
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_UINT(s[1].start_ns, T + 10 * P);
    ASSERT_EQ_UINT(s[1].start_ns + s[1].dur_ns, T + 10 * P + P / 2);
    ASSERT_EQ_UINT(s[2].start_ns + s[2].dur_ns, T + 11 * P + P / 2);
    pp_thread_order_free(&o);
    pp_profile_free(&p);
}

TEST(profile_timeline_runs_and_gaps)
{
    pp_profile p;
    pp_thread_order o;
    pp_timeline tl;
    pp_span s[8];
    uint32_t foo, bar;
    int n = 0;
    const uint64_t P = 2500000, T = 1000000000;     /* 2.5 ms periods from 1 s */

    ASSERT_OK(pp_profile_init(&p));
    snprintf(p.event, sizeof(p.event), "cpu-clock");
    foo = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "foo", 3, NULL, 0, 0);
    bar = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "bar", 3, NULL, 0, 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "t", 1), 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 2, "u", 1), 1);
    ASSERT_EQ_INT(pp_profile_sample(&p, &foo, 1, 0, T + P, P), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, &bar, 1, 1, T + P, P), 1);        /* other thread */
    ASSERT_EQ_INT(pp_profile_sample(&p, &foo, 1, 0, T + 2 * P + 3000, P), 0);
    ASSERT_EQ_INT(pp_profile_sample(&p, &bar, 1, 0, T + 3 * P + 40000000, P), 1);
    ASSERT_EQ_INT(pp_profile_sample(&p, &foo, 1, 0, T + 4 * P + 40000000, P), 0);
    ASSERT_OK(pp_thread_order_build(&p, &o));
    ASSERT_OK(pp_thread_order_load(&o, 0));
    pp_timeline_start(&tl, &p, &o, 0, 1);
    while (n < 8 && pp_timeline_next(&tl, &s[n]))
        n++;
    ASSERT_EQ_INT(n, 4);
    /* foo from 1 s for two periods and the jitter */
    ASSERT_EQ_UINT(s[0].stack, 0);
    ASSERT_EQ_UINT(s[0].start_ns, T);
    ASSERT_EQ_UINT(s[0].dur_ns, 2 * P + 3000);
    ASSERT_EQ_UINT(s[0].value, 2);
    /* the wait, to the microsecond the log keeps */
    ASSERT_EQ_UINT(s[1].stack, PP_NONE);
    ASSERT_EQ_UINT(s[1].start_ns, T + 2 * P + 3000);
    ASSERT_EQ_UINT(s[1].dur_ns, 40000000 - 3000);
    ASSERT_EQ_UINT(s[1].value, 0);
    ASSERT_EQ_UINT(s[2].stack, 1);
    ASSERT_EQ_UINT(s[2].start_ns, T + 2 * P + 40000000);
    ASSERT_EQ_UINT(s[2].dur_ns, P);
    ASSERT_EQ_UINT(s[3].stack, 0);
    ASSERT_EQ_UINT(s[3].start_ns + s[3].dur_ns, T + 4 * P + 40000000);
    pp_timeline_start(&tl, &p, &o, 1, 1);      /* not loaded: nothing */
    ASSERT_EQ_INT(pp_timeline_next(&tl, &s[0]), 0);
    ASSERT_OK(pp_thread_order_load(&o, 1));
    pp_timeline_start(&tl, &p, &o, 1, 1);
    ASSERT_EQ_INT(pp_timeline_next(&tl, &s[0]), 1);
    ASSERT_EQ_UINT(s[0].stack, 1);
    ASSERT_EQ_INT(pp_timeline_next(&tl, &s[0]), 0);
    pp_thread_order_free(&o);
    pp_profile_free(&p);
}

/* A thread's timeline of each kind of event a profile holds: those whose
 * weights are time (cpu-clock, task-clock, wall-clock) span their weights;
 * those whose weights count something else (cycles, instructions) span
 * the thread's mean spacing, its samples' time over the gaps between them
 * (n samples, n - 1 gaps). The two sets of samples below would each come
 * out otherwise if their event were taken for the other kind. */
TEST(profile_timeline_every_event_kind)
{
    static const struct { const char *event; int wall; } kinds[] = {
        {"cpu-clock", 0}, {"task-clock", 0}, {"cpu-clock:ppp", 0}, {"wall-clock", 1},
        {"cycles", 0}, {"instructions", 0}, {"cache-misses", 0},
    };
    const uint64_t MS = 1000000, T = 1000000000;

    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        pp_profile p;
        pp_thread_order o;
        pp_timeline tl;
        pp_span s[8];
        uint32_t a;
        int n = 0, timed;

        ASSERT_OK(pp_profile_init(&p));
        snprintf(p.event, sizeof(p.event), "%s", kinds[k].event);
        if (kinds[k].wall) {
            p.value = PP_VALUE_WALL;
            p.period_ns = MS;
        }
        timed = pp_profile_time_weights(&p);
        if (timed != (k < 4))
            TEST_FAIL_("%s: time weights %d, want %d", kinds[k].event, timed, k < 4);
        a = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "a", 1, NULL, 0, 0);
        ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "t", 1), 0);
        if (timed) {
            /* 1 ms samples at 1, 2, 3 ms, a wait, one at 10 ms: a run of
             * 3 ms, a gap of 6 ms, a run of 1 ms */
            for (uint64_t at = 1; at <= 3; at++)
                ASSERT_EQ_INT(pp_profile_sample(&p, &a, 1, 0, T + at * MS, MS), 0);
            ASSERT_EQ_INT(pp_profile_sample(&p, &a, 1, 0, T + 10 * MS, MS), 0);
        } else {
            /* 3,000,000 cycles a sample, every millisecond from 1 to 5
             * ms: 1 ms each, one run from 0 to 5 ms (weights taken for
             * time would overlap; a spacing of 4 ms / 5 would leave gaps) */
            for (uint64_t at = 1; at <= 5; at++)
                ASSERT_EQ_INT(pp_profile_sample(&p, &a, 1, 0, T + at * MS, 3 * MS), 0);
        }
        ASSERT_OK(pp_thread_order_build(&p, &o));
        ASSERT_OK(pp_thread_order_load(&o, 0));
        pp_timeline_start(&tl, &p, &o, 0, 1);
        while (n < 8 && pp_timeline_next(&tl, &s[n]))
            n++;
        printf("    %-14s", kinds[k].event);
        for (int i = 0; i < n; i++)
            printf(" [%s %.3f+%.3f ms, %llu]", s[i].stack == PP_NONE ? "gap" : "a",
                   (double)(s[i].start_ns - T) / 1e6, (double)s[i].dur_ns / 1e6,
                   (unsigned long long)s[i].value);
        putchar('\n');
        if (timed) {
            ASSERT_EQ_INT(n, 3);
            ASSERT_EQ_UINT(s[0].stack, 0);
            ASSERT_EQ_UINT(s[0].start_ns, T);
            ASSERT_EQ_UINT(s[0].dur_ns, 3 * MS);
            ASSERT_EQ_UINT(s[0].value, 3);        /* samples, or periods of 1 ms */
            ASSERT_EQ_UINT(s[1].stack, PP_NONE);
            ASSERT_EQ_UINT(s[1].start_ns, T + 3 * MS);
            ASSERT_EQ_UINT(s[1].dur_ns, 6 * MS);
            ASSERT_EQ_UINT(s[2].start_ns, T + 9 * MS);
            ASSERT_EQ_UINT(s[2].dur_ns, MS);
            ASSERT_EQ_UINT(s[2].value, 1);
        } else {
            ASSERT_EQ_INT(n, 1);
            ASSERT_EQ_UINT(s[0].start_ns, T);
            ASSERT_EQ_UINT(s[0].dur_ns, 5 * MS);
            ASSERT_EQ_UINT(s[0].value, 5);
        }
        /* not merged: one span a sample, each as long as the spacing or
         * its weight, end to end */
        pp_timeline_start(&tl, &p, &o, 0, 0);
        n = 0;
        while (n < 8 && pp_timeline_next(&tl, &s[n]))
            n++;
        ASSERT_EQ_INT(n, 5);               /* timed: 4 and the gap */
        for (int i = 0; i < (timed ? 3 : 5); i++) {
            ASSERT_EQ_UINT(s[i].start_ns, T + (uint64_t)i * MS);
            ASSERT_EQ_UINT(s[i].dur_ns, MS);
        }
        pp_thread_order_free(&o);
        pp_profile_free(&p);
    }
}

/* Timer jitter and a gap told apart at a fiftieth of the next sample's
 * weight: time between two samples up to it goes to the span before, so
 * a busy thread's runs stay whole; past it, a gap of its own. Each pair
 * below sits on the threshold, at it and a microsecond (the log's unit)
 * past it: 200 and 201 µs before a 10 ms sample (so 49 or 51 parts, or a
 * threshold taken with >=, are seen), 20 and 21 µs before 1 ms ones; and
 * a 50 ms sample after 900 µs and a 1 ms one after 100 µs tell the next
 * sample's weight from the one before's. Not merged: a span a sample. */
TEST(profile_timeline_jitter_at_a_fiftieth_of_the_next_sample)
{
    static const struct { uint64_t at_us, weight_us; } samples[] = {
        {10000, 10000},            /* 0 - 10 ms */
        {20200, 10000},            /* 200 µs after it: jitter */
        {30401, 10000},            /* 201 µs: a gap */
        {81301, 50000},            /* 900 µs before 50 ms (a fiftieth: 1 ms): jitter */
        {82401, 1000},             /* 100 µs before 1 ms (20 µs): a gap */
        {83421, 1000},             /* 20 µs: jitter */
        {84442, 1000},             /* 21 µs: a gap */
    };
    static const char *const want =
        "a 0 +10200\n"
        "a 10200 +10000\n"
        "gap 20200 +201\n"
        "a 20401 +10900\n"
        "a 31301 +50000\n"
        "gap 81301 +100\n"
        "a 81401 +1020\n"
        "a 82421 +1000\n"
        "gap 83421 +21\n"
        "a 83442 +1000\n";
    const uint64_t US = 1000, T = 1000000000;
    pp_profile p;
    pp_thread_order o;
    pp_timeline tl;
    pp_span s;
    uint32_t a;
    char got[1024] = "";
    size_t len = 0;

    ASSERT_OK(pp_profile_init(&p));
    snprintf(p.event, sizeof(p.event), "cpu-clock");
    a = (uint32_t)pp_profile_frame(&p, PP_FRAME_MARKER, "a", 1, NULL, 0, 0);
    ASSERT_EQ_INT(pp_profile_thread(&p, 1, 1, "t", 1), 0);
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
        ASSERT_EQ_INT(pp_profile_sample(&p, &a, 1, 0, T + samples[i].at_us * US,
                                        samples[i].weight_us * US), 0);
    ASSERT_EQ_UINT(p.time_base_ns, T);
    ASSERT_OK(pp_thread_order_build(&p, &o));
    ASSERT_OK(pp_thread_order_load(&o, 0));
    pp_timeline_start(&tl, &p, &o, 0, 0);
    while (pp_timeline_next(&tl, &s) && len < sizeof(got) - 64)
        len += (size_t)snprintf(got + len, sizeof(got) - len, "%s %llu +%llu\n",
                                s.stack == PP_NONE ? "gap" : "a",
                                (unsigned long long)(s.start_ns - T) / US,
                                (unsigned long long)s.dur_ns / US);
    ASSERT_SAME_TEXT("the spans", got, want);   /* µs from the first's start, +µs long */
    pp_thread_order_free(&o);
    pp_profile_free(&p);
}
