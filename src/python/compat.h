/*
 * Everything perfpy knows about CPython versions, and the only file that
 * tests PY_VERSION_HEX. The rest of the binding calls the small functions
 * below, named for what they do.
 *
 *   version      eval-frame function                     code object of a frame
 *   3.8          (PyFrameObject*, int)   interp->eval_frame   f->f_code
 *   3.9, 3.10    (tstate, PyFrameObject*, int)  _PyInterpreterState_SetEvalFrameFunc
 *   3.11, 3.12   (tstate, _PyInterpreterFrame*, int)      f->f_code
 *   3.13         (tstate, _PyInterpreterFrame*, int)      f->f_executable
 *   3.14, 3.15   (tstate, _PyInterpreterFrame*, int)      f->f_executable, a tagged
 *                _PyStackRef (PyStackRef_AsPyObjectBorrow); the frame's
 *                struct moved to internal/pycore_interpframe_structs.h
 *
 *   co_qualname exists from 3.11; before that names.c rebuilds it.
 *   CPython itself handles -X perf from 3.12 and -X perf_jit from 3.13.
 *
 * Internal headers (frame and interpreter layouts) are needed for the frame's
 * code object and, on 3.8, for the eval_frame field; they are stable within
 * a minor version, which is the unit perfpy builds for.
 */
#ifndef PERFPY_COMPAT_H
#define PERFPY_COMPAT_H

#define PY_SSIZE_T_CLEAN
#ifndef Py_BUILD_CORE_MODULE
#define Py_BUILD_CORE_MODULE 1
#endif
#include <Python.h>
#include <frameobject.h>
#include <opcode.h>

#if PY_VERSION_HEX < 0x03080000
#error "perfpy needs CPython 3.8 or newer"
#endif
/* The module is not built for free-threaded builds; their structure
 * offsets are (scripts/gen-pytables: PP_COMPAT_OFFSETS_ONLY, the offsets
 * section below and nothing of the hook). */
#if defined(Py_GIL_DISABLED) && !defined(PP_COMPAT_OFFSETS_ONLY)
#error "perfpy does not support free-threaded CPython builds yet"
#endif

#if PY_VERSION_HEX < 0x03090000
#include <internal/pycore_pystate.h>
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif
#if PY_VERSION_HEX >= 0x030E0000
#include <internal/pycore_interpframe_structs.h>
#include <internal/pycore_stackref.h>
#endif

/* ---- structure offsets for a reader outside the process (offsets.c) ---- */

/* The runtime's and interpreters' structs (internal headers). */
#if PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#endif

#if PY_VERSION_HEX < 0x030B0000
#define PP_OFF_INTERP_THREADS_HEAD offsetof(PyInterpreterState, tstate_head)
#else
#define PP_OFF_INTERP_THREADS_HEAD offsetof(PyInterpreterState, threads.head)
#endif

#if PY_VERSION_HEX < 0x030B0000            /* 3.8-3.10: PyFrameObject chain */
#define PP_OFF_TSTATE_FRAME offsetof(PyThreadState, frame)
#define PP_OFF_TSTATE_CFRAME -1
#define PP_OFF_CFRAME_CURRENT -1
#define PP_FRAME_IS_OBJECT 1
#define PP_OFF_FRAME_PREVIOUS offsetof(PyFrameObject, f_back)
#define PP_OFF_FRAME_CODE offsetof(PyFrameObject, f_code)
#define PP_OFF_FRAME_INSTR offsetof(PyFrameObject, f_lasti)
#define PP_OFF_FRAME_OWNER -1
#define PP_FRAME_OWNER_SHIM_MIN -1
#elif PY_VERSION_HEX < 0x030D0000          /* 3.11-3.12: through the C frame */
#define PP_OFF_TSTATE_FRAME -1
#define PP_OFF_TSTATE_CFRAME offsetof(PyThreadState, cframe)
#define PP_OFF_CFRAME_CURRENT offsetof(_PyCFrame, current_frame)
#define PP_FRAME_IS_OBJECT 0
#define PP_OFF_FRAME_PREVIOUS offsetof(struct _PyInterpreterFrame, previous)
#define PP_OFF_FRAME_CODE offsetof(struct _PyInterpreterFrame, f_code)
#define PP_OFF_FRAME_INSTR offsetof(struct _PyInterpreterFrame, prev_instr)
#define PP_OFF_FRAME_OWNER offsetof(struct _PyInterpreterFrame, owner)
#if PY_VERSION_HEX < 0x030C0000
#define PP_FRAME_OWNER_SHIM_MIN -1                /* 3.11: no shim frames */
#define PP_OFF_FRAME_IS_ENTRY offsetof(struct _PyInterpreterFrame, is_entry)
#else
#define PP_FRAME_OWNER_SHIM_MIN FRAME_OWNED_BY_CSTACK
#endif
#else                                      /* 3.13+ */
#define PP_OFF_TSTATE_FRAME offsetof(PyThreadState, current_frame)
#define PP_OFF_TSTATE_CFRAME -1
#define PP_OFF_CFRAME_CURRENT -1
#define PP_FRAME_IS_OBJECT 0
#define PP_OFF_FRAME_PREVIOUS offsetof(struct _PyInterpreterFrame, previous)
#define PP_OFF_FRAME_CODE offsetof(struct _PyInterpreterFrame, f_executable)
#define PP_OFF_FRAME_INSTR offsetof(struct _PyInterpreterFrame, instr_ptr)
#define PP_OFF_FRAME_OWNER offsetof(struct _PyInterpreterFrame, owner)
#if PY_VERSION_HEX < 0x030E0000
#define PP_FRAME_OWNER_SHIM_MIN FRAME_OWNED_BY_CSTACK
#else
#define PP_FRAME_OWNER_SHIM_MIN FRAME_OWNED_BY_INTERPRETER  /* and CSTACK */
#endif
#endif

