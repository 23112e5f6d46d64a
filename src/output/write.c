/*
 * Writing a file whole or not at all: a profile through its format's
 * writer, or a copy of a file (format perf). A regular file is written to a
 * temporary file beside it and renamed at the end; anything else (/dev/full,
 * a pipe, "-" for stdout) is written directly. fflush, ferror and fclose are
 * all checked, so a full disk fails and leaves no partial file.
 */
#include "output.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*fill_fn)(FILE *out, void *ctx);

/* A temporary file in path's directory, mode 0666 & ~umask, opened in *out. */
static int open_beside(const char *path, char *tmp, size_t cap, FILE **out, pp_error *e)
{
    char dir[PATH_MAX], *slash;
    mode_t mask;
    int fd, err;

    snprintf(dir, sizeof(dir), "%s", path);
    slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, sizeof(dir), ".");
    if ((size_t)snprintf(tmp, cap, "%s/.perfpy-out-XXXXXX", dir) >= cap)
        return pp_error_set(e, -ENAMETOOLONG, "output path too long: %s", path);
    fd = mkstemp(tmp);
    if (fd < 0)
        return pp_error_set(e, -errno, "cannot write %s: %s (check that the directory "
                            "exists and is writable)", path, strerror(errno));
    mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    *out = fdopen(fd, "w");
    if (!*out) {
        err = errno;
        close(fd);
        unlink(tmp);
        return pp_error_set(e, -err, "cannot write %s: %s", path, strerror(err));
    }
    return 0;
}

/* Opens path for writing (directly, or a temporary beside it), runs fill,
 * closes with every check, renames. */
static int write_via(const char *path, fill_fn fill, void *ctx, pp_error *e)
{
    char tmp[PATH_MAX];
    struct stat st;
    FILE *out;
    int rc, direct, to_stdout = strcmp(path, "-") == 0;

    direct = to_stdout || (stat(path, &st) == 0 && !S_ISREG(st.st_mode));
    if (to_stdout) {
        out = stdout;
    } else if (direct) {
        out = fopen(path, "w");
        if (!out)
            return pp_error_set(e, -errno, "cannot write %s: %s", path, strerror(errno));
    } else if ((rc = open_beside(path, tmp, sizeof(tmp), &out, e)) < 0) {
        return rc;
    }
    errno = 0;
    rc = fill(out, ctx);
    if (rc == 0 && (fflush(out) != 0 || ferror(out)))
        rc = errno ? -errno : -EIO;
    if (!to_stdout && fclose(out) != 0 && rc == 0)
        rc = errno ? -errno : -EIO;
    if (rc == 0 && !direct && rename(tmp, path) != 0)
        rc = -errno;
    if (rc < 0) {
        if (!direct)
            unlink(tmp);
        return pp_error_set(e, rc, "cannot write %s: %s%s", path, strerror(-rc),
                            rc == -ENOSPC ? " (free some space or choose another place "
                            "with -o)" : "");
    }
    return 0;
}

typedef struct profile_ctx {
    const pp_profile *p;
    const pp_format *f;
    const pp_write_opts *wo;
} profile_ctx;

static int fill_profile(FILE *out, void *ctx)
{
    profile_ctx *c = ctx;
    return c->f->write(c->p, out, c->wo);
}

int pp_output_write(const pp_profile *p, const pp_format *f, const char *path,
                    const pp_write_opts *wo, pp_error *e)
{
    profile_ctx c = {p, f, wo};

    if (!f->write)
        return pp_error_set(e, -EINVAL, "format %s is not written from a profile", f->name);
    return write_via(path, fill_profile, &c, e);
}

static int fill_copy(FILE *out, void *ctx)
{
    FILE *in = fopen(ctx, "rb");
    char buf[1 << 14];
    size_t n;
    int rc = 0;

    if (!in)
        return -errno;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            rc = errno ? -errno : -EIO;
            break;
        }
    if (ferror(in) && rc == 0)
        rc = -EIO;
    fclose(in);
    return rc;
}

int pp_output_copy(const char *from, const char *path, pp_error *e)
{
    return write_via(path, fill_copy, (void *)from, e);
}

int pp_output_close_stdout(pp_error *e)
{
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int err = errno;

    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (!bad)
        return 0;
    return pp_error_set(e, -err, "cannot write to standard output: %s", strerror(err));
}
