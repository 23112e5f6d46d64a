/*
 * Wall-clock mode's user-space half: the reason of each stretch off the
 * CPU (wall.c), the captures kept until their end, the reason's marker at
 * the leaf of a folded stack (fold.c rule 10), and the summary's split
 * (summary_wall.c), the waiting asyncio tasks' time apart from it.
 */
#include "report/fold.h"
#include "report/report.h"
#include "report/summary_int.h"
#include "collect/wall.h"
#include "test.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__)
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#endif

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
    ASSERT_EQ_INT(pp_wall_reason(1, 61, 0, 0, 0, 0), PP_WAIT_CHILD);           /* wait4 */
    ASSERT_EQ_INT(pp_wall_reason(1, 247, 0, 0, 0, 0), PP_WAIT_CHILD);          /* waitid */
    ASSERT_EQ_INT(pp_wall_reason(1, 39, 0, 0, 0, 0), PP_WAIT_OTHER);           /* getpid */
    ASSERT_EQ_INT(pp_wall_reason(1, 58, 0, 0, 0, 0), PP_WAIT_CHILD);           /* vfork */
    ASSERT_EQ_INT(pp_wall_reason(1, 56, 0x4111, 0, 0, 0), PP_WAIT_CHILD);  /* clone, CLONE_VFORK */
    ASSERT_EQ_INT(pp_wall_reason(1, 56, 0x3d0f00, 0, 0, 0), PP_WAIT_OTHER);  /* a thread's clone */
    ASSERT_EQ_INT(pp_wall_reason(1, 57, 0, 0, 0, 0), PP_WAIT_OTHER);           /* fork */
    ASSERT_EQ_INT(pp_wall_reason(1, 72, 3, 7, 0, 0), PP_WAIT_LOCK);   /* fcntl F_SETLKW */
    ASSERT_EQ_INT(pp_wall_reason(1, 72, 3, 1, 0, 0), PP_WAIT_IO);
}

/* A sleep or I/O wait is a child's when its innermost Python function
 * (past selectors.py's) is subprocess.py's, whatever its directory; any
 * other file, another reason, or no Python frame keeps the reason. */
static pp_raw_frame py_frame(const char *qualname, const char *file)
{
    pp_raw_frame f = {.kind = PP_RAW_PYTHON, .sym = "[unknown]", .dso = ""};

    f.qualname = qualname, f.qualname_len = (uint32_t)strlen(qualname);
    f.file = file, f.file_len = (uint32_t)strlen(file);
    return f;
}

TEST(wall_reason_in_subprocess_waits_is_child)
{
    pp_raw_frame fr[4];
    pp_raw_sample s = {.frames = fr, .nframes = 3};

    fr[0] = (pp_raw_frame){.kind = PP_RAW_KERNEL, .sym = "do_sys_poll", .dso = ""};
    fr[1] = py_frame("PollSelector.select", "/usr/lib/python3.13/selectors.py");
    fr[2] = py_frame("Popen._communicate", "/usr/lib/python3.13/subprocess.py");
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_IO, &s), PP_WAIT_CHILD);
    fr[1] = py_frame("Popen._wait", "/opt/py/lib/python3.8/subprocess.py");
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_SLEEP, &s), PP_WAIT_CHILD);
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_LOCK, &s), PP_WAIT_LOCK);
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_GIL, &s), PP_WAIT_GIL);
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_CPU, &s), PP_WAIT_CPU);
    fr[1] = py_frame("nap", "/app/subprocess.py.bak");     /* another file */
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_SLEEP, &s), PP_WAIT_SLEEP);
    fr[1] = py_frame("nap", "/app/my_subprocess.py");
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_SLEEP, &s), PP_WAIT_SLEEP);
    fr[1] = py_frame("nap", "subprocess.py");                /* a bare name */
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_SLEEP, &s), PP_WAIT_CHILD);
    /* only the innermost Python function counts: a sleep of the user's
     * own under a function called from subprocess is a sleep */
    fr[1] = py_frame("preexec", "/app/app.py");
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_SLEEP, &s), PP_WAIT_SLEEP);
    s.nframes = 1;                                           /* no Python frame */
    ASSERT_EQ_INT(pp_wall_reason_python(PP_WAIT_SLEEP, &s), PP_WAIT_SLEEP);
}