#ifndef PP_OFF_FRAME_IS_ENTRY
#define PP_OFF_FRAME_IS_ENTRY -1
#endif

#if PY_VERSION_HEX >= 0x030E0000
#define PP_FRAME_CODE_TAG_MASK Py_TAG_BITS       /* f_executable: a _PyStackRef */
#else
#define PP_FRAME_CODE_TAG_MASK 0
#endif

#if PY_VERSION_HEX < 0x030A0000
#define PP_OFF_CODE_LINETABLE offsetof(PyCodeObject, co_lnotab)
#define PP_LINETABLE_FORMAT PP_LINES_LNOTAB
#define PP_INSTR_KIND PP_INSTR_LASTI_BYTES
#elif PY_VERSION_HEX < 0x030B0000
#define PP_OFF_CODE_LINETABLE offsetof(PyCodeObject, co_linetable)
#define PP_LINETABLE_FORMAT PP_LINES_310
#define PP_INSTR_KIND PP_INSTR_LASTI_UNITS
#else
#define PP_OFF_CODE_LINETABLE offsetof(PyCodeObject, co_linetable)
#define PP_LINETABLE_FORMAT PP_LINES_LOCATIONS
#define PP_INSTR_KIND PP_INSTR_POINTER
#endif

#if PY_VERSION_HEX >= 0x030B0000
#define PP_OFF_CODE_QUALNAME offsetof(PyCodeObject, co_qualname)
#define PP_OFF_CODE_ADAPTIVE offsetof(PyCodeObject, co_code_adaptive)
#else
#define PP_OFF_CODE_QUALNAME -1
#define PP_OFF_CODE_ADAPTIVE -1
#endif

/* Free-threaded builds (3.13t+): each thread may run its own copy of a
 * code object's bytecode (3.14+: co_tlbc, the frame's tlbc_index), so an
 * instruction pointer is an offset into that copy. */
#ifdef Py_GIL_DISABLED
#define PP_FREE_THREADED 1
#else
#define PP_FREE_THREADED 0
#endif
#if defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030E0000
#define PP_OFF_CODE_TLBC offsetof(PyCodeObject, co_tlbc)
#define PP_OFF_FRAME_TLBC_INDEX offsetof(struct _PyInterpreterFrame, tlbc_index)
#else
#define PP_OFF_CODE_TLBC -1
#define PP_OFF_FRAME_TLBC_INDEX -1
#endif

/* PyASCIIObject.state's bit fields have no offsetof. With the GIL, from
 * 3.8 to 3.15, they start interned:2, kind:3, compact:1, ascii:1, which gcc
 * and clang lay out from bit 0 on x86_64 and aarch64; free-threaded 3.14+
 * make interned a char of its own, moving the others up by 6 bits.
 * scripts/pytables_print.c checks these against the headers' bit fields. */
#if defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030E0000
#define PP_STR_KIND_MASK 0x700
#define PP_STR_COMPACT_MASK 0x800
#define PP_STR_ASCII_MASK 0x1000
#else
#define PP_STR_KIND_MASK 0x1c
#define PP_STR_COMPACT_MASK 0x20
#define PP_STR_ASCII_MASK 0x40
#endif

