/*
 * The processes of a tree, from /proc (see procs.h).
 */
#include "procs.h"
#include "profile/htab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long pp_procs_small_file(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), err;
    ssize_t n;

    if (fd < 0)
        return -errno;
    n = read(fd, buf, len - 1);
    err = errno;
    close(fd);
    if (n < 0)      /* ESRCH: the task ended after its file was opened */
        return err == ESRCH ? -ENOENT : -err;
    buf[n] = '\0';
    if (n && buf[n - 1] == '\n')
        buf[--n] = '\0';
    return n;
}

int pp_procs_stat(pid_t pid, pid_t tid, char *state, pid_t *ppid, unsigned long long *start)
{
    char path[64], buf[1024];
    const char *p;
    long rc;
    int ppid_i = 0;
    unsigned long long st = 0;

    if (tid)
        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    else
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((rc = pp_procs_small_file(path, buf, sizeof(buf))) < 0)
        return (int)rc;
    /* the name may hold spaces and parentheses: the fields follow its last ')' */
    if (!(p = strrchr(buf, ')')) || p[1] != ' ' || !p[2])
        return -EIO;
    *state = p[2];
    if (!ppid && !start)
        return 0;
    /* fields 4 (ppid) and 22 (starttime), after the state (3) */
    if (sscanf(p + 4, "%d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
               "%*d %*d %llu", &ppid_i, &st) != 2)
        return -EIO;
    if (ppid)
        *ppid = ppid_i;
    if (start)
        *start = st;
    return 0;
}

int pp_procs_run_ns(pid_t pid, pid_t tid, uint64_t *ns)
{
    char path[64], buf[128];
    unsigned long long v;
    long rc;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    if ((rc = pp_procs_small_file(path, buf, sizeof(buf))) < 0)
        return (int)rc;
    if (sscanf(buf, "%llu", &v) != 1)
        return -EIO;
    *ns = v;
    return 0;
}

typedef struct entry {
    pid_t pid, ppid;
    unsigned long long start;
} entry;

/* Every live process: its pid, parent and start time. */
static long all(entry **out)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    entry *v = NULL;
    size_t n = 0, cap = 0;

    if (!d)
        return -errno;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name), ppid;
        unsigned long long start;
        char state;

        if (pid <= 0 || pp_procs_stat(pid, 0, &state, &ppid, &start) != 0 || state == 'Z')
            continue;
        if (pp__grow((void **)&v, &cap, n + 1, sizeof(*v)) < 0) {
            free(v);
            closedir(d);
            return -ENOMEM;
        }
        v[n++] = (entry){pid, ppid, start};
    }
    closedir(d);
    *out = v;
    return (long)n;
}

long pp_procs_tree(pid_t root, pp_proc_info *out, size_t cap)
{
    entry *v = NULL;
    long n = all(&v);
    size_t got = 0;

    if (n < 0)
        return n;
    for (long i = 0; i < n && got < cap; i++)
        if (v[i].pid == root)
            out[got++] = (pp_proc_info){v[i].pid, v[i].start};
    if (!got) {
        free(v);
        return -ESRCH;
    }
    /* breadth first: each pass adds the children of what is in out */
    for (size_t from = 0; from < got && got < cap; from++)
        for (long i = 0; i < n && got < cap; i++)
            if (v[i].ppid == out[from].pid && v[i].pid != root)
                out[got++] = (pp_proc_info){v[i].pid, v[i].start};
    free(v);
    return (long)got;
}
