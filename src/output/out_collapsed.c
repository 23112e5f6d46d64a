/*
 * Collapsed stacks, the input of flamegraph.pl, inferno and speedscope's
 * importer: one line per distinct stack, root first, frames joined by ';',
 * a space and the stack's number (samples; for wall time, periods):
 *
 *     <module> (/app/x.py:1);main (/app/x.py:5);foo (/app/x.py:1) 812
 *
 * A ';' inside a name would split a frame, so it is written as ':'; names
 * hold no newline (perf's text is line-based). Lines are sorted by stack,
 * so the same profile gives the same file.
 */
#include "output.h"

#include <errno.h>
#include <stdlib.h>

static void put_label(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == ';' ? ':' : *s, out);
}

int pp_write_collapsed(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    uint32_t *order = pp_profile_stack_order(p);

    (void)o;
    if (!order)
        return -ENOMEM;
    for (uint32_t i = 0; i < p->nstacks && !ferror(out); i++) {
        const pp_stack *s = &p->stacks[order[i]];
        const uint32_t *ids = pp_stack_ids(p, s);
        uint64_t v = pp_stack_value(p, s);

        if (!v)
            continue;
        for (uint32_t d = 0; d < s->depth; d++) {
            if (d)
                fputc(';', out);
            put_label(out, p->frames[ids[d]].label);
        }
        fprintf(out, " %llu\n", (unsigned long long)v);
    }
    free(order);
    return pp__stream_status(out);
}
