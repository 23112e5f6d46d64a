/*
 * The .lines sidecar: one file per process, written by the engine's "lines"
 * backend (src/engine/perfmap.c) next to a perf map, read by the report's
 * folder (src/report/fold.c) and listed by `perfpy record` (which processes
 * were this recording's). It gives each trampoline its function's def line
 * (co_firstlineno), which a perf map line has no room for.
 *
 *     <dir>/perfpy-<pid>.lines         dir: $PERFPY_LINES_DIR (record: its
 *                                      recording directory), else /tmp
 *     7f3a1c2d0010 c 12\n              start (hex), size (hex), line (decimal)
 *
 * Lowercase hex without 0x, as in the perf map. A reader skips a line it
 * does not understand (at most PP_LINES_MAX_DIGITS digits per number).
 *
 * Beside it, the thread names perfpy record's startup hook writes
 * (src/python/sitecustomize.py): a line each time a thread starts or is
 * renamed, the last one of a tid its name.
 *
 *     <dir>/perfpy-<pid>.threads
 *     4612 worker-1\n                  the thread's native id (decimal), a space,
 *                                      its threading name in UTF-8 (a backslash
 *                                      written as two, a newline as backslash n,
 *                                      read as a space: a frame label is one line)
 */
#ifndef PERFPY_LINES_FORMAT_H
#define PERFPY_LINES_FORMAT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PP_LINES_NAME "perfpy-%d.lines"             /* the pid */
#define PP_LINES_PATH "%s/" PP_LINES_NAME           /* the directory, the pid */
#define PP_LINES_LINE "%" PRIxPTR " %zx %d\n"       /* start, size, line */
#define PP_LINES_MAX_DIGITS 16
#define PP_THREADS_PATH "%s/perfpy-%d.threads"     /* the directory, the pid */

/* The pid of a directory entry named PP_LINES_NAME, or -1. */
static inline int pp_lines_pid(const char *name)
{
    int pid, end = 0;

    if (sscanf(name, "perfpy-%d.lines%n", &pid, &end) == 1 && end && name[end] == '\0' &&
        pid > 0)
        return pid;
    return -1;
}

#endif
