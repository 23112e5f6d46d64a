/*
 * Choosing the compiled table of a version (pytables.h).
 */
#include "pytables.h"

#include <stdio.h>

const pp_py_table *pp_py_table_find(uint32_t version_hex, int free_threaded)
{
    const pp_py_table *best = NULL, *first = NULL;

    for (size_t i = 0; i < pp_py_ntables; i++) {
        const pp_py_table *t = &pp_py_tables[i];

        if (t->version_hex >> 16 != version_hex >> 16 ||
            (int)t->free_threaded != (free_threaded != 0))
            continue;
        if (!first || t->version_hex < first->version_hex)
            first = t;
        if (t->version_hex <= version_hex && (!best || t->version_hex > best->version_hex))
            best = t;
    }
    return best ? best : first;
}

const char *pp_py_version_text(uint32_t v, char *buf, size_t len)
{
    snprintf(buf, len, "%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff);
    return buf;
}
