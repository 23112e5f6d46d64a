/*
 * Fuzz target: the perf.data scanner (records, and the writer's perf
 * version from the feature sections), the fork-exec fixup, the finishing of
 * a recording whose perf was killed, and the jitdump code-load reader
 * (src/report/perf_data.c, perf_data_fix.c, jitdump_codes.c: all read files
 * perfpy did not write). Replayed over
 * tests/fuzz/corpus/perf_data/ by `make test`.
 */
#include "report/perf_data.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_perf_data_info *info = malloc(sizeof(*info));
    pp_jit_code *codes;
    size_t n;

    if (!info)
        abort();
    if (pp_perf_data_scan_buffer(data, size, info) == 0)
        for (size_t i = 0; i < info->njitdumps; i++)
            if (!info->jitdumps[i] || !info->jitdumps[i][0])
                abort();
    /* the writer's perf version: a string in its field, printable */
    if (strnlen(info->perf_version, sizeof(info->perf_version)) == sizeof(info->perf_version))
        abort();
    for (const char *c = info->perf_version; *c; c++)
        if (*c < 0x20 || *c > 0x7e)
            abort();
    pp_perf_data_info_free(info);
    free(info);
    {
        /* the fork-exec fixup writes: give it a private copy */
        uint8_t *copy = malloc(size ? size : 1);
        size_t marked, counted;
        if (!copy)
            abort();
        memcpy(copy, data, size);
        uint64_t bytes, again;
        if (pp_perf_data_fix_exec_forks_buffer(copy, size, 0, &counted) == 0 &&
            pp_perf_data_fix_exec_forks_buffer(copy, size, 1, &marked) == 0 && marked != counted)
            abort();
        /* finishing a killed recording: the data stays inside the input,
         * and a finished file is left alone */
        memcpy(copy, data, size);
        if (pp_perf_data_finish_buffer(copy, size, &bytes) != 0 || bytes > size ||
            pp_perf_data_finish_buffer(copy, size, &again) != 0 || again != 0)
            abort();
        free(copy);
    }
    if (pp_jitdump_codes_buffer(data, size, &codes, &n) == 0) {
        for (size_t i = 1; i < n; i++)
            if (codes[i - 1].index > codes[i].index)
                abort();
        free(codes);
    }
    return 0;
}
