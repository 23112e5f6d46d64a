/*
 * /proc/PID/maps parsing (src/native/maps.c): real lines of every shape,
 * hostile text in exact-size buffers, and this process's own maps; and
 * the scheduler's account of a thread's CPU time (src/native/procs.c).
 */
#include "native/maps.h"
#include "native/procs.h"
#include "test.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

/* Parses text from an exact-size heap copy (an over-read leaves the block). */
static void parse(const char *text, pp_maps *m)
{
    size_t n = strlen(text);
    char *copy = test_exact_copy(text, n);

    ASSERT_OK(pp_maps_parse(copy, n, m));
    free(copy);        /* the paths are the parser's own copies */
}

TEST(maps_parse_every_kind_of_line)
{
    pp_maps m;
    const pp_map *x;

    parse("55d0c0a00000-55d0c0a2c000 r--p 00000000 08:01 1311     /usr/bin/python3.11\n"
          "55d0c0a2c000-55d0c0d1f000 r-xp 0002c000 08:01 1311     /usr/bin/python3.11\n"
          "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
          "7f1000000000-7f1000001000 r-xp 00001000 fd:00 77 /tmp/my lib (deleted)\n"
          "7ffd5a1e4000-7ffd5a205000 rw-p 00000000 00:00 0                          [stack]\n"
          "7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0                          [vdso]",
          &m);
    ASSERT_EQ_INT(m.n, 6);
    ASSERT_EQ_INT(m.bad_lines, 0);
    x = pp_maps_find(&m, 0x55d0c0a2c000ull);
    ASSERT_TRUE(x != NULL);
    ASSERT_EQ_UINT(x->pgoff, 0x2c000);
    ASSERT_EQ_UINT(x->prot, PP_MAP_R | PP_MAP_X);
    ASSERT_EQ_STR(x->path, "/usr/bin/python3.11");
    ASSERT_EQ_STR(pp_maps_find(&m, 0x7f0000000fffull)->path, "");
    ASSERT_EQ_UINT(pp_maps_find(&m, 0x7f0000000fffull)->prot, PP_MAP_R | PP_MAP_W);
    ASSERT_EQ_STR(pp_maps_find(&m, 0x7f1000000000ull)->path, "/tmp/my lib (deleted)");
    ASSERT_EQ_STR(pp_maps_find(&m, 0x7ffd5a204fffull)->path, "[stack]");
    ASSERT_EQ_STR(pp_maps_find(&m, 0x7ffd5a3f1000ull)->path, "[vdso]");   /* no newline */
    /* ends are exclusive; gaps are nothing */
    ASSERT_TRUE(pp_maps_find(&m, 0x7ffd5a205000ull) == NULL);
    ASSERT_TRUE(pp_maps_find(&m, 0x1000) == NULL);
    ASSERT_TRUE(pp_maps_find(&m, UINT64_MAX) == NULL);
    pp_maps_free(&m);
}

TEST(maps_hostile_lines_are_skipped)
{
    pp_maps m;

    parse("\n"
          "garbage\n"
          "1000-\n"
          "2000-1000 r-xp 00000000 00:00 0 /backwards\n"          /* end before start */
          "10000000000000000-20000000000000000 r-xp 0 0:0 0 /x\n"   /* 17 hex digits */
          "3000-4000 r-xp\n"                                        /* cut */
          "3000-4000 r-xp 00000000 00:00 0 /ok\n"
          "3800-4800 r-xp 00000000 00:00 0 /overlaps\n"
          "1000-2000 r-xp 00000000 00:00 0 /unsorted\n",
          &m);
    ASSERT_EQ_INT(m.n, 2);
    ASSERT_EQ_INT(m.bad_lines, 6);
    ASSERT_EQ_STR(m.v[0].path, "/unsorted");
    ASSERT_EQ_STR(m.v[1].path, "/ok");
    pp_maps_free(&m);
    parse("", &m);
    ASSERT_EQ_INT(m.n, 0);
    ASSERT_TRUE(pp_maps_find(&m, 0) == NULL);
    pp_maps_free(&m);
}

TEST(maps_of_this_process)
{
    pp_maps m;
    const pp_map *code, *stack;
    int here;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    ASSERT_GT_INT(n, 0);
    exe[n] = '\0';
    ASSERT_OK(pp_maps_read(getpid(), &m));
    ASSERT_EQ_INT(m.bad_lines, 0);
    code = pp_maps_find(&m, (uint64_t)(uintptr_t)&pp_maps_parse);
    stack = pp_maps_find(&m, (uint64_t)(uintptr_t)&here);
    ASSERT_TRUE(code != NULL && stack != NULL);
    ASSERT_EQ_STR(code->path, exe);
    ASSERT_TRUE(code->prot & PP_MAP_X);
    ASSERT_EQ_STR(stack->path, "[stack]");
    pp_maps_free(&m);
    /* a process that is not there */
    ASSERT_EQ_INT(pp_maps_read(-1, &m), -ENOENT);
    pp_maps_free(&m);
}

/* The scheduler's account of a thread's CPU time (read mode weighs each
 * read by it): this thread's grows by about what it spins, a sleep adds
 * next to nothing, and a thread that is not there is an error. */
TEST(procs_run_ns_is_the_threads_cpu_time)
{
    uint64_t a, b, c;
    struct timespec t0, t;
    pid_t tid = (pid_t)gettid();

    ASSERT_OK(pp_procs_run_ns(getpid(), tid, &a));
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do                                            /* 50 ms of CPU */
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < 50000000LL);
    ASSERT_OK(pp_procs_run_ns(getpid(), tid, &b));
    ASSERT_TRUE(b - a >= 40000000u);
    ASSERT_TRUE(b - a < 500000000u);
    usleep(100000);
    ASSERT_OK(pp_procs_run_ns(getpid(), tid, &c));
    ASSERT_TRUE(c - b < 20000000u);
    ASSERT_EQ_INT(pp_procs_run_ns(getpid(), 0x7ffffff0, &c), -ENOENT);
}