/* ---- objects, for a reader of values (pyobj.c): a frame's locals, the
 * threads' names in threading's dicts ---- */
#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h>
#endif
#if PY_VERSION_HEX >= 0x030A0000
#include <internal/pycore_moduleobject.h>
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_dict.h>
#include <internal/pycore_object.h>
#endif

/* A frame's local variables: f_localsplus (3.8-3.10: co_varnames, then
 * co_cellvars, then co_freevars) or localsplus (3.11+: co_localsplusnames;
 * 3.14+ _PyStackRefs, tagged as f_executable is). */
#if PY_VERSION_HEX < 0x030B0000
#define PP_OFF_FRAME_LOCALSPLUS offsetof(PyFrameObject, f_localsplus)
#define PP_OFF_CODE_LOCALSPLUSNAMES -1
#define PP_OFF_CODE_VARNAMES offsetof(PyCodeObject, co_varnames)
#define PP_OFF_CODE_CELLVARS offsetof(PyCodeObject, co_cellvars)
#define PP_OFF_CODE_FREEVARS offsetof(PyCodeObject, co_freevars)
#else
#define PP_OFF_FRAME_LOCALSPLUS offsetof(struct _PyInterpreterFrame, localsplus)
#define PP_OFF_CODE_LOCALSPLUSNAMES offsetof(PyCodeObject, co_localsplusnames)
#define PP_OFF_CODE_VARNAMES -1
#define PP_OFF_CODE_CELLVARS -1
#define PP_OFF_CODE_FREEVARS -1
#endif

/* An int's digits: ob_size (signed: the number of digits) before 3.12;
 * from 3.12 long_value.lv_tag (digits << 3 | sign: 0 positive, 1 zero,
 * 2 negative). */
#if PY_VERSION_HEX < 0x030C0000
#define PP_OFF_LONG_SIZE offsetof(PyVarObject, ob_size)
#define PP_OFF_LONG_DIGITS offsetof(PyLongObject, ob_digit)
#define PP_LONG_TAGGED 0
#else
#define PP_OFF_LONG_SIZE offsetof(PyLongObject, long_value.lv_tag)
#define PP_OFF_LONG_DIGITS offsetof(PyLongObject, long_value.ob_digit)
#define PP_LONG_TAGGED 1
#endif

/* sys.modules, and a module's __dict__ (3.8, 3.9 keep PyModuleObject in
 * moduleobject.c: md_dict is the first field after the header there too) */
#if PY_VERSION_HEX < 0x030C0000
#define PP_OFF_INTERP_MODULES offsetof(PyInterpreterState, modules)
#else
#define PP_OFF_INTERP_MODULES offsetof(PyInterpreterState, imports.modules)
#endif
#if PY_VERSION_HEX < 0x030A0000
#define PP_OFF_MODULE_DICT sizeof(PyObject)
#else
#define PP_OFF_MODULE_DICT offsetof(PyModuleObject, md_dict)
#endif

/* A dict's keys: 3.8-3.10 (Objects/dict-common.h, not installed) dk_size
 * at 8, dk_nentries at 32, dk_indices at 40, each index 1, 2, 4 or 8
 * bytes as dk_size needs, entries (hash, key, value) after the indices;
 * 3.11+ dk_log2_size, dk_log2_index_bytes, dk_kind, and entries (hash, key,
 * value) when dk_kind is DICT_KEYS_GENERAL (0), else (key, value). A split
 * dict's values: ma_values (3.8-3.10 an array; 3.11+ a PyDictValues). */
