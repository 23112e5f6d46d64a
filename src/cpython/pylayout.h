/*
 * Which structure layout a running CPython has, with no perfpy module of
 * its version: the offsets a reader outside the process walks its frames
 * with (pyoffsets.h), for CPython 3.8 to 3.15 and both flavours of 3.13+.
 *
 *   _PyRuntime (its ELF symbol, in the file the process maps)
 *     starts with "xdebugpy"?  ── yes (3.13+) ─► _Py_DebugOffsets: version,
 *        │                                       free_threaded, the offsets
 *        │                                       CPython publishes for readers
 *        no (3.8-3.12)                          over the compiled table of that
 *        ▼                                      version and flavour (the fields
 *   the version: Py_Version (3.11+),            it does not publish), checked
 *   else the file's name (python3.X,            against Py_Version and the
 *   libpython3.X.so)                            table's flavour
 *        ▼
 *   the compiled table of that version (pytables.c)
 *
 * Refused, with one sentence naming the version and why (the caller reads
 * the process's native frames only): a version the tables do not hold
 * (older than 3.8, newer than perfpy), a 3.13+ _PyRuntime without the
 * cookie, debug offsets whose version disagrees with Py_Version, a flag
 * that is neither 0 nor 1, an offset past any structure, a layout whose
 * object header is not its flavour's; and a free-threaded build unless the
 * caller accepts one (PP_PYLAYOUT_FREE_THREADED: read by the same walk,
 * with tagged references, the larger object header and the per-thread
 * bytecode, but never tested on a real free-threaded interpreter).
 */
#ifndef PERFPY_CPYTHON_PYLAYOUT_H
#define PERFPY_CPYTHON_PYLAYOUT_H

#include "mem.h"
#include "pyoffsets.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PP_PYLAYOUT_COOKIE "xdebugpy"
#define PP_PYLAYOUT_READ 4096        /* bytes of _PyRuntime read: the debug offsets */

enum {
    PP_PYLAYOUT_FREE_THREADED = 1,   /* read a free-threaded build (untested) */
};

typedef struct pp_pylayout {
    pp_py_offsets off;
    uint32_t version_hex;            /* as precise as the process says it */
    int from_debug;                  /* 1: 3.13+'s published offsets were used */
    int free_threaded;               /* set from the debug offsets even when
                                        the build is refused */
} pp_pylayout;

/* From what the process holds: the first n bytes of its _PyRuntime, and
 * its Py_Version (0: none; else the version its file's name says, with
 * patch 0). 0, or -ENOTSUP / -ENOENT with the sentence in why (size len). */
int pp_pylayout_from(const void *runtime, size_t n, uint32_t py_version, unsigned flags,
                     pp_pylayout *out, char *why, size_t len);

/* The version a file's name says, any major: "python3.12",
 * "libpython3.12.so.1.0", "python3.12t" -> 0x030c0000, "python2.7" ->
 * 0x02070000; 0 when it says none. */
uint32_t pp_pylayout_version_of_name(const char *path);

/* The layout of the CPython of m whose _PyRuntime is at runtime and
 * Py_Version at version_at (0: not known), in the file `file` (as its maps
 * name it): its _PyRuntime and Py_Version read from its memory (a read
 * that comes back short retried shorter), then pp_pylayout_from. Where
 * they are: pp_pysyms_layout. */
int pp_pylayout_read(const pp_mem *m, uint64_t runtime, uint64_t version_at, const char *file,
                     unsigned flags, pp_pylayout *out, char *why, size_t len);

#endif
