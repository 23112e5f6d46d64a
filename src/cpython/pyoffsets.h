/*
 * Sample mode: what a reader outside the process needs to know
 * about one CPython version's structures to walk a thread's Python frames.
 *
 * Version knowledge in one place: PP_PY_FIELDS below lists every field,
 * each with where its value comes from in a version's own headers (an
 * expression of compat.h) and where CPython 3.13+ publishes it in
 * _Py_DebugOffsets at the start of _PyRuntime. From that one list:
 *   - the struct below;
 *   - src/python/offsets.c, the table each perfpy module exports
 *     (`perfpy_py_offsets`, the tests' oracle);
 *   - src/cpython/pytables.c, the tables compiled into perfpy for every
 *     version 3.8-3.15, both flavours of 3.13+ (with the GIL, and
 *     free-threaded), made from each version's headers by
 *     scripts/gen-pytables (which prints the list's fields with
 *     scripts/pytables_print.c, built against those headers);
 *   - pylayout.c, which fills the struct for a running process: the
 *     published values of 3.13+ over its version's table.
 * Adding a field: one row here (its compat.h expression, its
 * _Py_DebugOffsets source or PP_NONE), then scripts/gen-pytables.
 * Plain C: no Python header here (the rows' expressions are only expanded
 * where the headers are).
 *
 * The walk:
 *
 *   _PyRuntime (exported)  .interpreters.head ─► PyInterpreterState
 *   interp  .tstate_head / .threads.head ─► PyThreadState ─► .next ...
 *   tstate  3.8-3.10 .frame ─► PyFrameObject  .f_back, .f_code, .f_lasti
 *           3.11-3.12 .cframe ─► _PyCFrame .current_frame ─► _PyInterpreterFrame
 *           3.13+    .current_frame ─► _PyInterpreterFrame
 *   frame   .previous, .f_code / .f_executable (3.14+: a _PyStackRef, its low
 *           bits tags), .prev_instr / .instr_ptr, .owner (frames owned by
 *           the C stack or the interpreter are shims, not Python code)
 *   code    .co_qualname (3.11+) or .co_name, .co_filename, .co_firstlineno
 *   str     compact: its characters right after the object's header
 *   GIL     3.8-3.11 _PyRuntime.ceval.gil, 3.12+ *interp.ceval.gil:
 *           .locked, .last_holder (the PyThreadState that took it last)
 */
#ifndef PERFPY_CPYTHON_PYOFFSETS_H
#define PERFPY_CPYTHON_PYOFFSETS_H

#include <stdint.h>

#define PP_PY_OFFSETS_MAGIC 0x70706f69u   /* "ppoi": the field list's version */
#define PP_PY_OFFSETS_SYMBOL "perfpy_py_offsets"

/*
 * X(name, from the headers, from _Py_DebugOffsets). Every value is an
 * int32_t: an offset in bytes (-1: the field does not exist there), or a
 * constant where the comment says so. The third column: PP_D(path), the
 * field of _Py_DebugOffsets that holds it (3.13+); PP_DZ(path), the same
 * where 0 means absent (the free-threaded build's fields, 0 in the other);
 * PP_NONE, published nowhere (the tables alone give it). The PP_DBG_*
 * names are compat.h's, for fields published from some version on.
 */