#if PY_VERSION_HEX < 0x030B0000
#define PP_OFF_DICTKEYS_SIZE 8
#define PP_OFF_DICTKEYS_LOG2_SIZE -1
#define PP_OFF_DICTKEYS_LOG2_INDEX_BYTES -1
#define PP_OFF_DICTKEYS_KIND -1
#define PP_OFF_DICTKEYS_NENTRIES 32
#define PP_OFF_DICTKEYS_INDICES 40
#define PP_DICT_ENTRY_SIZE 24
#define PP_DICT_UNICODE_ENTRY_SIZE -1
#define PP_OFF_DICTVALUES_VALUES 0
#define PP_OFF_DICTVALUES_CAPACITY -1
#define PP_OFF_DICTVALUES_VALID -1
#else
#define PP_OFF_DICTKEYS_SIZE -1
#define PP_OFF_DICTKEYS_LOG2_SIZE offsetof(PyDictKeysObject, dk_log2_size)
#define PP_OFF_DICTKEYS_LOG2_INDEX_BYTES offsetof(PyDictKeysObject, dk_log2_index_bytes)
#define PP_OFF_DICTKEYS_KIND offsetof(PyDictKeysObject, dk_kind)
#define PP_OFF_DICTKEYS_NENTRIES offsetof(PyDictKeysObject, dk_nentries)
#define PP_OFF_DICTKEYS_INDICES offsetof(PyDictKeysObject, dk_indices)
#define PP_DICT_ENTRY_SIZE sizeof(PyDictKeyEntry)
#define PP_DICT_UNICODE_ENTRY_SIZE sizeof(PyDictUnicodeEntry)
#define PP_OFF_DICTVALUES_VALUES offsetof(PyDictValues, values)
#if PY_VERSION_HEX < 0x030D0000
#define PP_OFF_DICTVALUES_CAPACITY -1
#define PP_OFF_DICTVALUES_VALID -1
#else                 /* 3.13+: bytes before the values: how many, and in use */
#define PP_OFF_DICTVALUES_CAPACITY offsetof(PyDictValues, capacity)
#define PP_OFF_DICTVALUES_VALID offsetof(PyDictValues, valid)
#endif
#endif

/* An instance's attributes: 3.8-3.10 a dict at tp_dictoffset; 3.11 a
 * managed dict 3 words before the object, or its values 4 words before;
 * 3.12 one word 3 before, values when its low bit is set (the pointer is
 * then values - 1); 3.13+ the values inline at tp_basicsize when the type
 * says Py_TPFLAGS_INLINE_VALUES, unless a dict was made (MANAGED_DICT_OFFSET
 * before the object; a free-threaded build's is 1 word before). Split
 * values' keys are the type's ht_cached_keys. */
#if PY_VERSION_HEX < 0x030B0000
#define PP_OBJECT_DICT_FORM PP_DICT_AT_DICTOFFSET
#define PP_MANAGED_DICT_BEFORE -1
#define PP_TPFLAGS_MANAGED_DICT 0
#define PP_TPFLAGS_INLINE_VALUES 0
#elif PY_VERSION_HEX < 0x030C0000
#define PP_OBJECT_DICT_FORM PP_DICT_MANAGED_311
#define PP_MANAGED_DICT_BEFORE (-MANAGED_DICT_OFFSET)
#define PP_TPFLAGS_MANAGED_DICT Py_TPFLAGS_MANAGED_DICT
#define PP_TPFLAGS_INLINE_VALUES 0
#elif PY_VERSION_HEX < 0x030D0000
#define PP_OBJECT_DICT_FORM PP_DICT_MANAGED_312
#define PP_MANAGED_DICT_BEFORE (3 * (int)sizeof(PyObject *))
#define PP_TPFLAGS_MANAGED_DICT Py_TPFLAGS_MANAGED_DICT
#define PP_TPFLAGS_INLINE_VALUES 0
#else
#define PP_OBJECT_DICT_FORM PP_DICT_INLINE_313
#define PP_MANAGED_DICT_BEFORE (-MANAGED_DICT_OFFSET)
#define PP_TPFLAGS_MANAGED_DICT Py_TPFLAGS_MANAGED_DICT
#define PP_TPFLAGS_INLINE_VALUES Py_TPFLAGS_INLINE_VALUES
#endif

/* Where _Py_DebugOffsets publishes the fields it gained after 3.13
 * (pyoffsets.h's third column; PP_D is defined where it is expanded). */
#if PY_VERSION_HEX >= 0x030E0000
#define PP_DBG_FRAME_TLBC_INDEX PP_DZ(interpreter_frame.tlbc_index)
#define PP_DBG_CODE_TLBC PP_DZ(code_object.co_tlbc)
#else
#define PP_DBG_FRAME_TLBC_INDEX PP_NONE
#define PP_DBG_CODE_TLBC PP_NONE
#endif
#if PY_VERSION_HEX >= 0x030F0000
#define PP_DBG_STR_COMPACT_DATA PP_D(unicode_object.compactunicodeobject_size)
#else
#define PP_DBG_STR_COMPACT_DATA PP_NONE
#endif

