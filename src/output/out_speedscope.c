/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 *
 *   {"$schema": "...", "shared": {"frames": [{"name","file","line"}, ...]},
 *    "profiles": [{"type": "sampled", "name": "worker-1 (tid 4612)",
 *                  "unit": "nanoseconds", "startValue": 2506000,
 *                  "endValue": <startValue + the weights>,
 *                  "samples": [[root..leaf frame indexes], [], ...],
 *                  "weights": [5012530, 41000000, ...]}, ...]}
 *
 * One sampled profile per thread, as py-spy writes them, its samples in
 * time order: each run of one stack on the thread's timeline (timeline.c)
 * is a sample weighing its duration in nanoseconds, and each gap where
 * the thread was not sampled (it waited, or another thread held the GIL) an
 * empty sample weighing the gap. So speedscope's time-order view puts
 * every run where it happened, its start and end to the microsecond, and
 * its left-heavy and sandwich views weigh each stack by its time on the
 * thread (the runs' jitter of a few µs included). startValue is the
 * thread's first sample from the recording's start, so threads line up.
 *
 * A profile whose samples carry no time (one rebuilt from collapsed text)
 * is one profile of its distinct stacks instead, each weighing its
 * pp_stack_value (speedscope sums weights, so this is exact and small).
 * Python frames carry their file and line; native frames their DSO.
 */
#include "output.h"

#include <errno.h>
#include <stdlib.h>

static void frames_json(const pp_profile *p, FILE *out)
{
    fputs("\"shared\":{\"frames\":[\n", out);
    for (uint32_t i = 0; i < p->nframes; i++) {
        const pp_frame *f = &p->frames[i];
        fputs(i ? ",\n{\"name\":\"" : "{\"name\":\"", out);
        pp__json_text(out, f->kind == PP_FRAME_PYTHON ? f->name : f->label);
        fputc('"', out);
        if (*f->file) {
            fputs(",\"file\":\"", out);
            pp__json_text(out, f->file);
            fputc('"', out);
        }
        if (f->line > 0)
            fprintf(out, ",\"line\":%d", f->line);
        fputc('}', out);
    }
    fputs("]},\n", out);
}

static void stack_json(const pp_profile *p, uint32_t si, FILE *out)
{
    const pp_stack *s = &p->stacks[si];
    const uint32_t *ids = pp_stack_ids(p, s);

    fputc('[', out);
    for (uint32_t d = 0; d < s->depth; d++)
        fprintf(out, d ? ",%u" : "%u", ids[d]);
    fputc(']', out);
}

/* The distinct stacks, for a profile without times. */
static int aggregated(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    uint32_t *order = pp_profile_stack_order(p);

    if (!order)
        return -ENOMEM;
    fputs("\"profiles\":[{\"type\":\"sampled\",\"name\":\"", out);
    pp__json_text(out, pp__title(p, o));
    fprintf(out, "\",\"unit\":\"none\",\"startValue\":0,\"endValue\":%llu,\n\"samples\":[\n",
            (unsigned long long)pp_profile_value_total(p));
    for (uint32_t i = 0; i < p->nstacks; i++) {
        fputs(i ? ",\n" : "", out);
        stack_json(p, order[i], out);
    }
    fputs("],\n\"weights\":[", out);
    for (uint32_t i = 0; i < p->nstacks; i++)
        fprintf(out, i ? ",%llu" : "%llu",
                (unsigned long long)pp_stack_value(p, &p->stacks[order[i]]));
    fputs("]}]}\n", out);
    free(order);
    return pp__stream_status(out);
}

/* Thread t's runs and gaps; its weights are written in a second pass over
 * the timeline, so nothing of the size of the log is held. */
static void thread_profile(const pp_profile *p, const pp_thread_order *o, uint32_t t,
                           FILE *out)
{
    pp_timeline tl;
    pp_span s;
    uint64_t start = 0, total = 0;
    char label[400];
    int first = 1;

    pp_timeline_start(&tl, p, o, t, 1);
    while (pp_timeline_next(&tl, &s)) {
        if (first)
            start = s.start_ns - p->time_base_ns;
        first = 0;
        total += s.dur_ns;
    }
    pp__thread_label(p, &p->threads[t], label, sizeof(label));
    fputs("{\"type\":\"sampled\",\"name\":\"", out);
    pp__json_text(out, label);
    fprintf(out, "\",\"unit\":\"nanoseconds\",\"startValue\":%llu,\"endValue\":%llu,\n"
            "\"samples\":[", (unsigned long long)start, (unsigned long long)(start + total));
    first = 1;
    pp_timeline_start(&tl, p, o, t, 1);
    while (pp_timeline_next(&tl, &s)) {
        fputs(first ? "" : ",\n", out);
        first = 0;
        if (s.stack == PP_NONE)
            fputs("[]", out);
        else
            stack_json(p, s.stack, out);
    }
    fputs("],\n\"weights\":[", out);
    first = 1;
    pp_timeline_start(&tl, p, o, t, 1);
    while (pp_timeline_next(&tl, &s)) {
        fprintf(out, first ? "%llu" : ",%llu", (unsigned long long)s.dur_ns);
        first = 0;
    }
    fputs("]}", out);
}

int pp_write_speedscope(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    pp_thread_order order;
    uint32_t shown = 0;

    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"exporter\":\"perfpy\",\"name\":\"", out);
    pp__json_text(out, pp__title(p, o));
    fputs("\",\"activeProfileIndex\":0,\n", out);
    frames_json(p, out);
    if (!p->nlog || !p->time_first_ns)
        return aggregated(p, out, o);
    if (pp_thread_order_build(p, &order) < 0)
        return -ENOMEM;
    fputs("\"profiles\":[\n", out);
    for (uint32_t t = 0; t < p->nthreads; t++) {
        if (!p->threads[t].samples)
            continue;                  /* a thread known only by a marker */
        if (pp_thread_order_load(&order, t) < 0) {
            pp_thread_order_free(&order);
            return -ENOMEM;
        }
        fputs(shown++ ? ",\n" : "", out);
        thread_profile(p, &order, t, out);
    }
    fputs("]}\n", out);
    pp_thread_order_free(&order);
    return pp__stream_status(out);
}
