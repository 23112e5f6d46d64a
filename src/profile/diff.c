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
 * nodes by the labels of their path from the root. A file is compared by
 * its path relative to its sys.path entry (paths.c: "app.py",
 * "flask/app.py", "threading.py"), so two checkouts of a program, or one
 * program under two interpreters, compare. The roots of processes
 * and threads, "python3 (pid 4609)", "worker-1 (tid 4612)", match by name
 * alone: two runs never have the same ids.
 *
 * Like is compared with like: a profile of several processes (a program
 * and its children, each under its root) gives each stack's time as a
 * share of its own process's, the processes of one name together (two
 * runs never have the same pids): a parent's function is a share of the
 * parent's time in both runs, however long its children ran.
 *
 *     BASE  python3: work 18%, wait 82%; gzip 1 s      (the program's own figures)
 *     NEW   python3: work 30%, wait 70%; gzip 3 s
 *     work: 18% -> 30%, not 9.8% -> 17.4% of all processes' time together
 *
 * A stack under no process root (one process, or processes merged) is a
 * share of all such stacks' time, as before.
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

/* A frame as diff compares it: the frame, and its label and file with
 * the file relative to its sys.path entry (paths.c): two checkouts of one
 * program, or one program under two interpreters, name it alike. */
typedef struct key {
    const pp_frame *f;
    const char *label, *rel;
} key;

static key key_of(const pp_profile *p, const pp_labels *l, uint32_t frame)
{
    return (key){&p->frames[frame], l->label[frame], l->rel[frame]};
}

/* Frames x and y name the same thing in two profiles: 0, else their order.
 * A Python function is its name and file; any other frame its name. */
static int cmp_frames(const key *x, const key *y, int by_label)
{
    const char *a = by_label ? x->label : x->f->name, *b = by_label ? y->label : y->f->name;
    size_t na = key_len(x->f, a), nb = key_len(y->f, b);
    int c = (kind_class(x->f) > kind_class(y->f)) - (kind_class(x->f) < kind_class(y->f));

    if (!c)
        c = memcmp(a, b, na < nb ? na : nb);
    if (!c)
        c = (na > nb) - (na < nb);
    return c || by_label || x->f->kind != PP_FRAME_PYTHON ? c : strcmp(x->rel, y->rel);
}

/* ---- each stack's basis: its process's time ----------------------------- */

/* The length of a process root's name before " (pid ", or 0 for any other
 * frame: "python3 (pid 4609)", "python3 (pid 4613, 7 in the container)". */
static size_t proc_key(const pp_frame *f)
{
    const char *at = f->kind == PP_FRAME_MARKER ? strstr(f->name, " (pid ") : NULL;

    return at ? (size_t)(at - f->name) : 0;
}

typedef struct basis {
    const char **key;              /* per group: the comm (NULL: no process root) */
    size_t *len;
    uint64_t *total;
    uint32_t n;
    uint32_t *of;                  /* per stack: its group */
} basis;

static void basis_free(basis *b)
{
    free(b->key);
    free(b->len);
    free(b->total);
    free(b->of);
}

/* The group of name[0..len) (NULL: none), added if new; PP_NONE out of memory. */
static uint32_t group_of(basis *b, const char *name, size_t len)
{
    uint32_t g;

    for (g = 0; g < b->n; g++)
        if (b->len[g] == len && (name ? b->key[g] && memcmp(b->key[g], name, len) == 0
                                      : !b->key[g]))
            return g;
    if (!(b->n & (b->n - 1))) {        /* 0, 1, 2, 4 ...: grow */
        size_t cap = b->n ? 2 * (size_t)b->n : 1;
        const char **k = realloc(b->key, cap * sizeof(*k));
        size_t *l = k ? realloc(b->len, cap * sizeof(*l)) : NULL;
        uint64_t *t = l ? realloc(b->total, cap * sizeof(*t)) : NULL;

        if (k)
            b->key = k;
        if (l)
            b->len = l;
        if (!t)
            return PP_NONE;
        b->total = t;
    }
    b->key[b->n] = name, b->len[b->n] = len, b->total[b->n] = 0;
    return b->n++;
}

/* The process root of a stack: its first frame, or its second under a
 * container's root. */
static const pp_frame *root_of(const pp_profile *p, const uint32_t *ids, uint32_t depth,
                               size_t *len)
{
    for (uint32_t k = 0; k < depth && k < 2; k++)
        if ((*len = proc_key(&p->frames[ids[k]])))
            return &p->frames[ids[k]];
    *len = 0;
    return NULL;
}

static int basis_make(const pp_profile *p, basis *b)
{
    memset(b, 0, sizeof(*b));
    if (!(b->of = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*b->of))))
        return -ENOMEM;
    for (uint32_t s = 0; s < p->nstacks; s++) {
        const pp_stack *st = &p->stacks[s];
        size_t len;
        const pp_frame *r = root_of(p, pp_stack_ids(p, st), st->depth, &len);
        uint32_t g = group_of(b, r ? r->name : NULL, len);

        if (g == PP_NONE) {
            basis_free(b);
            return -ENOMEM;
        }
        b->of[s] = g;
        b->total[g] += pp_stack_value(p, st);
    }
    return 0;
}

