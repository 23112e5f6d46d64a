/*
 * max_stack.c: the limit shared among recordings, on a file standing in for
 * the sysctl (a regular file; EBUSY comes from a writer that refuses while a
 * flag file exists, as the kernel does while a call-graph event is open).
 * Other recordings are real processes (the registry checks that its pids
 * live). The real sysctl is exercised by tests/integration/test_record.py.
 */
#include "report/max_stack.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char sysctl[512], state[512], busy_flag[512];

static int value(void)
{
    size_t n;
    char *t = test_read_file(sysctl, &n);
    int v = t ? atoi(t) : -1;

    free(t);
    return v;
}

static void set_value(int v)
{
    FILE *f = fopen(sysctl, "w");

    fprintf(f, "%d\n", v);
    fclose(f);
}

/* The kernel's refusal while another session's call graphs are open. */
static int busy_write(const char *path, int v)
{
    FILE *f;

    if (access(busy_flag, F_OK) == 0)
        return -EBUSY;
    if (!(f = fopen(path, "w")))
        return -errno;
    fprintf(f, "%d\n", v);
    fclose(f);
    return 0;
}

static pp_max_stack session(void)
{
    return (pp_max_stack){.sysctl = sysctl, .state = state, .write = busy_write,
                          .busy_tries = 2};
}

static void setup(int v)
{
    if (geteuid() != 0)
        TEST_SKIP("the registry is root's (only root raises the limit)");
    snprintf(sysctl, sizeof(sysctl), "%s/max_stack", test_tmpdir());
    snprintf(state, sizeof(state), "%s/registry", test_tmpdir());
    snprintf(busy_flag, sizeof(busy_flag), "%s/busy", test_tmpdir());
    set_value(v);
}

/* Another recording: a child that raises, then waits for a byte on *go
 * before it restores (or is killed). */
static pid_t other_recording(int go[2], int ready[2])
{
    pid_t pid;
    char c = 0;

    if (pipe(go) != 0 || pipe(ready) != 0)
        TEST_FAIL_("pipe: %s", strerror(errno));
    if ((pid = fork()) == 0) {
        pp_max_stack m = session();

        /* only the test holds go's write end: when it ends (a failed
         * assertion), read sees EOF and this process ends too */
        close(go[1]);
        close(ready[0]);

        pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);
        if (write(ready[1], &m.before, sizeof(m.before)) < 0 || read(go[0], &c, 1) != 1)
            _exit(2);
        _exit(pp_max_stack_restore(&m) == 0 ? 0 : 3);
    }
    close(go[0]);
    close(ready[1]);
    if (read(ready[0], &c, 1) != 1)
        TEST_FAIL_("the other recording did not start");
    return pid;
}

static void end_other(pid_t pid, int go[2])
{
    int status;

    if (write(go[1], "x", 1) != 1)
        TEST_FAIL_("write: %s", strerror(errno));
    waitpid(pid, &status, 0);
    ASSERT_EQ_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
}

TEST(max_stack_raised_and_put_back)
{
    pp_max_stack m;

    setup(127);
    m = session();
    pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(m.raised, 1);
    ASSERT_EQ_INT(m.before, 127);
    ASSERT_EQ_INT(m.now, PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(value(), PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(pp_max_stack_remembered(state), 127);
    ASSERT_EQ_INT(pp_max_stack_restore(&m), 0);
    ASSERT_EQ_INT(value(), 127);
    ASSERT_EQ_INT(access(state, F_OK), -1);          /* nothing left behind */
    ASSERT_EQ_INT(pp_max_stack_remembered(state), -1);
}

TEST(max_stack_high_enough_is_left_alone)
{
    pp_max_stack m;

    setup(8000);
    m = session();
    pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(m.raised, 0);
    ASSERT_EQ_INT(m.now, 8000);
    ASSERT_EQ_INT(pp_max_stack_restore(&m), 0);
    ASSERT_EQ_INT(value(), 8000);
    ASSERT_EQ_INT(access(state, F_OK), -1);
}

/* Two recordings overlap, the raising one ends first: the value stays
 * raised for the other, which puts back the value from before both. */
TEST(max_stack_overlapping_recordings_the_last_puts_it_back)
{
    int go[2], ready[2];
    pid_t other;
    pp_max_stack m;

    setup(127);
    m = session();
    pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);        /* first */
    other = other_recording(go, ready);                 /* joins */
    ASSERT_EQ_INT(pp_max_stack_restore(&m), 0);         /* first ends */
    ASSERT_EQ_INT(value(), PP_MAX_STACK_WANTED);        /* the other still needs it */
    ASSERT_EQ_INT(pp_max_stack_remembered(state), 127);
    end_other(other, go);
    ASSERT_EQ_INT(value(), 127);
    ASSERT_EQ_INT(access(state, F_OK), -1);
}

/* The joining one ends first: nothing changes until the first ends. */
TEST(max_stack_overlapping_recordings_the_joiner_ends_first)
{
    int go[2], ready[2];
    pid_t other;
    pp_max_stack m;

    setup(127);
    other = other_recording(go, ready);                 /* raises */
    m = session();
    pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);        /* joins */
    ASSERT_EQ_INT(m.raised, 1);
    ASSERT_EQ_INT(m.before, 127);
    ASSERT_EQ_INT(pp_max_stack_restore(&m), 0);
    ASSERT_EQ_INT(value(), PP_MAX_STACK_WANTED);
    end_other(other, go);
    ASSERT_EQ_INT(value(), 127);
}