/* Every system call wall.c names, by the numbers of this machine's own
 * headers (<sys/syscall.h>, <fcntl.h>: a number mistyped in wall.c's table
 * is told from them), with the reason wall.h gives it. A stretch in each
 * is judged alone, so that one call moved to another reason, or one lock
 * kind's command changed, is named. wall.c's numbers are x86_64's (sample
 * mode is x86_64's); another architecture's headers have other numbers,
 * and lack open, stat, select, poll and others (the aarch64 cross build
 * compiles this file). */
#if defined(__x86_64__)
typedef struct nr_reason {
    long nr;
    const char *name;
    int reason;
} nr_reason;

static const nr_reason every_call[] = {
    {SYS_nanosleep, "nanosleep", PP_WAIT_SLEEP},
    {SYS_clock_nanosleep, "clock_nanosleep", PP_WAIT_SLEEP},
    {SYS_pause, "pause", PP_WAIT_SLEEP},
    {SYS_futex_waitv, "futex_waitv", PP_WAIT_LOCK},
    {SYS_flock, "flock", PP_WAIT_LOCK},
    {SYS_semop, "semop", PP_WAIT_LOCK},
    {SYS_semtimedop, "semtimedop", PP_WAIT_LOCK},
    {SYS_read, "read", PP_WAIT_IO},
    {SYS_write, "write", PP_WAIT_IO},
    {SYS_open, "open", PP_WAIT_IO},
    {SYS_close, "close", PP_WAIT_IO},
    {SYS_stat, "stat", PP_WAIT_IO},
    {SYS_fstat, "fstat", PP_WAIT_IO},
    {SYS_lstat, "lstat", PP_WAIT_IO},
    {SYS_pread64, "pread64", PP_WAIT_IO},
    {SYS_pwrite64, "pwrite64", PP_WAIT_IO},
    {SYS_readv, "readv", PP_WAIT_IO},
    {SYS_writev, "writev", PP_WAIT_IO},
    {SYS_msync, "msync", PP_WAIT_IO},
    {SYS_sendfile, "sendfile", PP_WAIT_IO},
    {SYS_connect, "connect", PP_WAIT_IO},
    {SYS_accept, "accept", PP_WAIT_IO},
    {SYS_sendto, "sendto", PP_WAIT_IO},
    {SYS_recvfrom, "recvfrom", PP_WAIT_IO},
    {SYS_sendmsg, "sendmsg", PP_WAIT_IO},
    {SYS_recvmsg, "recvmsg", PP_WAIT_IO},
    {SYS_fsync, "fsync", PP_WAIT_IO},
    {SYS_fdatasync, "fdatasync", PP_WAIT_IO},
    {SYS_truncate, "truncate", PP_WAIT_IO},
    {SYS_ftruncate, "ftruncate", PP_WAIT_IO},
    {SYS_getdents, "getdents", PP_WAIT_IO},
    {SYS_rename, "rename", PP_WAIT_IO},
    {SYS_mkdir, "mkdir", PP_WAIT_IO},
    {SYS_rmdir, "rmdir", PP_WAIT_IO},
    {SYS_unlink, "unlink", PP_WAIT_IO},
    {SYS_sync, "sync", PP_WAIT_IO},
    {SYS_io_getevents, "io_getevents", PP_WAIT_IO},
    {SYS_getdents64, "getdents64", PP_WAIT_IO},
    {SYS_epoll_wait, "epoll_wait", PP_WAIT_IO},
    {SYS_openat, "openat", PP_WAIT_IO},
    {SYS_newfstatat, "newfstatat", PP_WAIT_IO},
    {SYS_unlinkat, "unlinkat", PP_WAIT_IO},
    {SYS_renameat, "renameat", PP_WAIT_IO},
    {SYS_splice, "splice", PP_WAIT_IO},
    {SYS_tee, "tee", PP_WAIT_IO},
    {SYS_sync_file_range, "sync_file_range", PP_WAIT_IO},
    {SYS_epoll_pwait, "epoll_pwait", PP_WAIT_IO},
    {SYS_accept4, "accept4", PP_WAIT_IO},
    {SYS_preadv, "preadv", PP_WAIT_IO},
    {SYS_pwritev, "pwritev", PP_WAIT_IO},
    {SYS_recvmmsg, "recvmmsg", PP_WAIT_IO},
    {SYS_syncfs, "syncfs", PP_WAIT_IO},
    {SYS_sendmmsg, "sendmmsg", PP_WAIT_IO},
    {SYS_preadv2, "preadv2", PP_WAIT_IO},
    {SYS_pwritev2, "pwritev2", PP_WAIT_IO},
    {SYS_statx, "statx", PP_WAIT_IO},
    {SYS_io_pgetevents, "io_pgetevents", PP_WAIT_IO},
    {SYS_io_uring_enter, "io_uring_enter", PP_WAIT_IO},
    {SYS_openat2, "openat2", PP_WAIT_IO},
    {SYS_epoll_pwait2, "epoll_pwait2", PP_WAIT_IO},
    {SYS_wait4, "wait4", PP_WAIT_CHILD},
    {SYS_waitid, "waitid", PP_WAIT_CHILD},
    {SYS_vfork, "vfork", PP_WAIT_CHILD},
    {SYS_clone3, "clone3", PP_WAIT_CHILD},
    /* none of the above: other */
    {SYS_getpid, "getpid", PP_WAIT_OTHER},
    {SYS_mmap, "mmap", PP_WAIT_OTHER},
    {SYS_exit_group, "exit_group", PP_WAIT_OTHER},
    {SYS_rt_sigtimedwait, "rt_sigtimedwait", PP_WAIT_OTHER},
};

