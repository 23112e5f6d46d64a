/*
 * kernel.perf_event_max_stack shared among recordings (see max_stack.h).
 *
 * The registry is a small text file:
 *
 *     before 127
 *     set 4096
 *     pid 4242
 *     pid 4317
 *
 * read and rewritten whole under flock. Dead pids (a recording killed with
 * SIGKILL) are dropped whenever it is read. A registry with no pid left but
 * the value still at `set` is a put-back that has not happened yet: the
 * next recording adopts it. The file goes when the value is back.
 */
#include "max_stack.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PIDS 256
#define RESTORER_SECONDS 3600
#define RESTORER_POLL_MS 250

typedef struct registry {
    int fd;                /* locked, or -1: no registry (act alone) */
    int have;              /* it holds a raise */
    int before, set;
    pid_t pids[MAX_PIDS];
    int npids;
} registry;

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static int read_int(const char *path, int *v)
{
    FILE *f = fopen(path, "re");
    int ok;

    if (!f)
        return -errno;
    ok = fscanf(f, "%d", v) == 1;
    fclose(f);
    return ok ? 0 : -EINVAL;
}

static int write_int(const char *path, int v)
{
    FILE *f = fopen(path, "we");
    int rc = 0;

    if (!f)
        return -errno;
    if (fprintf(f, "%d\n", v) < 0)
        rc = -EIO;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

static const char *sysctl_of(const pp_max_stack *m)
{
    return m->sysctl ? m->sysctl : PP_MAX_STACK_PATH;
}

static const char *state_of(const pp_max_stack *m)
{
    return m->state ? m->state : PP_MAX_STACK_STATE;
}

/* Writes the limit, trying `tries` times 100 ms apart while the kernel
 * says EBUSY. */
static int set_limit(const pp_max_stack *m, int v, int tries)
{
    int (*w)(const char *, int) = m->write ? m->write : write_int;
    int rc = -EBUSY;

    for (int i = 0; i < tries; i++) {
        if (i)
            sleep_ms(100);
        if ((rc = w(sysctl_of(m), v)) != -EBUSY)
            break;
    }
    return rc;
}

static int alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static void parse(registry *r, const char *text)
{
    int before = -1, set = -1, v;
    char key[16];
    int used;

    for (const char *p = text; *p; ) {
        if (sscanf(p, "%15s %d%n", key, &v, &used) == 2) {
            if (strcmp(key, "before") == 0)
                before = v;
            else if (strcmp(key, "set") == 0)
                set = v;
            else if (strcmp(key, "pid") == 0 && alive(v) && r->npids < MAX_PIDS)
                r->pids[r->npids++] = v;
        }
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    r->have = before > 0 && set > 0;
    r->before = before;
    r->set = set;
    if (!r->have)
        r->npids = 0;
}

/* Opens and locks the registry. A file that is not root's own regular file
 * with no write permission for others is not trusted: -1, act alone. The
 * lock is taken on the file the path names now (one unlinked meanwhile by
 * the last recording is opened again). */
static int open_locked(const char *path)
{
    for (int tries = 0; tries < 10; tries++) {
        struct stat a, b;
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0)
            return -1;
        if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode) || a.st_uid != geteuid() ||
            (a.st_mode & 022) || flock(fd, LOCK_EX) != 0) {
            close(fd);
            return -1;
        }
        if (stat(path, &b) == 0 && b.st_ino == a.st_ino && b.st_dev == a.st_dev)
            return fd;
        close(fd);
    }
    return -1;
}

