/*
 * Sample mode: the names of the code objects samples point to,
 * read once per object and kept.
 *
 * The BPF program records, per Python frame, the code object's address,
 * what four of its fields held at that moment and its name's hash (the
 * str's own, computed from its characters when the name was interned):
 * pp_pycode_id. User space reads the object some milliseconds later; by
 * then it may have been freed, and another code object made at the same
 * address. So the address alone is not a name:
 *
 *   sample ─► (pid, code, name, file, table, def_line, name hash) ─► cache hit
 *                          │ miss
 *                          ▼
 *            the same fields read now ── equal ──► the names and the line
 *                          │                       table read once, kept
 *                          │ differ / unreadable
 *                          ▼
 *            the object is gone: kept as "freed" (named [unknown]), never
 *            named with whatever lives at the address now
 *
 * Freed memory is reused at once: a copy of a function under another name
 * (code.replace()) lands at the freed copy's address, shares its line
 * table, and its new name lands where the old name was; only the name's
 * characters differ (tests/integration/programs/code_churn.py). The hash
 * tells them apart. An object freed and another made with all of these
 * the same is the same function as far as a profile can tell.
 *
 * The BPF program copies a code object's names and line table the first
 * time it samples one of its frames (codename_bpf.h): those copies come in
 * before the sample and are kept here (pp_pycode_put), so an object freed
 * before user space could read it is named all the same; the read above
 * is what is left for a copy that did not fit in its ring.
 *
 * The cache, not the program's memory, is the source of truth from then
 * on: a code object named once stays named after it dies (until its
 * process execs or ends, when its samples are all folded). Lines come from
 * the kept line table (linetable.c), so a sample costs no read of the
 * program once its code objects are known.
 */
#ifndef PERFPY_CPYTHON_PYCODE_H
#define PERFPY_CPYTHON_PYCODE_H

#include "pyoffsets.h"
#include "pyread.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pp_pycode pp_pycode;

/* One sampled frame's code object, as the collector read it. */
typedef struct pp_pycode_id {
    uint64_t code;               /* the object's address */
    pp_pyread_fields fields;    /* its fields at the sample */
} pp_pycode_id;

typedef struct pp_pycode_entry {
    const char *qualname;        /* "" when freed before it could be named */
    const char *file;
    int def_line;                /* co_firstlineno; 0 unknown (or none a code object has) */
    const unsigned char *table;  /* the line table, a copy; NULL when unread */
    size_t table_len;
} pp_pycode_entry;

typedef struct pp_pycode_stats {
    uint64_t named;              /* code objects named (read, or copied) */
    uint64_t copied;             /* of those, named from the BPF program's copy */
    uint64_t freed;              /* sampled, then gone before they were read */
} pp_pycode_stats;

/* What the BPF program copied of a code object at its first sample
 * (codename.h), decoded. */
typedef struct pp_pycode_copy {
    const char *qualname, *file;    /* UTF-8 */
    const unsigned char *table;     /* the line table's first table_len bytes */
    size_t table_len;
    int whole;                      /* nothing cut: names and table complete */
} pp_pycode_copy;

/* 0 or -ENOMEM. */
int pp_pycode_open(pp_pycode **out);
/* The entry of id in the process of m (whose offsets are o, types its
 * PyCode_Type and PyUnicode_Type, may be NULL): from the cache, else read
 * now and kept. NULL only when out of memory. Valid until
 * pp_pycode_forget of its pid or pp_pycode_close. */
const pp_pycode_entry *pp_pycode_get(pp_pycode *c, const pp_mem *m, const pp_py_offsets *o,
                                     const pp_pyread_types *types, const pp_pycode_id *id);
/* Keeps id's entry in the process of m, named from copy, unless it is kept
 * already: a copy that was cut is read from the process instead while the object
 * there is still the one copied (the copy is kept otherwise). 0, or
 * -ENOMEM. */
int pp_pycode_put(pp_pycode *c, const pp_mem *m, const pp_py_offsets *o,
                  const pp_pyread_types *types,
                  const pp_pycode_id *id, const pp_pycode_copy *copy);
/* The executing line of a frame of e at instr (the frame's instruction as
 * the collector read it), its bytecode starting at start
 * (pp_pyread_code_start); e's def line when the table says nothing; 0
 * unknown, never below. */
int pp_pycode_line(const pp_pycode_entry *e, const pp_py_offsets *o, uint64_t start,
                   uint64_t instr);
/* Drops pid's entries (it exec'd or ended). */
void pp_pycode_forget(pp_pycode *c, pid_t pid);
pp_pycode_stats pp_pycode_stats_of(const pp_pycode *c);
void pp_pycode_close(pp_pycode *c);

#endif
