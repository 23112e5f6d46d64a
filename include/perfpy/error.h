/*
 * The error convention at the boundaries of perfpy's libraries (the report
 * pipeline, the writers, the command's shared modules): a function returns
 * 0 or a negative errno and, when it fails, fills one pp_error with a
 * sentence that names the problem and the fix. Only a command prints it
 * ("perfpy: <message>") and picks the exit status, so every message can be
 * checked by a unit test without capturing stderr.
 *
 *     pp_error e = {0};
 *     if (pp_perf_find(NULL, perf, sizeof(perf), &e) < 0)
 *         return pp_fail("%s", e.message);
 *
 * The engine keeps its own smaller convention (a negative errno, and the
 * jitdump reader's pp_jd_error with a byte offset); this is the same shape
 * for code that has more to say than an errno.
 */
#ifndef PERFPY_ERROR_H
#define PERFPY_ERROR_H

#include <stdarg.h>
#include <stdio.h>

typedef struct pp_error {
    int code;                /* 0, or the negative errno returned */
    char message[4096];      /* one sentence (perf's own words may follow on
                                further lines), without "perfpy: " */
} pp_error;

/* Fills e (when not NULL) and returns code, a negative errno. */
static inline int pp_error_set(pp_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int pp_error_set(pp_error *e, int code, const char *fmt, ...)
{
    va_list ap;

    if (e) {
        e->code = code;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
    }
    return code;
}

#endif
