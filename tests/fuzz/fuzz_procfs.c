/*
 * Fuzz target: the two /proc text parsers of sample mode, /proc/PID/maps
 * (src/native/maps.c) and /proc/kallsyms (src/native/kallsyms.c), on the
 * same input, with their invariants checked: mappings sorted, non-empty and
 * non-overlapping, symbols sorted, and every lookup's answer containing (or
 * lying below) the address asked. Built with libFuzzer by `make fuzz`,
 * replayed over tests/fuzz/corpus/procfs/ by `make test`.
 */
#include "native/kallsyms.h"
#include "native/maps.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t probe(const uint8_t *data, size_t size, size_t i)
{
    uint64_t a = 0;

    if (size >= 8)
        memcpy(&a, data + (i * 7) % (size - 7), 8);
    return a;
}

static void check_maps(const uint8_t *data, size_t size)
{
    pp_maps m;

    if (pp_maps_parse((const char *)data, size, &m) != 0)
        abort();
    for (size_t i = 0; i < m.n; i++) {
        const pp_map *x = &m.v[i];
        if (x->end <= x->start || (i && x->start < m.v[i - 1].end) || !x->path)
            abort();
        if (pp_maps_find(&m, x->start) != x || pp_maps_find(&m, x->end - 1) != x)
            abort();
        (void)strlen(x->path);
    }
    for (size_t i = 0; i < 8; i++) {
        uint64_t a = probe(data, size, i);
        const pp_map *x = pp_maps_find(&m, a);
        if (x && (a < x->start || a >= x->end))
            abort();
    }
    pp_maps_free(&m);
}

static void check_kallsyms(const uint8_t *data, size_t size)
{
    pp_kallsyms k;

    if (pp_kallsyms_parse((const char *)data, size, &k) != 0)
        abort();
    for (size_t i = 1; i < k.n; i++)
        if (k.v[i].addr < k.v[i - 1].addr)
            abort();
    for (size_t i = 0; i < k.n; i++)
        if (!k.v[i].name[0] || !k.v[i].dso[0])
            abort();
    for (size_t i = 0; i < 8; i++) {
        uint64_t a = probe(data, size, i);
        const pp_ksym *s = pp_kallsyms_find(&k, a);
        if (s && (s->addr > a || (s + 1 < k.v + k.n && s[1].addr <= a)))
            abort();
    }
    pp_kallsyms_free(&k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_maps(data, size);
    check_kallsyms(data, size);
    return 0;
}