static void reason_is(long nr, const char *name, uint64_t arg0, uint64_t arg1, int want)
{
    int got = pp_wall_reason(1, nr, arg0, arg1, GIL, GIL_SIZE);

    if (got != want)
        TEST_FAIL_("%s (%ld, %#llx, %llu): %s (%d), want %s (%d)", name, nr,
                   (unsigned long long)arg0, (unsigned long long)arg1,
                   got ? pp_wait_name(got) : "none", got, pp_wait_name(want), want);
}

TEST(wall_every_system_call_and_lock_kind_has_its_reason)
{
    /* fcntl's commands: the two that wait for a lock (a process's and an
     * open file's), and the others (taking a lock without waiting, asking
     * about one, the rest) as file I/O */
    static const struct { long cmd; const char *name; int reason; } fcntl_cmds[] = {
        {F_SETLKW, "fcntl(F_SETLKW)", PP_WAIT_LOCK},
        {F_OFD_SETLKW, "fcntl(F_OFD_SETLKW)", PP_WAIT_LOCK},
        {F_SETLK, "fcntl(F_SETLK)", PP_WAIT_IO},
        {F_GETLK, "fcntl(F_GETLK)", PP_WAIT_IO},
        {F_OFD_SETLK, "fcntl(F_OFD_SETLK)", PP_WAIT_IO},
        {F_OFD_GETLK, "fcntl(F_OFD_GETLK)", PP_WAIT_IO},
        {F_GETFL, "fcntl(F_GETFL)", PP_WAIT_IO},
        {F_DUPFD, "fcntl(F_DUPFD)", PP_WAIT_IO},
    };

    for (size_t i = 0; i < sizeof(every_call) / sizeof(every_call[0]); i++) {
        reason_is(every_call[i].nr, every_call[i].name, 3, 1, every_call[i].reason);
        /* preempted in any of them: waiting for a CPU */
        ASSERT_EQ_INT(pp_wall_reason(0, every_call[i].nr, 3, 1, GIL, GIL_SIZE), PP_WAIT_CPU);
    }
    for (size_t i = 0; i < sizeof(fcntl_cmds) / sizeof(fcntl_cmds[0]); i++)
        reason_is(SYS_fcntl, fcntl_cmds[i].name, 3, (uint64_t)fcntl_cmds[i].cmd,
                  fcntl_cmds[i].reason);
    /* select and poll: a sleep on no fd (time.sleep on 3.8-3.10), I/O on some */
    reason_is(SYS_select, "select(0 fds)", 0, 0, PP_WAIT_SLEEP);
    reason_is(SYS_select, "select(4 fds)", 4, 0, PP_WAIT_IO);
    reason_is(SYS_pselect6, "pselect6(0 fds)", 0, 0x1000, PP_WAIT_SLEEP);
    reason_is(SYS_pselect6, "pselect6(4 fds)", 4, 0x1000, PP_WAIT_IO);
    reason_is(SYS_poll, "poll(0 fds)", 0x1000, 0, PP_WAIT_SLEEP);
    reason_is(SYS_poll, "poll(2 fds)", 0x1000, 2, PP_WAIT_IO);
    reason_is(SYS_ppoll, "ppoll(0 fds)", 0x1000, 0, PP_WAIT_SLEEP);
    reason_is(SYS_ppoll, "ppoll(2 fds)", 0x1000, 2, PP_WAIT_IO);
    /* futex: the GIL inside its state, a lock elsewhere */
    reason_is(SYS_futex, "futex(the GIL)", GIL + 8, 0, PP_WAIT_GIL);
    reason_is(SYS_futex, "futex(a lock)", GIL + GIL_SIZE + 8, 0, PP_WAIT_LOCK);
    /* clone: a vfork child's parent waits for its exec; a thread's does not */
    reason_is(SYS_clone, "clone(CLONE_VFORK)", CLONE_VM | CLONE_VFORK | SIGCHLD, 0, PP_WAIT_CHILD);
    reason_is(SYS_clone, "clone(a thread)", CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, 0,
              PP_WAIT_OTHER);
    /* outside a system call (a page fault): other */
    reason_is(-1, "no system call", 0, 0, PP_WAIT_OTHER);
}
#else
TEST(wall_every_system_call_and_lock_kind_has_its_reason)
{
    TEST_SKIP("wall.c's system call numbers are x86_64's; this machine's headers give its own");
}
#endif

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

