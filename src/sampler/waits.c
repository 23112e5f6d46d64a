/*
 * Wall-clock mode in the recorder: the end of a stretch whose stack was
 * captured as it began (folded then: records.c), and the counts of what
 * the scheduler's events saw and what was lost, said at the end and added
 * to the profile's lost events.
 */
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

/* The end of a stretch whose stack was captured as it began. The tests'
 * fault PERFPY_TEST_WALL_DROP_ENDS=N drops the first end and one in N
 * after it as if they never came: their captures stay open and are
 * counted lost. On a kernel with sched_exit_tp those captures are only the
 * stacks of threads already blocked at an attach, whose ends always come:
 * without the fault the count would be 0 in every test, and a total that
 * left it out would go unseen. */
void pp__waits_end(state *st, const struct pp_bpf_wall_end *e)
{
    static long drop_every = -1;
    static unsigned long ends;
    struct pp_bpf_sample *s;

    if (drop_every < 0) {
        const char *env = getenv("PERFPY_TEST_WALL_DROP_ENDS");

        drop_every = env ? strtol(env, NULL, 10) : 0;
    }
    if (drop_every > 0 && ends++ % (unsigned long)drop_every == 0)
        return;
    if (!(s = pp_wall_open_take(st->open, e->pid, e->tid)))
        return;        /* its capture did not fit in the ring (counted there), or
                          it held no GIL and --gil left it out */
    pp__records_fold(st, s, e->block_ns, e->runq_ns);
    pp_wall_open_done(st->open, s);
}

/* Wall-clock mode and -e: perfpy-sample's own thread at nice READER_NICE,
 * once the program is forked (it keeps its own). Wall-clock records come
 * without a wake-up and fill the ring at the rate of every CPU's samples
 * and every thread's captures; a program whose threads keep every CPU busy
 * left it, at nice 0, one share among theirs: 32 threads that hash and
 * sleep on 2 CPUs made ~2,300 records a second, 13% of a CPU to read, and
 * lost up to 1,466 of them to a full ring (at -10: none). An event comes
 * in bursts (160 MB touched at once: 4,096 samples of 10 faults in tens of
 * milliseconds); under load the reader at nice 0 lost 38% of them. It uses
 * the same CPU time, sooner. Without CAP_SYS_NICE it stays as it is. */
#define READER_NICE (-10)

void pp__waits_read_sooner(const state *st)
{
    if (st->wall || st->event)
        (void)setpriority(PRIO_PROCESS, 0, READER_NICE);   /* this thread */
}

/* Wall-clock mode's counts: the collector's and the open captures'. */
static pp_wall_counts wall_counts(const state *st, pp_collector *c)
{
    pp_wall_counts w = {
        .switches = pp_collect_count(c, PP_BPF_N_SWITCHES),
        .captured = pp_collect_count(c, PP_BPF_N_CAPTURED),
        .missed = pp_collect_count(c, PP_BPF_N_MISSED),
        .missed_ns = pp_collect_missed_ns(c),
        .uncaptured = pp_collect_count(c, PP_BPF_N_UNCAPTURED),
        .uncaptured_ns = pp_collect_count(c, PP_BPF_N_UNCAPTURED_NS),
        .lost_samples = pp_collect_lost(c),
        .lost_captures = pp_collect_count(c, PP_BPF_N_LOST_CAPTURES),
        .lost_ends = pp_collect_count(c, PP_BPF_N_LOST_ENDS),
        .lost_ns = pp_collect_count(c, PP_BPF_N_LOST_CAPTURES_NS) +
                   pp_collect_count(c, PP_BPF_N_LOST_ENDS_NS),
        .recorded_ns = st->folded_ns,
        .lost_threads = pp_collect_count(c, PP_BPF_N_LOST_THREADS),
        .unended = pp_wall_open_unended(st->open),
    };

    return w;
}

/* Wall-clock mode: the scheduler's events seen, and every one lost. */
void pp__waits_notes(const state *st, pp_collector *c)
{
    pp_wall_counts w = wall_counts(st, c);

    pp_wall_notes(stderr, &w, st->verbose);
}

/* Every event the kernel could not hand over: samples, and in wall-clock
 * mode the rest pp_wall_lost_events counts. */
uint64_t pp__waits_lost(const state *st)
{
    pp_wall_counts w;

    if (!st->wall)
        return pp_collect_lost(st->c);
    w = wall_counts(st, st->c);
    return pp_wall_lost_events(&w);
}
