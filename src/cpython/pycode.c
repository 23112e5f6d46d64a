/*
 * Code objects named once (see pycode.h): a hash table of entries keyed by
 * the process and the sampled identity, chained, doubled when it holds as
 * many entries as buckets.
 */
#include "pycode.h"
#include "linetable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_MAX 65536      /* bytes of a line table kept (larger: def lines) */

typedef struct slot {
    struct slot *next;
    pid_t pid;
    pp_pycode_id id;
    pp_pycode_entry e;
    char *names;             /* qualname, then file: one allocation */
    unsigned char *table;
} slot;

struct pp_pycode {
    slot **buckets;
    size_t nbuckets, n;
    pp_pycode_stats stats;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static size_t hash(pid_t pid, const pp_pycode_id *id)
{
    uint64_t h = mix((uint64_t)(uint32_t)pid, id->code);

    h = mix(mix(mix(h, id->fields.name), id->fields.file), id->fields.table);
    h = mix(mix(h, id->fields.name_id), (uint64_t)(uint32_t)id->fields.def_line);
    return (size_t)(h ^ h >> 29);
}

static int same(const slot *s, pid_t pid, const pp_pycode_id *id)
{
    return s->pid == pid && s->id.code == id->code && s->id.fields.name == id->fields.name &&
           s->id.fields.file == id->fields.file && s->id.fields.table == id->fields.table &&
           s->id.fields.name_id == id->fields.name_id &&
           s->id.fields.def_line == id->fields.def_line;
}

int pp_pycode_open(pp_pycode **out)
{
    pp_pycode *c = calloc(1, sizeof(*c));

    *out = NULL;
    if (!c || !(c->buckets = calloc(1024, sizeof(*c->buckets)))) {
        free(c);
        return -ENOMEM;
    }
    c->nbuckets = 1024;
    *out = c;
    return 0;
}

static void grow(pp_pycode *c)
{
    size_t nb = c->nbuckets * 2;
    slot **b = calloc(nb, sizeof(*b));

    if (!b)
        return;                  /* longer chains, still correct */
    for (size_t i = 0; i < c->nbuckets; i++)
        for (slot *s = c->buckets[i], *next; s; s = next) {
            size_t k = hash(s->pid, &s->id) & (nb - 1);

            next = s->next;
            s->next = b[k];
            b[k] = s;
        }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = nb;
}

/* Reads what s's object is called, if it is still the object sampled. */
static void name(slot *s, const pp_mem *m, const pp_py_offsets *o,
                 const pp_pyread_types *types)
{
    static unsigned char table[TABLE_MAX];
    char qualname[256], file[1024];
    pp_pyread_fields now;
    uint64_t str = types ? types->str : 0;
    size_t nq, nf;
    long len;

    s->e.qualname = s->e.file = "";
    s->e.def_line = s->id.fields.def_line > 0 ? s->id.fields.def_line : 0;
    if (pp_pyread_code_fields(m, o, s->id.code, &now) != 0 ||
        now.name != s->id.fields.name || now.file != s->id.fields.file ||
        now.table != s->id.fields.table || now.def_line != s->id.fields.def_line ||
        /* a name freed and another made in its place: other characters
         * (by its hash, or computed since the sample: its characters) */
        (s->id.fields.name_id != now.name_id && s->id.fields.name_id != now.name_chars) ||
        !pp_pyread_str(m, o, now.name, str, qualname, sizeof(qualname)))
        return;
    pp_pyread_str(m, o, now.file, str, file, sizeof(file));
    nq = strlen(qualname) + 1;
    nf = strlen(file) + 1;
    if (!(s->names = malloc(nq + nf)))
        return;
    memcpy(s->names, qualname, nq);
    memcpy(s->names + nq, file, nf);
    s->e.qualname = s->names;
    s->e.file = s->names + nq;
    len = pp_pyread_bytes(m, o, now.table, table, sizeof(table));
    if (len > 0 && (s->table = malloc((size_t)len))) {
        memcpy(s->table, table, (size_t)len);
        s->e.table = s->table;
        s->e.table_len = (size_t)len;
    }
}

static slot *find(pp_pycode *c, pid_t pid, const pp_pycode_id *id, size_t *k)
{
    *k = hash(pid, id) & (c->nbuckets - 1);
    for (slot *s = c->buckets[*k]; s; s = s->next)
        if (same(s, pid, id))
            return s;
    return NULL;
}

static void keep(pp_pycode *c, slot *s, size_t k)
{
    s->next = c->buckets[k];
    c->buckets[k] = s;
    if (++c->n > c->nbuckets)
        grow(c);
}

/* s named from copy: the names and the table in one allocation each. */
static int from_copy(slot *s, const pp_pycode_copy *copy)
{
    size_t nq = strlen(copy->qualname) + 1, nf = strlen(copy->file) + 1;

    if (!(s->names = malloc(nq + nf)))
        return -ENOMEM;
    memcpy(s->names, copy->qualname, nq);
    memcpy(s->names + nq, copy->file, nf);
    s->e.qualname = s->names;
    s->e.file = s->names + nq;
    s->e.def_line = s->id.fields.def_line > 0 ? s->id.fields.def_line : 0;
    if (copy->table_len && (s->table = malloc(copy->table_len))) {
        memcpy(s->table, copy->table, copy->table_len);
        s->e.table = s->table;
        s->e.table_len = copy->table_len;
    }
    return 0;
}

int pp_pycode_put(pp_pycode *c, const pp_mem *m, const pp_py_offsets *o,
                  const pp_pyread_types *types, const pp_pycode_id *id,
                  const pp_pycode_copy *copy)
{
    pid_t pid = m->pid;
    size_t k;
    slot *s;

    if (find(c, pid, id, &k))
        return 0;                /* a second copy (two CPUs at once), or read */
    if (!copy->qualname[0] || !(s = calloc(1, sizeof(*s))))
        return copy->qualname[0] ? -ENOMEM : 0;
    s->pid = pid;
    s->id = *id;
    s->e.qualname = s->e.file = "";
    if (!copy->whole && (!types || pp_pyread_is(m, o, id->code, types->code)))
        name(s, m, o, types);    /* the whole names and table, if it still lives */
    if (!s->e.qualname[0]) {
        free(s->names);
        free(s->table);
        s->names = NULL;
        s->table = NULL;
        s->e = (pp_pycode_entry){"", "", 0, NULL, 0};
        if (from_copy(s, copy) != 0) {
            free(s);
            return -ENOMEM;
        }
        c->stats.copied++;
    } else if (!s->table && copy->table_len && (s->table = malloc(copy->table_len))) {
        memcpy(s->table, copy->table, copy->table_len);     /* freed between the reads */
        s->e.table = s->table;
        s->e.table_len = copy->table_len;
    }
    c->stats.named++;
    keep(c, s, k);
    return 0;
}

const pp_pycode_entry *pp_pycode_get(pp_pycode *c, const pp_mem *m, const pp_py_offsets *o,
                                     const pp_pyread_types *types, const pp_pycode_id *id)
{
    pid_t pid = m->pid;
    size_t k;
    slot *s = find(c, pid, id, &k);

    if (s)
        return &s->e;
    if (!(s = calloc(1, sizeof(*s))))
        return NULL;
    s->pid = pid;
    s->id = *id;
    /* a type check first: what is at the address may be no code object now */
    if (!types || pp_pyread_is(m, o, id->code, types->code))
        name(s, m, o, types);
    else
        s->e.qualname = s->e.file = "";
    if (s->e.qualname[0])
        c->stats.named++;
    else
        c->stats.freed++;
    keep(c, s, k);
    return &s->e;
}

int pp_pycode_line(const pp_pycode_entry *e, const pp_py_offsets *o, uint64_t start,
                   uint64_t instr)
{
    int64_t offset = pp_pyread_offset(o, start, instr);
    int line;

    if (!e->table || offset < 0)
        return e->def_line;
    line = pp_linetable_line(e->table, e->table_len, o->linetable_format, offset, e->def_line);
    return line > 0 ? line : 0;       /* a table of another process's making: 0, unknown */
}

static void drop(slot *s)
{
    free(s->names);
    free(s->table);
    free(s);
}

void pp_pycode_forget(pp_pycode *c, pid_t pid)
{
    for (size_t i = 0; i < c->nbuckets; i++)
        for (slot **p = &c->buckets[i]; *p;) {
            slot *s = *p;

            if (s->pid != pid) {
                p = &s->next;
                continue;
            }
            *p = s->next;
            drop(s);
            c->n--;
        }
}

pp_pycode_stats pp_pycode_stats_of(const pp_pycode *c)
{
    return c->stats;
}

void pp_pycode_close(pp_pycode *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nbuckets; i++)
        for (slot *s = c->buckets[i], *next; s; s = next) {
            next = s->next;
            drop(s);
        }
    free(c->buckets);
    free(c);
}