/* One sample through the folder: a Python function of /a.py over a kernel
 * frame. */
static void fold_one(pp_folder *f, int wait, uint64_t period, const char *py)
{
    pp_raw_frame fr[3];
    pp_raw_sample s;

    memset(fr, 0, sizeof(fr));
    fr[0] = (pp_raw_frame){.kind = PP_RAW_KERNEL, .ip = 0xffffffff81000000ull,
                           .sym = "do_nanosleep", .dso = "[kernel.kallsyms]", .sym_len = 12,
                           .dso_len = 17};
    fr[1] = (pp_raw_frame){.kind = PP_RAW_PYTHON, .ip = 2, .qualname = py, .file = "/a.py",
                           .qualname_len = (uint32_t)strlen(py), .file_len = 5, .line = 3};
    fr[2] = (pp_raw_frame){.ip = 1, .sym = "_start", .dso = "/usr/bin/python3",
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
        fold_one(f, PP_WAIT_SLEEP, 5000, "doze");
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
    fold_one(f, PP_WAIT_NONE, 1000, "crunch");  /* 1 on the CPU, 2 asleep, 1 GIL */
    fold_one(f, PP_WAIT_SLEEP, 1000, "doze");
    fold_one(f, PP_WAIT_SLEEP, 1000, "doze");
    fold_one(f, PP_WAIT_GIL, 1000, "doze");
    ASSERT_EQ_INT(pp_fold_close(f), 0);
    print_split(&p, buf, sizeof(buf));
    ASSERT_CONTAINS(buf, "wall time: on-CPU 25.0%, off-CPU 75.0%: sleep 50.0%, I/O 0.0%, "
                         "lock 0.0%, GIL 25.0%, child 0.0%, CPU wait 0.0%, other 0.0%");
    /* doze: 75% of all, own and total; of its time 67% asleep, 33% GIL */
    ASSERT_CONTAINS(buf, "   75.0%   75.0%       0%     67%      0%      0%     33%      0%"
                         "      0%      0%  doze (/a.py)");
    /* a profile of CPU time gets none of it */
    p.value = PP_VALUE_CPU;
    ASSERT_EQ_INT(pp__funcs_make(&p, 0, &fn), 0);
    ASSERT_EQ_PTR(pp__wall_split_make(&p, &fn), NULL);
    pp__funcs_free(&fn);
    pp_profile_free(&p);
}

/* A waiting task's stack (--wall --async): its task, a coroutine, what it
 * awaits at the leaf, all tasks' markers but the coroutine. */
static void fold_task(pp_folder *f, uint64_t weight, const char *leaf)
{
    pp_raw_frame fr[3];
    pp_raw_sample s;

    memset(fr, 0, sizeof(fr));
    fr[0] = (pp_raw_frame){.kind = PP_RAW_TASK, .ip = 3, .sym = leaf, .dso = "",
                           .sym_len = (uint32_t)strlen(leaf)};
    fr[1] = (pp_raw_frame){.kind = PP_RAW_PYTHON, .ip = 2, .qualname = "doze", .file = "/a.py",
                           .qualname_len = 4, .file_len = 5, .line = 3};
    fr[2] = (pp_raw_frame){.kind = PP_RAW_TASK, .ip = 4, .sym = "<task 'h-1'>", .dso = "",
                           .sym_len = 12};
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
    fold_one(f, PP_WAIT_NONE, tenth, "crunch");  /* the thread: 0.1 s each */
    fold_one(f, PP_WAIT_SLEEP, tenth, "doze");
    fold_task(f, 2 * tenth, "[awaiting Future]");          /* its tasks: 0.3 s */
    fold_task(f, tenth, PP_TASK_READY);
    ASSERT_EQ_INT(pp_fold_close(f), 0);
    print_split(&p, buf, sizeof(buf));
    /* the split is the thread's alone; the tasks' time a line of its own */
    ASSERT_CONTAINS(buf, "wall time: on-CPU 50.0%, off-CPU 50.0%: sleep 50.0%, I/O 0.0%, "
                         "lock 0.0%, GIL 0.0%, child 0.0%, CPU wait 0.0%, other 0.0%\n");
    ASSERT_CONTAINS(buf, "asyncio tasks waiting (--async): 0.3 s of their own time, beside "
                         "the threads' 0.2 s");
    /* every row: doze, 4 of the 5 tenths, 1 of them asleep, 3 awaiting;
     * crunch, the tenth on the CPU; nothing else */
    ASSERT_CONTAINS(buf, "CPU wait   other awaiting  function\n"
                         "   80.0%   80.0%       0%     25%      0%      0%      0%      0%"
                         "      0%      0%      75%  doze (/a.py)\n"
                         "   20.0%   20.0%     100%      0%      0%      0%      0%      0%"
                         "      0%      0%       0%  crunch (/a.py)\n");
    ASSERT_EQ_STR(strstr(buf, "crunch (/a.py)\n"), "crunch (/a.py)\n");     /* the last */
    pp_profile_free(&p);
}

/* Every count that adds to the lost events and to the time said missing,
 * each made non-zero alone (a distinct power of two: a total that leaves
 * one out, or counts one twice, is told), and all of them together: the
 * total, and each number in its note. */
TEST(wall_every_lost_count_is_in_the_total_and_said)
{
    static const struct { const char *name; size_t at; uint64_t v; const char *says; } lost[] = {
        {"lost_captures", offsetof(pp_wall_counts, lost_captures), 1,
         "lost 1 stacks off the CPU"},
        {"lost_ends", offsetof(pp_wall_counts, lost_ends), 2, "and 2 ends of one"},
        {"unended", offsetof(pp_wall_counts, unended), 4, "4 stacks whose end never came"},
        {"lost_threads", offsetof(pp_wall_counts, lost_threads), 8, "8 threads not followed"},
        /* said by the sampler's own note ("N samples lost"), not here:
         * no line of wall clock's losses (NULL) */
        {"lost_samples", offsetof(pp_wall_counts, lost_samples), 64, NULL},
    };
    pp_wall_counts c;
    char buf[2048];
    FILE *out;
    uint64_t all = 0;

    for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
        uint64_t v = lost[i].v;

        memset(&c, 0, sizeof(c));
        c.switches = 100, c.captured = 50, c.missed = 16, c.uncaptured = 32;
        memcpy((char *)&c + lost[i].at, &v, sizeof(v));
        if (pp_wall_lost_events(&c) != v)
            TEST_FAIL_("%s = %llu alone: %llu lost events", lost[i].name, (unsigned long long)v,
                       (unsigned long long)pp_wall_lost_events(&c));
        memset(buf, 0, sizeof(buf));
        out = fmemopen(buf, sizeof(buf) - 1, "w");
        pp_wall_notes(out, &c, 1);
        fclose(out);
        if (lost[i].says)
            ASSERT_CONTAINS(buf, lost[i].says);
        else if (strstr(buf, "wall clock: lost"))
            TEST_FAIL_("%s = %llu alone: a note of wall clock's losses:\n%s", lost[i].name,
                       (unsigned long long)v, buf);
        all += v;
    }
    /* all at once, with the missing time */
    c = (pp_wall_counts){.switches = 100, .captured = 50, .missed = 16, .missed_ns = 2500000,
                         .uncaptured = 32, .uncaptured_ns = 7250000, .lost_captures = 1,
                         .lost_ends = 2, .unended = 4, .lost_threads = 8, .lost_samples = 64,
                         .lost_ns = 12500000, .recorded_ns = 487500000};
    ASSERT_EQ_UINT(pp_wall_lost_events(&c), all);
    ASSERT_EQ_UINT(all, 79);
    memset(buf, 0, sizeof(buf));
    out = fmemopen(buf, sizeof(buf) - 1, "w");
    pp_wall_notes(out, &c, 1);
    fclose(out);
    ASSERT_EQ_STR(buf,
        "perfpy: wall clock: the program's threads stopped running 100 times; 50 stacks off "
        "the CPU captured\n"
        "perfpy: wall clock: the kernel did not report 16 of the switches (found from the "
        "threads' CPU time); 2.5 ms off the CPU around them have no stack and are missing\n"
        "perfpy: wall clock: 32 stacks off the CPU were not captured as their threads ran "
        "again (the switch's end unseen, or the thread exiting); 7.2 ms off the CPU (as "
        "sampled) have no stack and are missing\n"
        "perfpy: wall clock: lost 1 stacks off the CPU and 2 ends of one (the ring buffer was "
        "full), 4 stacks whose end never came, 8 threads not followed (no memory for their "
        "state): that time is missing\n"
        "perfpy: wall clock: the stacks and ends the ring buffer lost stood for 12.5 ms off "
        "the CPU, 2.50% of the 0.50 s the profile would hold with them: its time off the CPU "
        "is short by that much\n");
    /* nothing lost, nothing missing: the first line alone */
    c = (pp_wall_counts){.switches = 3, .captured = 1};
    memset(buf, 0, sizeof(buf));
    out = fmemopen(buf, sizeof(buf) - 1, "w");
    pp_wall_notes(out, &c, 1);
    fclose(out);
    ASSERT_EQ_STR(buf, "perfpy: wall clock: the program's threads stopped running 3 times; 1 "
                       "stacks off the CPU captured\n");
}

