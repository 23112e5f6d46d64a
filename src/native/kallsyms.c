/*
 * /proc/kallsyms parser (format in kallsyms.h). Like maps.c: one counting
 * pass, one filling pass, two allocations; then a sort by address.
 */
#include "kallsyms.h"
#include "text.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One line [s, end): address, type, name and optional "\t[module]". The
 * name and the module as pointer + length. 0, or -1 when not a text symbol
 * or not understood. */
static int parse_line(const char *s, const char *end, uint64_t *addr, const char **name,
                      size_t *nlen, const char **mod, size_t *mlen)
{
    uint64_t x;
    const char *t;

    if (pp__hex64(&s, end, &x) < 0 || end - s < 4 || s[0] != ' ' || s[2] != ' ')
        return -1;
    if (!strchr("tTwW", s[1]) || s[1] == '\0')
        return -1;
    s += 3;
    for (t = s; t < end && *t != '\t' && *t != ' ' && *t != '\0'; t++)
        ;
    if (t == s)
        return -1;
    *addr = x;
    *name = s;
    *nlen = (size_t)(t - s);
    *mod = NULL;
    *mlen = 0;
    while (t < end && (*t == '\t' || *t == ' '))
        t++;
    if (t < end && *t == '[') {
        const char *c = memchr(t, ']', (size_t)(end - t));
        if (c && !memchr(t, '\0', (size_t)(c - t))) {
            *mod = t;
            *mlen = (size_t)(c - t) + 1;
        }
    }
    return 0;
}

static int cmp_addr(const void *a, const void *b)
{
    const pp_ksym *x = a, *y = b;

    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return strcmp(x->name, y->name);    /* aliases: a stable choice */
}

int pp_kallsyms_parse(const char *text, size_t len, pp_kallsyms *out)
{
    const char *end = text + len, *s;
    size_t lines = 0, n = 0, used = 0;

    memset(out, 0, sizeof(*out));
    for (s = text; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        lines++;
        s = nl ? nl + 1 : end;
    }
    out->v = calloc(lines ? lines : 1, sizeof(*out->v));
    out->strings = malloc(len + lines + 1);    /* every name and module, NUL each */
    if (!out->v || !out->strings)
        return -ENOMEM;
    for (s = text; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end, *name, *mod;
        size_t nlen, mlen;
        uint64_t addr;

        if (parse_line(s, e, &addr, &name, &nlen, &mod, &mlen) == 0) {
            pp_ksym *k = &out->v[n++];
            k->addr = addr;
            k->name = memcpy(out->strings + used, name, nlen);
            out->strings[used + nlen] = '\0';
            used += nlen + 1;
            if (mod) {
                k->dso = memcpy(out->strings + used, mod, mlen);
                out->strings[used + mlen] = '\0';
                used += mlen + 1;
            } else {
                k->dso = "[kernel.kallsyms]";
            }
        } else if (e > s) {
            out->bad_lines++;   /* also data symbols (d, b, r...): not frames */
        }
        s = nl ? nl + 1 : end;
    }
    out->n = n;
    qsort(out->v, n, sizeof(*out->v), cmp_addr);
    return 0;
}

int pp_kallsyms_load(pp_kallsyms *out)
{
    char *buf;
    size_t n;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = pp__read_proc("/proc/kallsyms", &buf, &n);
    if (rc == 0)
        rc = pp_kallsyms_parse(buf, n, out);
    free(buf);
    return rc;
}

int pp_kallsyms_named(pp_kallsyms *out, const uint64_t *addr, const char *const *names,
                      size_t n)
{
    size_t used = 0, room = 0;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        room += strlen(names[i]) + 3;                /* name, NUL, "[]" around a module */
    out->v = calloc(n ? n : 1, sizeof(*out->v));
    out->strings = malloc(room + 1);
    if (!out->v || !out->strings)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *s = names[i], *sp = strchr(s, ' ');
        size_t len = sp ? (size_t)(sp - s) : strlen(s);
        pp_ksym *k = &out->v[out->n++];

        k->addr = addr[i];
        k->dso = "[kernel.kallsyms]";
        if (!len || (s[0] == '0' && s[1] == 'x')) {  /* no symbol holds it */
            k->name = "[unknown]";
            continue;
        }
        k->name = memcpy(out->strings + used, s, len);
        out->strings[used + len] = '\0';
        used += len + 1;
        if (sp && sp[1] == '[' && strchr(sp, ']')) {  /* " [module]" */
            size_t mlen = (size_t)(strchr(sp, ']') - sp);   /* "[module]" */

            k->dso = memcpy(out->strings + used, sp + 1, mlen);
            out->strings[used + mlen] = '\0';
            used += mlen + 1;
        }
    }
    qsort(out->v, out->n, sizeof(*out->v), cmp_addr);
    return 0;
}

int pp_kallsyms_usable(const pp_kallsyms *k)
{
    return k->n > 0 && k->v[k->n - 1].addr != 0;
}

const pp_ksym *pp_kallsyms_find(const pp_kallsyms *k, uint64_t addr)
{
    size_t lo;

    if (!pp_kallsyms_usable(k))
        return NULL;
    lo = pp__count_le(k->v, k->n, sizeof(*k->v), offsetof(pp_ksym, addr), addr);
    return lo > 0 ? &k->v[lo - 1] : NULL;
}

size_t pp_kallsyms_frames(const pp_kallsyms *k, const uint64_t *ips, size_t n,
                          pp_native_frame *out, size_t cap)
{
    size_t m = 0;

    for (size_t i = 0; i < n && m < cap; i++) {
        const pp_ksym *s;
        if (ips[i] >= (uint64_t)-4095)   /* PERF_CONTEXT_KERNEL and the like */
            continue;
        s = pp_kallsyms_find(k, ips[i]);
        out[m++] = (pp_native_frame){ips[i], s ? s->name : "[unknown]",
                                     s ? s->dso : "[kernel.kallsyms]"};
    }
    return m;
}

void pp_kallsyms_free(pp_kallsyms *k)
{
    free(k->v);
    free(k->strings);
    memset(k, 0, sizeof(*k));
}
