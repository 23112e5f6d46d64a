/*
 * CPython's line tables, from the code object's bytes: which line the
 * instruction at a byte offset belongs to. Three formats (pyoffsets.h
 * PP_LINES_*): co_lnotab (3.8, 3.9), 3.10's co_linetable, and the location
 * table of 3.11+ (Objects/locations.md in CPython). Plain C, hostile input
 * (fuzz_linetable.c): built on every machine.
 */
#ifndef PERFPY_CPYTHON_LINETABLE_H
#define PERFPY_CPYTHON_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at byte offset `offset` of the code, by
 * table[0..len) in `format`; def_line (co_firstlineno, where every table
 * starts) when the table has no line there or does not parse. */
int pp_linetable_line(const unsigned char *table, size_t len, int format, int64_t offset,
                      int def_line);

#endif
