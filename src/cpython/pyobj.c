/*
 * Python objects read from outside (see pyobj.h).
 */
#include "pyobj.h"
#include "pyread.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_SHOWN 80            /* characters of a str shown */
#define BYTES_SHOWN 64          /* bytes of a bytes object shown */
#define DIGITS_MAX 64           /* an int's digits read (1,920 bits of 30) */
#define NAMES_MAX 512           /* a code object's variable names read */
#define CHUNK 256               /* dict entries read at once */

static int peek(const pp_pyobj *r, uint64_t addr, void *buf, size_t len)
{
    return pp_mem_read(r->m, addr, buf, len);
}

/* The pointer-sized field at off of the object at addr. */
static int field(const pp_pyobj *r, uint64_t addr, int32_t off, uint64_t *v)
{
    *v = 0;
    if (off < 0 || !addr)
        return -EFAULT;
    return peek(r, addr + (uint64_t)off, v, sizeof(*v));
}

static uint64_t type_of(const pp_pyobj *r, uint64_t addr)
{
    uint64_t t;

    return field(r, addr, r->o->object_type, &t) == 0 ? t : 0;
}

/* A C string at addr (a type's name), read up to its page's end first. */
static int cstring(const pp_pyobj *r, uint64_t addr, char *out, size_t len)
{
    size_t n = len - 1, page = 4096 - (size_t)(addr & 4095);

    out[0] = '\0';
    if (!addr || len < 2)
        return -EFAULT;
    if (n > page && peek(r, addr, out, n) != 0)
        n = page;
    if (peek(r, addr, out, n) != 0)
        return -EFAULT;
    out[n] = '\0';
    for (size_t i = 0; out[i]; i++)
        if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] == 0x7f)
            return -EFAULT;           /* no type's name: garbage */
    return out[0] ? 0 : -EFAULT;
}

int pp_pyobj_type_name_at(const pp_pyobj *r, uint64_t type, char *out, size_t len)
{
    uint64_t name;

    out[0] = '\0';
    if (!type || field(r, type, r->o->type_name, &name) != 0)
        return -EFAULT;
    return cstring(r, name, out, len);
}

int pp_pyobj_type_name(const pp_pyobj *r, uint64_t addr, char *out, size_t len)
{
    return pp_pyobj_type_name_at(r, type_of(r, addr), out, len);
}

/* ---- int ------------------------------------------------------------------ */

/* An int's count of digits and sign from its size field (ob_size, or
 * 3.12+'s lv_tag: digits << 3 | sign, 0 positive, 1 zero, 2 negative). */
static int count_of(const pp_py_offsets *o, int64_t size, size_t *nd, int *neg)
{
    uint64_t n;

    if (o->long_shift != 15 && o->long_shift != 30)
        return -EINVAL;                 /* CPython's two: any other table is wrong */
    if (o->long_tagged) {
        n = (uint64_t)size >> 3;
        *neg = (size & 3) == 2;
        if ((size & 3) == 1)
            n = 0;
    } else {
        *neg = size < 0;
        n = size < 0 ? 0 - (uint64_t)size : (uint64_t)size;   /* INT64_MIN too */
    }
    if (n > DIGITS_MAX)
        return -ERANGE;
    *nd = (size_t)n;
    return 0;
}

/* n digits of width bytes each from raw into d. */
static void unpack(const pp_py_offsets *o, const unsigned char *raw, size_t n, uint32_t *d)
{
    size_t width = o->long_shift > 16 ? 4 : 2;

    for (size_t i = 0; i < n; i++) {
        uint32_t v = 0;

        memcpy(&v, raw + i * width, width);
        d[i] = v;
    }
}

