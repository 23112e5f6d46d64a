/*
 * Fuzz target: a profile read back (src/report/read_profile.c: collapsed
 * stacks, or gzipped pprof, decoded by hand), then compared with itself and
 * written by the diff writers, the table and the timeline writers (which
 * must cope with a profile that has stacks but no samples logged). Built
 * with libFuzzer by `make fuzz`, replayed over tests/fuzz/corpus/read_profile/
 * by `make test`.
 *
 * Checked: no crash, no read outside the input (ASan); a profile read has
 * its totals equal to the sum of its stacks; a profile against itself
 * changes nothing.
 */
#include "output/output.h"
#include "report/report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ssize_t drop(void *cookie, const char *buf, size_t len)
{
    (void)cookie;
    (void)buf;
    return (ssize_t)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    pp_profile p;
    uint64_t samples = 0;
    pp_diff_func *v;
    uint32_t n;

    if (!sink) {
        cookie_io_functions_t io = {NULL, drop, NULL, NULL};
        sink = fopencookie(NULL, "w", io);
    }
    if (pp_profile_init(&p) != 0)
        abort();
    if (pp_read_profile_buffer(data, size, &p) == 0) {
        for (uint32_t i = 0; i < p.nstacks; i++)
            samples += p.stacks[i].count;
        if (samples != p.samples)
            abort();
        if (pp_diff_functions(&p, &p, &v, &n) == 0) {
            for (uint32_t i = 0; i < n; i++)
                if (v[i].base_own != v[i].new_own || v[i].base_total != v[i].new_total)
                    abort();
            free(v);
        }
        if (sink && size < 8192) {
            pp_write_opts o = {NULL, &p, 0};
            pp_write_diff_table(&p, sink, &o);
            pp_write_diff_flamegraph(&p, sink, &o);
            pp_write_table(&p, sink, NULL);
            pp_write_speedscope(&p, sink, NULL);
            pp_write_firefox(&p, sink, NULL);
        }
    }
    pp_profile_free(&p);
    return 0;
}
