/*
 * The code loads of a jitdump (include/perfpy/jitdump_format.h), read the
 * way every dump is read: a copy of the file (pp_jd_read_file, which says
 * why not a mapping) walked with the engine's reader and its debug-entry
 * iterator (src/engine/jitdump_read.c). After `perf inject --jit` each
 * trampoline is its own jitted-<pid>-<index>.so and `perf script` prints
 * addresses relative to it; the folder finds a frame's real address and
 * def line again through its code_index here.
 */
#include "perf_data.h"
#include "profile/htab.h"
#include "perfpy/jitdump_read.h"

#include <errno.h>
#include <stdlib.h>

static int cmp_code(const void *a, const void *b)
{
    const pp_jit_code *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* The line of the first entry of the debug record that belongs to load
 * (perfpy's writer puts the function's def line there), 0 when it has
 * none. */
static int def_line(const pp_jd_reader *r, const pp_jd_record *load,
                    const pp_jd_record *debug)
{
    pp_jd_debug_entry e;
    size_t pos = 0;

    if (load->u.load.debug_at < 0 || debug->id != JIT_CODE_DEBUG_INFO ||
        load->u.load.debug_at != (int64_t)debug->offset)
        return 0;
    return pp_jd_debug_next(r, debug, &pos, &e) && e.lineno > 0 ? e.lineno : 0;
}

int pp_jitdump_codes_buffer(const uint8_t *d, size_t len, pp_jit_code **out, size_t *n)
{
    pp_jit_code *codes = NULL;
    size_t count = 0, cap = 0;
    pp_jd_reader r;
    pp_jd_record rec, debug = {0};

    *out = NULL;
    *n = 0;
    if (pp_jd_open(&r, d, len) < 0) {
        pp_jd_close(&r);
        return 0;                             /* not a dump: no codes */
    }
    /* The reader stops at the first bad record (a dump cut by SIGKILL ends
     * with one): the code loads before it are kept. */
    while (pp_jd_next(&r, &rec) > 0) {
        if (rec.id == JIT_CODE_DEBUG_INFO) {
            debug = rec;
        } else if (rec.id == JIT_CODE_LOAD) {
            if (pp__grow((void **)&codes, &cap, count + 1, sizeof(*codes)) < 0) {
                free(codes);
                pp_jd_close(&r);
                return -ENOMEM;
            }
            codes[count++] = (pp_jit_code){.index = rec.u.load.code_index,
                                           .addr = rec.u.load.code_addr,
                                           .line = def_line(&r, &rec, &debug)};
        }
    }
    pp_jd_close(&r);
    if (count)
        qsort(codes, count, sizeof(*codes), cmp_code);
    *out = codes;
    *n = count;
    return 0;
}

int pp_jitdump_codes(const char *path, pp_jit_code **out, size_t *n)
{
    uint8_t *data;
    size_t size;
    int rc;

    *out = NULL;
    *n = 0;
    rc = pp_jd_read_file(path, &data, &size);
    if (rc < 0)
        return rc == -EINVAL ? 0 : rc;        /* not a regular file: no codes */
    rc = pp_jitdump_codes_buffer(data, size, out, n);
    free(data);
    return rc;
}
