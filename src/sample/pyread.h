/*
 * Sample mode (issue 15): a running CPython's Python stacks, read from
 * outside the process (process_vm_readv) with the structure offsets of its
 * version (pyoffsets.h), nothing installed in it and nothing written to it.
 * What the BPF collector will do at each sample, done here from user space:
 * the reference the collector is checked against, and the reader of code
 * objects' names.
 *
 * Needs libelf (the offsets and _PyRuntime are found in ELF symbol tables):
 * built with the unwinder.
 */
#ifndef PERFPY_SAMPLE_PYREAD_H
#define PERFPY_SAMPLE_PYREAD_H

#include "maps.h"
#include "pyoffsets.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PP_PYREAD_DEPTH 128     /* frames read per thread */
#define PP_PYREAD_THREADS 64    /* threads read per interpreter */

typedef struct pp_pyread_frame {
    uint64_t code;              /* the code object's address */
    char qualname[128];         /* co_qualname (3.11+), co_name before */
    char file[256];
    int def_line;               /* co_firstlineno */
} pp_pyread_frame;

typedef struct pp_pyread_thread {
    uint64_t thread_id;         /* pthread_self() of the thread */
    size_t n;                   /* frames, innermost first */
    int truncated;              /* deeper than PP_PYREAD_DEPTH */
    pp_pyread_frame f[PP_PYREAD_DEPTH];
} pp_pyread_thread;

/* The offsets table a perfpy module file exports (PP_PY_OFFSETS_SYMBOL),
 * read from the file. 0, -ENOENT (no such file or symbol), -EINVAL (not
 * a table this perfpy understands). */
int pp_pyoffsets_read(const char *module_path, pp_py_offsets *out);

/* The address of symbol `name` in a process, looked up in the symbol
 * tables of the files it maps (those named *python* first). 0, or
 * -ENOENT. *file (when not NULL, size len) gets the file that holds it. */
int pp_py_symbol_address(const pp_maps *maps, const char *name, uint64_t *addr,
                         char *file, size_t len);

/* Where section `name` of a file the process maps is, in the process, and
 * its size: the first of CPython's files mapped executable (a path with
 * "python" in it: its binary, libpython, lib-dynload's modules) that has
 * one. 0 or -ENOENT; *file as pp_py_symbol_address. */
int pp_py_section_address(const pp_maps *maps, const char *name, uint64_t *addr,
                          uint64_t *size, char *file, size_t len);

/* The addresses of PyCode_Type and PyUnicode_Type in a process: what a
 * code object and a str there point to as their type. */
typedef struct pp_pyread_types {
    uint64_t code, str;
} pp_pyread_types;

/* Finds them in the files pid maps; 0 or -ENOENT. */
int pp_pyread_types_find(const pp_maps *maps, pp_pyread_types *t);

/* Names one code object at code in pid (qualname, file, def line). With
 * types (may be NULL), an object that is not a code object, or a name that
 * is not a str, is not read: a code object that died since the sample (its
 * memory reused) gives 0 and empty strings, never garbage. 1 when named,
 * else 0. */
int pp_pyread_code(pid_t pid, const pp_py_offsets *o, const pp_pyread_types *types,
                   uint64_t code, pp_pyread_frame *f);

/* What a code object's fields hold: where its names and line table are
 * (the identity pycode.h checks a sampled code object against). */
typedef struct pp_pyread_fields {
    uint64_t name, file, table;  /* co_qualname (co_name), co_filename, line table */
    uint64_t name_id;            /* its name's identity: pp_bpf_name_id */
    uint64_t name_chars;         /* the same from its characters, hash or not */
    int32_t def_line;            /* co_firstlineno */
} pp_pyread_fields;

/* len bytes of pid's memory at addr (process_vm_readv): 0, or -errno
 * (-EFAULT: not all of it readable; -EPERM: not ours to read). */
int pp_pyread_peek(pid_t pid, uint64_t addr, void *buf, size_t len);

/* 1 when the object at obj in pid has the type at type (0: unchecked). */
int pp_pyread_is(pid_t pid, const pp_py_offsets *o, uint64_t obj, uint64_t type);

/* Reads them from code in pid: 0, or -errno (-ESRCH: gone). */
int pp_pyread_code_fields(pid_t pid, const pp_py_offsets *o, uint64_t code,
                          pp_pyread_fields *id);

/* A str at addr in pid as UTF-8 into out (size len): 1 when read, 0 ("")
 * when it is no str (str_type: PyUnicode_Type's address; 0 unchecked) or
 * cannot be read. */
int pp_pyread_str(pid_t pid, const pp_py_offsets *o, uint64_t addr, uint64_t str_type,
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
long pp_pyread_bytes(pid_t pid, const pp_py_offsets *o, uint64_t table, unsigned char *out,
                     size_t cap);

/* Where the bytecode a frame of code runs starts: the code object's own
 * (co_code_adaptive, 3.11+), or in a free-threaded build the copy of the
 * frame's thread (tlbc: the frame's tlbc_index, 0 the object's own; its
 * co_tlbc array read from pid). 0 when it cannot be told. */
uint64_t pp_pyread_code_start(pid_t pid, const pp_py_offsets *o, uint64_t code, int32_t tlbc);

/* The byte offset in the code of a frame's instruction as the collector
 * read it (pyoffsets.h PP_INSTR_*), its bytecode starting at start
 * (pp_pyread_code_start; unused before 3.11); -1 when it is not in it. */
int64_t pp_pyread_offset(const pp_py_offsets *o, uint64_t start, uint64_t instr);

/* The Python stacks of every thread of the main interpreter of pid, whose
 * _PyRuntime is at runtime; up to max threads into out. The number of
 * threads, or -errno (-ESRCH: the process is gone; -EFAULT: its memory did
 * not hold what the offsets say). */
int pp_pyread_stacks(pid_t pid, const pp_py_offsets *o, uint64_t runtime,
                     pp_pyread_thread *out, size_t max);

#endif
