/*
 * Python objects of a running CPython, read from its memory (mem.h, as
 * pyread.c reads code objects): never by running code in the process, so
 * only what a structure holds can be told, and every read is bounded.
 *
 *   a value        int, bool, float, str, bytes, None: written as Python's
 *                  repr writes it ('héllo', 3.5, -12, b'\x00', True); any
 *                  other object by its type's name (list, dict, Foo)
 *   names          a tuple of strs (a code object's variable names)
 *   dicts          each item, or the value of a str key: a module's
 *                  attributes, an instance's (its __dict__, or the values a
 *                  type keeps apart from a dict from 3.11 on)
 *   a frame's      the values of its local variables, with their names
 *   locals         (a cell's contents for a variable closures share)
 *   threads'       threading's own names ("MainThread", "worker-1"): the
 *   names          Thread objects of threading._active, by their ident
 *
 * The layout of each structure comes from pyoffsets.h (version knowledge
 * lives there and in compat.h); the types are told by their addresses in
 * the process (its ELF symbols: pysyms.h), never by a name a program could
 * reuse.
 * The program runs on while it is read: a value may change or die under
 * the reader, which then gives what it read, or nothing, never garbage
 * past what it checked (a str is a str of the length it says, a type's
 * name is a C string in readable memory).
 */
#ifndef PERFPY_CPYTHON_PYOBJ_H
#define PERFPY_CPYTHON_PYOBJ_H

#include "mem.h"
#include "pyoffsets.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where the objects and types a reader tells apart are in one process. */
typedef struct pp_pyobj_types {
    uint64_t int_type, bool_type, float_type, str_type, bytes_type, tuple_type,
             cell_type, dict_type, module_type;
    uint64_t none, true_obj, false_obj;
} pp_pyobj_types;

/* A reader of one process's objects: its memory, its offsets, its types
 * (pp_pysyms_objtypes). */
typedef struct pp_pyobj {
    const pp_mem *m;
    const pp_py_offsets *o;
    pp_pyobj_types t;
} pp_pyobj;

/* The object at addr as Python's repr writes an int, bool, float, str,
 * bytes or None (a long one cut, ending in "..."), else its type's name,
 * into out (size len). 1: a value; 0: a type's name; -EFAULT: unreadable
 * (out says "?"). */
int pp_pyobj_repr(const pp_pyobj *r, uint64_t addr, char *out, size_t len);

/* Its type's name (tp_name) into out; 0, or -EFAULT. */
int pp_pyobj_type_name(const pp_pyobj *r, uint64_t addr, char *out, size_t len);
/* The same of the type object at type. */
int pp_pyobj_type_name_at(const pp_pyobj *r, uint64_t type, char *out, size_t len);

/* An int's value when it fits in 64 bits: 0, -ERANGE (larger), -EINVAL
 * (no int), -EFAULT. */
int pp_pyobj_int(const pp_pyobj *r, uint64_t addr, int64_t *value);

/* The same from a copy of the int object's first len bytes (what the BPF
 * program copied at a sample; its type known otherwise): 0, -ERANGE (larger,
 * or its digits past the copy), -EINVAL. */
int pp_pyobj_int_copy(const pp_py_offsets *o, const void *copy, size_t len, int64_t *value);

/* A tuple's items (up to max) into items: how many, or -EINVAL (no tuple),
 * -EFAULT. */
long pp_pyobj_tuple(const pp_pyobj *r, uint64_t tuple, uint64_t *items, size_t max);

/* Each item of the dict at dict (up to PP_PYOBJ_DICT_MAX) to fn, in the
 * order of its entries; fn returns nonzero to stop. 0, -EINVAL (no dict),
 * -EFAULT. */
#define PP_PYOBJ_DICT_MAX 65536
typedef int (*pp_pyobj_item_fn)(uint64_t key, uint64_t value, void *ctx);
int pp_pyobj_dict_each(const pp_pyobj *r, uint64_t dict, pp_pyobj_item_fn fn, void *ctx);
/* The value of the str key `key` in the dict at dict: 0 and *value, or
 * -ENOENT, -EINVAL (no dict), -EFAULT. */
int pp_pyobj_dict_get(const pp_pyobj *r, uint64_t dict, const char *key, uint64_t *value);
/* An instance attribute kept in the object's own attributes (not a class
 * attribute, not a slot): 0 and *value, or -ENOENT, -EFAULT. */
int pp_pyobj_attr(const pp_pyobj *r, uint64_t obj, const char *name, uint64_t *value);

/* One local variable of a frame: its name and its value as pp_pyobj_repr
 * writes it (is_value 0: the type's name). */
typedef struct pp_pylocal {
    char name[64];
    char value[160];
    int is_value;
} pp_pylocal;

/* The local variables of the frame at frame (as pyoffsets.h's frames are:
 * a PyFrameObject on 3.8-3.10, an interpreter frame after) running the
 * code object at code, in the order of the code's names, those without a
 * value yet left out; up to max into out. How many, or -EFAULT. */
long pp_pyobj_locals(const pp_pyobj *r, uint64_t frame, uint64_t code, pp_pylocal *out,
                     size_t max);

/* threading's names of the threads of the interpreter at interp: for each
 * thread ident (PyThreadState.thread_id, threading.get_ident()) of idents,
 * its Thread's name into names[i] (size 64 each; "" when not found: a thread
 * threading does not know, or no threading module). How many were named. */
int pp_pyobj_thread_names(const pp_pyobj *r, uint64_t interp, const uint64_t *idents,
                          char (*names)[64], size_t n);

#endif
