/*
 * -a, the whole host: one cpu-clock event per CPU, every process that runs
 * a CPython now (found in /proc: host.c) or execs one later (the BPF
 * program tells each exec) sampled, until Ctrl-C, SIGTERM or the duration;
 * with --every one profile per interval. What is kept of processes that
 * came and went is bounded.
 */
#include "record.h"
#include "host.h"
#include "output/output.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void drop_proc(state *st, size_t i)
{
    pp_unwind_forget(st->u, (int)st->procs[i].pid);
    if (st->procs[i].coded)
        pp_pycode_forget(st->codes, st->procs[i].pid);
    st->procs[i] = st->procs[--st->nprocs];
}

/* A process running when the recording began: kept if it runs a CPython. */
static void found(pid_t pid, void *ctx)
{
    state *st = ctx;
    size_t known = st->nprocs;
    proc *p = pp__targets_of(st, pid);

    if (!p || st->nprocs == known)
        return;                         /* told of already (it exec'd meanwhile) */
    pp__targets_host_decide(st, p, 0);
    if (!p->python)
        drop_proc(st, st->nprocs - 1);
}

/* What is known of processes that run no CPython (they get no exit event:
 * they are no targets), once they are gone. */
static void sweep(state *st)
{
    for (size_t i = st->nprocs; i-- > 0;)
        if (!st->procs[i].python && kill(st->procs[i].pid, 0) != 0 && errno == ESRCH)
            drop_proc(st, i);
    st->last_sweep = pp__now_s();
}

/* Processes whose native unwinding state is kept (1-3 MB each): a host
 * runs hundreds; those sampled again after others went make it anew. */
#define HOST_UNWOUND 64

/* Until Ctrl-C, SIGTERM or the duration: the processes that run a CPython
 * now, and those that exec one later (the BPF program tells each exec). */
int pp__host_run(state *st, unsigned flags, double duration)
{
    double end = duration > 0 ? pp__now_s() + duration : 0;
    int rc;
    size_t n = 0;

    st->stop_ns = duration > 0 ? st->start_ns + (uint64_t)(duration * 1e9) : 0;
    st->attached = 1;
    pp_unwind_limit(st->u, HOST_UNWOUND);
    if ((rc = pp_collect_host(st->c, flags)) != 0) {
        fprintf(stderr, "perfpy: cannot open a cpu-clock event on each CPU: %s\n",
                strerror(-rc));
        return PP_EXIT_FAIL;
    }
    signal(SIGINT, pp__on_interrupt);
    signal(SIGTERM, pp__on_interrupt);
    pp_host_each(found, st);
    for (size_t i = 0; i < st->nprocs; i++)
        n += st->procs[i].python != 0;
    fprintf(stderr, "perfpy: recording every CPython process of the host (%zu running now, "
            "and those that start) in sample mode (%ld Hz per CPU, BPF; nothing installed "
            "in them); Ctrl-C stops\n", n, st->rate);
    while (!pp__interrupted && (!end || pp__now_s() < end)) {
        pp__ring_take(st, 50);
        pp__targets_find_all(st);
        /* an interval ends by the clock too, once its samples are read */
        if (st->every && pp__mono_ns() >= st->next_ns + 50000000ull &&
            (!st->stop_ns || st->next_ns < st->stop_ns))
            pp__interval_rotate(st, pp__mono_ns());
        if (pp__now_s() - st->last_sweep >= 1)
            sweep(st);
        /* what the processes that came and went left free in the heap
         * (their unwinders' ELF data, their code objects' names) given
         * back each minute: without it the heap stays at its highest,
         * and a host's busiest minute sets the memory for the rest of
         * the run */
        if (pp__now_s() - st->last_trim >= 60) {
            malloc_trim(0);
            st->last_trim = pp__now_s();
        }
    }
    st->stopped = 1;
    return 0;
}

/* The ring's size for a host: half a second of samples of every CPU (its
 * samples come without a wake-up and are read every 50 ms), at least 8 MB;
 * a power of two. At the agents' rate a 2-CPU host makes 38 samples a
 * second, 87 KB each: 32 MB (one program's, for 999 Hz) would only add to
 * our memory. */
static const char *host_ring(long rate)
{
    static char buf[32];
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    uint64_t want = (uint64_t)(cpus > 0 ? cpus : 1) * (uint64_t)(rate > 0 ? rate : 1) *
                    sizeof(struct pp_bpf_sample) / 2, bytes = 8u << 20;

    while (bytes < want && bytes < PP_BPF_RING_BYTES)
        bytes <<= 1;
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)bytes);
    return buf;
}

/* -a's options: --every's directory opened, the collector's flags. */
int pp__host_args(state *st, const pp_request *rq, unsigned *flags)
{
    pp_every_opts eo = {.dir = rq->output, .format = pp_format_find(rq->format),
                        .keep_files = rq->keep_files, .keep_bytes = rq->keep_bytes,
                        .threads = rq->threads};
    pp_error e;

    st->host = 1;
    st->host_all = rq->all_processes;
    setenv("PERFPY_SAMPLE_RING_BYTES", host_ring(rq->rate), 0);
    *flags = PP_BPF_HOST_EXEC | (st->host_all ? PP_BPF_HOST_ALL : 0);
    if (rq->every > 0) {
        if (!eo.format || pp_every_open(&st->every, &eo, &e) != 0) {
            fprintf(stderr, "perfpy: %s\n", eo.format ? e.message : "unknown format");
            return PP_EXIT_FAIL;
        }
        st->every_ns = (uint64_t)(rq->every * 1e9);
    }
    return 0;
}
