/*
 * Sample mode (issue 15): what a reader outside the process needs to know
 * about one CPython version's structures to walk a thread's Python frames.
 *
 * Version knowledge in one place: the values are taken from each version's
 * own headers at build time, by the module perfpy builds for that version
 * anyway (src/python/offsets.c fills the table with offsetof; its
 * exported symbol `perfpy_py_offsets` is read from the module file by
 * pyread.c, without loading it). Plain C: no Python header here.
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
 */
#ifndef PERFPY_SAMPLE_PYOFFSETS_H
#define PERFPY_SAMPLE_PYOFFSETS_H

#include <stdint.h>

#define PP_PY_OFFSETS_MAGIC 0x70706f66u   /* "ppof" */
#define PP_PY_OFFSETS_SYMBOL "perfpy_py_offsets"

typedef struct pp_py_offsets {
    uint32_t magic;               /* PP_PY_OFFSETS_MAGIC */
    uint32_t size;                /* sizeof(pp_py_offsets) of the writer */
    uint32_t version_hex;         /* PY_VERSION_HEX of the headers */
    /* every offset below is in bytes; -1: the field does not exist there */
    int32_t runtime_interpreters_head;
    int32_t interp_threads_head;
    int32_t tstate_next;
    int32_t tstate_thread_id;     /* pthread_self() of the thread */
    int32_t tstate_frame;         /* 3.8-3.10 .frame, 3.13+ .current_frame */
    int32_t tstate_cframe;        /* 3.11-3.12 */
    int32_t cframe_current_frame; /* 3.11-3.12 */
    int32_t frame_is_object;      /* 1: frames are PyFrameObjects (3.8-3.10) */
    int32_t frame_previous;
    int32_t frame_code;
    int32_t frame_code_tag_mask;  /* bits to clear from the code pointer (3.14+) */
    int32_t frame_instr;          /* f_lasti (an int) or a pointer into the code */
    int32_t frame_owner;          /* a char; -1 before 3.11 */
    int32_t frame_owner_shim_min; /* owner values from this up are shims (3.12+) */
    int32_t frame_is_entry;       /* 3.11: a char, 1 on the first frame of an
                                     evaluation; -1 elsewhere (3.8-3.10: every
                                     frame is one; 3.12+: the frame after a shim) */
    int32_t code_qualname;
    int32_t code_name;
    int32_t code_filename;
    int32_t code_firstlineno;
    int32_t code_adaptive;        /* 3.11+: where the instructions start */
    int32_t str_state;            /* PyASCIIObject.state (a bit field word) */
    uint32_t str_ascii_mask, str_compact_mask, str_kind_mask;
    int32_t str_length;
    int32_t str_hash;             /* its hash, -1 until computed (names: at once) */
    int32_t str_ascii_data;       /* sizeof(PyASCIIObject) */
    int32_t str_compact_data;     /* sizeof(PyCompactUnicodeObject) */
    int32_t object_type;          /* PyObject.ob_type */
    /* the executing line: the code object's line table and where the frame is */
    int32_t code_linetable;       /* co_lnotab (3.8, 3.9), co_linetable (3.10+) */
    int32_t linetable_format;     /* PP_LINES_* */
    int32_t instr_kind;           /* PP_INSTR_*: what frame_instr holds */
    int32_t bytes_size;           /* PyVarObject.ob_size of a bytes object */
    int32_t bytes_data;           /* PyBytesObject.ob_sval */
} pp_py_offsets;

enum {
    PP_LINES_LNOTAB = 0,          /* 3.8, 3.9: (byte delta, signed line delta) pairs */
    PP_LINES_310 = 1,             /* 3.10: (byte delta, signed line delta, -128: none) */
    PP_LINES_LOCATIONS = 2,       /* 3.11+: the location table (Objects/locations.md) */
};
enum {
    PP_INSTR_LASTI_BYTES = 0,     /* f_lasti, a byte offset (3.8, 3.9) */
    PP_INSTR_LASTI_UNITS = 1,     /* f_lasti, in 2-byte code units (3.10) */
    PP_INSTR_POINTER = 2,         /* a pointer into co_code_adaptive (3.11+) */
};

#endif
