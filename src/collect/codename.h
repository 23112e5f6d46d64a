/*
 * Code objects named from the copies the BPF program makes at their first
 * sample (codename_bpf.h says why; codename.bpf.h makes them): each copy
 * decoded (the characters as the str keeps them, 1, 2 or 4 bytes each, to
 * UTF-8) and kept in the name cache (pycode.c) before the sample that needs
 * it is named.
 */
#ifndef PERFPY_COLLECT_CODENAME_H
#define PERFPY_COLLECT_CODENAME_H

#include "codename_bpf.h"
#include "cpython/pycode.h"
#include "cpython/pyoffsets.h"
#include "cpython/pyread.h"

#include <stddef.h>
#include <sys/types.h>

/* What the BPF program needs of o to copy a name (collect.c gives it with
 * each process's offsets). */
void pp_codename_offsets(const pp_py_offsets *o, struct pp_bpf_code_offsets *co);

/* The copy of a str (its state, length and chars, bytes of them copied,
 * at most cap) as UTF-8 into out (size bytes): 1, or 0 ("") when it is no
 * compact str of this layout. *cut is set when characters were left out
 * (longer than the copy, or than out). */
int pp_codename_str(const struct pp_bpf_code_str *s, const unsigned char *chars, size_t cap,
                    const pp_py_offsets *o, char *out, size_t size, int *cut);

/* The copy r (len bytes as the ring gave it) of a code object of the
 * process r->key.pid, whose memory is m, offsets o and types its
 * PyCode_Type and PyUnicode_Type (may be NULL), kept in c. 0; -EINVAL when
 * r is no whole copy or names nothing; -ENOMEM. */
int pp_codename_take(pp_pycode *c, const pp_mem *m, const struct pp_bpf_code *r, size_t len,
                     const pp_py_offsets *o, const pp_pyread_types *types);

#endif
