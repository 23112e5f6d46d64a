/*
 * The views of a profile that writers share: per-function statistics, the
 * stacks in a stable order, and the call tree. Every number is a stack's
 * pp_stack_value (samples for CPU profiles), so no writer branches on the
 * kind of value.
 */
#include "profile.h"
#include "htab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

pp_func_stat *pp_profile_func_stats(const pp_profile *p)
{
    pp_func_stat *st = calloc(p->nframes ? p->nframes : 1, sizeof(*st));
    uint32_t *seen = calloc(p->nframes ? p->nframes : 1, sizeof(*seen));

    if (!st || !seen) {
        free(st);
        free(seen);
        return NULL;
    }
    for (uint32_t si = 0; si < p->nstacks; si++) {
        const pp_stack *s = &p->stacks[si];
        const uint32_t *ids = pp_stack_ids(p, s);
        int own_done = 0;

        uint64_t v = pp_stack_value(p, s);

        if (!s->depth)
            continue;
        st[ids[s->depth - 1]].self += v;
        for (uint32_t i = s->depth; i-- > 0;) {
            uint32_t f = ids[i];
            if (!own_done && p->frames[f].kind == PP_FRAME_PYTHON) {
                st[f].own += v;
                own_done = 1;
            }
            if (seen[f] != si + 1) {      /* once per stack under recursion */
                seen[f] = si + 1;
                st[f].total += v;
            }
        }
    }
    free(seen);
    return st;
}

static const pp_profile *cmp_profile;

static int cmp_stack(const void *a, const void *b)
{
    const pp_stack *x = &cmp_profile->stacks[*(const uint32_t *)a];
    const pp_stack *y = &cmp_profile->stacks[*(const uint32_t *)b];
    const uint32_t *xi = pp_stack_ids(cmp_profile, x), *yi = pp_stack_ids(cmp_profile, y);
    uint32_t n = x->depth < y->depth ? x->depth : y->depth;

    for (uint32_t i = 0; i < n; i++) {
        int c = strcmp(cmp_profile->frames[xi[i]].label, cmp_profile->frames[yi[i]].label);
        if (c)
            return c;
        if (xi[i] != yi[i])
            return xi[i] < yi[i] ? -1 : 1;
    }
    return (x->depth > y->depth) - (x->depth < y->depth);
}

uint32_t *pp_profile_stack_order(const pp_profile *p)
{
    uint32_t *order = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*order));

    if (!order)
        return NULL;
    for (uint32_t i = 0; i < p->nstacks; i++)
        order[i] = i;
    cmp_profile = p;
    qsort(order, p->nstacks, sizeof(*order), cmp_stack);
    return order;
}

/* The tree is built from the stacks in label order (frame id breaks ties
 * between equal labels), so every node's subtree arrives contiguously:
 * last_child[d] is the most recent node made at depth d+1, and it is the
 * node to reuse (or the previous sibling) exactly when its parent is the
 * current node. Children therefore come out sorted by label. */
int pp_tree_build(const pp_profile *p, pp_tree *t)
{
    uint32_t *order = pp_profile_stack_order(p);
    uint32_t *last_child = NULL;
    size_t cap = 0, max = 1;
    int rc = -ENOMEM;

    memset(t, 0, sizeof(*t));
    if (!order)
        return -ENOMEM;
    for (uint32_t i = 0; i < p->nstacks; i++)
        if (p->stacks[i].depth + 1 > max)
            max = p->stacks[i].depth + 1;
    last_child = malloc(max * sizeof(*last_child));
    if (!last_child || pp__grow((void **)&t->nodes, &cap, 1, sizeof(pp_tree_node)) < 0)
        goto out;
    t->nodes[0] = (pp_tree_node){PP_NONE, PP_NONE, PP_NONE, PP_NONE, 0, 0, 0};
    t->n = 1;
    for (size_t d = 0; d < max; d++)
        last_child[d] = PP_NONE;
    for (uint32_t oi = 0; oi < p->nstacks; oi++) {
        const pp_stack *s = &p->stacks[order[oi]];
        const uint32_t *ids = pp_stack_ids(p, s);
        uint32_t node = 0;
        uint64_t v = pp_stack_value(p, s);

        t->nodes[0].total += v;
        for (uint32_t d = 0; d < s->depth; d++) {
            uint32_t lc = last_child[d];
            /* The path below `node` is still valid only while it matches. */
            if (lc != PP_NONE && t->nodes[lc].frame == ids[d] && t->nodes[lc].parent == node) {
                node = lc;
            } else {
                pp_tree_node *n;
                if (pp__grow((void **)&t->nodes, &cap, (size_t)t->n + 1, sizeof(pp_tree_node)) < 0)
                    goto out;
                n = &t->nodes[t->n];
                *n = (pp_tree_node){ids[d], node, PP_NONE, PP_NONE, d + 1, 0, 0};
                if (lc != PP_NONE && t->nodes[lc].parent == node)
                    t->nodes[lc].next_sibling = t->n;
                else
                    t->nodes[node].first_child = t->n;
                node = t->n++;
                last_child[d] = node;
                if (d + 1 > t->max_depth)
                    t->max_depth = d + 1;
            }
            t->nodes[node].total += v;
        }
        t->nodes[node].self += v;
    }
    rc = 0;
out:
    free(order);
    free(last_child);
    if (rc < 0)
        pp_tree_free(t);
    return rc;
}

void pp_tree_free(pp_tree *t)
{
    free(t->nodes);
    memset(t, 0, sizeof(*t));
}
