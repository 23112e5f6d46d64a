/*
 * The structure offsets of the CPython version this module is built for,
 * exported for perfpy's sample mode, which reads a process's Python frames
 * from outside it and never loads this module to do so: it reads this
 * table from the module's file (src/sample/pyoffsets.h, pyread.c). The
 * version-dependent fields are compat.h's PP_OFF_* macros.
 */
#include "compat.h"
#include "../sample/pyoffsets.h"

#include <stddef.h>

/* PyASCIIObject.state's bit fields have no offsetof; in every version from
 * 3.8 to 3.15 (with the GIL) they start interned:2, kind:3, compact:1,
 * ascii:1, which gcc and clang lay out from bit 0 on x86_64 and aarch64.
 * pyread's live tests read real strings with them on every interpreter. */
#define STR_KIND_MASK 0x1cu
#define STR_COMPACT_MASK 0x20u
#define STR_ASCII_MASK 0x40u

__attribute__((visibility("default"), used))
const pp_py_offsets perfpy_py_offsets = {
    .magic = PP_PY_OFFSETS_MAGIC,
    .size = sizeof(pp_py_offsets),
    .version_hex = PY_VERSION_HEX,
    .runtime_interpreters_head = offsetof(_PyRuntimeState, interpreters.head),
    .interp_threads_head = PP_OFF_INTERP_THREADS_HEAD,
    .tstate_next = offsetof(PyThreadState, next),
    .tstate_thread_id = offsetof(PyThreadState, thread_id),
    .tstate_frame = PP_OFF_TSTATE_FRAME,
    .tstate_cframe = PP_OFF_TSTATE_CFRAME,
    .cframe_current_frame = PP_OFF_CFRAME_CURRENT,
    .frame_is_object = PP_FRAME_IS_OBJECT,
    .frame_previous = PP_OFF_FRAME_PREVIOUS,
    .frame_code = PP_OFF_FRAME_CODE,
    .frame_code_tag_mask = PP_FRAME_CODE_TAG_MASK,
    .frame_instr = PP_OFF_FRAME_INSTR,
    .frame_owner = PP_OFF_FRAME_OWNER,
    .frame_owner_shim_min = PP_FRAME_OWNER_SHIM_MIN,
    .frame_is_entry = PP_OFF_FRAME_IS_ENTRY,
    .code_qualname = PP_OFF_CODE_QUALNAME,
    .code_name = offsetof(PyCodeObject, co_name),
    .code_filename = offsetof(PyCodeObject, co_filename),
    .code_firstlineno = offsetof(PyCodeObject, co_firstlineno),
    .code_adaptive = PP_OFF_CODE_ADAPTIVE,
    .str_state = offsetof(PyASCIIObject, state),
    .str_ascii_mask = STR_ASCII_MASK,
    .str_compact_mask = STR_COMPACT_MASK,
    .str_kind_mask = STR_KIND_MASK,
    .str_length = offsetof(PyASCIIObject, length),
    .str_hash = offsetof(PyASCIIObject, hash),
    .str_ascii_data = sizeof(PyASCIIObject),
    .str_compact_data = sizeof(PyCompactUnicodeObject),
    .object_type = offsetof(PyObject, ob_type),
    .code_linetable = PP_OFF_CODE_LINETABLE,
    .linetable_format = PP_LINETABLE_FORMAT,
    .instr_kind = PP_INSTR_KIND,
    .bytes_size = offsetof(PyVarObject, ob_size),
    .bytes_data = offsetof(PyBytesObject, ob_sval),
};
