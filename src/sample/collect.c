/*
 * Sample mode's collector in user space (see collect.h): libbpf's skeleton
 * of sample.bpf.c (made by bpftool at build time), one cpu-clock perf event
 * per CPU, the ring buffer read with a callback.
 */
#include "collect.h"
#include "sample.skel.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pp_collector {
    struct pp_sample_bpf *skel;
    struct ring_buffer *ring;
    struct bpf_link **links;
    int *fds;
    int ncpu;
    pp_collect_fn fn;
    pp_collect_event_fn event_fn;
    void *ctx;
};

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    (void)fmt;
    (void)ap;
    return 0;
}

static int on_record(void *ctx, void *data, size_t len)
{
    pp_collector *c = ctx;

    if (len >= sizeof(struct pp_bpf_sample) && c->fn)
        c->fn(data, c->ctx);
    else if (len >= sizeof(struct pp_bpf_event) && len < sizeof(struct pp_bpf_sample) &&
             c->event_fn)
        c->event_fn(data, c->ctx);
    return 0;
}

static int fail(char *why, size_t len, int rc, const char *what)
{
    if (why)
        snprintf(why, len, "%s: %s", what, strerror(-rc));
    return rc;
}

static int open_events(pp_collector *c, int freq, char *why, size_t len)
{
    struct perf_event_attr a;

    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.freq = 1;
    a.sample_freq = (uint64_t)freq;
    for (int cpu = 0; cpu < c->ncpu; cpu++) {
        int fd = (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

        if (fd < 0) {
            if (errno == ENODEV)     /* an offline CPU */
                continue;
            return fail(why, len, -errno, "perf_event_open (cpu-clock on every CPU)");
        }
        c->fds[cpu] = fd;
        c->links[cpu] = bpf_program__attach_perf_event(c->skel->progs.pp_on_sample, fd);
        if (!c->links[cpu])
            return fail(why, len, -errno, "attaching the BPF program to the perf event");
    }
    return 0;
}

int pp_collect_open(pp_collector **out, int freq, char *why, size_t len)
{
    pp_collector *c = calloc(1, sizeof(*c));
    int rc;

    *out = NULL;
    if (!c)
        return -ENOMEM;
    libbpf_set_print(silent);
    c->ncpu = libbpf_num_possible_cpus();
    c->fds = calloc((size_t)(c->ncpu > 0 ? c->ncpu : 1), sizeof(*c->fds));
    c->links = calloc((size_t)(c->ncpu > 0 ? c->ncpu : 1), sizeof(*c->links));
    if (c->ncpu <= 0 || !c->fds || !c->links) {
        pp_collect_close(c);
        return -ENOMEM;
    }
    for (int i = 0; i < c->ncpu; i++)
        c->fds[i] = -1;
    if (!(c->skel = pp_sample_bpf__open_and_load())) {
        rc = -errno;
        pp_collect_close(c);
        return fail(why, len, rc ? rc : -EPERM, "loading the BPF program");
    }
    if (!(c->ring = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_record, c, NULL))) {
        rc = -errno;
        pp_collect_close(c);
        return fail(why, len, rc, "the BPF ring buffer");
    }
    if (pp_sample_bpf__attach(c->skel) != 0) {      /* the tracepoints */
        rc = -errno;
        pp_collect_close(c);
        return fail(why, len, rc ? rc : -EPERM, "attaching the BPF program to the "
                    "scheduler's fork, exec and exit tracepoints");
    }
    if ((rc = open_events(c, freq, why, len)) < 0) {
        pp_collect_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

int pp_collect_add(pp_collector *c, pid_t pid, const pp_py_offsets *o, uint64_t runtime)
{
    struct pp_bpf_target t = {
        .runtime = runtime,
        .off = {
            .runtime_interpreters_head = o->runtime_interpreters_head,
            .interp_threads_head = o->interp_threads_head,
            .tstate_next = o->tstate_next,
            .tstate_thread_id = o->tstate_thread_id,
            .tstate_frame = o->tstate_frame,
            .tstate_cframe = o->tstate_cframe,
            .cframe_current_frame = o->cframe_current_frame,
            .frame_is_object = o->frame_is_object,
            .frame_previous = o->frame_previous,
            .frame_code = o->frame_code,
            .frame_code_tag_mask = o->frame_code_tag_mask,
            .frame_instr = o->frame_instr,
            .frame_owner = o->frame_owner,
            .frame_owner_shim_min = o->frame_owner_shim_min,
            .frame_is_entry = o->frame_is_entry,
            .code_name = o->code_qualname >= 0 ? o->code_qualname : o->code_name,
            .code_filename = o->code_filename,
            .code_linetable = o->code_linetable,
            .code_firstlineno = o->code_firstlineno,
            .str_hash = o->str_hash,
            .str_length = o->str_length,
            .str_ascii_data = o->str_ascii_data,
        },
    };
    __u32 key = (__u32)pid;

    if (bpf_map__update_elem(c->skel->maps.targets, &key, sizeof(key), &t, sizeof(t), BPF_ANY))
        return -errno;
    return 0;
}

void pp_collect_remove(pp_collector *c, pid_t pid)
{
    __u32 key = (__u32)pid;

    bpf_map__delete_elem(c->skel->maps.targets, &key, sizeof(key), 0);
}

int pp_collect_poll(pp_collector *c, int timeout_ms, pp_collect_fn fn,
                    pp_collect_event_fn event_fn, void *ctx)
{
    int n;

    c->fn = fn;
    c->event_fn = event_fn;
    c->ctx = ctx;
    n = ring_buffer__poll(c->ring, timeout_ms);
    return n < 0 && n != -EINTR ? n : n < 0 ? 0 : n;
}

uint64_t pp_collect_lost(const pp_collector *c)
{
    __u32 zero = 0;
    int ncpu = c->ncpu;
    __u64 *per = calloc((size_t)ncpu, sizeof(*per));
    uint64_t sum = 0;

    if (per && !bpf_map__lookup_elem(c->skel->maps.lost, &zero, sizeof(zero), per,
                                     (size_t)ncpu * sizeof(*per), 0))
        for (int i = 0; i < ncpu; i++)
            sum += per[i];
    free(per);
    return sum;
}

void pp_collect_close(pp_collector *c)
{
    if (!c)
        return;
    for (int i = 0; c->links && i < c->ncpu; i++)
        if (c->links[i])
            bpf_link__destroy(c->links[i]);
    for (int i = 0; c->fds && i < c->ncpu; i++)
        if (c->fds[i] >= 0)
            close(c->fds[i]);
    ring_buffer__free(c->ring);
    pp_sample_bpf__destroy(c->skel);
    free(c->links);
    free(c->fds);
    free(c);
}
