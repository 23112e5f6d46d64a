/*
 * What the profile model costs for a long recording, without recording it:
 * the samples an hour at 399 Hz on 8 busy threads makes (11.5 million) fed
 * to the model as the folder feeds it (pp_profile_sample: the stack
 * interned, the sample logged on its thread at its time), then every
 * writer run over it to /dev/null. Prints the resident memory the samples
 * added (bytes per sample, the log's 16 included) and each writer's peak
 * above the profile it reads (the writers stream: their peak must not grow
 * with the log beyond a small index per sample):
 *
 *     build/bench-model-memory [HZ SECONDS THREADS STACKS]   (399 3600 8 20000)
 *
 * The stacks are synthetic but shaped like a program's: depth 20 to 60,
 * Python frames over a few native ones, each thread running one stack for
 * a few samples before the next (phases), so the interning tables and the
 * timelines' runs are what a real profile makes. docs/PERFORMANCE.md
 * ("The profile's memory") has its output.
 */
#include "output/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NFRAMES 3000

static long kib(const char *key)           /* VmRSS or VmHWM of this process */
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");

    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, key, strlen(key)) == 0)
            v = strtol(line + strlen(key) + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static void reset_peak(void)               /* VmHWM back to VmRSS (Linux 4.0+) */
{
    FILE *f = fopen("/proc/self/clear_refs", "w");

    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void)                 /* xorshift64: the same stacks every run */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

int main(int argc, char **argv)
{
    long hz = argc > 1 ? atol(argv[1]) : 399, seconds = argc > 2 ? atol(argv[2]) : 3600;
    long nthreads = argc > 3 ? atol(argv[3]) : 8, nstacks = argc > 4 ? atol(argv[4]) : 20000;
    uint64_t period = 1000000000ull / (uint64_t)hz, base = 1000000000000ull;
    uint64_t nsamples = (uint64_t)hz * (uint64_t)seconds;
    static const char *const formats[] = {"speedscope", "firefox", "collapsed", "pprof",
                                          "table", "flamegraph"};
    uint32_t (*stacks)[64] = calloc((size_t)nstacks, sizeof(*stacks));
    uint32_t *depth = calloc((size_t)nstacks, sizeof(*depth)), frame[NFRAMES];
    uint32_t thread[64], current[64];
    pp_profile p;
    long rss0, rss1;
    double t0;
    char name[64], file[64];

    if (!stacks || !depth || nthreads < 1 || nthreads > 64 || hz < 1 || nstacks < 1 ||
        pp_profile_init(&p) != 0) {
        fprintf(stderr, "usage: %s [HZ SECONDS THREADS(1-64) STACKS]\n", argv[0]);
        return 2;
    }
    p.period_ns = period;
    snprintf(p.event, sizeof(p.event), "cpu-clock");
    for (int i = 0; i < NFRAMES; i++) {
        int py = i % 10 != 0;
        int n = snprintf(name, sizeof(name), py ? "handler_%d" : "native_call_%d", i);
        int fl = snprintf(file, sizeof(file), py ? "/srv/app/module_%d.py" : "/usr/lib/lib%d.so",
                          i / 40);
        frame[i] = (uint32_t)pp_profile_frame(&p, py ? PP_FRAME_PYTHON : PP_FRAME_NATIVE, name,
                                              (size_t)n, file, (size_t)fl, 10 + i % 300);
    }
    for (long s = 0; s < nstacks; s++) {
        depth[s] = 20 + next() % 41;
        for (uint32_t d = 0; d < depth[s]; d++)     /* roots shared, leaves varied */
            stacks[s][d] = frame[d < 8 ? d : next() % NFRAMES];
    }
    for (long t = 0; t < nthreads; t++) {
        snprintf(name, sizeof(name), "worker-%ld", t);
        thread[t] = (uint32_t)pp_profile_thread(&p, 4000, (int32_t)(4000 + t), name, strlen(name));
        current[t] = next() % (uint32_t)nstacks;
    }
    rss0 = kib("VmRSS:");
    t0 = now();
    for (uint64_t k = 0; k < nsamples; k++)
        for (long t = 0; t < nthreads; t++) {
            uint64_t when = base + k * period + next() % 20000;   /* timer jitter */
            if (next() % 8 == 0)                                  /* a run ends */
                current[t] = next() % (uint32_t)nstacks;
            if (pp_profile_sample(&p, stacks[current[t]], depth[current[t]], thread[t], when,
                                  period) < 0) {
                fprintf(stderr, "out of memory after %llu samples\n",
                        (unsigned long long)p.samples);
                return 1;
            }
        }
    p.time_first_ns = base;                     /* as the folder says them */
    p.time_last_ns = base + nsamples * period;
    rss1 = kib("VmRSS:");
    printf("%llu samples (%ld Hz x %ld s x %ld threads), %u stacks, %u frames: %.1f s to add\n",
           (unsigned long long)p.samples, hz, seconds, nthreads, p.nstacks, p.nframes,
           now() - t0);
    printf("resident: %.1f MiB before the samples, %.1f MiB after: %.1f bytes per sample "
           "(the log %llu records of %zu bytes)\n", rss0 / 1024.0, rss1 / 1024.0,
           (double)(rss1 - rss0) * 1024.0 / (double)p.samples, (unsigned long long)p.nlog,
           sizeof(pp_sample_rec));
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        const pp_format *f = pp_format_find(formats[i]);
        pp_write_opts wo = {.title = "bench"};
        FILE *out = fopen("/dev/null", "w");
        long before;
        int rc;

        if (!f || !out)
            return 1;
        reset_peak();
        before = kib("VmRSS:");
        t0 = now();
        rc = f->write(&p, out, &wo);
        fclose(out);
        printf("%-10s %5.1f s, peak %.1f MiB above the profile (%.1f bytes per sample)%s\n",
               formats[i], now() - t0, (kib("VmHWM:") - before) / 1024.0,
               (double)(kib("VmHWM:") - before) * 1024.0 / (double)p.samples,
               rc < 0 ? " FAILED" : "");
    }
    pp_profile_free(&p);
    free(stacks);
    free(depth);
    return 0;
}