/* Coroutines, tasks' names and awaiters (asyncio's task graph, read from
 * outside: src/cpython/pyasync.c). A coroutine owns its frame (gi_iframe);
 * suspended in an await of another awaitable (3.13+: its state says so) it
 * keeps that awaitable on its frame's value stack, `depth` slots below the
 * top (3.15 keeps one slot more above it). The top: 3.11-3.13 an index
 * from localsplus (stacktop), 3.14+ a pointer (stackpointer). */
#if PY_VERSION_HEX >= 0x030B0000
#define PP_OFF_GEN_IFRAME offsetof(PyGenObject, gi_iframe)
#define PP_OFF_GEN_FRAME_STATE offsetof(PyGenObject, gi_frame_state)
#else
#define PP_OFF_GEN_IFRAME -1
#define PP_OFF_GEN_FRAME_STATE -1
#endif
#if PY_VERSION_HEX >= 0x030D0000             /* the states, as the byte holds them */
#define PP_GEN_STATE_YIELD_FROM ((uint8_t)FRAME_SUSPENDED_YIELD_FROM)
#else
#define PP_GEN_STATE_YIELD_FROM -1
#endif
#if PY_VERSION_HEX >= 0x030B0000
#define PP_GEN_STATE_CLEARED ((uint8_t)FRAME_CLEARED)
#else
#define PP_GEN_STATE_CLEARED -1
#endif
#if PY_VERSION_HEX >= 0x030E0000
#define PP_OFF_FRAME_STACK offsetof(struct _PyInterpreterFrame, stackpointer)
#define PP_FRAME_STACK_KIND PP_STACK_POINTER
#elif PY_VERSION_HEX >= 0x030B0000
#define PP_OFF_FRAME_STACK offsetof(struct _PyInterpreterFrame, stacktop)
#define PP_FRAME_STACK_KIND PP_STACK_INDEX
#else
#define PP_OFF_FRAME_STACK -1
#define PP_FRAME_STACK_KIND -1
#endif
#if PY_VERSION_HEX >= 0x030F0000
#define PP_GEN_YF_DEPTH 2
#elif PY_VERSION_HEX >= 0x030B0000
#define PP_GEN_YF_DEPTH 1
#else
#define PP_GEN_YF_DEPTH -1
#endif
/* 3.14+'s intrusive lists (a thread's tasks): struct llist_node. */
#if PY_VERSION_HEX >= 0x030E0000
#include <internal/pycore_llist.h>
#define PP_OFF_LLIST_NEXT offsetof(struct llist_node, next)
#define PP_OFF_LLIST_PREV offsetof(struct llist_node, prev)
#else
#define PP_OFF_LLIST_NEXT -1
#define PP_OFF_LLIST_PREV -1
#endif
#if PY_VERSION_HEX >= 0x030E0000
#define PP_DBG_GEN_IFRAME PP_D(gen_object.gi_iframe)
#define PP_DBG_GEN_FRAME_STATE PP_D(gen_object.gi_frame_state)
#define PP_DBG_FRAME_STACK PP_D(interpreter_frame.stackpointer)
#define PP_DBG_SET_USED PP_D(set_object.used)
#define PP_DBG_SET_MASK PP_D(set_object.mask)
#define PP_DBG_SET_TABLE PP_D(set_object.table)
#define PP_DBG_LLIST_NEXT PP_D(llist_node.next)
#define PP_DBG_LLIST_PREV PP_D(llist_node.prev)
#else
#define PP_DBG_GEN_IFRAME PP_NONE
#define PP_DBG_GEN_FRAME_STATE PP_NONE
#define PP_DBG_FRAME_STACK PP_NONE
#define PP_DBG_SET_USED PP_NONE
#define PP_DBG_SET_MASK PP_NONE
#define PP_DBG_SET_TABLE PP_NONE
#define PP_DBG_LLIST_NEXT PP_NONE
#define PP_DBG_LLIST_PREV PP_NONE
#endif
/* The GIL (wall-clock mode: a futex wait on an address inside its state is
 * a wait for the GIL; a thread holds it while `locked` and `last_holder` is
 * its PyThreadState). Its state is inside the runtime up to 3.11; from 3.12
 * each interpreter points to its own (the main one's is its _gil). A
 * free-threaded build has no GIL: -1 throughout. */
