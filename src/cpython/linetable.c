/*
 * CPython's line tables, read (see linetable.h). The table comes from the
 * program's memory and may be anything: every read is bounded by its end,
 * and a table that does not parse gives the def line.
 */
#include "linetable.h"
#include "pyoffsets.h"

typedef struct cursor {
    const unsigned char *p, *end;
} cursor;

static unsigned next_byte(cursor *c)
{
    return c->p < c->end ? *c->p++ : 0;
}

/* 3.11+'s varint: 6 bits a byte, low first, 0x40 when more follow. */
static unsigned varint(cursor *c)
{
    unsigned b = next_byte(c), v = b & 63, shift = 6;

    while ((b & 64) && c->p < c->end && shift < 30) {
        b = next_byte(c);
        v |= (b & 63) << shift;
        shift += 6;
    }
    return v;
}

static int svarint(cursor *c)
{
    unsigned v = varint(c);

    return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* 3.11+: entries of (code, length in code units) and a line delta from
 * co_firstlineno (Objects/locations.md); -1: no line there. */
static int line_locations(cursor *c, int64_t unit, int line)
{
    for (int64_t addr = 0; c->p < c->end; ) {
        unsigned b = next_byte(c), code = (b >> 3) & 15, len = (b & 7) + 1;
        int delta = 0, none = 0;

        if (!(b & 0x80))
            return -1;              /* not at an entry: a table misread */
        if (code == 15) {
            none = 1;
        } else if (code == 14) {
            delta = svarint(c);
            varint(c);
            varint(c);
            varint(c);
        } else if (code == 13) {
            delta = svarint(c);
        } else if (code >= 10) {
            delta = (int)code - 10;
            c->p = c->end - c->p >= 2 ? c->p + 2 : c->end;
        } else {
            c->p = c->p < c->end ? c->p + 1 : c->end;
        }
        line += delta;
        if (unit >= addr && unit < addr + len)
            return none ? -1 : line;
        addr += len;
    }
    return -1;
}

int pp_linetable_line(const unsigned char *table, size_t len, int format, int64_t offset,
                      int def_line)
{
    cursor c = {table, table + len};
    int line = def_line, r = -1;

    if (offset < 0)
        return def_line;
    if (format == PP_LINES_LOCATIONS) {
        r = line_locations(&c, offset / 2, line);
    } else if (format == PP_LINES_310) {
        /* (bytes, signed line delta; -128: no line) pairs, the delta
         * applying to the range it opens */
        for (int64_t addr = 0; c.end - c.p >= 2; c.p += 2) {
            int d = (signed char)c.p[1];

            line += d == -128 ? 0 : d;
            if (offset >= addr && offset < addr + c.p[0]) {
                r = d == -128 ? -1 : line;
                break;
            }
            addr += c.p[0];
        }
    } else if (format == PP_LINES_LNOTAB) {
        /* (bytes, signed line delta) pairs: the line changes where the
         * address passes */
        int64_t addr = 0;

        for (; c.end - c.p >= 2; c.p += 2) {
            addr += c.p[0];
            if (addr > offset)
                break;
            line += (signed char)c.p[1];
        }
        r = line;
    }
    return r > 0 ? r : def_line;
}

