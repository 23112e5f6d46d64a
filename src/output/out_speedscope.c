/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 *
 *   {"$schema": "...", "shared": {"frames": [{"name","file","line"}, ...]},
 *    "profiles": [{"type": "sampled", "unit": "none", "startValue": 0,
 *                  "endValue": <samples>, "samples": [[root..leaf frame
 *                  indexes], ...], "weights": [count, ...]}]}
 *
 * One sampled profile; each distinct stack is one "sample" whose weight is
 * its sample count (speedscope sums weights, so this is exact and small).
 * Python frames carry their file and def line; native frames their DSO.
 */
#include "output.h"

#include <errno.h>
#include <stdlib.h>

int pp_write_speedscope(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    uint32_t *order = pp_profile_stack_order(p);

    if (!order)
        return -ENOMEM;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"exporter\":\"perfpy\",\"name\":\"", out);
    pp__json_text(out, pp__title(p, o));
    fputs("\",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[\n", out);
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
    fputs("]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":\"", out);
    pp__json_text(out, pp__title(p, o));
    fprintf(out, "\",\"unit\":\"none\",\"startValue\":0,\"endValue\":%llu,\n\"samples\":[\n",
            (unsigned long long)pp_profile_value_total(p));
    for (uint32_t i = 0; i < p->nstacks; i++) {
        const pp_stack *s = &p->stacks[order[i]];
        const uint32_t *ids = pp_stack_ids(p, s);
        fputs(i ? ",\n[" : "[", out);
        for (uint32_t d = 0; d < s->depth; d++)
            fprintf(out, d ? ",%u" : "%u", ids[d]);
        fputc(']', out);
    }
    fputs("],\n\"weights\":[", out);
    for (uint32_t i = 0; i < p->nstacks; i++)
        fprintf(out, i ? ",%llu" : "%llu",
                (unsigned long long)pp_stack_value(p, &p->stacks[order[i]]));
    fputs("]}]}\n", out);
    free(order);
    return pp__stream_status(out);
}
