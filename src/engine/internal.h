/*
 * Helpers shared by the engine's backends (cross-file internals: pp__*).
 */
#ifndef PERFPY_ENGINE_INTERNAL_H
#define PERFPY_ENGINE_INTERNAL_H

#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfpy/engine.h"

/* Opens (creating, mode 0600) a file that only this user may own: never
 * through a symlink (O_NOFOLLOW), and only a regular file owned by the
 * effective user. flags: O_APPEND or O_TRUNC, added to O_CREAT|O_CLOEXEC,
 * and O_RDWR to open it for reading too (write-only otherwise).
 * Returns an fd or a negative errno (-ELOOP for a symlink, -EPERM for a
 * file of another user or not a regular file). */
int pp__open_private(const char *path, int flags);

/* Whether a descriptor of this process has the file at path open: another
 * writer in the process (CPython's own -X perf_jit writes /tmp/jit-<pid>.dump
 * through a buffered FILE it flushes at exit). 0 when unknown. */
int pp__open_in_this_process(const char *path);

/* write(2) until done; -errno on failure (-ENOSPC for a full disk). */
int pp__write_all(int fd, const void *buf, size_t len);

/* Writes one entry at the end of fd, whole or not at all: when a full disk
 * takes only part of it, the part is cut off again (readers never see half
 * an entry). 0 or -errno. */
int pp__append_whole(int fd, const void *buf, size_t len);

/* Appends the first len bytes of the file at src_path to fd. */
int pp__copy_prefix(const char *src_path, int fd, uint64_t len);

/* The calling thread's kernel id. */
pid_t pp__gettid(void);

/* The part of every backend the engine sees; formats embed it first. */
struct pp_backend {
    const pp_backend_ops *ops;
    char path[PATH_MAX];      /* the file it writes, for messages */
};

#endif
