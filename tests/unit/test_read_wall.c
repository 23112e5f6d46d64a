/*
 * Read mode's wall clock and GIL (src/sampler/read_wall.c): the GIL's
 * state found where 3.8-3.11 keep it (inside _PyRuntime) and where 3.12+
 * do (the interpreter's pointer), its holder read (none when unlocked);
 * and the parts of a real thread's time between two reads, asleep then
 * spinning, each with its reason, adding up to the interval.
 */
#include "test.h"

#if PP_UNWIND
#include "profile/raw.h"
#include "sampler/read_wall.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull

/* A GIL state as the layout sees it: locked at 0, last_holder at 8. */
typedef struct fake_gil {
    int32_t locked, pad;
    uint64_t last_holder;
    char rest[48];
} fake_gil;

static pp_py_offsets gil_offsets(int32_t in_runtime, int32_t in_interp)
{
    pp_py_offsets o;

    memset(&o, 0xff, sizeof(o));          /* every field absent (-1) */
    o.gil_runtime = in_runtime;
    o.gil_interp = in_interp;
    o.gil_size = (int32_t)sizeof(fake_gil);
    o.gil_locked = 0;
    o.gil_last_holder = 8;
    o.runtime_interpreters_head = 0;
    return o;
}

TEST(read_wall_gil_inside_the_runtime_and_its_holder)
{
    struct {
        uint64_t head;
        fake_gil gil;
    } runtime = {0};
    pp_mem m = pp_mem_of_pid(getpid());
    pp_py_offsets o = gil_offsets((int32_t)offsetof(__typeof__(runtime), gil), -1);
    uint64_t gil = pp__readwall_gil(&m, &o, (uint64_t)(uintptr_t)&runtime), holder = 7;

    ASSERT_EQ_UINT(gil, (uint64_t)(uintptr_t)&runtime.gil);
    runtime.gil.last_holder = 0x1234;
    ASSERT_EQ_INT(pp__readwall_holder(&m, &o, gil, &holder), 0);
    ASSERT_EQ_UINT(holder, 0);                     /* unlocked: none holds it */
    runtime.gil.locked = 1;
    ASSERT_EQ_INT(pp__readwall_holder(&m, &o, gil, &holder), 0);
    ASSERT_EQ_UINT(holder, 0x1234);
    o.gil_last_holder = -1;                        /* a layout that does not say */
    ASSERT_EQ_INT(pp__readwall_holder(&m, &o, gil, &holder), -ENOTSUP);
    o.gil_size = 0;                                /* no GIL (free-threaded) */
    ASSERT_EQ_UINT(pp__readwall_gil(&m, &o, (uint64_t)(uintptr_t)&runtime), 0);
}

TEST(read_wall_gil_behind_the_interpreter)
{
    fake_gil g = {.locked = 1, .last_holder = 0x99};
    struct {
        uint64_t pad, gil;
    } interp = {0, 0};
    struct {
        uint64_t head;
    } runtime = {(uint64_t)(uintptr_t)&interp};
    pp_mem m = pp_mem_of_pid(getpid());
    pp_py_offsets o = gil_offsets(-1, 8);
    uint64_t holder = 0;

    /* not made yet (the interpreter starting): not known */
    ASSERT_EQ_UINT(pp__readwall_gil(&m, &o, (uint64_t)(uintptr_t)&runtime), 0);
    interp.gil = (uint64_t)(uintptr_t)&g;
    ASSERT_EQ_UINT(pp__readwall_gil(&m, &o, (uint64_t)(uintptr_t)&runtime),
                   (uint64_t)(uintptr_t)&g);
    ASSERT_EQ_INT(pp__readwall_holder(&m, &o, (uint64_t)(uintptr_t)&g, &holder), 0);
    ASSERT_EQ_UINT(holder, 0x99);
    ASSERT_EQ_INT(pp__readwall_holder(&m, &o, 0, &holder), -ENOTSUP);
}

#ifdef __x86_64__
static atomic_int phase;        /* 0: sleep, 1: spin, 2: done */
static atomic_int tid_of;

static void *sleep_then_spin(void *arg)
{
    struct timespec t = {0, 200 * MS};

    atomic_store(&tid_of, (int)syscall(SYS_gettid));
    nanosleep(&t, NULL);
    atomic_store(&phase, 1);
    while (atomic_load(&phase) == 1)
        ;
    return arg;
}

static uint64_t now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t sum_of(const pp_readwall_part *p, int n, int wait, uint64_t *all)
{
    uint64_t s = 0;

    *all = 0;
    for (int i = 0; i < n; i++) {
        *all += p[i].ns;
        s += p[i].wait == wait ? p[i].ns : 0;
    }
    return s;
}

TEST(read_wall_parts_of_a_thread_asleep_then_spinning)
{
    struct timespec settle = {0, 20 * MS}, wait = {0, 100 * MS};
    pp_readwall_part parts[3];
    pp_readwall *w;
    pthread_t th;
    uint64_t t0, t1, t2, all;
    pid_t self = getpid();
    int n;

    ASSERT_EQ_INT(pp__readwall_open(&w), 0);
    ASSERT_EQ_INT(pthread_create(&th, NULL, sleep_then_spin, NULL), 0);
    nanosleep(&settle, NULL);
    t0 = now_ns();
    ASSERT_EQ_INT(pp__readwall_parts(w, self, atomic_load(&tid_of), t0, 0, 0, parts), 0);
    nanosleep(&wait, NULL);
    t1 = now_ns();
    n = pp__readwall_parts(w, self, atomic_load(&tid_of), t1, 0, 0, parts);
    ASSERT_GT_INT(n, 0);
    /* asleep all along: the interval, nearly all of it a sleep */
    ASSERT_GT_INT((int)(sum_of(parts, n, PP_WAIT_SLEEP, &all) / MS), 80);
    ASSERT_EQ_UINT(all, t1 - t0);
    ASSERT_EQ_UINT(parts[n - 1].end_ns, t1);
    while (atomic_load(&phase) != 1)
        nanosleep(&settle, NULL);
    nanosleep(&settle, NULL);
    t1 = now_ns();
    pp__readwall_parts(w, self, atomic_load(&tid_of), t1, 0, 0, parts);
    nanosleep(&wait, NULL);
    t2 = now_ns();
    n = pp__readwall_parts(w, self, atomic_load(&tid_of), t2, 0, 0, parts);
    ASSERT_GT_INT(n, 0);
    /* spinning: on a CPU or waiting for one, never asleep */
    ASSERT_EQ_UINT(sum_of(parts, n, PP_WAIT_SLEEP, &all), 0);
    ASSERT_EQ_UINT(all, t2 - t1);
    ASSERT_EQ_UINT(sum_of(parts, n, PP_WAIT_NONE, &all) + sum_of(parts, n, PP_WAIT_CPU, &all),
                   t2 - t1);
    atomic_store(&phase, 2);
    pthread_join(th, NULL);
    /* a thread that ended: pthread_join returns once the kernel has
     * cleared its tid, a moment before /proc lets it go (seen once in CI;
     * read in that moment, its files say ESRCH, which is an end too) */
    for (int i = 0; i < 200; i++) {
        if ((n = pp__readwall_parts(w, self, atomic_load(&tid_of), now_ns(), 0, 0, parts)) < 0)
            break;
        nanosleep(&settle, NULL);
    }
    ASSERT_EQ_INT(n, -ENOENT);
    pp__readwall_close(w);
}
#else
TEST(read_wall_parts_of_a_thread_asleep_then_spinning)
{
    TEST_SKIP("the reasons' system call numbers are x86_64's");
}
#endif
#endif
