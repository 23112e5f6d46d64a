/*
 * Read mode's time off the CPU (offcpu.c): /proc's texts parsed, the
 * reason of a blocked thread as sample mode gives it, the kernel functions'
 * families, and the split of an interval between two reads; and a real
 * thread of this process read blocked in a sleep and in a pipe read.
 */
#include "report/fold.h"
#include "collect/offcpu.h"
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull

TEST(offcpu_schedstat_text)
{
    uint64_t run = 1, delay = 1;

    ASSERT_EQ_INT(pp_offcpu_parse_schedstat("12345678 910 77", &run, &delay), 0);
    ASSERT_EQ_UINT(run, 12345678);
    ASSERT_EQ_UINT(delay, 910);
    ASSERT_EQ_INT(pp_offcpu_parse_schedstat("12345678", &run, &delay), -EIO);
    ASSERT_EQ_INT(pp_offcpu_parse_schedstat("", &run, &delay), -EIO);
}

TEST(offcpu_syscall_text)
{
    uint64_t a[6];
    int64_t nr = 7;

    /* clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem): nr, six args, sp, pc */
    ASSERT_EQ_INT(pp_offcpu_parse_syscall("230 0x1 0x0 0x7ffd1000 0x0 0x0 0x7 0x7ffd0f00 "
                                          "0x7f0012345678", &nr, a), 0);
    ASSERT_EQ_INT((int)nr, 230);
    ASSERT_EQ_UINT(a[0], 1);
    ASSERT_EQ_UINT(a[2], 0x7ffd1000);
    ASSERT_EQ_UINT(a[5], 7);
    ASSERT_EQ_INT(pp_offcpu_parse_syscall("running", &nr, a), 0);
    ASSERT_EQ_INT((int)nr, -1);
    ASSERT_EQ_INT(pp_offcpu_parse_syscall("-1 0x7ffd0f00 0x7f0012345678", &nr, a), 0);
    ASSERT_EQ_INT((int)nr, -1);
    ASSERT_EQ_INT(pp_offcpu_parse_syscall("202 0x10", &nr, a), -EIO);   /* cut */
    ASSERT_EQ_INT((int)nr, -1);
    ASSERT_EQ_INT(pp_offcpu_parse_syscall("", &nr, a), -EIO);
}

TEST(offcpu_reason_as_sample_mode_gives_it)
{
    pp_offcpu t = {.state = 'S', .syscall = 230};

    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0, 0), PP_WAIT_SLEEP);
    t.syscall = 0;                                          /* read */
    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0, 0), PP_WAIT_IO);
    t.syscall = 202;                                        /* futex */
    t.args[0] = 0x5000 + 8;
    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0x5000, 64), PP_WAIT_GIL);
    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0x6000, 64), PP_WAIT_LOCK);
    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0, 0), PP_WAIT_LOCK);
    t.syscall = -1;                                         /* syscall unreadable */
    snprintf(t.wchan, sizeof(t.wchan), "do_nanosleep");
    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0, 0), PP_WAIT_SLEEP);
    t.wchan[0] = '\0';
    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0, 0), PP_WAIT_OTHER);
}

TEST(offcpu_wchan_families)
{
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("hrtimer_nanosleep"), PP_WAIT_SLEEP);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("futex_wait_queue"), PP_WAIT_LOCK);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("pipe_read"), PP_WAIT_IO);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("unix_stream_read_generic"), PP_WAIT_IO);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("do_epoll_wait"), PP_WAIT_IO);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("do_sys_poll"), PP_WAIT_IO);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("do_wait"), PP_WAIT_CHILD);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("kernel_waitid"), PP_WAIT_CHILD);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("wait_for_vfork_done"), PP_WAIT_CHILD);
    ASSERT_EQ_INT(pp_offcpu_wchan_reason("some_other_wait"), PP_WAIT_OTHER);
}

