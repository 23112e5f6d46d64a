/*
 * Helpers for the report pipeline's unit tests: fold perf script text into
 * a profile and render a profile as collapsed text, in memory.
 */
#ifndef PERFPY_TEST_REPORT_HELPERS_H
#define PERFPY_TEST_REPORT_HELPERS_H

#include "report/fold.h"
#include "output/output.h"
#include "report/perf_script.h"
#include "profile/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tests/data/perf_script/<name> (the tests run from the repository root). */
#define PS_DATA(name) "tests/data/perf_script/" name

static inline void fold_text(pp_profile *p, const char *text, const pp_fold_opts *o,
                             pp_script_stats *st)
{
    pp_folder *f;
    if (pp_profile_init(p) != 0 || pp_fold_open(&f, p, o) != 0) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    if (pp_script_parse_buffer(text, strlen(text), pp_fold_sample, f, st) != 0) {
        fprintf(stderr, "parse failed\n");
        exit(1);
    }
    pp_fold_close(f);
}

/* The profile as collapsed lines (malloc'ed), each frame by its own label:
 * the full paths the folder made (the collapsed writer shows them relative
 * to their sys.path entry, paths.c), in the writer's order and format. */
static inline char *collapsed_of(const pp_profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    uint32_t *order = pp_profile_stack_order(p);

    if (!m || !order) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < p->nstacks; i++) {
        const pp_stack *s = &p->stacks[order[i]];
        uint64_t v = pp_stack_value(p, s);
        if (!v)
            continue;
        for (uint32_t d = 0; d < s->depth; d++) {
            const char *l = p->frames[pp_stack_ids(p, s)[d]].label;
            if (d)
                fputc(';', m);
            for (; *l; l++)
                fputc(*l == ';' ? ':' : *l, m);
        }
        fprintf(m, " %llu\n", (unsigned long long)v);
    }
    free(order);
    fclose(m);
    return buf;
}

/* Folds text and returns its collapsed form (the profile freed). */
static inline char *fold_to_collapsed(const char *text, const pp_fold_opts *o)
{
    pp_profile p;
    char *out;
    fold_text(&p, text, o, NULL);
    out = collapsed_of(&p);
    pp_profile_free(&p);
    return out;
}

#endif
