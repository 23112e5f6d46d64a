/*
 * Fuzz target: CPython's line tables (src/cpython/linetable.c), which sample
 * mode reads from the program's memory: any bytes, in each of the three
 * formats, at offsets inside and past the code, give a line >= 1 (the def
 * line when nothing parses) and read nothing past the table (ASan). The
 * first byte picks the def line. Built with libFuzzer by `make fuzz`,
 * replayed over tests/fuzz/corpus/linetable/ by `make test`.
 */
#include "cpython/linetable.h"
#include "cpython/pyoffsets.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *table;
    int def_line;

    if (size < 1)
        return 0;
    def_line = 1 + data[0];
    table = malloc(size - 1 ? size - 1 : 1);       /* exact: an over-read is seen */
    if (!table)
        return 0;
    memcpy(table, data + 1, size - 1);
    for (int format = PP_LINES_LNOTAB; format <= PP_LINES_LOCATIONS; format++)
        for (int64_t off = -2; off < (int64_t)size * 4 + 4; off += 1 + off / 8) {
            int line = pp_linetable_line(table, size - 1, format, off, def_line);

            if (line < 1)
                abort();
        }
    free(table);
    return 0;
}
