/*
 * The structure offsets of the CPython version this module is built for,
 * exported: the same values perfpy compiles in for every version
 * (src/cpython/pytables.c, made from each version's headers by
 * scripts/gen-pytables), here from the headers this module is built with,
 * so that the tests can hold the compiled tables against every
 * interpreter's own build. Nothing loads this module to read it: pyread.c
 * reads the table from the file. The fields are pyoffsets.h's list, their
 * version-dependent values compat.h's PP_OFF_* macros.
 */
#include "compat.h"
#include "../cpython/pyoffsets.h"

#include <stddef.h>

#define FIELD(name, headers, debug) .name = (int32_t)(headers),

__attribute__((visibility("default"), used))
const pp_py_offsets perfpy_py_offsets = {
    .magic = PP_PY_OFFSETS_MAGIC,
    .size = sizeof(pp_py_offsets),
    .version_hex = PY_VERSION_HEX,
    PP_PY_FIELDS(FIELD)
};
