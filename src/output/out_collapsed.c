/*
 * Collapsed stacks, the input of flamegraph.pl, inferno and speedscope's
 * importer: one line per distinct stack, root first, frames joined by ';',
 * a space and the stack's number (samples; for wall time, periods):
 *
 *     <module> (/app/x.py:1);main (/app/x.py:5);foo (/app/x.py:1) 812
 *
 * A Python frame's file is relative to its sys.path entry, as py-spy
 * writes it ("handle (flask/app.py:12)": paths.c), which makes a big
 * profile's file a fraction of the size and lets two checkouts compare
 * (perfpy diff reads it back). A ';' inside a name would split a frame, so
 * it is written as ':', and a control character (a newline would split the
 * line: a name read from a process's memory may hold anything) as ' '.
 * Lines are sorted by stack, so the same profile gives the same file.
 */
#include "output.h"

#include <errno.h>
#include <stdlib.h>

static void put_label(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == ';' ? ':' : (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, out);
}

int pp_write_collapsed(const pp_profile *p, FILE *out, const pp_write_opts *o)
{
    uint32_t *order = pp_profile_stack_order(p);
    pp_labels l;

    (void)o;
    if (!order || pp_labels_make(p, &l) < 0) {
        free(order);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < p->nstacks && !ferror(out); i++) {
        const pp_stack *s = &p->stacks[order[i]];
        const uint32_t *ids = pp_stack_ids(p, s);
        uint64_t v = pp_stack_value(p, s);

        if (!v)
            continue;
        for (uint32_t d = 0; d < s->depth; d++) {
            if (d)
                fputc(';', out);
            put_label(out, l.label[ids[d]]);
        }
        fprintf(out, " %llu\n", (unsigned long long)v);
    }
    free(order);
    pp_labels_free(&l);
    return pp__stream_status(out);
}