#if defined(Py_GIL_DISABLED)
#define PP_OFF_GIL_RUNTIME -1
#define PP_OFF_GIL_INTERP -1
#define PP_GIL_SIZE -1
#define PP_OFF_GIL_LOCKED -1
#define PP_OFF_GIL_LAST_HOLDER -1
#else
#if PY_VERSION_HEX < 0x030C0000
#define PP_OFF_GIL_RUNTIME offsetof(_PyRuntimeState, ceval.gil)
#define PP_OFF_GIL_INTERP -1
#else
#define PP_OFF_GIL_RUNTIME -1
#define PP_OFF_GIL_INTERP offsetof(PyInterpreterState, ceval.gil)
#endif
#define PP_GIL_SIZE sizeof(struct _gil_runtime_state)
#define PP_OFF_GIL_LOCKED offsetof(struct _gil_runtime_state, locked)
#define PP_OFF_GIL_LAST_HOLDER offsetof(struct _gil_runtime_state, last_holder)
#endif
#if PY_VERSION_HEX >= 0x030D0000 && !defined(Py_GIL_DISABLED)
#define PP_DBG_GIL_INTERP PP_D(interpreter_state.ceval_gil)
#else
#define PP_DBG_GIL_INTERP PP_NONE
#endif

#ifndef PP_COMPAT_OFFSETS_ONLY

/* ---- the frame-evaluation hook ------------------------------------------ */

typedef _PyFrameEvalFunction pp_evaluator;

#if PY_VERSION_HEX < 0x03090000
typedef PyFrameObject pp_frame;
#define PP_EVAL_PARAMS PyFrameObject *frame, int throwflag
#define PP_EVAL_ARGS frame, throwflag
#define PP_EVAL_CALL(ev) ((ev)(frame, throwflag))
typedef PyObject *(*pp_tramp_call)(PyFrameObject *, int, void *, pp_evaluator);
#define PP_TRAMP_CALL(t, ev) (((pp_tramp_call)(uintptr_t)(t))(frame, throwflag, NULL, (ev)))
#elif PY_VERSION_HEX < 0x030B0000
typedef PyFrameObject pp_frame;
#define PP_EVAL_PARAMS PyThreadState *tstate, PyFrameObject *frame, int throwflag
#define PP_EVAL_ARGS tstate, frame, throwflag
#define PP_EVAL_CALL(ev) ((ev)(tstate, frame, throwflag))
typedef PyObject *(*pp_tramp_call)(PyThreadState *, PyFrameObject *, int,
                                   pp_evaluator);
#define PP_TRAMP_CALL(t, ev) (((pp_tramp_call)(uintptr_t)(t))(tstate, frame, throwflag, (ev)))
#else
typedef struct _PyInterpreterFrame pp_frame;
#define PP_EVAL_PARAMS PyThreadState *tstate, struct _PyInterpreterFrame *frame, int throwflag
#define PP_EVAL_ARGS tstate, frame, throwflag
#define PP_EVAL_CALL(ev) ((ev)(tstate, frame, throwflag))
typedef PyObject *(*pp_tramp_call)(PyThreadState *, struct _PyInterpreterFrame *,
                                   int, pp_evaluator);
#define PP_TRAMP_CALL(t, ev) (((pp_tramp_call)(uintptr_t)(t))(tstate, frame, throwflag, (ev)))
#endif

/* Calling the evaluator with throwflag set and an exception pending makes
 * the frame raise it at once and unwind itself (as gen.throw() does on an
 * unstarted generator): the one safe way for a hook to fail a frame. */
#if PY_VERSION_HEX < 0x03090000
#define PP_EVAL_THROW(ev) ((ev)(frame, 1))
#else
#define PP_EVAL_THROW(ev) ((ev)(tstate, frame, 1))
#endif

/* How deep the calling thread is in Python frames. */
#if PY_VERSION_HEX < 0x03090000
#define PP_PYTHON_DEPTH() (_PyThreadState_GET()->recursion_depth)
#elif PY_VERSION_HEX < 0x030B0000
#define PP_PYTHON_DEPTH() (tstate->recursion_depth)
#elif PY_VERSION_HEX < 0x030C0000
#define PP_PYTHON_DEPTH() (tstate->recursion_limit - tstate->recursion_remaining)
#else
#define PP_PYTHON_DEPTH() (tstate->py_recursion_limit - tstate->py_recursion_remaining)
#endif

/* The code object a frame runs (borrowed), or NULL. */
static inline PyObject *pp_frame_code(pp_frame *frame)
{
#if PY_VERSION_HEX >= 0x030E0000
    return PyStackRef_AsPyObjectBorrow(frame->f_executable);
#elif PY_VERSION_HEX >= 0x030D0000
    return frame->f_executable;
#else
    return (PyObject *)frame->f_code;
#endif
}