/* An int's digits, least significant first. */
static int digits_of(const pp_pyobj *r, uint64_t addr, uint32_t *d, size_t *nd, int *neg)
{
    const pp_py_offsets *o = r->o;
    int64_t size;
    size_t width = o->long_shift > 16 ? 4 : 2;
    unsigned char raw[DIGITS_MAX * 4];
    int rc;

    if (o->long_size < 0 || peek(r, addr + (uint64_t)o->long_size, &size, sizeof(size)) != 0)
        return -EFAULT;
    if ((rc = count_of(o, size, nd, neg)) != 0)
        return rc;
    if (*nd && peek(r, addr + (uint64_t)o->long_digits, raw, *nd * width) != 0)
        return -EFAULT;
    unpack(o, raw, *nd, d);
    return 0;
}

/* The value of digits d[0..n) when it fits in 64 bits. */
static int value_of(const pp_py_offsets *o, const uint32_t *d, size_t n, int neg,
                    int64_t *value)
{
    unsigned __int128 v = 0;

    for (size_t i = n; i-- > 0;) {
        v = (v << o->long_shift) | d[i];
        if (v > (unsigned __int128)INT64_MAX + 1)
            return -ERANGE;
    }
    if (!neg && v > INT64_MAX)
        return -ERANGE;
    *value = neg ? (int64_t)(0 - (uint64_t)v) : (int64_t)v;
    return 0;
}

int pp_pyobj_int(const pp_pyobj *r, uint64_t addr, int64_t *value)
{
    uint32_t d[DIGITS_MAX];
    size_t n;
    int neg, rc;
    uint64_t t = type_of(r, addr);

    if (t != r->t.int_type && t != r->t.bool_type)
        return t ? -EINVAL : -EFAULT;
    if ((rc = digits_of(r, addr, d, &n, &neg)) != 0)
        return rc;
    return value_of(r->o, d, n, neg, value);
}

int pp_pyobj_int_copy(const pp_py_offsets *o, const void *copy, size_t len, int64_t *value)
{
    const unsigned char *b = copy;
    uint32_t d[DIGITS_MAX];
    size_t n, width = o->long_shift > 16 ? 4 : 2;
    int64_t size;
    int neg, rc;

    if (o->long_size < 0 || o->long_digits < 0 || (size_t)o->long_size + 8 > len)
        return -EINVAL;
    memcpy(&size, b + o->long_size, sizeof(size));
    if ((rc = count_of(o, size, &n, &neg)) != 0)
        return rc;
    if ((size_t)o->long_digits + n * width > len)
        return -ERANGE;
    unpack(o, b + o->long_digits, n, d);
    return value_of(o, d, n, neg, value);
}