#define PP_PY_FIELDS(X) \
    X(runtime_interpreters_head, offsetof(_PyRuntimeState, interpreters.head), \
      PP_D(runtime_state.interpreters_head)) \
    X(interp_threads_head, PP_OFF_INTERP_THREADS_HEAD, PP_D(interpreter_state.threads_head)) \
    X(tstate_next, offsetof(PyThreadState, next), PP_D(thread_state.next)) \
    /* pthread_self() of the thread */ \
    X(tstate_thread_id, offsetof(PyThreadState, thread_id), PP_D(thread_state.thread_id)) \
    /* 3.8-3.10 .frame, 3.13+ .current_frame */ \
    X(tstate_frame, PP_OFF_TSTATE_FRAME, PP_D(thread_state.current_frame)) \
    X(tstate_cframe, PP_OFF_TSTATE_CFRAME, PP_NONE)                     /* 3.11-3.12 */ \
    X(cframe_current_frame, PP_OFF_CFRAME_CURRENT, PP_NONE)             /* 3.11-3.12 */ \
    /* constant, 1: frames are PyFrameObjects (3.8-3.10) */ \
    X(frame_is_object, PP_FRAME_IS_OBJECT, PP_NONE) \
    X(frame_previous, PP_OFF_FRAME_PREVIOUS, PP_D(interpreter_frame.previous)) \
    X(frame_code, PP_OFF_FRAME_CODE, PP_D(interpreter_frame.executable)) \
    /* constant: bits to clear from the code reference (3.14+: a _PyStackRef) */ \
    X(frame_code_tag_mask, PP_FRAME_CODE_TAG_MASK, PP_NONE) \
    /* f_lasti (an int) or a pointer into the code */ \
    X(frame_instr, PP_OFF_FRAME_INSTR, PP_D(interpreter_frame.instr_ptr)) \
    X(frame_owner, PP_OFF_FRAME_OWNER, PP_D(interpreter_frame.owner))  /* a char */ \
    /* constant: owner values from this up are shims (3.12+) */ \
    X(frame_owner_shim_min, PP_FRAME_OWNER_SHIM_MIN, PP_NONE) \
    /* 3.11: a char, 1 on the first frame of an evaluation; -1 elsewhere \
     * (3.8-3.10: every frame is one; 3.12+: the frame after a shim) */ \
    X(frame_is_entry, PP_OFF_FRAME_IS_ENTRY, PP_NONE) \
    /* free-threaded: the index of the thread's copy of the bytecode */ \
    X(frame_tlbc_index, PP_OFF_FRAME_TLBC_INDEX, PP_DBG_FRAME_TLBC_INDEX) \
    X(code_qualname, PP_OFF_CODE_QUALNAME, PP_D(code_object.qualname)) \
    X(code_name, offsetof(PyCodeObject, co_name), PP_D(code_object.name)) \
    X(code_filename, offsetof(PyCodeObject, co_filename), PP_D(code_object.filename)) \
    X(code_firstlineno, offsetof(PyCodeObject, co_firstlineno), \
      PP_D(code_object.firstlineno)) \
    /* 3.11+: where the instructions start */ \
    X(code_adaptive, PP_OFF_CODE_ADAPTIVE, PP_D(code_object.co_code_adaptive)) \
    /* free-threaded: the per-thread copies of the bytecode (_PyCodeArray) */ \
    X(code_tlbc, PP_OFF_CODE_TLBC, PP_DBG_CODE_TLBC) \
    /* co_lnotab (3.8, 3.9), co_linetable (3.10+) */ \
    X(code_linetable, PP_OFF_CODE_LINETABLE, PP_D(code_object.linetable)) \
    X(linetable_format, PP_LINETABLE_FORMAT, PP_NONE)                   /* PP_LINES_* */ \
    X(instr_kind, PP_INSTR_KIND, PP_NONE)            /* PP_INSTR_*: what frame_instr holds */ \
    /* PyASCIIObject.state (a bit field word) and its bits (constants) */ \
    X(str_state, offsetof(PyASCIIObject, state), PP_D(unicode_object.state)) \
    X(str_ascii_mask, PP_STR_ASCII_MASK, PP_NONE) \
    X(str_compact_mask, PP_STR_COMPACT_MASK, PP_NONE) \
    X(str_kind_mask, PP_STR_KIND_MASK, PP_NONE) \
    X(str_length, offsetof(PyASCIIObject, length), PP_D(unicode_object.length)) \
    /* its hash, -1 until computed (names: at once) */ \
    X(str_hash, offsetof(PyASCIIObject, hash), PP_NONE) \
    X(str_ascii_data, sizeof(PyASCIIObject), PP_D(unicode_object.asciiobject_size)) \
    X(str_compact_data, sizeof(PyCompactUnicodeObject), PP_DBG_STR_COMPACT_DATA) \
    X(object_type, offsetof(PyObject, ob_type), PP_D(pyobject.ob_type)) \
    X(bytes_size, offsetof(PyVarObject, ob_size), PP_D(bytes_object.ob_size)) \
    X(bytes_data, offsetof(PyBytesObject, ob_sval), PP_D(bytes_object.ob_sval)) \
    /* constant, 1: a free-threaded build (no GIL; 3.13t+) */ \
    X(free_threaded, PP_FREE_THREADED, PP_NONE) \
    /* values, for pyobj.c: a frame's locals and their names */ \
    X(frame_localsplus, PP_OFF_FRAME_LOCALSPLUS, PP_D(interpreter_frame.localsplus)) \
    X(code_localsplusnames, PP_OFF_CODE_LOCALSPLUSNAMES, PP_D(code_object.localsplusnames)) \
    X(code_varnames, PP_OFF_CODE_VARNAMES, PP_NONE)                     /* 3.8-3.10 */ \
    X(code_cellvars, PP_OFF_CODE_CELLVARS, PP_NONE)                     /* 3.8-3.10 */ \
    X(code_freevars, PP_OFF_CODE_FREEVARS, PP_NONE)                     /* 3.8-3.10 */ \
    X(type_name, offsetof(PyTypeObject, tp_name), PP_D(type_object.tp_name)) \
    X(type_flags, offsetof(PyTypeObject, tp_flags), PP_D(type_object.tp_flags)) \
    X(type_basicsize, offsetof(PyTypeObject, tp_basicsize), PP_NONE) \
    X(type_dictoffset, offsetof(PyTypeObject, tp_dictoffset), PP_NONE) \
    X(heaptype_cached_keys, offsetof(PyHeapTypeObject, ht_cached_keys), PP_NONE) \
    X(tuple_size, offsetof(PyVarObject, ob_size), PP_D(tuple_object.ob_size)) \
    X(tuple_items, offsetof(PyTupleObject, ob_item), PP_D(tuple_object.ob_item)) \
    X(float_value, offsetof(PyFloatObject, ob_fval), PP_D(float_object.ob_fval)) \
    /* ob_size (3.8-3.11) or lv_tag (3.12+: long_tagged 1) */ \
    X(long_size, PP_OFF_LONG_SIZE, PP_D(long_object.lv_tag)) \
    X(long_digits, PP_OFF_LONG_DIGITS, PP_D(long_object.ob_digit)) \
    X(long_tagged, PP_LONG_TAGGED, PP_NONE)                            /* constant */ \
    X(long_shift, PyLong_SHIFT, PP_NONE)                 /* constant: bits per digit */ \
    X(cell_ref, offsetof(PyCellObject, ob_ref), PP_NONE) \
    X(interp_modules, PP_OFF_INTERP_MODULES, PP_D(interpreter_state.imports_modules)) \
    X(module_dict, PP_OFF_MODULE_DICT, PP_NONE) \
    X(dict_keys, offsetof(PyDictObject, ma_keys), PP_D(dict_object.ma_keys)) \
    X(dict_values, offsetof(PyDictObject, ma_values), PP_D(dict_object.ma_values)) \
    /* the keys: dictkeys_size (3.8-3.10) or the log2 fields (3.11+) */ \
    X(dictkeys_size, PP_OFF_DICTKEYS_SIZE, PP_NONE) \
    X(dictkeys_log2_size, PP_OFF_DICTKEYS_LOG2_SIZE, PP_NONE)           /* a byte */ \
    X(dictkeys_log2_index_bytes, PP_OFF_DICTKEYS_LOG2_INDEX_BYTES, PP_NONE)  /* a byte */ \
    X(dictkeys_kind, PP_OFF_DICTKEYS_KIND, PP_NONE)                     /* a byte */ \
    X(dictkeys_nentries, PP_OFF_DICTKEYS_NENTRIES, PP_NONE) \
    X(dictkeys_indices, PP_OFF_DICTKEYS_INDICES, PP_NONE) \
    /* constants: an entry's size, (hash, key, value); (key, value) for the \
     * keys of str-only dicts (3.11+: dk_kind != 0) */ \
    X(dict_entry_size, PP_DICT_ENTRY_SIZE, PP_NONE) \
    X(dict_unicode_entry_size, PP_DICT_UNICODE_ENTRY_SIZE, PP_NONE) \
    X(dictvalues_values, PP_OFF_DICTVALUES_VALUES, PP_NONE) \
    X(dictvalues_capacity, PP_OFF_DICTVALUES_CAPACITY, PP_NONE)        /* 3.13+, a byte */ \
    X(dictvalues_valid, PP_OFF_DICTVALUES_VALID, PP_NONE)              /* 3.13+, a byte */ \
    /* an instance's attributes (constants): PP_DICT_AT_*, the managed \
     * dict's distance before the object, the type flags that say so */ \
    X(object_dict_form, PP_OBJECT_DICT_FORM, PP_NONE) \
    X(managed_dict_before, PP_MANAGED_DICT_BEFORE, PP_NONE) \
    X(tpflags_managed_dict, PP_TPFLAGS_MANAGED_DICT, PP_NONE) \
    X(tpflags_inline_values, PP_TPFLAGS_INLINE_VALUES, PP_NONE) \
    /* asyncio's task graph (pyasync.c; 3.11+ have coroutine frames): a \
     * coroutine's frame inside it, its state (a byte) and the state's value \
     * (as a byte) while it awaits another awaitable (3.13+), which is then on \
     * the frame's value stack yf_depth slots below its top: stacktop, an \
     * index from localsplus, or stackpointer (frame_stack_kind PP_STACK_*) */ \
    X(gen_iframe, PP_OFF_GEN_IFRAME, PP_DBG_GEN_IFRAME) \
    X(gen_frame_state, PP_OFF_GEN_FRAME_STATE, PP_DBG_GEN_FRAME_STATE) \
    X(gen_state_yield_from, PP_GEN_STATE_YIELD_FROM, PP_NONE) \
    X(gen_state_cleared, PP_GEN_STATE_CLEARED, PP_NONE)  /* done: nothing to read */ \
    X(gen_yf_depth, PP_GEN_YF_DEPTH, PP_NONE) \
    X(frame_stack, PP_OFF_FRAME_STACK, PP_DBG_FRAME_STACK) \
    X(frame_stack_kind, PP_FRAME_STACK_KIND, PP_NONE) \
    /* a set: entries used, mask (slots - 1), its table of (key, hash) */ \
    X(set_used, offsetof(PySetObject, used), PP_DBG_SET_USED) \
    X(set_mask, offsetof(PySetObject, mask), PP_DBG_SET_MASK) \
    X(set_table, offsetof(PySetObject, table), PP_DBG_SET_TABLE) \
    /* 3.14+: a node of an intrusive circular list (a thread's tasks) */ \
    X(llist_next, PP_OFF_LLIST_NEXT, PP_DBG_LLIST_NEXT) \
    X(llist_prev, PP_OFF_LLIST_PREV, PP_DBG_LLIST_PREV) \
    /* the GIL (wall-clock mode; -1 without one): its state inside _PyRuntime \
     * (3.8-3.11) or the interpreter's pointer to it (3.12+), its size (a \
     * futex inside it is a wait for it), its `locked` (an int) and \
     * `last_holder` (a PyThreadState pointer) */ \
    X(gil_runtime, PP_OFF_GIL_RUNTIME, PP_NONE) \
    X(gil_interp, PP_OFF_GIL_INTERP, PP_DBG_GIL_INTERP) \
    X(gil_size, PP_GIL_SIZE, PP_NONE) \
    X(gil_locked, PP_OFF_GIL_LOCKED, PP_NONE) \
    X(gil_last_holder, PP_OFF_GIL_LAST_HOLDER, PP_NONE)

