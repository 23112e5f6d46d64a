/*
 * The hash index of htab.h, and the one hash function the report pipeline
 * uses (8 bytes at a time, multiply-xorshift mixing: fast on the short
 * strings perf prints, no allocation, no dependency).
 */
#include "htab.h"

#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define K1 0x9E3779B97F4A7C15ull
#define K2 0xBF58476D1CE4E5B9ull
#define K3 0x94D049BB133111EBull

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= K2;
    x ^= x >> 27;
    x *= K3;
    x ^= x >> 31;
    return x;
}

static uint64_t lane(uint64_t h, const unsigned char *p)
{
    uint64_t w;

    memcpy(&w, p, 8);
    h = (h ^ w) * K2;
    return h ^ (h >> 29);
}

static uint64_t rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

/* Keys of 32 bytes and more (perf's frame lines are ~80) go through four
 * independent lanes, so the multiplies overlap instead of waiting on each
 * other: about twice the speed of one lane on such keys. */
uint64_t pp__hash(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed ^ (len * K1);
    uint64_t w;

    if (len >= 32) {
        uint64_t a = h, b = h + K1, c = h + K2, d = h + K3;
        do {
            a = lane(a, p);
            b = lane(b, p + 8);
            c = lane(c, p + 16);
            d = lane(d, p + 24);
            p += 32;
            len -= 32;
        } while (len >= 32);
        h = (a ^ rotl(b, 16) ^ rotl(c, 32) ^ rotl(d, 48)) * K1;
    }
    while (len >= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * K2;
        h ^= h >> 29;
        p += 8;
        len -= 8;
    }
    if (len) {
        w = 0;
        memcpy(&w, p, len);
        h = (h ^ w) * K3;
    }
    h = mix(h);
    return h ? h : 1;
}

int pp__htab_init(pp_htab *t, size_t cap)
{
    size_t c = 16;

    while (c < cap * 2)
        c *= 2;
    t->hashes = calloc(c, sizeof(*t->hashes));
    t->vals = calloc(c, sizeof(*t->vals));
    t->cap = c;
    t->n = 0;
    if (!t->hashes || !t->vals) {
        pp__htab_free(t);
        return -ENOMEM;
    }
    return 0;
}

void pp__htab_free(pp_htab *t)
{
    free(t->hashes);
    free(t->vals);
    memset(t, 0, sizeof(*t));
}

uint32_t *pp__htab_next(const pp_htab *t, uint64_t h, pp_htab_iter *it)
{
    size_t mask = t->cap - 1;

    if (!t->cap)
        return NULL;
    for (size_t i = *it; ; i = (i + 1) & mask) {
        if (t->hashes[i] == 0)
            return NULL;
        if (t->hashes[i] == h) {
            *it = (i + 1) & mask;
            return &t->vals[i];
        }
    }
}

uint32_t *pp__htab_first(const pp_htab *t, uint64_t h, pp_htab_iter *it)
{
    if (!t->cap)
        return NULL;
    *it = (size_t)h & (t->cap - 1);
    return pp__htab_next(t, h, it);
}

static void put(uint64_t *hashes, uint32_t *vals, size_t cap, uint64_t h, uint32_t v)
{
    size_t i = (size_t)h & (cap - 1);

    while (hashes[i])
        i = (i + 1) & (cap - 1);
    hashes[i] = h;
    vals[i] = v;
}

int pp__htab_insert(pp_htab *t, uint64_t h, uint32_t val)
{
    if (h == 0)
        h = 1;
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        uint64_t *hs = calloc(cap, sizeof(*hs));
        uint32_t *vs = calloc(cap, sizeof(*vs));

        if (!hs || !vs) {
            free(hs);
            free(vs);
            return -ENOMEM;
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->hashes[i])
                put(hs, vs, cap, t->hashes[i], t->vals[i]);
        free(t->hashes);
        free(t->vals);
        t->hashes = hs;
        t->vals = vs;
        t->cap = cap;
    }
    put(t->hashes, t->vals, t->cap, h, val);
    t->n++;
    return 0;
}

int pp__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t c = *cap ? *cap : 16;
    void *n;

    if (need <= *cap)
        return 0;
    while (c < need && c <= SIZE_MAX / 2)
        c *= 2;
    if (c < need || !elem || c > SIZE_MAX / elem)
        return -ENOMEM;                  /* no array that large: never a wrapped size */
    n = realloc(*arr, c * elem);
    if (!n)
        return -ENOMEM;
    *arr = n;
    *cap = c;
    return 0;
}
