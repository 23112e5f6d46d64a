/*
 * A real stack for the unwinder's test (test_unwind.c): unwind_target.c,
 * built with -fomit-frame-pointer (the Makefile), calls through named
 * functions that are never inlined nor turned into jumps
 *
 *   ut_unwind_target -> ut_depth_a -> ut_depth_b -> ut_depth_c
 *       -> ut_recurse(3) -> ut_recurse(2) -> ut_recurse(1) -> ut_recurse(0)
 *       -> ut_leaf: registers captured, the stack copied from sp
 *
 * so only DWARF CFI can walk it, as in a distribution's libpython.
 */
#ifndef PERFPY_UNWIND_TARGET_H
#define PERFPY_UNWIND_TARGET_H

#include <stddef.h>
#include <stdint.h>

typedef struct ut_snapshot {
    uint64_t regs[17];      /* x86_64 DWARF order, as pp_sample's */
    void *stack;            /* cap bytes; the copy from regs[7] */
    size_t cap, len;
    uint64_t stack_top;     /* the end of the stack's mapping: never read past */
} ut_snapshot;

/* Fills s at the depth drawn above; returns the number of frames it made
 * (9, counting ut_unwind_target), or -1 where this is not x86_64. */
int ut_unwind_target(ut_snapshot *s);
/* The first bytes of ut_recurse, to check that it keeps no frame pointer. */
const void *ut_recurse_code(void);

#endif
