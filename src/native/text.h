/*
 * What the /proc text parsers of sample mode (maps.c, kallsyms.c) and the
 * address tables built from them (and modsyms.c's) share: reading a /proc
 * file whole (its size is 0 to stat: read to the end), an address in hex,
 * and the bisection of an array sorted by an address field.
 */
#ifndef PERFPY_NATIVE_TEXT_H
#define PERFPY_NATIVE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The whole file in *buf (malloc'ed, *len bytes; free it, also after an
 * error). 0, -errno of open/read, or -ENOMEM. */
int pp__read_proc(const char *path, char **buf, size_t *len);
/* 1 to 16 hex digits at *p (before end) into *v, *p moved past them; -1
 * when there are none or more than 16 (not an address). */
int pp__hex64(const char **p, const char *end, uint64_t *v);
/* In n elements of elem bytes, sorted by the uint64_t at byte offset off
 * of each, the number whose value is <= x (so [result - 1] is the last
 * one at or below x). */
size_t pp__count_le(const void *base, size_t n, size_t elem, size_t off, uint64_t x);

#endif
