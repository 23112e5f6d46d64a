/*
 * The profile samples are folded into: one for the whole recording, or one
 * per interval, --every's (each written by every.c as the next begins) and
 * perfpy top's (each shown by top_view.c, then dropped). A profile is
 * sealed before it goes: its folder closed, its span in Unix time, its
 * labels.
 */
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The profile of [start_ns, end_ns) (sample clock) made ready to write:
 * the folder closed, its span in Unix time, its labels. */
void pp__interval_seal(state *st, pp_profile *prof, uint64_t start_ns, uint64_t end_ns)
{
    pp_fold_close(st->fold);
    st->fold = NULL;
    prof->time_unix_ns = (uint64_t)((int64_t)start_ns + st->unix_offset_ns);
    prof->duration_ns = end_ns > start_ns ? end_ns - start_ns : 0;
    prof->labelled = st->host || st->rq->nlabels;
    for (int i = 0; i < st->rq->nlabels; i++) {
        const char *label = st->rq->labels[i], *eq = strchr(label, '=');
        char key[80];

        if (eq && (size_t)(eq - label) < sizeof(key)) {
            snprintf(key, sizeof(key), "%.*s", (int)(eq - label), label);
            pp_profile_label(prof, key, eq + 1);
        }
    }
}

/* A new profile and folder for samples from now on; 0 or -ENOMEM. */
int pp__interval_begin(state *st)
{
    if (!(st->prof = calloc(1, sizeof(*st->prof))) || pp_profile_init(st->prof) != 0 ||
        pp_fold_open(&st->fold, st->prof, &st->fo) != 0)
        return -ENOMEM;
    st->prof->period_ns = st->event ? 0 : st->period_ns;   /* a period of time, or unknown */
    if (st->event) {                /* what the samples count, before the first */
        st->prof->value = PP_VALUE_EVENTS;
        snprintf(st->prof->event, sizeof(st->prof->event), "%s", st->event->name);
    }
    st->prof->exec_lines = 1;       /* its Python frames' lines: the executing ones */
    if (st->wall)
        st->prof->value = PP_VALUE_WALL;   /* samples weigh the time they stand for */
    st->gen++;                      /* every process is told to it again */
    return 0;
}

/* --every: the interval ended (a sample at t, or the clock, is past it):
 * its profile goes to be written, the interval t falls in begins (those
 * between, without a sample, make no file). */
void pp__interval_rotate(state *st, uint64_t t)
{
    pp_profile *done = st->prof;

    pp__interval_seal(st, done, st->start_ns, st->next_ns);
    st->prof = NULL;
    pp_every_put(st->every, done);
    while (t >= st->next_ns) {
        st->start_ns = st->next_ns;
        st->next_ns += st->every_ns;
    }
    if (pp__interval_begin(st) != 0) {
        fprintf(stderr, "perfpy: out of memory for the next interval\n");
        exit(PP_EXIT_FAIL);
    }
}

/* --every's end: the last interval written, what became of them said. */
int pp__interval_finish_every(state *st, const char *dir)
{
    pp_every_stats es;
    uint64_t end = st->t0_ns + (uint64_t)(st->seconds * 1e9);

    pp__interval_seal(st, st->prof, st->start_ns, end > st->next_ns ? st->next_ns : end);
    pp_every_put(st->every, st->prof);
    st->prof = NULL;
    es = pp_every_close(st->every);
    st->every = NULL;
    fprintf(stderr, "perfpy: recorded for %.1f s: %llu samples taken, %llu profiles of %llu "
            "samples written to %s", st->seconds, (unsigned long long)st->taken,
            (unsigned long long)es.written, (unsigned long long)es.samples, dir);
    if (es.removed)
        fprintf(stderr, ", %llu older ones removed (--keep)", (unsigned long long)es.removed);
    fprintf(stderr, "; perfpy's CPU %.2f s (%.2f%% of one core)\n", pp__cpu_seconds(),
            st->seconds > 0 ? 100 * pp__cpu_seconds() / st->seconds : 0);
    if (es.dropped)
        fprintf(stderr, "perfpy: %llu intervals (%llu samples) could not be written and "
                "were dropped\n", (unsigned long long)es.dropped,
                (unsigned long long)es.dropped_samples);
    return es.dropped || !es.written ? PP_EXIT_FAIL : 0;
}

/* perfpy top: the view opened once the program is followed (what went
 * wrong before is said on the normal screen), and its keys read: what
 * pp_top_keys says. */
int pp__interval_top_keys(state *st)
{
    if (!st->top && pp_top_open(&st->top, st->top_title, st->top_how, st->top_rows) != 0) {
        fprintf(stderr, "perfpy: out of memory\n");
        exit(PP_EXIT_FAIL);
    }
    return pp_top_keys(st->top);
}

/* perfpy top: the interval over at now shown, the next begun. */
void pp__interval_top_show(state *st, uint64_t now)
{
    uint64_t lost;
    pp_top_counts c = {0, 0, 0, 0};

    pp__interval_seal(st, st->prof, st->start_ns, now);
    lost = pp_collect_lost(st->c);
    c.seconds = (double)(now - st->start_ns) / 1e9;
    c.lost = lost - st->top_lost;
    st->top_lost = lost;
    for (size_t i = 0; i < st->nprocs; i++) {
        unsigned n = pp_top_threads_of(st->procs[i].pid);

        c.threads += n;
        c.processes += n > 0;
    }
    pp_top_show(st->top, st->prof, &c);
    pp_profile_free(st->prof);
    free(st->prof);
    st->prof = NULL;
    st->start_ns = now;
    while (st->next_ns <= now)      /* on the grid: a late wake-up does not drift */
        st->next_ns += st->every_ns;
    if (pp__interval_begin(st) != 0) {
        pp_top_close(st->top);
        fprintf(stderr, "perfpy: out of memory for the next interval\n");
        exit(PP_EXIT_FAIL);
    }
}

/* The terminal as it was, before anything more is said on it. */
void pp__interval_top_end(state *st)
{
    pp_top_close(st->top);
    st->top = NULL;
}
