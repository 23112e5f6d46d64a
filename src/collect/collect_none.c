/*
 * The collector of a perfpy built without sample mode (PERFPY_NO_SAMPLE=1):
 * perfpy-sample is still made where elfutils is, for read mode and dump's
 * reads from outside, which need no BPF; this stands where collect.c (the
 * BPF collector, libbpf) would. Opening it says why it cannot, so that
 * `perfpy-sample --check` answers "no" and perfpy chooses read mode (or
 * says, when sample mode is asked for, how to build it); nothing else is
 * ever reached without an open collector.
 */
#include "collect.h"

#include <errno.h>
#include <stdio.h>

int pp_collect_open(pp_collector **out, int freq, int flags, char *why, size_t len)
{
    *out = NULL;
    snprintf(why, len, "this perfpy was built without sample mode (PERFPY_NO_SAMPLE=1): "
             "build it again without that, with libbpf-dev, to have it");
    return -ENOTSUP;
}

int pp_collect_open_event(pp_collector **out, int freq, const pp_event *event, uint64_t every,
                          int flags, char *why, size_t len)
{
    return pp_collect_open(out, freq, flags, why, len);
}

int pp_collect_add(pp_collector *c, pid_t pid, const pp_py_offsets *o, uint64_t runtime)
{
    return -ENOTSUP;
}

int pp_collect_set(pp_collector *c, pid_t pid, const pp_py_offsets *o, uint64_t runtime)
{
    return -ENOTSUP;
}

int pp_collect_set_async(pp_collector *c, pid_t pid, const pp_py_offsets *o,
                         const pp_pyasync_offsets *a, const pp_pyasync_types *ty, int waiting)
{
    return -ENOTSUP;
}

void pp_collect_remove(pp_collector *c, pid_t pid)
{
}

int pp_collect_host(pp_collector *c, unsigned flags)
{
    return -ENOTSUP;
}

int pp_collect_poll(pp_collector *c, int timeout_ms, pp_collect_fn fn,
                    pp_collect_event_fn event_fn, void *ctx)
{
    return -ENOTSUP;
}

void pp_collect_on_code(pp_collector *c, pp_collect_code_fn fn, void *ctx)
{
}

uint64_t pp_collect_code_lost(const pp_collector *c)
{
    return 0;
}

uint64_t pp_collect_lost(const pp_collector *c)
{
    return 0;
}

uint64_t pp_collect_count(const pp_collector *c, int which)
{
    return 0;
}

uint64_t pp_collect_missed_ns(const pp_collector *c)
{
    return 0;
}

int pp_collect_threads(pp_collector *c, pid_t pid, int end)
{
    return -ENOTSUP;
}

void pp_collect_end_at(pp_collector *c, uint64_t mono_ns)
{
}

int pp_collect_snapshot(pp_collector *c, pid_t pid)
{
    return -ENOTSUP;
}

int pp_collect_kernel_names(pp_collector *c, const uint64_t *addr, size_t n,
                            char (*names)[PP_BPF_KSYM_LEN])
{
    return -ENOTSUP;
}

void pp_collect_close(pp_collector *c)
{
}