/* s's value in percent of its group's total. */
static double share_of(const pp_profile *p, const basis *b, uint32_t s)
{
    uint64_t all = b->total[b->of[s]];

    return all ? 100.0 * (double)pp_stack_value(p, &p->stacks[s]) / (double)all : 0.0;
}

/* ---- functions ----------------------------------------------------------- */

typedef struct keyed {
    const pp_profile *p;
    pp_func f;
    key k;
} keyed;

static int cmp_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;

    return cmp_frames(&x->k, &y->k, 0);
}

/* A function's shares of its profile: own (its own time for a Python
 * function, its self time for the others: the leaf's) and total (once
 * per stack), each stack's time a share of its process's (basis). */
typedef struct shares {
    double own, total;
} shares;

static keyed *sorted_functions(const pp_profile *p, const pp_labels *l, uint32_t *n)
{
    pp_func *v;
    keyed *k;

    if (pp_profile_functions(p, 0, &v, n) < 0)
        return NULL;
    if ((k = malloc((*n ? *n : 1) * sizeof(*k)))) {
        for (uint32_t i = 0; i < *n; i++)
            k[i] = (keyed){p, v[i], key_of(p, l, v[i].frame)};
        qsort(k, *n, sizeof(*k), cmp_key);
    }
    free(v);
    return k;
}

/* The function of k (n, sorted) that frame f is, or PP_NONE. */
static uint32_t func_of(const keyed *k, uint32_t n, const key *f)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (cmp_frames(&k[mid].k, f, 0) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && cmp_frames(&k[lo].k, f, 0) == 0 ? lo : PP_NONE;
}

/* Every stack's time added to its functions' shares (sh: n of them). */
static int add_shares(const pp_profile *p, const pp_labels *l, const keyed *k, uint32_t n,
                      shares *sh)
{
    uint32_t *of = malloc((p->nframes ? p->nframes : 1) * sizeof(*of));
    uint32_t *seen = calloc(n ? n : 1, sizeof(*seen));
    basis b;

    if (!of || !seen || basis_make(p, &b) < 0) {
        free(of);
        free(seen);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < p->nframes; i++) {
        key kf = key_of(p, l, i);

        of[i] = func_of(k, n, &kf);
    }
    for (uint32_t s = 0; s < p->nstacks; s++) {
        const pp_stack *st = &p->stacks[s];
        const uint32_t *ids = pp_stack_ids(p, st);
        double v = share_of(p, &b, s);
        uint32_t own = PP_NONE;

        for (uint32_t d = 0; d < st->depth; d++) {
            uint32_t g = of[ids[d]];

            if (g == PP_NONE)
                continue;
            if (p->frames[ids[d]].kind == PP_FRAME_PYTHON)
                own = g;
            if (seen[g] != s + 1) {                 /* once under recursion */
                seen[g] = s + 1;
                sh[g].total += v;
            }
        }
        if (st->depth && of[ids[st->depth - 1]] != PP_NONE &&
            p->frames[ids[st->depth - 1]].kind != PP_FRAME_PYTHON)
            sh[of[ids[st->depth - 1]]].own += v;    /* a native leaf's self time */
        if (own != PP_NONE)
            sh[own].own += v;
    }
    basis_free(&b);
    free(of);
    free(seen);
    return 0;
}

static shares *shares_of(const pp_profile *p, const pp_labels *l, const keyed *k, uint32_t n)
{
    shares *sh = calloc(n ? n : 1, sizeof(*sh));

    if (sh && add_shares(p, l, k, n, sh) < 0) {
        free(sh);
        return NULL;
    }
    return sh;
}

