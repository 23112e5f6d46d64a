/*
 * Prints one CPython version's structure offsets, the fields of
 * src/cpython/pyoffsets.h's list, as the headers it is built with say
 * (scripts/gen-pytables builds it against each interpreter's headers, and
 * with -DPy_GIL_DISABLED=1 for the free-threaded flavour of 3.13+), with
 * where _Py_DebugOffsets publishes each (3.13+). One line per field:
 *
 *   version 0x030d00f0 free_threaded 0 debug_size 584
 *   field NAME VALUE DEBUG_AT ZERO_ABSENT
 *
 * It also checks compat.h's constants for PyASCIIObject.state's bits
 * against the headers' own bit fields (set in a real object here), so a
 * version that moves them fails here, not in a profile.
 */
#define PP_COMPAT_OFFSETS_ONLY 1
#include "compat.h"
#include "cpython/pyoffsets.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030D0000
#define PP_D(path) (int32_t)offsetof(_Py_DebugOffsets, path), 0
#define PP_DZ(path) (int32_t)offsetof(_Py_DebugOffsets, path), 1
#define DEBUG_SIZE sizeof(_Py_DebugOffsets)
#else
#define PP_D(path) -1, 0
#define PP_DZ(path) -1, 0
#define DEBUG_SIZE 0
#endif
#define PP_NONE -1, 0

static void field(const char *name, long value, int debug_at, int zero_absent)
{
    printf("field %s %ld %d %d\n", name, value, debug_at, zero_absent);
}

/* The mask of a bit field, found by setting it whole in a zeroed state. */
#define STATE_MASK(member, all)                                  \
    do {                                                         \
        PyASCIIObject a;                                         \
        memset(&a, 0, sizeof(a));                                \
        a.state.member = all;                                    \
        memcpy(&mask, &a.state, sizeof(mask));                   \
    } while (0)

static int check_masks(void)
{
    unsigned int mask;
    int bad = 0;

    STATE_MASK(kind, 7);
    bad |= mask != PP_STR_KIND_MASK;
    STATE_MASK(compact, 1);
    bad |= mask != PP_STR_COMPACT_MASK;
    STATE_MASK(ascii, 1);
    bad |= mask != PP_STR_ASCII_MASK;
    if (bad)
        fprintf(stderr, "pytables_print: PyASCIIObject.state's bits are not where compat.h's "
                "PP_STR_*_MASK say (version %#x)\n", (unsigned)PY_VERSION_HEX);
    return bad;
}

#define PRINT(name, headers, debug) field(#name, (long)(headers), debug);

int main(void)
{
    if (check_masks())
        return 1;
    printf("version %#010x free_threaded %d debug_size %zu\n", (unsigned)PY_VERSION_HEX,
           PP_FREE_THREADED, (size_t)DEBUG_SIZE);
    PP_PY_FIELDS(PRINT)
    return 0;
}