/* notes into buf (of cap bytes) without -v */
static void quiet_notes(const pp_wall_counts *c, char *buf, size_t cap)
{
    FILE *out;

    memset(buf, 0, cap);
    out = fmemopen(buf, cap - 1, "w");
    pp_wall_notes(out, c, 0);
    fclose(out);
}

/* Without -v: nothing when the time missing is under 1% of what the
 * profile would hold; one line when it is 1% or more (2.5 + 7.25 + 12.5 ms
 * of 0.5 s: 4.45%), and one for threads not followed however few. */
TEST(wall_notes_quiet_say_a_loss_of_one_percent_in_one_line)
{
    pp_wall_counts c = {.switches = 100, .captured = 50, .missed = 16, .missed_ns = 2500000,
                        .recorded_ns = 487500000};
    char buf[2048];

    quiet_notes(&c, buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "");
    c.uncaptured = 32, c.uncaptured_ns = 7250000, c.lost_captures = 1, c.lost_ns = 12500000;
    quiet_notes(&c, buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "perfpy: wall clock: 22.2 ms off the CPU, 4.4% of the profile's time, "
                       "have no stack and are missing (-v says why)\n");
    c = (pp_wall_counts){.switches = 3, .captured = 1, .lost_threads = 2,
                         .recorded_ns = 487500000};
    quiet_notes(&c, buf, sizeof(buf));
    ASSERT_EQ_STR(buf, "perfpy: wall clock: 2 threads not followed (no memory for their state): "
                       "their time off the CPU is missing\n");
}
