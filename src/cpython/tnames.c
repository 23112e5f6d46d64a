/*
 * threading's names of a process's threads over time (tnames.h).
 */
#include "tnames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int has(const pp_tname *names, size_t n, const pp_tname *t)
{
    for (size_t i = 0; i < n; i++)
        if (names[i].ident == t->ident && strcmp(names[i].name, t->name) == 0)
            return 1;
    return 0;
}

int pp_tnames_keep_gone(pp_tnames_gone *g, const pp_tname *old, size_t nold,
                        const pp_tname *cur, size_t ncur, uint64_t seen_ns)
{
    for (size_t i = 0; i < nold; i++) {
        if (has(cur, ncur, &old[i]))
            continue;
        if (!g->ring && !(g->ring = calloc(PP_TNAMES_GONE, sizeof(*g->ring))))
            return -ENOMEM;
        g->ring[g->next] = old[i];
        g->ring[g->next].seen_ns = seen_ns;
        g->next = (g->next + 1) % PP_TNAMES_GONE;
        if (g->n < PP_TNAMES_GONE)
            g->n++;
    }
    return 0;
}

const char *pp_tnames_gone_name(const pp_tnames_gone *g, uint64_t ident, uint64_t born_ns,
                                uint64_t time_ns)
{
    const pp_tname *after = NULL, *before = NULL;

    for (size_t i = 0; i < g->n; i++) {
        const pp_tname *t = &g->ring[i];

        if (t->ident != ident || t->seen_ns < born_ns)
            continue;               /* another thread's, or not ours yet */
        if (t->seen_ns >= time_ns) {
            if (!after || t->seen_ns < after->seen_ns)
                after = t;
        } else if (!before || t->seen_ns > before->seen_ns) {
            before = t;
        }
    }
    /* a read between its start and the stack saw this very thread (alive
     * all along); one after the stack may have seen the next owner of
     * the ident, if the thread ended in between: the nearest is the best
     * guess then */
    return before ? before->name : after ? after->name : NULL;
}

void pp_tnames_gone_free(pp_tnames_gone *g)
{
    free(g->ring);
    g->ring = NULL;
    g->n = g->next = 0;
}
