/*
 * Fuzz target: perfpy's own profile file (-f perfpy), the data inside its
 * gzip stream (include/perfpy/profile_format.h), read by
 * src/report/read_perfpy.c; what is read is then written by every writer
 * (a profile read from hostile bytes must be one any format can take) and
 * in the same format again, which must read back the same. The data, not
 * the gzip stream: a fuzzer gets past a CRC only by luck. Built with
 * libFuzzer by `make fuzz`, replayed over tests/fuzz/corpus/perfpy_profile/
 * by `make test`.
 *
 * Checked: no crash, no read outside the input (ASan); a profile read has
 * its totals equal to the sum of its stacks, its log's records each naming
 * a stack and a thread it has; written again and read, the same counts.
 */
#include "output/output.h"
#include "report/report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ssize_t drop(void *cookie, const char *buf, size_t len)
{
    (void)cookie;
    (void)buf;
    return (ssize_t)len;
}

/* p written as -f perfpy and read back: the same counts. */
static void again(const pp_profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    pp_profile q;

    if (!m || pp_write_perfpy(p, m, NULL) != 0 || fclose(m) != 0)
        abort();
    if (pp_profile_init(&q) != 0 || pp_read_profile_buffer((uint8_t *)buf, len, &q) != 0 ||
        q.nframes != p->nframes || q.nstacks != p->nstacks || q.nthreads != p->nthreads ||
        q.nlog != p->nlog || q.samples != p->samples || q.nmarkers != p->nmarkers)
        abort();
    pp_profile_free(&q);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    pp_profile p;
    pp_perfpy_error err;
    uint64_t samples = 0;

    if (!sink) {
        cookie_io_functions_t io = {NULL, drop, NULL, NULL};
        sink = fopencookie(NULL, "w", io);
    }
    if (pp_profile_init(&p) != 0)
        abort();
    if (pp_read_perfpy(data, size, &p, &err) == 0) {
        for (uint32_t i = 0; i < p.nstacks; i++)
            samples += p.stacks[i].count;
        if (samples != p.samples)
            abort();
        for (uint64_t i = 0; i < p.nlog; i++) {
            pp_logged r = pp_profile_rec(&p, i);
            if (r.stack >= p.nstacks || r.thread >= p.nthreads)
                abort();
        }
        if (sink && size < 16384) {
            for (size_t i = 0; i < pp_nformats; i++)
                if (pp_formats[i].write && strcmp(pp_formats[i].name, "heatmap") != 0)
                    pp_formats[i].write(&p, sink, NULL);
            again(&p);
        }
    }
    pp_profile_free(&p);
    return 0;
}
