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

/* ---- per function -------------------------------------------------------- */

static int cmp_first_frame(const void *a, const void *b)
{
    const pp_func *x = a, *y = b;

    return (x->frame > y->frame) - (x->frame < y->frame);
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
    const pp_profile *p = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const pp_frame *x = &p->frames[i], *y = &p->frames[j];
    int c = (x->kind > y->kind) - (x->kind < y->kind);

    if (!c)
        c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(x->file, y->file);
    return c ? c : (i > j) - (i < j);
}

/* of[frame] = its function: frames sorted by (kind, name, file), equal
 * neighbours one function unless by_line. The number of functions. */
static uint32_t group_frames(const pp_profile *p, int by_line, uint32_t *of, uint32_t *first)
{
    uint32_t *idx = malloc((p->nframes ? p->nframes : 1) * sizeof(*idx)), n = 0;

    if (!idx)
        return UINT32_MAX;
    for (uint32_t i = 0; i < p->nframes; i++)
        idx[i] = i;
    qsort_r(idx, p->nframes, sizeof(*idx), cmp_name, (void *)p);
    for (uint32_t k = 0; k < p->nframes; k++) {
        const pp_frame *f = &p->frames[idx[k]];
        const pp_frame *last = n ? &p->frames[first[n - 1]] : NULL;
        if (!last || by_line || last->kind != f->kind || strcmp(last->name, f->name) ||
            strcmp(last->file, f->file))
            first[n++] = idx[k];
        of[idx[k]] = n - 1;
    }
    free(idx);
    return n;
}

int pp_profile_functions(const pp_profile *p, int by_line, pp_func **out, uint32_t *nout)
{
    size_t nf = p->nframes ? p->nframes : 1;
    uint32_t *of = malloc(nf * sizeof(*of)), *first = malloc(nf * sizeof(*first));
    uint32_t *seen = calloc(nf, sizeof(*seen)), n, k = 0;
    pp_func *v = NULL;
    int rc = -ENOMEM;

    if (!of || !first || !seen || (n = group_frames(p, by_line, of, first)) == UINT32_MAX ||
        !(v = calloc(n ? n : 1, sizeof(*v))))
        goto out;
    for (uint32_t s = 0; s < p->nstacks; s++) {
        const pp_stack *st = &p->stacks[s];
        const uint32_t *ids = pp_stack_ids(p, st);
        uint64_t val = pp_stack_value(p, st);
        uint32_t inner = PP_NONE;

        if (!st->depth)
            continue;
        v[of[ids[st->depth - 1]]].self += val;
        for (uint32_t d = 0; d < st->depth; d++) {
            uint32_t g = of[ids[d]];
            if (p->frames[ids[d]].kind == PP_FRAME_PYTHON)
                inner = g;
            if (seen[g] != s + 1) {          /* once per stack under recursion */
                seen[g] = s + 1;
                v[g].total += val;
            }
        }
        if (inner != PP_NONE) {
            v[inner].own += val;
            if (st->wait)
                v[inner].own_waiting += val;
        }
    }
    for (uint32_t g = 0; g < n; g++)          /* those with samples, in frame order */
        if (v[g].total) {
            v[g].frame = first[g];
            v[k++] = v[g];
        }
    qsort(v, k, sizeof(*v), cmp_first_frame);
    *out = v;
    *nout = k;
    v = NULL;
    rc = 0;
out:
    free(v);
    free(of);
    free(first);
    free(seen);
    return rc;
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