static void load(registry *r, const char *path)
{
    char text[8192];
    ssize_t n;

    memset(r, 0, sizeof(*r));
    r->before = r->set = -1;
    if (geteuid() != 0 || (r->fd = open_locked(path)) < 0) {
        r->fd = -1;
        return;
    }
    n = pread(r->fd, text, sizeof(text) - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    parse(r, text);
}

static void add_pid(registry *r, pid_t pid)
{
    for (int i = 0; i < r->npids; i++)
        if (r->pids[i] == pid)
            return;
    if (r->npids < MAX_PIDS)
        r->pids[r->npids++] = pid;
}

static void drop_pid(registry *r, pid_t pid)
{
    for (int i = 0; i < r->npids; i++)
        if (r->pids[i] == pid)
            r->pids[i--] = r->pids[--r->npids];
}

/* Writes the registry back (or removes it when it holds no raise) and
 * unlocks it. */
static void store(registry *r, const char *path)
{
    char text[8192];
    int len;

    if (r->fd < 0)
        return;
    if (!r->have) {
        unlink(path);
    } else {
        len = snprintf(text, sizeof(text), "before %d\nset %d\n", r->before, r->set);
        for (int i = 0; i < r->npids && len < (int)sizeof(text) - 32; i++)
            len += snprintf(text + len, sizeof(text) - len, "pid %d\n", (int)r->pids[i]);
        if (ftruncate(r->fd, 0) != 0 || pwrite(r->fd, text, len, 0) != len)
            unlink(path);   /* a half-written registry is worse than none */
    }
    close(r->fd);           /* and with it the lock */
    r->fd = -1;
}

void pp_max_stack_raise(pp_max_stack *m, int want)
{
    registry r;
    int cur, rc;

    m->raised = 0;
    m->err = 0;
    m->restorer = 0;
    m->before = m->now = -1;
    if (read_int(sysctl_of(m), &cur) < 0)
        return;
    m->before = m->now = cur;
    load(&r, state_of(m));
    if (r.have && cur == r.set) {
        /* raised by a recording still running, or left for the next one to
         * put back: this one relies on it too */
        m->before = r.before;
        m->raised = 1;
        add_pid(&r, getpid());
    } else {
        r.have = 0;         /* someone else set the value since: theirs */
        if (cur < want) {
            if ((rc = set_limit(m, want, 20)) < 0) {
                m->err = -rc;
            } else {
                m->now = want;
                m->raised = 1;
                r = (registry){.fd = r.fd, .have = 1, .before = cur, .set = want};
                add_pid(&r, getpid());
            }
        }
    }
    store(&r, state_of(m));
}

/* The detached process: puts the value back once the kernel allows it,
 * unless a recording joined meanwhile (then that one puts it back) or
 * someone else changed the value. */
static void restorer_loop(pp_max_stack *m)
{
    for (long waited = 0; waited < RESTORER_SECONDS * 1000L; waited += RESTORER_POLL_MS) {
        registry r;
        int cur, done = 0;

        sleep_ms(RESTORER_POLL_MS);
        load(&r, state_of(m));
        if (r.fd < 0 || !r.have || r.npids > 0) {
            done = 1;
        } else if (read_int(sysctl_of(m), &cur) < 0 || cur != r.set) {
            r.have = 0;
            done = 1;
        } else if (set_limit(m, r.before, 1) != -EBUSY) {
            r.have = 0;
            done = 1;
        }
        store(&r, state_of(m));
        if (done)
            return;
    }
}

/* Starts the restorer, detached (its own session, no inherited descriptor:
 * a pipe kept open would hold whoever reads it); its pid, or -1. */
static pid_t start_restorer(pp_max_stack *m)
{
    int pfd[2], status;
    pid_t mid, pid = -1;

    if (pipe2(pfd, O_CLOEXEC) != 0)
        return -1;
    if ((mid = fork()) < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (mid == 0) {
        pid_t grand = fork();

        if (grand == 0) {
            int null = open("/dev/null", O_RDWR);

            sigset_t none;

            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            setsid();
            prctl(PR_SET_NAME, "perfpy-maxstack");
            signal(SIGINT, SIG_IGN);
            signal(SIGHUP, SIG_IGN);
            signal(SIGPIPE, SIG_IGN);
            for (int fd = 0; fd < 3; fd++)
                dup2(null, fd);
            for (int fd = 3; fd < 1024; fd++)
                if (fd != pfd[1])
                    close(fd);
            close(pfd[1]);
            restorer_loop(m);
            _exit(0);
        }
        if (write(pfd[1], &grand, sizeof(grand)) != (ssize_t)sizeof(grand))
            _exit(1);
        _exit(0);
    }
    close(pfd[1]);
    if (read(pfd[0], &pid, sizeof(pid)) != (ssize_t)sizeof(pid) || pid <= 0)
        pid = -1;
    close(pfd[0]);
    while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
        ;
    return pid;
}

int pp_max_stack_restore(pp_max_stack *m)
{
    registry r;
    int cur, rc = 0, tries = m->busy_tries > 0 ? m->busy_tries : 10;

    m->restorer = 0;
    if (!m->raised)
        return 0;
    m->raised = 0;
    load(&r, state_of(m));
    if (r.fd >= 0) {
        drop_pid(&r, getpid());
        if (!r.have || r.set != m->now || r.npids > 0) {
            store(&r, state_of(m));       /* others rely on it: theirs to end */
            return 0;
        }
    }
    if (read_int(sysctl_of(m), &cur) < 0 || cur != m->now) {
        r.have = 0;                       /* someone else changed it since */
    } else if ((rc = set_limit(m, m->before, tries)) == 0) {
        r.have = 0;
    } else if (rc == -EBUSY && r.fd >= 0 && (m->restorer = start_restorer(m)) > 0) {
        rc = PP_MAX_STACK_DEFERRED;       /* the registry keeps the raise */
    }
    store(&r, state_of(m));
    return rc;
}

int pp_max_stack_remembered(const char *state)
{
    registry r;
    int v;

    load(&r, state ? state : PP_MAX_STACK_STATE);
    v = r.have ? r.before : -1;
    if (r.fd >= 0) {
        close(r.fd);
        if (!r.have)
            unlink(state ? state : PP_MAX_STACK_STATE);
    }
    return v;
}
