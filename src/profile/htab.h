/*
 * A small open-addressing hash index, shared by the profile (interned
 * frames and stacks) and the folder (a cache of raw perf frames). It maps a
 * 64-bit hash to 32-bit values (indexes into the caller's own arrays); the
 * caller compares keys itself, so one table type serves every key shape:
 *
 *     for (slot = pp__htab_first(t, h, &it); slot; slot = pp__htab_next(t, h, &it))
 *         if (same_key(*slot)) return *slot;
 *     pp__htab_insert(t, h, new_index);
 *
 * Linear probing, power-of-two sizes, grows at 50% load. No deletion.
 */
#ifndef PERFPY_HTAB_H
#define PERFPY_HTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_htab {
    uint64_t *hashes;      /* 0 = empty slot (real hashes are forced non-zero) */
    uint32_t *vals;
    size_t cap;            /* power of two */
    size_t n;
} pp_htab;

typedef size_t pp_htab_iter;

uint64_t pp__hash(const void *data, size_t len, uint64_t seed);
int pp__htab_init(pp_htab *t, size_t cap);
void pp__htab_free(pp_htab *t);
/* The first/next value slot whose hash equals h, or NULL. */
uint32_t *pp__htab_first(const pp_htab *t, uint64_t h, pp_htab_iter *it);
uint32_t *pp__htab_next(const pp_htab *t, uint64_t h, pp_htab_iter *it);
/* 0 or -ENOMEM. */
int pp__htab_insert(pp_htab *t, uint64_t h, uint32_t val);

/* Grows *arr (elements of elem bytes, capacity *cap) to hold need elements,
 * doubling. 0 or -ENOMEM (the array is unchanged then). */
int pp__grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif
