/*
 * A running CPython's objects, read from its memory (mem.h: a live
 * process's, or any other) with the structure offsets of its version
 * (pyoffsets.h), nothing installed in it and nothing written to it: a str
 * as UTF-8, a code object's names, def line and line table, its identity
 * (the fields the BPF program copied at a sample, to be checked against
 * when the object is read later: pycode.h), where its bytecode starts.
 * The threads and their frames are pystack.h's; where a process keeps
 * _PyRuntime and its types, in the ELF files it maps, pysyms.h's.
 */
#ifndef PERFPY_CPYTHON_PYREAD_H
#define PERFPY_CPYTHON_PYREAD_H

#include "mem.h"
#include "pyoffsets.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pp_pyread_frame {
    uint64_t code;              /* the code object's address */
    char qualname[128];         /* co_qualname (3.11+), co_name before */
    char file[256];
    int def_line;               /* co_firstlineno */
} pp_pyread_frame;

/* The addresses of PyCode_Type and PyUnicode_Type in a process: what a
 * code object and a str there point to as their type. */
typedef struct pp_pyread_types {
    uint64_t code, str;
} pp_pyread_types;

/* Names one code object at code in m (qualname, file, def line). With
 * types (may be NULL), an object that is not a code object, or a name that
 * is not a str, is not read: a code object that died since the sample (its
 * memory reused) gives 0 and empty strings, never garbage. 1 when named,
 * else 0. */
int pp_pyread_code(const pp_mem *m, const pp_py_offsets *o, const pp_pyread_types *types,
                   uint64_t code, pp_pyread_frame *f);

/* What a code object's fields hold: where its names and line table are
 * (the identity pycode.h checks a sampled code object against). */
typedef struct pp_pyread_fields {
    uint64_t name, file, table;  /* co_qualname (co_name), co_filename, line table */
    uint64_t name_id;            /* its name's identity: pp_name_id */
    uint64_t name_chars;         /* the same from its characters, hash or not */
    int32_t def_line;            /* co_firstlineno */
} pp_pyread_fields;

/* 1 when the object at obj in m has the type at type (0: unchecked). */
int pp_pyread_is(const pp_mem *m, const pp_py_offsets *o, uint64_t obj, uint64_t type);

/* Reads them from code in m: 0, or -errno (-ESRCH: gone). */
int pp_pyread_code_fields(const pp_mem *m, const pp_py_offsets *o, uint64_t code,
                          pp_pyread_fields *id);

/* A str at addr in m as UTF-8 into out (size len): 1 when read, 0 ("")
 * when it is no str (str_type: PyUnicode_Type's address; 0 unchecked) or
 * cannot be read. */
int pp_pyread_str(const pp_mem *m, const pp_py_offsets *o, uint64_t addr, uint64_t str_type,
                  char *out, size_t len);

/* The same from a copy of the first n bytes of a str object (what the BPF
 * program copied at a sample): 1 when read whole, 2 when its characters
 * went past the copy (out holds those in it), 0 when it is no compact str. */
int pp_pyread_str_copy(const pp_py_offsets *o, const void *copy, size_t n, char *out,
                       size_t len);

/* n characters of a str, kind bytes each (1, 2 or 4: as PyUnicode keeps
 * them), as UTF-8 into out (size bytes, NUL-terminated; what does not fit
 * is cut at a character, a surrogate or what is no character becomes
 * U+FFFD). The bytes written. */
size_t pp_pyread_chars(const void *chars, size_t n, size_t kind, char *out, size_t size);

/* The line table of a code object (a bytes object at table, as its id
 * says) copied into out (up to cap bytes): its length, or -errno (-E2BIG:
 * longer than cap). */
long pp_pyread_bytes(const pp_mem *m, const pp_py_offsets *o, uint64_t table, unsigned char *out,
                     size_t cap);

/* Where the bytecode a frame of code runs starts: the code object's own
 * (co_code_adaptive, 3.11+), or in a free-threaded build the copy of the
 * frame's thread (tlbc: the frame's tlbc_index, 0 the object's own; its
 * co_tlbc array read from pid). 0 when it cannot be told. */
uint64_t pp_pyread_code_start(const pp_mem *m, const pp_py_offsets *o, uint64_t code, int32_t tlbc);

/* The byte offset in the code of a frame's instruction as the collector
 * read it (pyoffsets.h PP_INSTR_*), its bytecode starting at start
 * (pp_pyread_code_start; unused before 3.11); -1 when it is not in it. */
int64_t pp_pyread_offset(const pp_py_offsets *o, uint64_t start, uint64_t instr);

#endif
