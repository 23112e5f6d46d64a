/*
 * Where perfpy's files go (see places.h).
 */
#include "places.h"
#include "perfpy/lines_format.h"
#include "report/perf_probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#define TMPFS_MAGIC_ 0x01021994          /* statfs f_type of tmpfs (linux/magic.h) */
#define MEMORY_DIR_MIN_FREE (1ull << 30) /* room for ~200,000 functions' files */

/* When pid started, in seconds since the epoch (0 unknown): /proc/PID/stat's
 * starttime (clock ticks after boot, field 22, after the command in
 * parentheses that may hold anything) plus /proc/stat's btime. */
static double process_start(long pid)
{
    char path[64], buf[1024], *p;
    unsigned long long ticks = 0, btime = 0;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                      "%*d %*d %*d %llu", &ticks) != 1)
        return 0;
    if (!(f = fopen("/proc/stat", "r")))
        return 0;
    while (fgets(buf, sizeof(buf), f))
        if (sscanf(buf, "btime %llu", &btime) == 1)
            break;
    fclose(f);
    return btime ? (double)btime + (double)ticks / (double)sysconf(_SC_CLK_TCK) : 0;
}

pp_engine_seen pp_places_engine_of(long pid)
{
    char path[64], line[PATH_MAX + 128], dump[64];
    size_t dl = (size_t)snprintf(dump, sizeof(dump), "/jit-%ld.dump", pid);
    pp_engine_seen seen = PP_ENGINE_NONE;
    struct stat st;
    double start;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
    if (!(f = fopen(path, "r")))
        return PP_ENGINE_NONE;
    while (seen == PP_ENGINE_NONE && fgets(line, sizeof(line), f)) {
        size_t n = strcspn(line, "\n");
        line[n] = '\0';
        if (n > dl && strcmp(line + n - dl, dump) == 0)
            seen = PP_ENGINE_JIT;
    }
    fclose(f);
    if (seen)
        return seen;
    snprintf(path, sizeof(path), "/tmp/perf-%ld.map", pid);
    start = process_start(pid);
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && start > 0 &&
        (double)st.st_mtime + 1 >= start)
        return PP_ENGINE_MAP;
    return PP_ENGINE_NONE;
}

pp_dir_verdict pp_places_check(const char *dir, int exec, int *err)
{
    char path[PATH_MAX];
    pp_dir_verdict v = PP_DIR_OK;
    void *m;
    int fd;

    *err = 0;
    if ((size_t)snprintf(path, sizeof(path), "%s/perfpy-probe-%d", dir, (int)getpid()) >=
        sizeof(path)) {
        *err = ENAMETOOLONG;
        return PP_DIR_NO_CREATE;
    }
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        *err = errno;
        return PP_DIR_NO_CREATE;
    }
    if (exec && write(fd, "perfpy", 6) != 6) {
        *err = errno;
        v = PP_DIR_NO_WRITE;
    } else if (exec) {
        m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            *err = errno;
            v = PP_DIR_NO_EXEC;
        } else {
            munmap(m, 4096);
        }
    }
    close(fd);
    unlink(path);
    return v;
}

int pp_places_tmp_exec_ok(void)
{
    char d[] = PP_LIBDW_JIT_DIR "/perfpy-probe-XXXXXX";
    int ok, err;

    if (!mkdtemp(d))
        return 0;
    ok = pp_places_check(d, 1, &err) == PP_DIR_OK;
    rmdir(d);
    return ok;
}

static int on_tmpfs(const char *path)
{
    struct statfs fs;
    return statfs(path, &fs) == 0 && (unsigned long)fs.f_type == TMPFS_MAGIC_;
}

/* In jit mode `perf inject --jit` writes one small ELF file per Python
 * function next to the dump, and creating thousands of files is most of the
 * post-processing on a disk filesystem (5,400 functions: about 8 s on the
 * ext4 of the machine in docs/PERFORMANCE.md, under 1 s on tmpfs). So when
 * the recording directory is the default one (TMPDIR unset: a user who sets
 * it chose where perfpy's files go) and not on tmpfs, the dumps go to a
 * private directory in /dev/shm if that is a tmpfs with 1 GiB free
 * (~200,000 functions) whose files map PROT_EXEC. */
int pp_places_memory_dir(const char *recording_dir, char *buf, size_t cap)
{
    const char *tmpdir = getenv("TMPDIR");
    struct statvfs vfs;
    int err;

    if ((tmpdir && *tmpdir) || on_tmpfs(recording_dir) || !on_tmpfs("/dev/shm") ||
        statvfs("/dev/shm", &vfs) != 0 ||
        (unsigned long long)vfs.f_bavail * vfs.f_frsize < MEMORY_DIR_MIN_FREE)
        return -1;
    if ((size_t)snprintf(buf, cap, "/dev/shm/perfpy-jit-XXXXXX") >= cap || !mkdtemp(buf))
        return -1;
    if (pp_places_check(buf, 1, &err) != PP_DIR_OK) {
        rmdir(buf);
        return -1;
    }
    return 0;
}

/* The engine in each process wrote <dir>/perfpy-<pid>.lines: exactly the
 * processes whose files in a shared directory (/tmp/perf-<pid>.map, and
 * /tmp/jit-<pid>.dump when the dumps had to go to /tmp) are this
 * recording's. */
void pp_places_per_process(const char *dir, const char *fmt, void (*fn)(const char *path))
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        int pid = pp_lines_pid(e->d_name);
        char path[PATH_MAX];
        if (pid < 0)
            continue;
        snprintf(path, sizeof(path), fmt, pid);
        if (access(path, F_OK) == 0)
            fn(path);
    }
    closedir(d);
}

static int copy_file(const char *from, const char *to)
{
    char buf[65536];
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    size_t n;
    int rc = in && out ? 0 : -1;

    while (rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

/* src into to_dir under its own file name. */
static int copy_into(const char *src, const char *to_dir)
{
    const char *base = strrchr(src, '/');
    char dst[PATH_MAX];

    base = base ? base + 1 : src;
    if (snprintf(dst, sizeof(dst), "%s/%s", to_dir, base) >= (int)sizeof(dst))
        return -1;
    return copy_file(src, dst);
}

int pp_places_keep_per_process(const char *dir, const char *fmt, const char *to_dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        int pid = pp_lines_pid(e->d_name);
        char path[PATH_MAX];
        if (pid < 0)
            continue;
        if (snprintf(path, sizeof(path), PP_LINES_PATH, dir, pid) >= (int)sizeof(path) ||
            copy_into(path, to_dir) < 0)
            rc = -1;
        /* the thread names beside them, where the hook wrote any */
        if (snprintf(path, sizeof(path), PP_THREADS_PATH, dir, pid) < (int)sizeof(path) &&
            access(path, F_OK) == 0 && copy_into(path, to_dir) < 0)
            rc = -1;
        if (fmt && snprintf(path, sizeof(path), fmt, pid) < (int)sizeof(path) &&
            access(path, F_OK) == 0 && copy_into(path, to_dir) < 0)
            rc = -1;
    }
    closedir(d);
    return rc;
}

static void unlink_path(const char *path)
{
    unlink(path);
}

void pp_places_remove_per_process(const char *dir, const char *fmt)
{
    pp_places_per_process(dir, fmt, unlink_path);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

void pp_places_remove_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
