/*
 * Which processes of the host run a CPython, and what they run (see
 * host.h). A whole-host recording asks at its start of every
 * process of /proc, and then of each process at its exec (the BPF
 * program tells every one): the program's name says most (python3.11,
 * python3.15d), its ELF's dynamic section the rest (a program linked
 * with libpython3.X.so: uwsgi, an embedding application), and at the
 * start, when the process has run a while, its maps (a libpython loaded
 * with dlopen). At an exec the dynamic loader has not mapped libpython
 * yet, so the maps would not tell; DT_NEEDED does.
 *
 *   exec of /usr/bin/uwsgi ─► name? no ─► DT_NEEDED libpython3.11.so.1.0? yes
 *   exec of /usr/bin/gzip  ─► name? no ─► DT_NEEDED: libc, libz ─► no
 */
#include "request.h"
#include "report/fold.h"
#include "host.h"
#include "cpython/pysyms.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEPT 128                    /* executables whose answer is kept */
#define ARGS 64                     /* arguments looked at for the service */

static struct answer {
    dev_t dev;
    ino_t ino;
    struct timespec mtime;          /* a file rewritten in place is asked anew */
    int python;
} kept[KEPT];
static size_t nkept, next_slot;

static int named_python(const char *path)
{
    const char *base = strrchr(path, '/');

    return strstr(base ? base + 1 : path, "python") != NULL;
}

/* A libpython among pid's mappings. */
static int maps_libpython(pid_t pid)
{
    char path[64], line[4352];
    FILE *f;
    int found = 0;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    if (!(f = fopen(path, "r")))
        return 0;
    while (!found && fgets(line, sizeof(line), f)) {
        const char *slash = strrchr(line, '/');
        found = slash && strncmp(slash + 1, "libpython", 9) == 0;
    }
    fclose(f);
    return found;
}

/* The kept answer for the file, or -1. */
static int kept_answer(const struct stat *st)
{
    for (size_t i = 0; i < nkept; i++)
        if (kept[i].dev == st->st_dev && kept[i].ino == st->st_ino &&
            kept[i].mtime.tv_sec == st->st_mtim.tv_sec &&
            kept[i].mtime.tv_nsec == st->st_mtim.tv_nsec)
            return kept[i].python;
    return -1;
}

static void keep(const struct stat *st, int python)
{
    kept[next_slot] = (struct answer){st->st_dev, st->st_ino, st->st_mtim, python};
    next_slot = (next_slot + 1) % KEPT;
    if (nkept < KEPT)
        nkept++;
}

int pp_host_is_python(pid_t pid, int maps)
{
    char link[64], exe[4096];
    struct stat st;
    ssize_t n;
    int fd, python;

    snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
    if ((n = readlink(link, exe, sizeof(exe) - 1)) < 0)
        return errno == ENOENT || errno == ESRCH ? -ENOENT : 0;   /* a kernel thread */
    exe[n] = '\0';
    if (named_python(exe))
        return 1;
    /* through /proc/PID/exe: the file the process runs, in its container too */
    if ((fd = open(link, O_RDONLY | O_CLOEXEC)) < 0)
        return errno == ENOENT || errno == ESRCH ? -ENOENT : 0;
    if (fstat(fd, &st) == 0 && (python = kept_answer(&st)) >= 0) {
        close(fd);
        return python || (maps && maps_libpython(pid)) ? 2 : 0;
    }
    python = pp_pysyms_needs_libpython(fd, 0);
    if (fstat(fd, &st) == 0)
        keep(&st, python);
    close(fd);
    return python || (maps && maps_libpython(pid)) ? 2 : 0;
}

/* Its arguments (NUL-separated in buf[0..len)) as an argv of at most
 * ARGS, NULL-terminated. */
static void split(char *buf, size_t len, char **argv)
{
    size_t n = 0;

    for (size_t i = 0; i < len && n < ARGS; i += strlen(buf + i) + 1)
        argv[n++] = buf + i;
    argv[n] = NULL;
}

void pp_host_command(pid_t pid, char *command, size_t cap, char *service, size_t scap)
{
    char path[64], buf[4096], *argv[ARGS + 1];
    ssize_t len = -1;
    int fd;

    command[0] = service[0] = '\0';
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
        len = read(fd, buf, sizeof(buf) - 1);
        close(fd);
    }
    if (len <= 0)
        return;
    buf[len] = '\0';
    split(buf, (size_t)len, argv);
    if (named_python(argv[0]))
        pp_fold_service_of(argv, service, scap);
    else
        snprintf(service, scap, "%s", strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
                                                           : argv[0]);
    for (ssize_t i = 0; i + 1 < len; i++)
        if (buf[i] == '\0' || buf[i] == '\n' || buf[i] == '\t')
            buf[i] = ' ';
    if ((size_t)len >= cap && cap > 4)
        snprintf(command, cap, "%.*s...", (int)(cap - 4), buf);
    else
        snprintf(command, cap, "%s", buf);
}

int pp_host_each(void (*fn)(pid_t pid, void *ctx), void *ctx)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    pid_t self = getpid();

    if (!d)
        return -errno;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);

        if (*end || pid <= 0 || pid == self)
            continue;
        fn((pid_t)pid, ctx);
    }
    closedir(d);
    return 0;
}
