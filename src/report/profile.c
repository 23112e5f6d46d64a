/*
 * The profile of profile.h: a string arena, interned frames, interned
 * stacks, and the two views writers share (per-function statistics and the
 * call tree). Interning is what keeps a long recording small: a million
 * samples of one loop are one stack with count 1000000.
 */
#include "profile.h"
#include "htab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- string arena ------------------------------------------------------ */

#define CHUNK_MIN (64 * 1024)

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
} chunk;

struct pp_strings {
    chunk *head;
};

const char *pp_profile_strdup(pp_profile *p, const char *s, size_t len)
{
    chunk *c = p->strings->head;
    char *out;

    if (!c || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > CHUNK_MIN ? len + 1 : CHUNK_MIN;
        chunk *n = malloc(sizeof(*n) + cap);

        if (!n)
            return NULL;
        n->next = c;
        n->used = 0;
        n->cap = cap;
        p->strings->head = c = n;
    }
    out = c->data + c->used;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
    c->used += len + 1;
    return out;
}

/* ---- life cycle -------------------------------------------------------- */

int pp_profile_init(pp_profile *p)
{
    memset(p, 0, sizeof(*p));
    p->strings = calloc(1, sizeof(*p->strings));
    p->frame_index = calloc(1, sizeof(pp_htab));
    p->stack_index = calloc(1, sizeof(pp_htab));
    if (!p->strings || !p->frame_index || !p->stack_index ||
        pp__htab_init(p->frame_index, 1024) < 0 ||
        pp__htab_init(p->stack_index, 1024) < 0) {
        pp_profile_free(p);
        return -ENOMEM;
    }
    return 0;
}

void pp_profile_free(pp_profile *p)
{
    if (p->strings) {
        chunk *c = p->strings->head;
        while (c) {
            chunk *next = c->next;
            free(c);
            c = next;
        }
        free(p->strings);
    }
    if (p->frame_index)
        pp__htab_free(p->frame_index);
    if (p->stack_index)
        pp__htab_free(p->stack_index);
    free(p->frame_index);
    free(p->stack_index);
    free(p->frames);
    free(p->stacks);
    free(p->ids);
    free(p->procs);
    memset(p, 0, sizeof(*p));
}

/* ---- frames ------------------------------------------------------------ */

static uint64_t frame_hash(pp_frame_kind kind, const char *name, size_t nl,
                           const char *file, size_t fl, int line)
{
    uint64_t h = pp__hash(name, nl, (uint64_t)kind * 31 + (uint64_t)(unsigned)line);
    return pp__hash(file, fl, h);
}

static const char *make_label(pp_profile *p, pp_frame_kind kind, const char *name,
                              const char *file, int line)
{
    char small[512];
    char *buf = small;
    size_t need;
    const char *out;

    if (kind != PP_FRAME_PYTHON)
        return name;
    need = strlen(name) + strlen(file) + 32;
    if (need > sizeof(small) && !(buf = malloc(need)))
        return NULL;
    if (line > 0)
        snprintf(buf, need, "%s (%s:%d)", name, file, line);
    else if (*file)
        snprintf(buf, need, "%s (%s)", name, file);
    else
        snprintf(buf, need, "%s", name);
    out = pp_profile_strdup(p, buf, strlen(buf));
    if (buf != small)
        free(buf);
    return out;
}

int64_t pp_profile_frame(pp_profile *p, pp_frame_kind kind, const char *name,
                         size_t name_len, const char *file, size_t file_len,
                         int line)
{
    uint64_t h;
    pp_htab_iter it;
    uint32_t *slot;
    pp_frame *f;
    size_t cap = p->frames_cap;

    if (!file)
        file_len = 0;
    h = frame_hash(kind, name, name_len, file ? file : "", file_len, line);
    for (slot = pp__htab_first(p->frame_index, h, &it); slot;
         slot = pp__htab_next(p->frame_index, h, &it)) {
        f = &p->frames[*slot];
        if (f->kind == kind && f->line == line &&
            strlen(f->name) == name_len && memcmp(f->name, name, name_len) == 0 &&
            strlen(f->file) == file_len && (!file_len || memcmp(f->file, file, file_len) == 0))
            return *slot;
    }
    if (p->nframes >= UINT32_MAX - 1)
        return -ENOSPC;
    if (pp__grow((void **)&p->frames, &cap, (size_t)p->nframes + 1, sizeof(pp_frame)) < 0)
        return -ENOMEM;
    p->frames_cap = (uint32_t)cap;
    f = &p->frames[p->nframes];
    f->kind = kind;
    f->line = line;
    f->name = pp_profile_strdup(p, name, name_len);
    f->file = pp_profile_strdup(p, file_len ? file : "", file_len);
    if (!f->name || !f->file)
        return -ENOMEM;
    f->label = make_label(p, kind, f->name, f->file, line);
    if (!f->label || pp__htab_insert(p->frame_index, h, p->nframes) < 0)
        return -ENOMEM;
    return p->nframes++;
}

/* ---- stacks ------------------------------------------------------------ */

int pp_profile_add(pp_profile *p, const uint32_t *ids, size_t n,
                   uint64_t count, uint64_t period)
{
    uint64_t h = pp__hash(ids, n * sizeof(*ids), 7);
    pp_htab_iter it;
    uint32_t *slot;
    pp_stack *s;
    size_t cap;

    if (n > UINT32_MAX / 2)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= p->nframes)
            return -EINVAL;
    for (slot = pp__htab_first(p->stack_index, h, &it); slot;
         slot = pp__htab_next(p->stack_index, h, &it)) {
        s = &p->stacks[*slot];
        if (s->depth == n && memcmp(p->ids + s->first, ids, n * sizeof(*ids)) == 0)
            goto found;
    }
    if (p->nstacks >= UINT32_MAX - 1 || p->nids + n > UINT32_MAX)
        return -ENOSPC;
    cap = p->stacks_cap;
    if (pp__grow((void **)&p->stacks, &cap, (size_t)p->nstacks + 1, sizeof(pp_stack)) < 0)
        return -ENOMEM;
    p->stacks_cap = (uint32_t)cap;
    if (pp__grow((void **)&p->ids, &p->ids_cap, p->nids + n + 1, sizeof(uint32_t)) < 0)
        return -ENOMEM;
    if (pp__htab_insert(p->stack_index, h, p->nstacks) < 0)
        return -ENOMEM;
    s = &p->stacks[p->nstacks++];
    s->first = (uint32_t)p->nids;
    s->depth = (uint32_t)n;
    s->count = s->period = 0;
    if (n)
        memcpy(p->ids + p->nids, ids, n * sizeof(*ids));
    p->nids += n;
found:
    s->count += count;
    s->period += period;
    p->samples += count;
    p->period += period;
    return 0;
}

/* ---- views ------------------------------------------------------------- */

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

        if (!s->depth)
            continue;
        st[ids[s->depth - 1]].self += s->count;
        for (uint32_t i = s->depth; i-- > 0;) {
            uint32_t f = ids[i];
            if (!own_done && p->frames[f].kind == PP_FRAME_PYTHON) {
                st[f].own += s->count;
                own_done = 1;
            }
            if (seen[f] != si + 1) {      /* once per stack under recursion */
                seen[f] = si + 1;
                st[f].total += s->count;
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

        t->nodes[0].total += s->count;
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
            t->nodes[node].total += s->count;
        }
        t->nodes[node].self += s->count;
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
