/*
 * Files the engine creates in shared directories (/tmp): opened so that a
 * planted symlink or another user's file is refused, never followed, and
 * written with loops that report a full disk instead of losing bytes.
 */
#include "internal.h"
#include "perfpy/engine.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int pp__open_private(const char *path, int flags)
{
    struct stat st;
    /* O_NONBLOCK: a FIFO planted at the path must not block the open. */
    int access = (flags & O_ACCMODE) == O_RDWR ? O_RDWR : O_WRONLY;
    int fd = open(path, access | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
                        O_NONBLOCK | (flags & O_APPEND), 0600);

    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0 || fcntl(fd, F_SETFL, flags & O_APPEND) != 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        return -EPERM;
    }
    if ((flags & O_TRUNC) && ftruncate(fd, 0) != 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

/* Calls fn(fd, ctx) for each descriptor of this process open on path's
 * file (same device and inode), until fn returns nonzero; that value, or 0. */
static int each_fd_on(const char *path, int (*fn)(int fd, void *ctx), void *ctx)
{
    struct stat want, st;
    struct dirent *e;
    DIR *d;
    int rc = 0;

    if (lstat(path, &want) != 0 || !S_ISREG(want.st_mode))
        return 0;
    d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    while (!rc && (e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dirfd(d))
            continue;
        if (fstat(fd, &st) == 0 && st.st_dev == want.st_dev &&
            st.st_ino == want.st_ino)
            rc = fn(fd, ctx);
    }
    closedir(d);
    return rc;
}

static int found_one(int fd, void *ctx)
{
    return 1;
}

int pp__open_in_this_process(const char *path)
{
    return each_fd_on(path, found_one, NULL);
}

static int to_null(int fd, void *ctx)
{
    int null = *(int *)ctx;

    return dup2(null, fd) < 0 ? -errno : 0;
}

int pp_file_detach_writers(const char *path)
{
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int rc;

    if (null < 0)
        return -errno;
    rc = each_fd_on(path, to_null, &null);
    close(null);
    return rc;
}

int pp__write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int pp__append_whole(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    size_t done = 0;
    int rc = 0;

    while (done < len) {
        ssize_t n = write(fd, p + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : -EIO;
            break;
        }
        done += (size_t)n;
    }
    if (rc < 0 && done > 0) {
        /* A full disk took part of the entry: cut it off again. */
        off_t end = lseek(fd, 0, SEEK_END);
        if (end >= (off_t)done && ftruncate(fd, end - (off_t)done) != 0)
            rc = -errno;
    }
    return rc;
}

int pp__copy_prefix(const char *src_path, int fd, uint64_t len)
{
    char buf[8192];
    int rc = 0;
    int src = open(src_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (src < 0)
        return -errno;
    while (len > 0) {
        size_t want = len < sizeof(buf) ? (size_t)len : sizeof(buf);
        ssize_t n = read(src, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            break;
        }
        if (n == 0) {
            rc = -EIO;   /* the parent's file is shorter than it wrote */
            break;
        }
        rc = pp__write_all(fd, buf, (size_t)n);
        if (rc < 0)
            break;
        len -= (uint64_t)n;
    }
    close(src);
    return rc;
}

pid_t pp__gettid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

uint64_t pp_monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
