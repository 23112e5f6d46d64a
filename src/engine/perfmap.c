/*
 * The perf-map backend: /tmp/perf-<pid>.map, the file perf reads to name
 * addresses in anonymous memory. One line per trampoline, exactly as
 * CPython 3.12 writes it:
 *
 *     7f3a1c2d0010 c py::Shape.area:/src/shapes.py
 *     ^start (hex)  ^size (hex)
 *
 * Each line reaches the file whole in one write(2) on an O_APPEND descriptor
 * before the trampoline first runs, so several writers (threads, or another
 * JIT in the same process) never mix their lines, and a crash leaves half a
 * line only if a SIGKILL lands inside a write that crosses a page boundary
 * (Linux checks for fatal signals between the pages of a write). The
 * path is fixed by perf; it is opened without following symlinks and only
 * if the file is ours (see file.c).
 *
 * Also here: pp_symbol_name(), the "py::<qualname>:<filename>" every format
 * uses, and the "lines" backend (perfpy-<pid>.lines), a sidecar that gives
 * perfpy record each trampoline's first line number.
 */
#include "internal.h"
#include "perfpy/lines_format.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A text file of one line per trampoline; the two line formats differ. */
typedef struct textfile {
    struct pp_backend base;
    int fd;
    int err;              /* sticky: the first failure, then no more writes */
    uint64_t end;         /* the file's end after our last line (fork copies) */
    char dir[PATH_MAX];
} textfile;

typedef int (*format_fn)(char *buf, size_t cap, const pp_symbol *sym);