static inline pp_evaluator pp_default_evaluator(void)
{
    return _PyEval_EvalFrameDefault;
}

static inline pp_evaluator pp_get_evaluator(PyInterpreterState *interp)
{
#if PY_VERSION_HEX < 0x03090000
    return interp->eval_frame ? interp->eval_frame : _PyEval_EvalFrameDefault;
#else
    return _PyInterpreterState_GetEvalFrameFunc(interp);
#endif
}

static inline void pp_set_evaluator(PyInterpreterState *interp, pp_evaluator ev)
{
#if PY_VERSION_HEX < 0x03090000
    interp->eval_frame = ev;
#else
    _PyInterpreterState_SetEvalFrameFunc(interp, ev);
#endif
}

/* ---- code objects -------------------------------------------------------- */

static inline Py_ssize_t pp_request_code_extra_index(freefunc f)
{
    return _PyEval_RequestCodeExtraIndex(f);
}

/* The layout of a code object's co_extra block (Objects/codeobject.c keeps
 * it private; it is the same from 3.6 to 3.13). The hook reads slots
 * through it; hook.c checks it against _PyCode_GetExtra before use. */
typedef struct pp_code_extra_block {
    Py_ssize_t ce_size;
    void *ce_extras[1];
} pp_code_extra_block;

/* The slot's value read directly (the hot path), or NULL when unset. */
static inline void *pp_code_extra_fast(PyObject *code, Py_ssize_t index)
{
    pp_code_extra_block *b = (pp_code_extra_block *)((PyCodeObject *)code)->co_extra;

    return b && index < b->ce_size ? b->ce_extras[index] : NULL;
}

/* The slot's value, or NULL when unset (never raises for a code object). */
static inline void *pp_code_extra(PyObject *code, Py_ssize_t index)
{
    void *extra = NULL;

    if (_PyCode_GetExtra(code, index, &extra) < 0) {
        PyErr_Clear();
        return NULL;
    }
    return extra;
}

static inline int pp_code_set_extra(PyObject *code, Py_ssize_t index, void *value)
{
    return _PyCode_SetExtra(code, index, value);
}

/* Whether code objects carry co_qualname (3.11+). */
static inline int pp_have_co_qualname(void)
{
    return PY_VERSION_HEX >= 0x030B0000;
}

/* co_qualname (borrowed), or NULL where code objects have none (< 3.11). */
static inline PyObject *pp_code_qualname(PyObject *code)
{
#if PY_VERSION_HEX >= 0x030B0000
    return ((PyCodeObject *)code)->co_qualname;
#else
    (void)code;
    return NULL;
#endif
}

static inline PyObject *pp_code_name(PyObject *code)
{
    return ((PyCodeObject *)code)->co_name;
}

static inline PyObject *pp_code_filename(PyObject *code)
{
    return ((PyCodeObject *)code)->co_filename;
}

static inline int pp_code_firstlineno(PyObject *code)
{
    return ((PyCodeObject *)code)->co_firstlineno;
}

static inline PyObject *pp_code_consts(PyObject *code)
{
    return ((PyCodeObject *)code)->co_consts;
}

/* Whether the code runs in a function scope (function, lambda, comprehension,
 * generator) rather than a module or class body. */
static inline int pp_code_is_function_scope(PyObject *code)
{
    return (((PyCodeObject *)code)->co_flags & CO_NEWLOCALS) != 0;
}

/* Whether the code's bytecode stores `name` with STORE_GLOBAL (a `global`
 * declaration), which makes a nested def's qualname just its name. Only
 * needed, and only implemented, where names.c rebuilds qualnames (< 3.11,
 * two-byte wordcode). */
static inline int pp_code_stores_global(PyObject *code, PyObject *name)
{
#if PY_VERSION_HEX < 0x030B0000
    PyCodeObject *co = (PyCodeObject *)code;
    const unsigned char *bc = (const unsigned char *)PyBytes_AS_STRING(co->co_code);
    Py_ssize_t n = PyBytes_GET_SIZE(co->co_code);
    unsigned long ext = 0;

    for (Py_ssize_t i = 0; i + 1 < n; i += 2) {
        unsigned long arg = ext | bc[i + 1];
        ext = 0;
        if (bc[i] == EXTENDED_ARG) {
            ext = arg << 8;
        } else if (bc[i] == STORE_GLOBAL &&
                   (Py_ssize_t)arg < PyTuple_GET_SIZE(co->co_names) &&
                   PyUnicode_Compare(PyTuple_GET_ITEM(co->co_names, arg), name) == 0) {
            return 1;
        }
    }
    return 0;
#else
    (void)code;
    (void)name;
    return 0;
#endif
}

