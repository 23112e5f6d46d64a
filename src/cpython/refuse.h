/*
 * How a reader of this folder refuses what a process holds (a version it
 * does not know, offsets past their structure, a section it cannot read):
 * the sentence in why, for the caller to say once, and the error returned.
 */
#ifndef PERFPY_CPYTHON_REFUSE_H
#define PERFPY_CPYTHON_REFUSE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int pp__refuse(char *why, size_t len, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int pp__refuse(char *why, size_t len, int rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return rc;
}

#endif
