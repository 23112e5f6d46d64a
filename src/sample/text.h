/*
 * What the two /proc text parsers of sample mode (maps.c, kallsyms.c)
 * share: reading a /proc file whole (its size is 0 to stat: read to the
 * end) and an address in hex.
 */
#ifndef PERFPY_SAMPLE_TEXT_H
#define PERFPY_SAMPLE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The whole file in *buf (malloc'ed, *len bytes; free it, also after an
 * error). 0, -errno of open/read, or -ENOMEM. */
int pp__read_proc(const char *path, char **buf, size_t *len);
/* 1 to 16 hex digits at *p (before end) into *v, *p moved past them; -1
 * when there are none or more than 16 (not an address). */
int pp__hex64(const char **p, const char *end, uint64_t *v);

#endif
