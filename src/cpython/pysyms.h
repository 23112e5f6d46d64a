/*
 * Where a running CPython keeps what its readers start from, found in the
 * ELF files the process maps (libelf): _PyRuntime and any other symbol
 * (the files named *python* first), a section's place (_asyncio's debug
 * offsets), the types a reader tells objects apart by, and a perfpy
 * module's offsets table. Each file's answers are kept by its identity:
 * a host starts hundreds of CPythons a minute from the same few files.
 * Apart from the readers of memory (pyread.h and the rest), which need no
 * libelf.
 */
#ifndef PERFPY_CPYTHON_PYSYMS_H
#define PERFPY_CPYTHON_PYSYMS_H

#include "native/maps.h"
#include "pyoffsets.h"
#include "pyasync.h"
#include "pylayout.h"
#include "pyobj.h"
#include "pyread.h"

#include <stddef.h>
#include <stdint.h>

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

/* Finds them in the files pid maps; 0 or -ENOENT. */
int pp_pysyms_types(const pp_maps *maps, pp_pyread_types *t);

/* The layout of the CPython of m (pylayout.h) whose _PyRuntime is at
 * runtime in file: its Py_Version found in the files it maps, then
 * pp_pylayout_read. */
int pp_pysyms_layout(const pp_mem *m, const pp_maps *maps, uint64_t runtime, const char *file,
                     unsigned flags, pp_pylayout *out, char *why, size_t len);

/* The types and objects a reader of its objects tells apart (pyobj.h):
 * 0, or -ENOENT. */
int pp_pysyms_objtypes(const pp_maps *maps, pp_pyobj_types *t);

/* _asyncio's debug offsets (pyasync.h) from the process: the section in
 * CPython's files it maps (libpython, the binary, or _asyncio's module once
 * asyncio is imported), read from m. 0; -ENOENT when there is none
 * (asyncio not imported yet, or a CPython before 3.14), the sentence in
 * why; -ENOTSUP as pp_pyasync_offsets_from; -ESRCH gone. */
int pp_pysyms_async(const pp_mem *m, const pp_maps *maps, pp_pyasync_offsets *out,
                    char *why, size_t len);
/* PyCoro_Type's and PyGen_Type's addresses: 0, or -ENOENT. */
int pp_pysyms_async_types(const pp_maps *maps, pp_pyasync_types *t);

/* Whether the ELF file at fd names a libpython among the libraries ld.so
 * maps before main (DT_NEEDED): such a program is a CPython before any
 * map says so. only_64: a 32-bit file answers no. */
int pp_pysyms_needs_libpython(int fd, int only_64);

#endif
