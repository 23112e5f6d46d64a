/*
 * Fuzz target for the jitdump reader (src/engine/jitdump_read.c).
 *
 *   libFuzzer:  clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
 *                 -Isrc/engine tests/fuzz/fuzz_jitdump.c \
 *                 src/engine/jitdump_read.c src/engine/ehframe.c -o fuzz-jitdump
 *               ./fuzz-jitdump tests/fuzz/corpus/jitdump
 *   replay:     build/fuzz-replay-jitdump tests/fuzz/corpus/jitdump  (make test)
 *
 * Every record the reader hands out is touched end to end (its bytes, the
 * name, the code, each debug entry, the unwinding data), so a pointer or a
 * size that escapes the input shows up under AddressSanitizer; every error
 * must come with a message.
 */
#include "perfpy/jitdump_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static uint64_t touch(const uint8_t *p, uint64_t n)
{
    uint64_t sum = 0;

    for (uint64_t i = 0; i < n; i++)
        sum += p[i];
    return sum;
}

static uint64_t visit(const pp_jd_reader *r, const pp_jd_record *rec)
{
    uint64_t sum = touch(rec->bytes, rec->total_size);
    pp_jd_debug_entry e;
    size_t pos = 0;
    uint64_t n = 0;

    switch (rec->id) {
    case JIT_CODE_LOAD:
        if (strlen(rec->u.load.name) != rec->u.load.name_len)
            abort();
        sum += touch(rec->u.load.code, rec->u.load.code_size);
        break;
    case JIT_CODE_DEBUG_INFO:
        while (pp_jd_debug_next(r, rec, &pos, &e)) {
            sum += e.addr + strlen(e.name);
            n++;
        }
        if (n != rec->u.debug.nr_entry)
            abort();
        break;
    case JIT_CODE_UNWINDING_INFO:
        sum += touch(rec->u.unwinding.data, rec->u.unwinding.unwinding_size);
        break;
    default:
        break;
    }
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_jd_reader r;
    pp_jd_record rec;
    uint64_t sum = 0;
    int rc = pp_jd_open(&r, data, size);

    while (rc == 0 && (rc = pp_jd_next(&r, &rec)) > 0) {
        sum += visit(&r, &rec);
        rc = 0;
    }
    if (rc < 0 && (r.error.err != rc || r.error.message[0] == '\0' ||
                   r.error.offset > size))
        abort();   /* every error has its errno, a sentence and a place */
    pp_jd_close(&r);
    sink = sum;
    return 0;
}
