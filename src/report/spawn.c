/*
 * One way to start a program (see spawn.h): fork, the child's descriptors,
 * exec, and the exec's errno back through a close-on-exec pipe.
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* fd onto target in the child: PP_FD_NULL opens /dev/null. */
static void put_fd(int fd, int target)
{
    if (fd == PP_FD_INHERIT)
        return;
    if (fd == PP_FD_NULL)
        fd = open("/dev/null", target == 0 ? O_RDONLY : O_WRONLY);
    if (fd >= 0 && fd != target)
        dup2(fd, target);
}

static void child(char *const argv[], const pp_spawn_opts *o, int report_fd)
{
    int err;

    if (o->ignore_sigpipe)
        signal(SIGPIPE, SIG_IGN);
    if (o->default_signals) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
    }
    if (o->new_group)
        setpgid(0, 0);
    put_fd(o->in_fd, 0);
    put_fd(o->out_fd, 1);
    put_fd(o->err_fd, 2);
    for (size_t i = 0; o->unset && o->unset[i]; i++)
        unsetenv(o->unset[i]);
    if (o->search_path)
        execvp(argv[0], argv);
    else
        execv(argv[0], argv);
    err = errno;
    while (write(report_fd, &err, sizeof(err)) < 0 && errno == EINTR)
        ;
    _exit(127);
}

int pp_spawn(char *const argv[], const pp_spawn_opts *o, pid_t *pid)
{
    int p[2], err = 0, status;
    ssize_t n;

    if (pipe2(p, O_CLOEXEC) != 0)
        return -errno;
    *pid = fork();
    if (*pid < 0) {
        err = errno;
        close(p[0]);
        close(p[1]);
        return -err;
    }
    if (*pid == 0)
        child(argv, o, p[1]);
    if (o->new_group)
        setpgid(*pid, *pid);      /* both sides: no window where it is not */
    close(p[1]);
    while ((n = read(p[0], &err, sizeof(err))) < 0 && errno == EINTR)
        ;
    close(p[0]);
    if (n == (ssize_t)sizeof(err) && err > 0) {
        pp_wait(*pid, &status);
        *pid = -1;
        return -err;
    }
    return 0;
}

int pp_wait(pid_t pid, int *status)
{
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return 0;
}

int pp_capture(char *const argv[], int with_stderr, const char *const *unset,
               char *out, size_t cap, int *status)
{
    pp_spawn_opts o = {.in_fd = PP_FD_NULL, .search_path = 1, .unset = unset};
    int fd[2], rc;
    size_t n = 0;
    pid_t pid;

    out[0] = '\0';
    if (pipe2(fd, O_CLOEXEC) != 0)
        return -errno;
    o.out_fd = fd[1];
    o.err_fd = with_stderr ? fd[1] : PP_FD_NULL;
    rc = pp_spawn(argv, &o, &pid);
    close(fd[1]);
    if (rc < 0) {
        close(fd[0]);
        return rc;
    }
    for (;;) {
        char buf[4096];
        ssize_t got = read(fd[0], buf, sizeof(buf));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (n + 1 < cap) {
            size_t take = (size_t)got < cap - 1 - n ? (size_t)got : cap - 1 - n;
            memcpy(out + n, buf, take);
            n += take;
        }
    }
    out[n] = '\0';
    close(fd[0]);
    return pp_wait(pid, status);
}

static int executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int pp_which(const char *name, char *buf, size_t cap)
{
    const char *path = getenv("PATH");

    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0 || (size_t)snprintf(buf, cap, "%s", name) >= cap)
            return -ENOENT;
        return 0;
    }
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (;;) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        if ((size_t)snprintf(buf, cap, "%.*s/%s", (int)n, n ? path : ".", name) < cap &&
            executable(buf))
            return 0;
        if (!end)
            return -ENOENT;
        path = end + 1;
    }
}
