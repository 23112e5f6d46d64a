/*
 * The code loads of a jitdump (include/perfpy/jitdump_format.h), read with
 * the engine's reader (src/engine/jitdump_read.c). After `perf inject
 * --jit` each trampoline is its own jitted-<pid>-<index>.so and `perf
 * script` prints addresses relative to it; the folder finds a frame's real
 * address and def line again through its code_index here.
 */
#include "perf_data.h"
#include "perf_data_format.h"
#include "perfpy/jitdump_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_code(const void *a, const void *b)
{
    const pp_jit_code *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

int pp_jitdump_codes_buffer(const uint8_t *d, size_t len, pp_jit_code **out, size_t *n)
{
    pp_jit_code *codes = NULL;
    size_t count = 0, cap = 0;
    uint64_t debug_addr = 0;
    int debug_line = 0, rc;
    pp_jd_reader r;
    pp_jd_record rec;

    *out = NULL;
    *n = 0;
    if (pp_jd_open(&r, d, len) < 0) {
        pp_jd_close(&r);
        return 0;                             /* not a dump: no codes */
    }
    /* The reader stops at the first bad record (a dump cut by SIGKILL ends
     * with one): the code loads before it are kept. */
    while ((rc = pp_jd_next(&r, &rec)) > 0) {
        if (rec.id == JIT_CODE_DEBUG_INFO && rec.u.debug.nr_entry > 0) {
            debug_addr = rec.u.debug.code_addr;
            debug_line = (int)pp__pd_u32(rec.u.debug.entries + 8);
        } else if (rec.id == JIT_CODE_LOAD) {
            if (count == cap) {
                size_t c = cap ? cap * 2 : 256;
                pp_jit_code *nc = realloc(codes, c * sizeof(*nc));
                if (!nc) {
                    free(codes);
                    pp_jd_close(&r);
                    return -ENOMEM;
                }
                codes = nc;
                cap = c;
            }
            codes[count].addr = rec.u.load.code_addr;
            codes[count].index = rec.u.load.code_index;
            codes[count].line = rec.u.load.debug_at >= 0 && debug_addr == rec.u.load.code_addr &&
                                        debug_line > 0 ? debug_line : 0;
            count++;
            debug_addr = 0;
        }
    }
    pp_jd_close(&r);
    if (count)
        qsort(codes, count, sizeof(*codes), cmp_code);
    *out = codes;
    *n = count;
    return 0;
}


typedef struct codes_ctx {
    pp_jit_code **out;
    size_t *n;
} codes_ctx;

static int codes_fn(const uint8_t *d, size_t len, void *ctx)
{
    codes_ctx *c = ctx;
    return pp_jitdump_codes_buffer(d, len, c->out, c->n);
}

int pp_jitdump_codes(const char *path, pp_jit_code **out, size_t *n)
{
    codes_ctx c = {out, n};
    int rc;

    *out = NULL;
    *n = 0;
    rc = pp__perf_data_map(path, codes_fn, &c);
    return rc == -EINVAL ? 0 : rc;
}

