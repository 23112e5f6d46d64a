/*
 * A thread's samples as a timeline: what the time-order views (speedscope's
 * per-thread profiles, the Firefox Profiler's tracks) draw. The log gives,
 * per sample, the span it covers, [t - weight, t]; on a thread those spans
 * follow each other with gaps where it was not sampled (waiting, or another
 * thread held the GIL), and with a few microseconds of timer jitter between
 * samples of a busy thread. The timeline turns them into runs:
 *
 *   samples   |foo|foo|foo|   |bar|bar|      gap     |foo|
 *   spans     |foo·········|gap|bar·····|    gap     |foo|
 *
 * A run is one stack for as long as consecutive samples have it (or, not
 * merged, one sample: what a viewer that centres samples needs); a gap
 * (stack PP_NONE) is time between samples longer than a fiftieth of the
 * next sample's weight; shorter jitter is given to the run before it, so
 * that every run starts where it really did. A sample whose span overlaps
 * the one before (timer jitter; in a wall-clock profile, the first CPU tick
 * after a wait counts CPU time from before it) starts where the one before
 * ends and still ends at its own time: pushing it whole would shift every
 * later run, and a thread's track would end past the recording's end. A run's value is the sum of its
 * samples' values (pp_rec_value: 1 each for CPU time).
 */
#include "profile.h"

#include <string.h>

#define JITTER_PARTS 50

void pp_timeline_start(pp_timeline *tl, const pp_profile *p, const pp_thread_order *o,
                       uint32_t thread, int merge)
{
    const pp_thread *t = &p->threads[thread];

    memset(tl, 0, sizeof(*tl));
    tl->p = p;
    tl->recs = o->recs;
    tl->n = o->thread == thread ? o->n : 0;
    tl->run.stack = PP_NONE;
    tl->merge = merge;
    /* without time weights (cycles), a sample covers the thread's mean spacing */
    if (!pp_profile_time_weights(p) && t->samples > 1)
        tl->spacing = (t->last_ns - t->first_ns) / (t->samples - 1);
}

uint64_t pp_rec_value(const pp_profile *p, const pp_logged *r)
{
    if (p->value != PP_VALUE_WALL || !p->period_ns)
        return 1;
    return (r->weight + p->period_ns / 2) / p->period_ns;
}

/* The next record as a span: its stack, start and duration. */
static void next_rec(pp_timeline *tl, pp_span *s)
{
    pp_logged r = pp_profile_rec(tl->p, tl->recs[tl->i++]);
    uint64_t dur = tl->spacing ? tl->spacing : r.weight;

    s->stack = r.stack;
    s->dur_ns = dur;
    s->start_ns = r.time_ns > dur ? r.time_ns - dur : 0;
    s->value = pp_rec_value(tl->p, &r);
}

int pp_timeline_next(pp_timeline *tl, pp_span *out)
{
    pp_span s;

    for (;;) {
        if (tl->gap.dur_ns) {               /* a gap found before the pending sample */
            *out = tl->gap;
            tl->gap.dur_ns = 0;
            return 1;
        }
        if (tl->i >= tl->n) {
            if (tl->run.stack == PP_NONE)
                return 0;
            *out = tl->run;
            tl->run.stack = PP_NONE;
            return 1;
        }
        next_rec(tl, &s);
        if (tl->run.stack == PP_NONE && !tl->started) {
            tl->run = s;
            tl->started = 1;
            continue;
        }
        {
            uint64_t end = tl->run.start_ns + tl->run.dur_ns;
            int gap = s.start_ns > end && s.start_ns - end > s.dur_ns / JITTER_PARTS;

            if (s.start_ns < end) {         /* overlapping: it starts at the end */
                uint64_t own_end = s.start_ns + s.dur_ns;

                s.start_ns = end;           /* and ends when it did: no drift */
                s.dur_ns = own_end > end ? own_end - end : 0;
            }
            else if (!gap)                  /* jitter: the run before takes it */
                tl->run.dur_ns += s.start_ns - end;
            if (!gap && s.stack == tl->run.stack && tl->merge) {
                tl->run.dur_ns += s.dur_ns;
                tl->run.value += s.value;
                continue;
            }
            *out = tl->run;
            if (gap)
                tl->gap = (pp_span){end, s.start_ns - end, PP_NONE, 0};
            tl->run = s;
            return 1;
        }
    }
}
