/*
 * The started program held at its exec (src/sampler/hold.c): let go
 * when the look finds its runtime, or at the bound, or at a signal, and
 * the program as it is without the hold: its exit status, the signal it
 * gets delivered, and no tracer once let go. Real processes (sh).
 */
#include "test.h"

#if PP_UNWIND
#include "sampler/hold.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct look_ctx {
    int calls, found_at, idles;
} look_ctx;

static int look_n(void *ctx)
{
    look_ctx *c = ctx;

    return ++c->calls >= c->found_at && c->found_at > 0;
}

static void idle_count(void *ctx)
{
    ((look_ctx *)ctx)->idles++;
    usleep(1000);
}

/* argv, seized before its exec as perfpy-sample starts a program; its
 * stdout in *out (a pipe) when out is not NULL. */
static pid_t start_argv(char *const argv[], int *out)
{
    int go[2], o[2];
    pid_t pid;
    char c;

    if (pipe(go) != 0 || pipe(o) != 0)
        return -1;
    if ((pid = fork()) == 0) {
        close(go[1]);
        close(o[0]);
        dup2(o[1], 1);
        if (read(go[0], &c, 1) != 1)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    close(go[0]);
    close(o[1]);
    if (pp__hold_seize(pid) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -2;
    }
    if (write(go[1], "g", 1) != 1)
        return -1;
    close(go[1]);
    if (out)
        *out = o[0];
    else
        close(o[0]);
    return pid;
}

static pid_t start(const char *script, int *out)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};

    return start_argv(argv, out);
}

static void read_all(int fd, char *buf, size_t size)
{
    ssize_t n;
    size_t len = 0;

    while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    close(fd);
}

#define START(pid, script, out)                                           \
    do {                                                                  \
        (pid) = start(script, out);                                       \
        if ((pid) == -2)                                                  \
            TEST_SKIP("needs CAP_SYS_PTRACE (ptrace of a child)");        \
        ASSERT_GT_INT(pid, 0);                                            \
    } while (0)

TEST(hold_lets_go_when_found_at_the_exec)
{
    look_ctx c = {0, 1, 0};
    pp_hold_stats hs;
    int status = -1;
    pid_t pid;

    START(pid, "exit 5", NULL);
    ASSERT_EQ_INT(pp__hold_run(pid, 1.0, look_n, idle_count, &c, &status, &hs), 0);
    ASSERT_EQ_INT(hs.why, PP_HOLD_FOUND);
    ASSERT_EQ_INT(hs.found, 1);
    ASSERT_EQ_INT(c.calls, 1);
    ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ_INT(WEXITSTATUS(status), 5);
}

/* an image with no CPython (sh) runs on, traced, until it ends: its exit
 * status is its own (a loop of builtins: a child's end would send a
 * SIGCHLD, which ends the hold) */
TEST(hold_keeps_the_exit_status)
{
    look_ctx c = {0, 0, 0};
    pp_hold_stats hs;
    int status = -1;
    pid_t pid;

    START(pid, "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 7", NULL);
    ASSERT_EQ_INT(pp__hold_run(pid, 5.0, look_n, idle_count, &c, &status, &hs), 1);
    ASSERT_EQ_INT(hs.why, PP_HOLD_ENDED);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ_INT(WEXITSTATUS(status), 7);
    ASSERT_GT_INT(c.idles, 0);          /* the recording went on meanwhile */
}

/* a signal that comes during the hold is delivered as it is let go: sh
 * dies of its SIGUSR1 (the default action), not exit 3 */
TEST(hold_delivers_a_signal)
{
    look_ctx c = {0, 0, 0};
    pp_hold_stats hs;
    int status = -1;
    pid_t pid;

    START(pid, "kill -USR1 $$; exit 3", NULL);
    ASSERT_EQ_INT(pp__hold_run(pid, 5.0, look_n, idle_count, &c, &status, &hs), 0);
    ASSERT_EQ_INT(hs.why, PP_HOLD_SIGNAL);
    ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status));
    ASSERT_EQ_INT(WTERMSIG(status), SIGUSR1);
}

/* past the bound it is let go, and traced no more (its next image reads
 * its own TracerPid: 0) */
TEST(hold_lets_go_at_the_bound_untraced)
{
    look_ctx c = {0, 0, 0};
    pp_hold_stats hs;
    char buf[256] = "";
    int status = -1, out;
    pid_t pid;

    START(pid, "sleep 0.3; exec grep TracerPid /proc/self/status", &out);
    ASSERT_EQ_INT(pp__hold_run(pid, 0.05, look_n, idle_count, &c, &status, &hs), 0);
    ASSERT_EQ_INT(hs.why, PP_HOLD_BOUND);
    ASSERT_GE_INT((long long)hs.held_ns, 50000000ll);
    read_all(out, buf, sizeof(buf));
    ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ_INT(WEXITSTATUS(status), 0);
    ASSERT_EQ_STR(buf, "TracerPid:\t0\n");
}

/* a CPython linked to libpython is run to its entry point (a breakpoint):
 * there it is let go (here the look never finds anything), the byte put
 * back and the instruction run as it would have been: it prints and ends
 * as it does alone */
TEST(hold_runs_a_libpython_cpython_to_its_entry_and_back)
{
    test_python v[16];
    char dir[512], buf[64];
    size_t n = test_pythons(v, 16, dir, sizeof(dir));

    for (size_t i = 0; i < n; i++) {
        char *argv[] = {v[i].path, "-S", "-c", "import sys; sys.stdout.write('ran'); "
                        "sys.exit(9)", NULL};
        look_ctx c = {0, 0, 0};
        pp_hold_stats hs;
        int status = -1, out, rc;
        pid_t pid = start_argv(argv, &out);

        if (pid == -2)
            TEST_SKIP("needs CAP_SYS_PTRACE (ptrace of a child)");
        ASSERT_GT_INT(pid, 0);
        rc = pp__hold_run(pid, 5.0, look_n, idle_count, &c, &status, &hs);
        read_all(out, buf, sizeof(buf));
        if (rc == 1)
            continue;               /* a static CPython (Debian's) ran on to its end */
        ASSERT_EQ_INT(rc, 0);
        ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
        printf("    %s: let go at its entry after %.2f ms, %.3f ms of it stopped\n",
               v[i].path, (double)hs.held_ns / 1e6, (double)hs.stopped_ns / 1e6);
        ASSERT_EQ_INT(hs.why, PP_HOLD_MISSED);
        ASSERT_EQ_INT(c.calls, 2);          /* at its exec, at its entry */
        ASSERT_EQ_STR(buf, "ran");
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ_INT(WEXITSTATUS(status), 9);
        return;
    }
    TEST_SKIP("no interpreter of the build links a libpython here (Debian's are static)");
}
#endif
