/*
 * Two profiles compared: what `perfpy diff BASE NEW` draws and lists. Each
 * profile's numbers are shares of its own total (pp_profile_value_total),
 * so a run recorded twice as long, or at another rate, compares as equal,
 * and a change is NEW's share minus BASE's, in percentage points:
 *
 *     BASE  f 20%  g 40%  h 40%          NEW  f 33.3%  g 33.3%  h 33.3%
 *     change: f +13.3 points, g -6.7, h -6.7   (f's work doubled)
 *
 * Functions are matched by kind, name and file (not line: sample mode's
 * frames of a function at several executing lines are one function, and a
 * def line that moved between the runs is the same function); call-tree
 * nodes by the labels of their path from the root. The roots of processes
 * and threads, "python3 (pid 4609)", "worker-1 (tid 4612)", match by name
 * alone: two runs never have the same ids.
 */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A name's length without a root's " (pid N)" or " (tid N)". */
static size_t key_len(const pp_frame *f, const char *name)
{
    size_t n = strlen(name), k;

    if (f->kind != PP_FRAME_MARKER || n < 9 || name[n - 1] != ')')
        return n;
    for (k = n - 1; k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9'; k--)
        ;
    if (k >= 7 && k < n - 1 && (memcmp(name + k - 6, " (pid ", 6) == 0 ||
                                memcmp(name + k - 6, " (tid ", 6) == 0))
        return k - 6;
    return n;
}

/* Native and kernel code are one kind here: a collapsed file does not
 * tell them apart (nor name a native function's library). */
static int kind_class(const pp_frame *f)
{
    return f->kind == PP_FRAME_KERNEL ? PP_FRAME_NATIVE : (int)f->kind;
}

/* Frames f and g name the same thing in two profiles: 0, else their order.
 * A Python function is its name and file; any other frame its name. */
static int cmp_frames(const pp_frame *f, const pp_frame *g, int by_label)
{
    const char *a = by_label ? f->label : f->name, *b = by_label ? g->label : g->name;
    size_t na = key_len(f, a), nb = key_len(g, b);
    int c = (kind_class(f) > kind_class(g)) - (kind_class(f) < kind_class(g));

    if (!c)
        c = memcmp(a, b, na < nb ? na : nb);
    if (!c)
        c = (na > nb) - (na < nb);
    return c || by_label || f->kind != PP_FRAME_PYTHON ? c : strcmp(f->file, g->file);
}

typedef struct keyed {
    const pp_profile *p;
    pp_func f;
} keyed;

static int cmp_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;

    return cmp_frames(&x->p->frames[x->f.frame], &y->p->frames[y->f.frame], 0);
}

/* A profile's own share of a function: its own time for a Python
 * function, its self time for the others (the leaf's). */
static uint64_t own_of(const pp_profile *p, const pp_func *f)
{
    return p->frames[f->frame].kind == PP_FRAME_PYTHON ? f->own : f->self;
}

static keyed *sorted_functions(const pp_profile *p, uint32_t *n)
{
    pp_func *v;
    keyed *k;

    if (pp_profile_functions(p, 0, &v, n) < 0)
        return NULL;
    if ((k = malloc((*n ? *n : 1) * sizeof(*k)))) {
        for (uint32_t i = 0; i < *n; i++)
            k[i] = (keyed){p, v[i]};
        qsort(k, *n, sizeof(*k), cmp_key);
    }
    free(v);
    return k;
}

static double pct(uint64_t v, uint64_t all)
{
    return all ? 100.0 * (double)v / (double)all : 0.0;
}

int pp_diff_functions(const pp_profile *base, const pp_profile *nw, pp_diff_func **out,
                      uint32_t *nout)
{
    uint32_t nb = 0, nn = 0, i = 0, j = 0, k = 0;
    keyed *b = sorted_functions(base, &nb), *n = sorted_functions(nw, &nn);
    uint64_t tb = pp_profile_value_total(base), tn = pp_profile_value_total(nw);
    pp_diff_func *v = malloc(((size_t)nb + nn + 1) * sizeof(*v));

    if (!b || !n || !v) {
        free(b);
        free(n);
        free(v);
        return -ENOMEM;
    }
    while (i < nb || j < nn) {         /* a merge of the two sorted lists */
        int c = i == nb ? 1 : j == nn ? -1 : cmp_key(&b[i], &n[j]);
        pp_diff_func *d = &v[k++];
        memset(d, 0, sizeof(*d));
        if (c <= 0) {
            d->p = base;
            d->frame = b[i].f.frame;
            d->base_own = pct(own_of(base, &b[i].f), tb);
            d->base_total = pct(b[i].f.total, tb);
            i++;
        }
        if (c >= 0) {
            d->p = nw;                 /* named as NEW names it */
            d->frame = n[j].f.frame;
            d->new_own = pct(own_of(nw, &n[j].f), tn);
            d->new_total = pct(n[j].f.total, tn);
            j++;
        }
    }
    free(b);
    free(n);
    *out = v;
    *nout = k;
    return 0;
}

/* The child of base node m whose frame reads label, or PP_NONE. */
static uint32_t child_named(const pp_profile *base, const pp_tree *tb, uint32_t m,
                            const pp_frame *f)
{
    for (uint32_t c = tb->nodes[m].first_child; c != PP_NONE; c = tb->nodes[c].next_sibling) {
        if (cmp_frames(&base->frames[tb->nodes[c].frame], f, 1) == 0)
            return c;
    }
    return PP_NONE;
}

int pp_diff_tree(const pp_profile *base, const pp_profile *nw, const pp_tree *tn,
                 double **base_share)
{
    pp_tree tb;
    uint32_t *match = malloc((tn->n ? tn->n : 1) * sizeof(*match));
    double *share = calloc(tn->n ? tn->n : 1, sizeof(*share));
    uint64_t all;
    int rc;

    if (!match || !share || (rc = pp_tree_build(base, &tb)) < 0) {
        free(match);
        free(share);
        return -ENOMEM;
    }
    all = tb.nodes[0].total;
    for (uint32_t i = 0; i < tn->n; i++) {      /* preorder: parents first */
        const pp_tree_node *x = &tn->nodes[i];
        uint32_t m = x->parent == PP_NONE ? 0 : match[x->parent];
        if (x->parent != PP_NONE)
            m = m == PP_NONE ? PP_NONE : child_named(base, &tb, m, &nw->frames[x->frame]);
        match[i] = m;
        share[i] = m == PP_NONE ? 0.0 : pct(tb.nodes[m].total, all);
    }
    pp_tree_free(&tb);
    free(match);
    *base_share = share;
    return 0;
}
