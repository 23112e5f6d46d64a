/*
 * Fuzz target: `perf script` text through the whole report pipeline that
 * follows it: parser (whole buffer, and streamed in two feeds, which must
 * agree), folder, and every writer. Built with libFuzzer by `make fuzz`,
 * and replayed over tests/fuzz/corpus/perf_script/ by `make test`.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude -Isrc/cli \
 *       tests/fuzz/fuzz_perf_script.c src/cli/{perf_script,fold,profile,htab,out_*}.c -lz
 */
#include "report/fold.h"
#include "output/output.h"
#include "report/perf_script.h"
#include "profile/profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctx {
    pp_folder *f;
    uint64_t n, frames;
} ctx;

static int count(void *c, const pp_raw_sample *s)
{
    ctx *x = c;
    x->n++;
    x->frames += s->nframes;
    return 0;
}

static int fold(void *c, const pp_raw_sample *s)
{
    ctx *x = c;
    x->n++;
    x->frames += s->nframes;
    return pp_fold_sample(x->f, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ssize_t drop(void *cookie, const char *buf, size_t len)
{
    (void)cookie;
    (void)buf;
    return (ssize_t)len;
}

/* A stream that forgets what it is given, without a system call per
 * buffer (/dev/null cost a third of the run time). */
static FILE *discard(void)
{
    cookie_io_functions_t io = {NULL, drop, NULL, NULL};

    return fopencookie(NULL, "w", io);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    const char *text = (const char *)data;
    pp_profile p;
    /* the size picks the options: native or not, process roots, perfpy
     * shown, thread roots */
    pp_fold_opts o = {.no_native = size & 1, .processes = (int)(size / 2 % 3),
                      .show_perfpy = (int)(size / 6 % 2), .threads = (int)(size / 12 % 2)};
    uint64_t logged = 0;
    ctx whole = {0}, fed = {0};
    pp_script_parser *parser;
    size_t cut = size ? (size_t)data[0] * size / 256 : 0;

    if (!sink)
        sink = discard();
    if (pp_profile_init(&p) != 0 || pp_fold_open(&whole.f, &p, &o) != 0)
        abort();
    if (pp_script_parse_buffer(text, size, fold, &whole, NULL) != 0)
        abort();
    pp_fold_close(whole.f);
    if (p.samples != whole.n)
        abort();
    /* every sample is in the log, on its thread, against a stack there is */
    for (uint32_t t = 0; t < p.nthreads; t++)
        logged += p.threads[t].samples;
    if (logged != p.samples || p.nlog < p.samples)
        abort();
    for (uint64_t i = 0; i < p.nlog; i++)
        if (pp_profile_rec(&p, i).stack >= p.nstacks ||
            pp_profile_rec(&p, i).thread >= p.nthreads)
            abort();

    /* the streamed parser, split anywhere, sees the same samples */
    if (pp_script_open(&parser, count, &fed) != 0)
        abort();
    if (pp_script_feed(parser, text, cut) != 0 ||
        pp_script_feed(parser, text + cut, size - cut) != 0 || pp_script_finish(parser) != 0)
        abort();
    pp_script_close(parser);
    if (fed.n != whole.n || fed.frames != whole.frames)
        abort();

    if (sink) {
        uint8_t *pb;
        size_t pblen;
        pp_write_collapsed(&p, sink, NULL);
        pp_write_speedscope(&p, sink, NULL);
        pp_write_firefox(&p, sink, NULL);
        pp_write_flamegraph(&p, sink, NULL);
        if (size < 4096)
            pp_write_html(&p, sink, NULL);
        if (pp_pprof_encode(&p, &pb, &pblen) == 0)
            free(pb);
    }
    pp_profile_free(&p);
    return 0;
}
