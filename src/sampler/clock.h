/*
 * The clocks perfpy-sample's parts read: CLOCK_MONOTONIC (the BPF
 * program's samples are stamped by the same clock, bpf_ktime_get_ns) in
 * seconds or nanoseconds, and this process's own CPU time for the
 * summary's last line.
 */
#ifndef PERFPY_SAMPLER_CLOCK_H
#define PERFPY_SAMPLER_CLOCK_H

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

static inline double pp__now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline uint64_t pp__mono_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline double pp__cpu_seconds(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

#endif