int pp_diff_functions(const pp_profile *base, const pp_profile *nw, pp_diff_func **out,
                      uint32_t *nout)
{
    uint32_t nb = 0, nn = 0, i = 0, j = 0, k = 0;
    pp_labels lb, ln;
    int lbr = pp_labels_make(base, &lb), lnr = pp_labels_make(nw, &ln);
    keyed *b = lbr < 0 ? NULL : sorted_functions(base, &lb, &nb);
    keyed *n = lnr < 0 ? NULL : sorted_functions(nw, &ln, &nn);
    shares *sb = b ? shares_of(base, &lb, b, nb) : NULL;
    shares *sn = n ? shares_of(nw, &ln, n, nn) : NULL;
    pp_diff_func *v = malloc(((size_t)nb + nn + 1) * sizeof(*v));
    int rc = 0;

    if (!b || !n || !sb || !sn || !v) {
        free(v);
        rc = -ENOMEM;
        goto done;
    }
    while (i < nb || j < nn) {         /* a merge of the two sorted lists */
        int c = i == nb ? 1 : j == nn ? -1 : cmp_key(&b[i], &n[j]);
        pp_diff_func *d = &v[k++];
        memset(d, 0, sizeof(*d));
        if (c <= 0) {
            d->p = base;
            d->frame = b[i].f.frame;
            d->base_own = sb[i].own;
            d->base_total = sb[i].total;
            i++;
        }
        if (c >= 0) {
            d->p = nw;                 /* named as NEW names it */
            d->frame = n[j].f.frame;
            d->new_own = sn[j].own;
            d->new_total = sn[j].total;
            j++;
        }
    }
    *out = v;
    *nout = k;
done:
    free(b);
    free(n);
    free(sb);
    free(sn);
    if (lbr == 0)
        pp_labels_free(&lb);
    if (lnr == 0)
        pp_labels_free(&ln);
    return rc;
}

/* The child of base node m whose frame reads as k does, or PP_NONE. */
static uint32_t child_named(const pp_profile *base, const pp_labels *lb, const pp_tree *tb,
                            uint32_t m, const key *k)
{
    for (uint32_t c = tb->nodes[m].first_child; c != PP_NONE; c = tb->nodes[c].next_sibling) {
        key kc = key_of(base, lb, tb->nodes[c].frame);
        if (cmp_frames(&kc, k, 1) == 0)
            return c;
    }
    return PP_NONE;
}

/* Per node of t (pp_tree_build(p)): its share in percent of its process's
 * time (basis), the root 100; malloc'ed, or NULL. A node's process is its
 * first process root on its path (under a container's root, the second). */
static double *node_shares(const pp_profile *p, const pp_tree *t)
{
    double *share = malloc((t->n ? t->n : 1) * sizeof(*share));
    uint32_t *grp = malloc((t->n ? t->n : 1) * sizeof(*grp));
    uint32_t none;
    basis b;

    if (!share || !grp || basis_make(p, &b) < 0) {
        free(share);
        free(grp);
        return NULL;
    }
    if ((none = group_of(&b, NULL, 0)) == PP_NONE) {
        free(share);
        share = NULL;
        goto done;
    }
    for (uint32_t i = 0; i < t->n; i++) {      /* preorder: parents first */
        const pp_tree_node *x = &t->nodes[i];
        size_t len = x->parent == PP_NONE ? 0 : proc_key(&p->frames[x->frame]);
        uint32_t g = x->parent == PP_NONE || x->parent == 0 ? none : grp[x->parent];

        if (len && x->depth <= 2 && g == none)
            g = group_of(&b, p->frames[x->frame].name, len);
        grp[i] = g == PP_NONE ? none : g;
        share[i] = x->parent == PP_NONE ? 100.0
                   : b.total[grp[i]] ? 100.0 * (double)x->total / (double)b.total[grp[i]]
                                     : 0.0;
    }
done:
    basis_free(&b);
    free(grp);
    return share;
}

int pp_diff_tree(const pp_profile *base, const pp_profile *nw, const pp_tree *tn,
                 double **base_share, double **new_share)
{
    pp_tree tb;
    pp_labels lb, ln;
    uint32_t *match = malloc((tn->n ? tn->n : 1) * sizeof(*match));
    double *share = calloc(tn->n ? tn->n : 1, sizeof(*share)), *bs = NULL, *ns = NULL;
    int rc = -ENOMEM, lbr = pp_labels_make(base, &lb), lnr = pp_labels_make(nw, &ln);

    if (!match || !share || lbr < 0 || lnr < 0 || (rc = pp_tree_build(base, &tb)) < 0) {
        free(match);
        free(share);
        if (lbr == 0)
            pp_labels_free(&lb);
        if (lnr == 0)
            pp_labels_free(&ln);
        return rc < 0 ? rc : -ENOMEM;
    }
    if (!(bs = node_shares(base, &tb)) || !(ns = node_shares(nw, tn))) {
        free(bs);
        free(match);
        free(share);
        pp_tree_free(&tb);
        pp_labels_free(&lb);
        pp_labels_free(&ln);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < tn->n; i++) {      /* preorder: parents first */
        const pp_tree_node *x = &tn->nodes[i];
        uint32_t m = x->parent == PP_NONE ? 0 : match[x->parent];
        if (x->parent != PP_NONE && m != PP_NONE) {
            key k = key_of(nw, &ln, x->frame);
            m = child_named(base, &lb, &tb, m, &k);
        }
        match[i] = m;
        share[i] = m == PP_NONE ? 0.0 : bs[m];
    }
    pp_tree_free(&tb);
    pp_labels_free(&lb);
    pp_labels_free(&ln);
    free(match);
    free(bs);
    *base_share = share;
    *new_share = ns;
    return 0;
}