/* A recording killed with SIGKILL never restores: the next one adopts the
 * remembered value and puts it back. */
TEST(max_stack_killed_recording_is_put_back_by_the_next)
{
    int go[2], ready[2], status;
    pid_t other;
    pp_max_stack m;

    setup(127);
    other = other_recording(go, ready);
    kill(other, SIGKILL);
    waitpid(other, &status, 0);
    ASSERT_EQ_INT(value(), PP_MAX_STACK_WANTED);
    m = session();
    pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(m.raised, 1);
    ASSERT_EQ_INT(m.before, 127);
    ASSERT_EQ_INT(pp_max_stack_restore(&m), 0);
    ASSERT_EQ_INT(value(), 127);
    ASSERT_EQ_INT(access(state, F_OK), -1);
}

/* Someone set the value by hand meanwhile: theirs, left as they set it. */
TEST(max_stack_changed_by_someone_else_is_theirs)
{
    pp_max_stack m;

    setup(127);
    m = session();
    pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);
    set_value(300);
    ASSERT_EQ_INT(pp_max_stack_restore(&m), 0);
    ASSERT_EQ_INT(value(), 300);
    ASSERT_EQ_INT(access(state, F_OK), -1);
}

/* The kernel refuses while another perf session records call graphs: a
 * detached process puts the value back once it allows it. */
TEST(max_stack_busy_kernel_defers_to_a_restorer)
{
    pp_max_stack m;
    FILE *f;
    int v = -1;

    setup(127);
    m = session();
    pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);
    f = fopen(busy_flag, "w");
    fclose(f);
    ASSERT_EQ_INT(pp_max_stack_restore(&m), PP_MAX_STACK_DEFERRED);
    ASSERT_GT_INT(m.restorer, 0);
    ASSERT_EQ_INT(value(), PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(pp_max_stack_remembered(state), 127);
    unlink(busy_flag);                                   /* the session ends */
    for (int i = 0; i < 100 && (v = value()) != 127; i++)
        usleep(50000);
    ASSERT_EQ_INT(v, 127);
    for (int i = 0; i < 100 && access(state, F_OK) == 0; i++)
        usleep(50000);
    ASSERT_EQ_INT(access(state, F_OK), -1);
    for (int i = 0; i < 100 && kill(m.restorer, 0) == 0; i++)
        usleep(50000);
    ASSERT_EQ_INT(kill(m.restorer, 0), -1);              /* and it is gone */
}

/* While the restorer waits, a new recording takes the raise over: the
 * restorer leaves, the new recording puts the value back. */
TEST(max_stack_new_recording_takes_over_from_the_restorer)
{
    pp_max_stack a, b;
    FILE *f;

    setup(127);
    a = session();
    pp_max_stack_raise(&a, PP_MAX_STACK_WANTED);
    f = fopen(busy_flag, "w");
    fclose(f);
    ASSERT_EQ_INT(pp_max_stack_restore(&a), PP_MAX_STACK_DEFERRED);
    b = session();
    pp_max_stack_raise(&b, PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(b.raised, 1);
    ASSERT_EQ_INT(b.before, 127);
    for (int i = 0; i < 100 && kill(a.restorer, 0) == 0; i++)
        usleep(50000);
    ASSERT_EQ_INT(kill(a.restorer, 0), -1);              /* it left */
    unlink(busy_flag);
    ASSERT_EQ_INT(value(), PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(pp_max_stack_restore(&b), 0);
    ASSERT_EQ_INT(value(), 127);
}

/* A registry another user could have written is not believed. */
TEST(max_stack_untrusted_registry_is_ignored)
{
    pp_max_stack m;
    FILE *f;

    setup(127);
    f = fopen(state, "w");
    fprintf(f, "before 5\nset 127\n");
    fclose(f);
    chmod(state, 0666);
    m = session();
    pp_max_stack_raise(&m, PP_MAX_STACK_WANTED);
    ASSERT_EQ_INT(m.before, 127);
    ASSERT_EQ_INT(pp_max_stack_restore(&m), 0);
    ASSERT_EQ_INT(value(), 127);
    ASSERT_EQ_INT(access(state, F_OK), 0);               /* not ours to remove */
}
