/*
 * threading's names of a process's threads over time: each read of
 * threading._active replaces the last, and the names a read saw that the
 * next one lacks (the thread ended, or was renamed) are kept a while, with
 * the time of the last read that saw them. A stack can come after its
 * thread ended (a wait's comes as the wait ends; a loaded machine delays
 * the reader more), and an ident (pthread_self) is another thread's once
 * its own ends: a read made between the thread's start (from the kernel)
 * and its stack's time saw that very thread; a read after the stack's
 * time may have seen the ident's next owner.
 */
#ifndef PERFPY_CPYTHON_TNAMES_H
#define PERFPY_CPYTHON_TNAMES_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_tname {
    uint64_t ident;                /* threading's key: the thread's pthread_self() */
    uint64_t seen_ns;              /* gone: the last read that saw it, as it began
                                      (CLOCK_MONOTONIC) */
    char name[64];
} pp_tname;

#define PP_TNAMES_GONE 1024

/* The names gone: a ring of the last PP_TNAMES_GONE. */
typedef struct pp_tnames_gone {
    pp_tname *ring;
    size_t n, next;
} pp_tnames_gone;

/* Keeps each name of the read before (old, made at seen_ns) that the read
 * now (cur) lacks, by ident and name. 0, or -ENOMEM (nothing kept). */
int pp_tnames_keep_gone(pp_tnames_gone *g, const pp_tname *old, size_t nold,
                        const pp_tname *cur, size_t ncur, uint64_t seen_ns);

/* The name of the thread ident, started at born_ns, at time_ns (its
 * stack's time), among the names gone that a read made after born_ns saw:
 * the last read before time_ns (the thread lived from born_ns to time_ns:
 * that read saw it), else the first read after it (the thread may have
 * ended before it and the ident be another's: the best left). NULL if
 * none. */
const char *pp_tnames_gone_name(const pp_tnames_gone *g, uint64_t ident, uint64_t born_ns,
                                uint64_t time_ns);

void pp_tnames_gone_free(pp_tnames_gone *g);

#endif