static size_t put_clean(char *buf, size_t cap, size_t at, const char *s)
{
    for (; s && *s; s++, at++) {
        unsigned char c = (unsigned char)*s;
        if (at + 1 < cap)
            buf[at] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    return at;
}

size_t pp_symbol_name(char *buf, size_t cap, const pp_symbol *sym)
{
    size_t n = put_clean(buf, cap, 0, "py::");

    n = put_clean(buf, cap, n, sym->qualname);
    n = put_clean(buf, cap, n, ":");
    n = put_clean(buf, cap, n, sym->filename);
    if (cap > 0)
        buf[n < cap ? n : cap - 1] = '\0';
    return n;
}

static int map_line(char *buf, size_t cap, const pp_symbol *sym)
{
    int head = snprintf(buf, cap, "%" PRIxPTR " %zx ",
                        (uintptr_t)sym->code, sym->code_size);
    size_t name;

    if (head < 0)
        return -EINVAL;
    name = pp_symbol_name(buf + ((size_t)head < cap ? (size_t)head : cap),
                          (size_t)head < cap ? cap - (size_t)head : 0, sym);
    if ((size_t)head + name + 1 < cap)
        buf[head + name] = '\n';
    return head + (int)name + 1;
}

static int lines_line(char *buf, size_t cap, const pp_symbol *sym)
{
    return snprintf(buf, cap, PP_LINES_LINE, (uintptr_t)sym->code, sym->code_size,
                    sym->firstlineno);
}

static void set_path(textfile *t, const char *fmt, pid_t pid)
{
    snprintf(t->base.path, sizeof(t->base.path), fmt, t->dir, (int)pid);
}

/* Where the file ends now (lines of another writer included). */
static uint64_t file_end(int fd)
{
    off_t end = lseek(fd, 0, SEEK_END);

    return end > 0 ? (uint64_t)end : 0;
}

static int text_open(pp_backend **out, const pp_backend_ops *ops,
                     const char *dir, const char *fmt)
{
    textfile *t = calloc(1, sizeof(*t));
    int fd;

    if (!t)
        return -ENOMEM;
    t->base.ops = ops;
    snprintf(t->dir, sizeof(t->dir), "%s", dir);
    set_path(t, fmt, getpid());
    /* A file left by a dead process whose pid this one reuses would name
     * our addresses with its functions: start afresh, unless another writer
     * of this process (CPython's -X perf) has the file open. */
    fd = pp__open_private(t->base.path, O_APPEND |
                          (pp__open_in_this_process(t->base.path) ? 0 : O_TRUNC));
    if (fd < 0) {
        free(t);
        return fd;
    }
    t->fd = fd;
    t->end = file_end(fd);
    *out = &t->base;
    return 0;
}

static int text_write(pp_backend *b, const pp_symbol *sym, format_fn format)
{
    textfile *t = (textfile *)b;
    char small[1024];
    char *buf = small;
    int len, rc;

    if (t->err)
        return t->err;
    len = format(small, sizeof(small), sym);
    if (len < 0)
        return t->err = len;
    if ((size_t)len >= sizeof(small)) {
        buf = malloc((size_t)len + 1);
        if (!buf)
            return t->err = -ENOMEM;
        format(buf, (size_t)len + 1, sym);
    }
    rc = pp__append_whole(t->fd, buf, (size_t)len);
    if (buf != small)
        free(buf);
    if (rc < 0)
        return t->err = rc;
    t->end = file_end(t->fd);
    return 0;
}

/* The child's file starts as a copy of the parent's file up to its end
 * after the parent's last line before the fork: every trampoline the child
 * inherited is named in its own map, perfpy's and, where CPython's -X perf
 * shared the file, CPython's written before it; never a line the parent
 * appends after the fork. */
static int text_fork_child(pp_backend *b, const char *fmt, int inherit)
{
    textfile *t = (textfile *)b;
    char parent_path[PATH_MAX];
    int fd, rc;

    if (t->err)
        return t->err;
    memcpy(parent_path, t->base.path, sizeof(parent_path));
    close(t->fd);
    t->fd = -1;
    set_path(t, fmt, getpid());
    /* Not inheriting (CPython's rule): what the child's CPython already
     * wrote there (its persist-after-fork copy) stays, as text_open keeps
     * a file another writer of this process has open. */
    fd = pp__open_private(t->base.path, O_APPEND |
                          (inherit || !pp__open_in_this_process(t->base.path) ? O_TRUNC : 0));
    if (fd < 0)
        return t->err = fd;
    t->fd = fd;
    rc = inherit ? pp__copy_prefix(parent_path, fd, t->end) : 0;
    if (rc < 0)
        return t->err = rc;
    t->end = file_end(fd);   /* what a grandchild inherits starts here */
    return 0;
}

static int text_close(pp_backend *b)
{
    textfile *t = (textfile *)b;
    int rc = t->err;

    if (t->fd >= 0 && close(t->fd) != 0 && rc == 0)
        rc = -errno;
    free(t);
    return rc;
}

/* ---- perf map ---------------------------------------------------------- */

#define MAP_FMT "%s/perf-%d.map"

static size_t map_slot_size(size_t code_size)
{
    return (code_size + 15) & ~(size_t)15;
}

static int map_open(pp_backend **out, const char *dir)
{
    (void)dir;   /* perf looks only in /tmp */
    return text_open(out, &pp_perfmap_ops, "/tmp", MAP_FMT);
}

static int map_write(pp_backend *b, const pp_symbol *sym)
{
    return text_write(b, sym, map_line);
}

static int map_fork_child(pp_backend *b, int inherit)
{
    return text_fork_child(b, MAP_FMT, inherit);
}

const pp_backend_ops pp_perfmap_ops = {
    .name = "perf", .slot_size = map_slot_size, .open = map_open,
    .write_entry = map_write, .fork_child = map_fork_child, .close = text_close,
};

/* ---- lines sidecar ----------------------------------------------------- */

#define LINES_FMT PP_LINES_PATH       /* include/perfpy/lines_format.h */

static int lines_open(pp_backend **out, const char *dir)
{
    return text_open(out, &pp_lines_ops, dir ? dir : "/tmp", LINES_FMT);
}

static int lines_write(pp_backend *b, const pp_symbol *sym)
{
    return text_write(b, sym, lines_line);
}

static int lines_fork_child(pp_backend *b, int inherit)
{
    (void)inherit;   /* perfpy record's def lines: every inherited one */
    return text_fork_child(b, LINES_FMT, 1);
}

const pp_backend_ops pp_lines_ops = {
    .name = "lines", .slot_size = map_slot_size, .open = lines_open,
    .write_entry = lines_write, .fork_child = lines_fork_child, .close = text_close,
};