/* The decimal digits of an int of any size (up to DIGITS_MAX digits). */
static void int_text(const uint32_t *digits, size_t n, int shift, int neg, char *out,
                     size_t len)
{
    uint32_t d[DIGITS_MAX];
    uint32_t parts[DIGITS_MAX * 2];        /* base 10^9, least significant first */
    size_t np = 0, w = 0;
    char buf[DIGITS_MAX * 10 + 16];

    memcpy(d, digits, n * sizeof(*d));
    while (n && np < DIGITS_MAX * 2) {     /* divide by 10^9 until nothing is left */
        uint64_t rem = 0;

        for (size_t i = n; i-- > 0;) {
            uint64_t cur = (rem << shift) | d[i];

            d[i] = (uint32_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        parts[np++] = (uint32_t)rem;
        while (n && !d[n - 1])
            n--;
    }
    if (neg && np)
        buf[w++] = '-';
    if (!np)
        buf[w++] = '0';
    for (size_t i = np; i-- > 0;)
        w += (size_t)snprintf(buf + w, sizeof(buf) - w, i == np - 1 ? "%u" : "%09u", parts[i]);
    buf[w] = '\0';
    if (w < len)
        snprintf(out, len, "%s", buf);
    else
        snprintf(out, len, "%.*s...", (int)(len > 4 ? len - 4 : 0), buf);
}

/* ---- float, str, bytes ------------------------------------------------------ */

/* As Python's repr: the shortest digits that read back as v, in fixed
 * notation for exponents from -4 to 15 (with ".0" when whole), else
 * d.ddde+XX. */
static void float_text(double v, char *out, size_t len)
{
    char buf[40], mant[24];
    int p, e, nm = 0;

    if (isnan(v)) {
        snprintf(out, len, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(out, len, v < 0 ? "-inf" : "inf");
        return;
    }
    for (p = 1; p < 17; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
    for (const char *c = buf; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9')
            mant[nm++] = *c;
    mant[nm] = '\0';
    e = atoi(strchr(buf, 'e') + 1);
    const char *sign = signbit(v) ? "-" : "";
    if (e >= -4 && e < 16) {
        char fixed[64];
        size_t w = 0;

        if (e < 0) {
            w += (size_t)snprintf(fixed + w, sizeof(fixed) - w, "0.");
            for (int i = 0; i < -e - 1; i++)
                fixed[w++] = '0';
            w += (size_t)snprintf(fixed + w, sizeof(fixed) - w, "%s", mant);
        } else {
            for (int i = 0; i <= e; i++)
                fixed[w++] = i < nm ? mant[i] : '0';
            fixed[w++] = '.';
            if (nm > e + 1)
                w += (size_t)snprintf(fixed + w, sizeof(fixed) - w, "%s", mant + e + 1);
            else
                fixed[w++] = '0';
            fixed[w] = '\0';
        }
        snprintf(out, len, "%s%s", sign, fixed);
    } else {
        snprintf(out, len, "%s%c%s%s%se%c%02d", sign, mant[0], nm > 1 ? "." : "", mant + 1, "",
                 e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
}

/* One character of a str or bytes, escaped as repr does, at out + *w. */
static void put_escaped(uint32_t c, const char *utf8, size_t ulen, char quote, char *out,
                        size_t *w, size_t len)
{
    char buf[12];
    size_t n;

    if (c == (uint32_t)quote || c == '\\')
        n = (size_t)snprintf(buf, sizeof(buf), "\\%c", (char)c);
    else if (c == '\n')
        n = (size_t)snprintf(buf, sizeof(buf), "\\n");
    else if (c == '\r')
        n = (size_t)snprintf(buf, sizeof(buf), "\\r");
    else if (c == '\t')
        n = (size_t)snprintf(buf, sizeof(buf), "\\t");
    else if (c < 0x20 || c == 0x7f || (!utf8 && c >= 0x80))
        n = (size_t)snprintf(buf, sizeof(buf), "\\x%02x", c);
    else if (utf8) {
        memcpy(buf, utf8, ulen);
        n = ulen;
    } else {
        buf[0] = (char)c;
        n = 1;
    }
    if (*w + n + 1 < len) {
        memcpy(out + *w, buf, n);
        *w += n;
    }
}

/* The length of the UTF-8 sequence at s, and its code point. */
static size_t utf8_next(const unsigned char *s, uint32_t *c)
{
    size_t n = s[0] < 0x80 ? 1 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;

    *c = n == 1 ? s[0] : s[0] & (0x3f >> (n - 1));
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 1;                       /* pyread.c writes only UTF-8: never */
        *c = (*c << 6) | (s[i] & 0x3f);
    }
    return n;
}

static int str_repr(const pp_pyobj *r, uint64_t addr, char *out, size_t len)
{
    static char text[1024];
    int64_t length = 0;
    char quote = '\'';
    size_t w = 0, shown = 0;

    if (!pp_pyread_str(r->m, r->o, addr, r->t.str_type, text, sizeof(text)) ||
        peek(r, addr + (uint64_t)r->o->str_length, &length, sizeof(length)) != 0)
        return -EFAULT;
    if (strchr(text, '\'') && !strchr(text, '"'))
        quote = '"';
    out[w++] = quote;
    for (const char *p = text; *p && shown < STR_SHOWN; shown++) {
        uint32_t c;
        size_t n = utf8_next((const unsigned char *)p, &c);

        put_escaped(c, p, n, quote, out, &w, len - 5);
        p += n;
    }
    out[w++] = quote;
    out[w] = '\0';
    if ((int64_t)shown < length && w + 4 < len)
        strcat(out, "...");
    return 1;
}

static int bytes_repr(const pp_pyobj *r, uint64_t addr, char *out, size_t len)
{
    int64_t size = 0;
    unsigned char data[BYTES_SHOWN];
    size_t n, w = 0;

    if (peek(r, addr + (uint64_t)r->o->bytes_size, &size, sizeof(size)) != 0 || size < 0)
        return -EFAULT;
    n = size < BYTES_SHOWN ? (size_t)size : BYTES_SHOWN;
    if (n && peek(r, addr + (uint64_t)r->o->bytes_data, data, n) != 0)
        return -EFAULT;
    out[w++] = 'b';
    out[w++] = '\'';
    for (size_t i = 0; i < n; i++)
        put_escaped(data[i], NULL, 0, '\'', out, &w, len - 5);
    out[w++] = '\'';
    out[w] = '\0';
    if ((int64_t)n < size && w + 4 < len)
        strcat(out, "...");
    return 1;
}

int pp_pyobj_repr(const pp_pyobj *r, uint64_t addr, char *out, size_t len)
{
    uint64_t t = type_of(r, addr);
    uint32_t d[DIGITS_MAX];
    size_t n;
    int neg, rc = -EFAULT;
    double f;

    if (len < 16)
        return -EFAULT;
    snprintf(out, len, "?");
    if (!t)
        return -EFAULT;
    if (addr == r->t.none)
        rc = snprintf(out, len, "None") > 0;
    else if (addr == r->t.true_obj || addr == r->t.false_obj)
        rc = snprintf(out, len, addr == r->t.true_obj ? "True" : "False") > 0;
    else if (t == r->t.int_type) {
        rc = digits_of(r, addr, d, &n, &neg);
        if (rc == 0) {
            int_text(d, n, r->o->long_shift, neg, out, len);
            rc = 1;
        } else if (rc == -ERANGE) {
            snprintf(out, len, "int (more than %d bits)", DIGITS_MAX * r->o->long_shift);
            rc = 0;
        }
    } else if (t == r->t.float_type) {
        if (r->o->float_value >= 0 &&
            peek(r, addr + (uint64_t)r->o->float_value, &f, sizeof(f)) == 0) {
            float_text(f, out, len);
            rc = 1;
        }
    } else if (t == r->t.str_type)
        rc = str_repr(r, addr, out, len);
    else if (t == r->t.bytes_type)
        rc = bytes_repr(r, addr, out, len);
    else
        rc = pp_pyobj_type_name(r, addr, out, len);
    if (rc < 0)
        snprintf(out, len, "?");
    return rc;
}

/* ---- tuples and dicts ------------------------------------------------------- */

long pp_pyobj_tuple(const pp_pyobj *r, uint64_t tuple, uint64_t *items, size_t max)
{
    int64_t size = 0;
    uint64_t t = type_of(r, tuple);

    if (t != r->t.tuple_type)
        return t ? -EINVAL : -EFAULT;
    if (peek(r, tuple + (uint64_t)r->o->tuple_size, &size, sizeof(size)) != 0 || size < 0)
        return -EFAULT;
    if ((uint64_t)size > max)
        size = (int64_t)max;
    if (size && peek(r, tuple + (uint64_t)r->o->tuple_items, items, (size_t)size * 8) != 0)
        return -EFAULT;
    return (long)size;
}

/* The entries of the keys object at keys, with a split table's values
 * (values: 0 for a combined table; nvalues: how many it holds). */
static int keys_each(const pp_pyobj *r, uint64_t keys, uint64_t values, uint64_t nvalues,
                     pp_pyobj_item_fn fn, void *ctx)
{
    const pp_py_offsets *o = r->o;
    unsigned char h[64];
    uint64_t entries, size, index_bytes, e[CHUNK * 3], vals[CHUNK];
    int64_t nentries;
    size_t esize, key_at = 1, words;

    if (o->dictkeys_indices < 0 || o->dictkeys_indices > (int32_t)sizeof(h) ||
        peek(r, keys, h, (size_t)o->dictkeys_indices) != 0)
        return -EFAULT;
    memcpy(&nentries, h + o->dictkeys_nentries, sizeof(nentries));
    esize = (size_t)o->dict_entry_size;
    if (o->dictkeys_size >= 0) {                 /* 3.8-3.10 */
        memcpy(&size, h + o->dictkeys_size, sizeof(size));
        index_bytes = size * (size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffu ? 4 : 8);
    } else {
        if (h[o->dictkeys_log2_index_bytes] > 40)
            return -EFAULT;
        index_bytes = 1ull << h[o->dictkeys_log2_index_bytes];
        if (h[o->dictkeys_kind] != 0) {          /* str keys only: (key, value) */
            esize = (size_t)o->dict_unicode_entry_size;
            key_at = 0;
        }
    }
    if (nentries < 0 || nentries > PP_PYOBJ_DICT_MAX || index_bytes > (1ull << 32) ||
        (esize != 16 && esize != 24))
        return -EFAULT;
    words = esize / 8;
    entries = keys + (uint64_t)o->dictkeys_indices + index_bytes;
    for (int64_t at = 0; at < nentries; at += CHUNK) {
        size_t n = nentries - at < CHUNK ? (size_t)(nentries - at) : CHUNK;

        if (peek(r, entries + (uint64_t)at * esize, e, n * esize) != 0)
            return -EFAULT;
        memset(vals, 0, sizeof(vals));
        if (values) {
            size_t nv = (uint64_t)at >= nvalues ? 0 : nvalues - (uint64_t)at < n
                        ? (size_t)(nvalues - (uint64_t)at) : n;

            if (nv && peek(r, values + (uint64_t)o->dictvalues_values + (uint64_t)at * 8, vals,
                           nv * 8) != 0)
                return -EFAULT;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t key = e[i * words + key_at], value = values ? vals[i]
                                                                 : e[i * words + key_at + 1];

            if (key && value && fn(key, value, ctx))
                return 0;
        }
    }
    return 0;
}

int pp_pyobj_dict_each(const pp_pyobj *r, uint64_t dict, pp_pyobj_item_fn fn, void *ctx)
{
    uint64_t keys, values, t = type_of(r, dict), n = PP_PYOBJ_DICT_MAX;
    uint8_t capacity;

    if (t != r->t.dict_type)
        return t ? -EINVAL : -EFAULT;
    if (field(r, dict, r->o->dict_keys, &keys) != 0 ||
        field(r, dict, r->o->dict_values, &values) != 0 || !keys)
        return -EFAULT;
    /* 3.13+: a split table's values may hold fewer than its keys */
    if (values && r->o->dictvalues_capacity >= 0) {
        if (peek(r, values + (uint64_t)r->o->dictvalues_capacity, &capacity, 1) != 0)
            return -EFAULT;
        n = capacity;
    }
    return keys_each(r, keys, values, n, fn, ctx);
}

typedef struct lookup {
    const pp_pyobj *r;
    const char *key;
    uint64_t value;
    int found;
} lookup;

static int match(uint64_t key, uint64_t value, void *ctx)
{
    lookup *l = ctx;
    char name[256];

    if (pp_pyread_str(l->r->m, l->r->o, key, l->r->t.str_type, name, sizeof(name)) &&
        strcmp(name, l->key) == 0) {
        l->value = value;
        l->found = 1;
        return 1;
    }
    return 0;
}

int pp_pyobj_dict_get(const pp_pyobj *r, uint64_t dict, const char *key, uint64_t *value)
{
    lookup l = {r, key, 0, 0};
    int rc = pp_pyobj_dict_each(r, dict, match, &l);

    if (rc)
        return rc;
    *value = l.value;
    return l.found ? 0 : -ENOENT;
}

/* An instance's values kept apart from a dict (3.11+), with their keys. */
static int values_get(const pp_pyobj *r, uint64_t type, uint64_t values, const char *name,
                      uint64_t *value)
{
    const pp_py_offsets *o = r->o;
    uint64_t keys, n = PP_PYOBJ_DICT_MAX;
    uint8_t b;
    lookup l = {r, name, 0, 0};
    int rc;

    if (field(r, type, o->heaptype_cached_keys, &keys) != 0 || !keys)
        return -ENOENT;
    if (o->dictvalues_valid >= 0) {              /* 3.13+: inline values in use? */
        if (peek(r, values + (uint64_t)o->dictvalues_valid, &b, 1) != 0)
            return -EFAULT;
        if (!b)
            return -ENOENT;
        if (peek(r, values + (uint64_t)o->dictvalues_capacity, &b, 1) != 0)
            return -EFAULT;
        n = b;
    }
    if ((rc = keys_each(r, keys, values, n, match, &l)) != 0)
        return rc;
    *value = l.value;
    return l.found ? 0 : -ENOENT;
}

int pp_pyobj_attr(const pp_pyobj *r, uint64_t obj, const char *name, uint64_t *value)
{
    const pp_py_offsets *o = r->o;
    uint64_t type = type_of(r, obj), flags = 0, dict = 0, values = 0;
    int64_t dictoffset = 0, basicsize = 0;
    int managed;

    if (!type || field(r, type, o->type_flags, &flags) != 0 ||
        peek(r, type + (uint64_t)o->type_dictoffset, &dictoffset, sizeof(dictoffset)) != 0 ||
        peek(r, type + (uint64_t)o->type_basicsize, &basicsize, sizeof(basicsize)) != 0)
        return -EFAULT;
    managed = o->tpflags_managed_dict && (flags & (uint64_t)o->tpflags_managed_dict);
    if (!managed) {
        if (dictoffset <= 0 || dictoffset > 4096 || field(r, obj, (int32_t)dictoffset, &dict) != 0)
            return -ENOENT;
        return dict ? pp_pyobj_dict_get(r, dict, name, value) : -ENOENT;
    }
    if (peek(r, obj - (uint64_t)o->managed_dict_before, &dict, sizeof(dict)) != 0)
        return -EFAULT;
    switch (o->object_dict_form) {
    case PP_DICT_MANAGED_311:                    /* the values a word further */
        if (dict)
            return pp_pyobj_dict_get(r, dict, name, value);
        if (peek(r, obj - (uint64_t)o->managed_dict_before - 8, &values, sizeof(values)) != 0)
            return -EFAULT;
        break;
    case PP_DICT_MANAGED_312:                    /* low bit set: values - 1 */
        if (!(dict & 1))
            return dict ? pp_pyobj_dict_get(r, dict, name, value) : -ENOENT;
        values = dict + 1;
        break;
    default:                                     /* 3.13+: inline, unless a dict */
        if (dict)
            return pp_pyobj_dict_get(r, dict, name, value);
        if (!(flags & (uint64_t)o->tpflags_inline_values) || basicsize <= 0 || basicsize > 65536)
            return -ENOENT;
        values = obj + (uint64_t)basicsize;
        break;
    }
    return values ? values_get(r, type, values, name, value) : -ENOENT;
}

/* ---- a frame's locals, threads' names --------------------------------------- */

/* The names of a code object's variables, in the order of the frame's
 * localsplus: co_localsplusnames (3.11+), else co_varnames, co_cellvars,
 * co_freevars. */
static long local_names(const pp_pyobj *r, uint64_t code, uint64_t *names, size_t max)
{
    const pp_py_offsets *o = r->o;
    int32_t parts[3] = {o->code_varnames, o->code_cellvars, o->code_freevars};
    uint64_t tuple;
    long n = 0, k;

    if (o->code_localsplusnames >= 0)
        return field(r, code, o->code_localsplusnames, &tuple) == 0
               ? pp_pyobj_tuple(r, tuple, names, max) : -EFAULT;
    for (int i = 0; i < 3; i++) {
        if (field(r, code, parts[i], &tuple) != 0 ||
            (k = pp_pyobj_tuple(r, tuple, names + n, max - (size_t)n)) < 0)
            return -EFAULT;
        n += k;
    }
    return n;
}

long pp_pyobj_locals(const pp_pyobj *r, uint64_t frame, uint64_t code, pp_pylocal *out,
                     size_t max)
{
    const pp_py_offsets *o = r->o;
    static uint64_t names[NAMES_MAX], vals[NAMES_MAX];
    uint64_t mask = (uint64_t)(uint32_t)o->frame_code_tag_mask;
    long n = local_names(r, code, names, NAMES_MAX), k = 0;

    if (n < 0 || o->frame_localsplus < 0)
        return -EFAULT;
    if (n && peek(r, frame + (uint64_t)o->frame_localsplus, vals, (size_t)n * 8) != 0)
        return -EFAULT;
    for (long i = 0; i < n && (size_t)k < max; i++) {
        uint64_t v = vals[i];
        pp_pylocal *l = &out[k];

        if (mask && (v & 3) == 3) {              /* 3.14+: an int in the reference */
            snprintf(l->value, sizeof(l->value), "%lld", (long long)((int64_t)v >> 2));
            l->is_value = 1;
        } else {
            v &= ~mask;
            if (v && type_of(r, v) == r->t.cell_type && field(r, v, o->cell_ref, &v) != 0)
                v = 0;                           /* a variable closures share */
            if (!v)
                continue;                        /* no value yet, or deleted */
            l->is_value = pp_pyobj_repr(r, v, l->value, sizeof(l->value)) == 1;
        }
        if (!pp_pyread_str(r->m, o, names[i], r->t.str_type, l->name, sizeof(l->name)))
            snprintf(l->name, sizeof(l->name), "?");
        k++;
    }
    return k;
}

typedef struct naming {
    const pp_pyobj *r;
    const uint64_t *idents;
    char (*names)[64];
    size_t n;
    int named;
} naming;

static int name_one(uint64_t key, uint64_t thread, void *ctx)
{
    naming *nm = ctx;
    int64_t ident;
    uint64_t name;

    if (pp_pyobj_int(nm->r, key, &ident) != 0)
        return 0;
    for (size_t i = 0; i < nm->n; i++)
        if (nm->idents[i] == (uint64_t)ident && !nm->names[i][0] &&
            pp_pyobj_attr(nm->r, thread, "_name", &name) == 0 &&
            pp_pyread_str(nm->r->m, nm->r->o, name, nm->r->t.str_type, nm->names[i], 64))
            nm->named++;
    return 0;
}

int pp_pyobj_thread_names(const pp_pyobj *r, uint64_t interp, const uint64_t *idents,
                          char (*names)[64], size_t n)
{
    uint64_t modules, threading, dict, active;
    naming nm = {r, idents, names, n, 0};

    for (size_t i = 0; i < n; i++)
        names[i][0] = '\0';
    if (field(r, interp, r->o->interp_modules, &modules) != 0 ||
        pp_pyobj_dict_get(r, modules, "threading", &threading) != 0 ||
        type_of(r, threading) != r->t.module_type ||
        field(r, threading, r->o->module_dict, &dict) != 0 ||
        pp_pyobj_dict_get(r, dict, "_active", &active) != 0)
        return 0;
    pp_pyobj_dict_each(r, active, name_one, &nm);
    return nm.named;
}