/* ---- exceptions around the hook's slow path ------------------------------ */

typedef struct pp_saved_error {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc;
#else
    PyObject *type, *value, *tb;
#endif
} pp_saved_error;

static inline void pp_error_save(pp_saved_error *s)
{
#if PY_VERSION_HEX >= 0x030C0000
    s->exc = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&s->type, &s->value, &s->tb);
#endif
}

static inline void pp_error_restore(pp_saved_error *s)
{
    PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(s->exc);
#else
    PyErr_Restore(s->type, s->value, s->tb);
#endif
}

/* ---- daemon threads at exit (3.10) ----------------------------------------- */

/* Whether a daemon thread waiting for the GIL may write into the freed main
 * interpreter after Py_FinalizeEx: CPython 3.10 (from 3.10.8, gh-96387's
 * fix). When such a thread's timed wait ends with the runtime finalizing,
 * take_gil unlocks the GIL's mutex and, if this wait had asked for the GIL
 * earlier, resets the drop request through `interp`, read when the wait
 * began: after the interpreter was freed (3.8-3.10 allocate it; from 3.11
 * the main one lives in _PyRuntime) that is freed memory, whose `runtime`
 * field free() has zeroed: SIGSEGV in COMPUTE_EVAL_BREAKER (gdb on the
 * cores, docs/RELIABILITY.md). 3.8 and 3.9 have no such reset. */
static inline int pp_daemon_waits_touch_freed_interpreter(void)
{
    return PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030B0000;
}

/* ---- CPython's own perf support ------------------------------------------ */

/* CPython's own perf-map writer (3.12+: PyUnstable_WritePerfMapEntry and
 * PyUnstable_PerfMapState_Fini, one FILE* on /tmp/perf-<pid>.map opened
 * lazily with O_APPEND by the next write). perfpy writes through it when
 * its jitdump engine serves sys.activate_stack_trampoline("perf"), and
 * closes it when it takes CPython's trampoline over, after
 * sys.deactivate_stack_trampoline, and in a forked child: CPython's
 * deactivation (3.12/3.13: _PyPerfTrampoline_Init(0)) leaves the file open
 * with its state "not initialised", so neither exit nor fork closes it, and
 * with PyUnstable_PerfTrampoline_SetPersistAfterFork(1) a forked 3.13 child
 * then copies the parent's map onto that same open file, reading what it
 * writes: it grows until the disk is full (measured on plain 3.13.0). A
 * closed FILE* makes the child open its own /tmp/perf-<child>.map.
 *
 * Why perfpy never initialises CPython's trampoline itself: from 3.13.12
 * and 3.14.3 (3.13.18, 3.14.10, 3.15.2 measured) each initialisation adds a
 * code watcher without removing the previous one; when its count of
 * trampolines reaches zero in an older watcher's callback it clears the
 * newest watcher, and the notification loop then calls NULL: a crash at
 * exit (CPython issue 146522; `python -X perf` + one
 * sys.activate_stack_trampoline + one new function is enough, no perfpy
 * needed). perfpy takes CPython's evaluator over and hands it back by
 * swapping the interpreter's pointer, and serves sys's
 * activate_stack_trampoline itself while its engine owns the hook. */
static inline int pp_cpython_perf_map_write(const void *code, size_t size,
                                            const char *name)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyUnstable_WritePerfMapEntry(code, (unsigned int)size, name);
#else
    (void)code;
    (void)size;
    (void)name;
    return 0;
#endif
}

static inline void pp_cpython_perf_map_close(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyUnstable_PerfMapState_Fini();
#endif
}

/* Whether this CPython handles the switch itself: "perf" (-X perf,
 * PYTHONPERFSUPPORT) from 3.12, "perf_jit" (-X perf_jit,
 * PYTHON_PERF_JIT_SUPPORT) from 3.13. */
static inline int pp_cpython_handles(const char *backend)
{
    if (strcmp(backend, "perf") == 0)
        return PY_VERSION_HEX >= 0x030C0000;
    if (strcmp(backend, "perf_jit") == 0)
        return PY_VERSION_HEX >= 0x030D0000;
    return 0;
}

#endif /* PP_COMPAT_OFFSETS_ONLY */

#endif /* PERFPY_COMPAT_H */