TEST(offcpu_split_of_an_interval)
{
    pp_offcpu a = {.state = 'S', .run_ns = 100 * MS, .delay_ns = 5 * MS};
    pp_offcpu b = {.state = 'S', .run_ns = 103 * MS, .delay_ns = 6 * MS};
    pp_offcpu_split s;

    /* blocked at both: 3 ms ran, 1 ms waited for a CPU, the rest blocked */
    pp_offcpu_split_of(&a, &b, 10 * MS, &s);
    ASSERT_EQ_UINT(s.cpu_ns, 3 * MS);
    ASSERT_EQ_UINT(s.runq_ns, 1 * MS);
    ASSERT_EQ_UINT(s.blocked_ns, 6 * MS);
    /* running at both: the account lags, so all but the runq ran */
    a.state = b.state = 'R';
    pp_offcpu_split_of(&a, &b, 10 * MS, &s);
    ASSERT_EQ_UINT(s.cpu_ns, 9 * MS);
    ASSERT_EQ_UINT(s.runq_ns, 1 * MS);
    ASSERT_EQ_UINT(s.blocked_ns, 0);
    /* running, then blocked, the account ahead of the interval */
    b.state = 'D';
    b.run_ns = 115 * MS;
    pp_offcpu_split_of(&a, &b, 10 * MS, &s);
    ASSERT_EQ_UINT(s.cpu_ns, 9 * MS);
    ASSERT_EQ_UINT(s.runq_ns, 1 * MS);
    ASSERT_EQ_UINT(s.blocked_ns, 0);
    /* the tid reused: its account went back */
    b.run_ns = 1 * MS;
    pp_offcpu_split_of(&a, &b, 10 * MS, &s);
    ASSERT_EQ_UINT(s.blocked_ns, 10 * MS);
    ASSERT_EQ_UINT(s.cpu_ns + s.runq_ns, 0);
}

#ifdef __x86_64__
static int pipe_fds[2];

static void *sleeper(void *arg)
{
    struct timespec t = {2, 0};

    nanosleep(&t, NULL);
    return arg;
}

static void *reader(void *arg)
{
    char c;

    if (read(pipe_fds[0], &c, 1) < 0)
        return NULL;
    return arg;
}

static pid_t find_blocked(pid_t self, pid_t skip, int64_t want_call)
{
    char path[64];

    for (pid_t tid = self; tid < self + 64; tid++) {
        pp_offcpu t;

        if (tid == skip)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)self, (int)tid);
        if (access(path, F_OK) != 0 || pp_offcpu_read(self, tid, &t) != 0)
            continue;
        if (pp_offcpu_blocked(&t) && t.syscall == want_call)
            return tid;
    }
    return 0;
}

TEST(offcpu_reads_real_threads_blocked_in_a_sleep_and_a_read)
{
    pid_t self = getpid(), tid;
    pthread_t a, b;
    pp_offcpu t;

    struct timespec settle = {0, 50 * 1000000};

    ASSERT_EQ_INT(pipe(pipe_fds), 0);
    ASSERT_EQ_INT(pthread_create(&a, NULL, sleeper, NULL), 0);
    ASSERT_EQ_INT(pthread_create(&b, NULL, reader, NULL), 0);
    nanosleep(&settle, NULL);                       /* both blocked in their calls */
    /* the main thread itself runs */
    ASSERT_EQ_INT(pp_offcpu_read(self, (pid_t)syscall(SYS_gettid), &t), 0);
    ASSERT_EQ_INT(t.state, 'R');
    ASSERT_EQ_INT((int)t.syscall, -1);
    tid = find_blocked(self, 0, SYS_clock_nanosleep);
    if (!tid)
        tid = find_blocked(self, 0, SYS_nanosleep);
    ASSERT_NE_INT(tid, 0);
    ASSERT_EQ_INT(pp_offcpu_read(self, tid, &t), 0);
    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0, 0), PP_WAIT_SLEEP);
    tid = find_blocked(self, 0, SYS_read);
    ASSERT_NE_INT(tid, 0);
    ASSERT_EQ_INT(pp_offcpu_read(self, tid, &t), 0);
    ASSERT_EQ_INT(pp_offcpu_reason(&t, 0, 0), PP_WAIT_IO);
    ASSERT_EQ_INT(pp_offcpu_read(self, 999999999, &t), -ENOENT);
    ASSERT_EQ_INT((int)write(pipe_fds[1], "x", 1), 1);
    pthread_join(b, NULL);
    pthread_cancel(a);
    pthread_join(a, NULL);
}
#else
/* the reasons are of x86_64's system call numbers (wall.c); under
 * qemu-user /proc shows the emulator's own calls besides */
TEST(offcpu_reads_real_threads_blocked_in_a_sleep_and_a_read)
{
    TEST_SKIP("the reasons' system call numbers are x86_64's");
}
#endif