typedef struct pp_py_offsets {
    uint32_t magic;               /* PP_PY_OFFSETS_MAGIC */
    uint32_t size;                /* sizeof(pp_py_offsets) of the writer */
    uint32_t version_hex;         /* PY_VERSION_HEX of the headers */
#define PP_PY_FIELD_MEMBER(name, headers, debug) int32_t name;
    PP_PY_FIELDS(PP_PY_FIELD_MEMBER)
#undef PP_PY_FIELD_MEMBER
} pp_py_offsets;

enum {
    PP_LINES_LNOTAB = 0,          /* 3.8, 3.9: (byte delta, signed line delta) pairs */
    PP_LINES_310 = 1,             /* 3.10: (byte delta, signed line delta, -128: none) */
    PP_LINES_LOCATIONS = 2,       /* 3.11+: the location table (Objects/locations.md) */
};
enum {
    PP_DICT_AT_DICTOFFSET = 0,    /* 3.8-3.10: the type's tp_dictoffset */
    PP_DICT_MANAGED_311 = 1,      /* 3.11: a dict, or its values a word further */
    PP_DICT_MANAGED_312 = 2,      /* 3.12: a dict, or (low bit set) its values */
    PP_DICT_INLINE_313 = 3,       /* 3.13+: values inline after the object, or a dict */
};
enum {
    PP_STACK_INDEX = 1,           /* frame_stack: stacktop, slots from localsplus (3.11-3.13) */
    PP_STACK_POINTER = 2,         /* frame_stack: stackpointer, a pointer (3.14+) */
};
enum {
    PP_INSTR_LASTI_BYTES = 0,     /* f_lasti, a byte offset (3.8, 3.9) */
    PP_INSTR_LASTI_UNITS = 1,     /* f_lasti, in 2-byte code units (3.10) */
    PP_INSTR_POINTER = 2,         /* a pointer into co_code_adaptive (3.11+) */
};

#endif
