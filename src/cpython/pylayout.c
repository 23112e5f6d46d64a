/*
 * Which layout a running CPython has (see pylayout.h).
 */
#include "pylayout.h"
#include "mem.h"
#include "pytables.h"
#include "refuse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_OFFSET (1u << 20)        /* no structure perfpy walks is this large */

static uint64_t u64_at(const unsigned char *p, size_t at)
{
    uint64_t v;

    memcpy(&v, p + at, sizeof(v));
    return v;
}

/* One published field over the table's value; its name when it is no
 * offset of any structure. */
static const char *take(const unsigned char *rt, int32_t at, int32_t zero_absent,
                        int32_t *field, const char *name, uint64_t *value)
{
    if (at < 0)
        return NULL;
    *value = u64_at(rt, (size_t)at);
    if (*value == 0 && zero_absent)
        *field = -1;
    else if (*value >= MAX_OFFSET)
        return name;
    else
        *field = (int32_t)*value;
    return NULL;
}

/* The published offsets over the table's; the unpublished ones that sit at
 * a fixed distance from a published one follow it. */
static int apply_debug(const pp_py_table *t, const unsigned char *rt, pp_py_offsets *o,
                       const char *version, char *why, size_t len)
{
    const char *bad = NULL;
    uint64_t value = 0;

#define TAKE(name, headers, debug)                                                    \
    if (!bad)                                                                         \
        bad = take(rt, t->debug_at.name, t->debug_zero.name, &o->name, #name, &value);
    PP_PY_FIELDS(TAKE)
#undef TAKE
    if (bad)
        return pp__refuse(why, len, -ENOTSUP, "CPython %s: its _Py_DebugOffsets give %s as %llu, "
                          "past any structure", version, bad, (unsigned long long)value);
    if (t->debug_at.str_hash < 0)             /* PyASCIIObject: length, then hash */
        o->str_hash = o->str_length + (t->off.str_hash - t->off.str_length);
    if (t->debug_at.str_compact_data < 0)     /* PyASCIIObject, then 2 fields */
        o->str_compact_data = o->str_ascii_data + (t->off.str_compact_data - t->off.str_ascii_data);
    return 0;
}

/* The object header tells the flavours apart (a free-threaded one is 16
 * bytes larger): published values that are not the table's flavour are a
 * flag that lies, or a build perfpy has no table for. */
static int check_flavour(const pp_py_table *t, const pp_py_offsets *o, const char *version,
                         char *why, size_t len)
{
    if (o->object_type == t->off.object_type && o->str_ascii_data == t->off.str_ascii_data)
        return 0;
    return pp__refuse(why, len, -ENOTSUP, "CPython %s%s: its _Py_DebugOffsets place "
                      "PyObject.ob_type at %d and size a str's header %d bytes, where that "
                      "build has %d and %d: a layout perfpy does not know", version,
                      t->free_threaded ? " (free-threaded, as its debug offsets say)" : "",
                      o->object_type, o->str_ascii_data, t->off.object_type,
                      t->off.str_ascii_data);
}

static int from_debug(const unsigned char *rt, size_t n, uint32_t py_version, unsigned flags,
                      pp_pylayout *out, char *why, size_t len)
{
    uint64_t version = u64_at(rt, 8), ft = u64_at(rt, 16);
    const pp_py_table *t;
    char v[32], pv[32];
    int rc;

    pp_py_version_text((uint32_t)version, v, sizeof(v));
    if (version >> 32 || version >> 24 != 3 || ((version >> 16) & 0xff) < 13)
        return pp__refuse(why, len, -ENOTSUP, "its _Py_DebugOffsets give the version %#llx, "
                          "which no CPython with debug offsets has (3.13 or newer)",
                          (unsigned long long)version);
    if (py_version && py_version >> 16 != version >> 16)
        return pp__refuse(why, len, -ENOTSUP, "its _Py_DebugOffsets say CPython %s, its "
                          "Py_Version %s: a layout that does not match its version",
                          v, pp_py_version_text(py_version, pv, sizeof(pv)));
    if (ft > 1)
        return pp__refuse(why, len, -ENOTSUP, "CPython %s: its _Py_DebugOffsets give "
                          "free_threaded = %llu (0 or 1 expected)", v, (unsigned long long)ft);
    out->free_threaded = (int)ft;    /* said even when refused: it has no GIL */
    if (ft && !(flags & PP_PYLAYOUT_FREE_THREADED))
        return pp__refuse(why, len, -ENOTSUP, "CPython %s is a free-threaded build (its "
                          "_Py_DebugOffsets say so): perfpy has its layout but its reading has "
                          "never been tested on a real free-threaded interpreter, so it is not "
                          "read (PERFPY_FREE_THREADED=1 reads it anyway)", v);
    if (!(t = pp_py_table_find((uint32_t)version, (int)ft)))
        return pp__refuse(why, len, -ENOTSUP, "CPython %s%s is newer than the versions this "
                          "perfpy knows (3.8 to 3.15): the fields its _Py_DebugOffsets do not "
                          "publish are unknown", v, ft ? " (free-threaded)" : "");
    if (n < t->debug_size)
        return pp__refuse(why, len, -ENOTSUP, "CPython %s: its _Py_DebugOffsets could not be "
                          "read whole", v);
    out->off = t->off;
    out->off.version_hex = (uint32_t)version;
    if ((rc = apply_debug(t, rt, &out->off, v, why, len)) != 0 ||
        (rc = check_flavour(t, &out->off, v, why, len)) != 0)
        return rc;
    out->version_hex = (uint32_t)version;
    out->from_debug = 1;
    out->free_threaded = (int)ft;
    return 0;
}

int pp_pylayout_from(const void *runtime, size_t n, uint32_t py_version, unsigned flags,
                     pp_pylayout *out, char *why, size_t len)
{
    const unsigned char *rt = runtime;
    const pp_py_table *t;
    char v[32];

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    if (n >= 24 && memcmp(rt, PP_PYLAYOUT_COOKIE, 8) == 0)
        return from_debug(rt, n, py_version, flags, out, why, len);
    if (!py_version)
        return pp__refuse(why, len, -ENOENT, "its version cannot be told (no Py_Version, no "
                          "debug offsets, a file name without python3.X)");
    pp_py_version_text(py_version, v, sizeof(v));
    if (py_version >> 16 >= 0x030d)
        return pp__refuse(why, len, -ENOTSUP, "CPython %s: its _PyRuntime does not start with "
                          "the _Py_DebugOffsets cookie \"%s\", so its layout cannot be checked",
                          v, PP_PYLAYOUT_COOKIE);
    if (!(t = pp_py_table_find(py_version, 0)))
        return pp__refuse(why, len, -ENOTSUP, "CPython %s is not a version perfpy reads (3.8 to "
                          "3.15)", v);
    out->off = t->off;
    out->version_hex = py_version;
    return 0;
}

uint32_t pp_pylayout_version_of_name(const char *path)
{
    const char *base = strrchr(path, '/'), *p;
    unsigned major, minor;

    base = base ? base + 1 : path;
    for (p = base; (p = strstr(p, "python")) != NULL; p += 6)
        if (sscanf(p + 6, "%u.%u", &major, &minor) == 2 && major <= 9 && minor <= 99)
            return major << 24 | minor << 16;
    return 0;
}

int pp_pylayout_read(const pp_mem *m, uint64_t runtime, uint64_t version_at, const char *file,
                     unsigned flags, pp_pylayout *out, char *why, size_t len)
{
    static unsigned char rt[PP_PYLAYOUT_READ];
    uint64_t py_version = 0;
    size_t n;
    int rc = -EFAULT;

    /* _PyRuntime is far larger than its debug offsets; a read that ends at
     * a mapping's end is retried shorter */
    for (n = sizeof(rt); n >= 64; n /= 2)
        if ((rc = pp_mem_read(m, runtime, rt, n)) == 0)
            break;
    if (n < 64)
        return pp__refuse(why, len, rc == -ESRCH ? -ESRCH : -EFAULT, "its _PyRuntime could not "
                          "be read");
    if (!version_at || pp_mem_read(m, version_at, &py_version, sizeof(py_version)) != 0)
        if ((py_version = pp_pylayout_version_of_name(file)) >> 24 != 3)
            py_version = 0;             /* a layout is only ever CPython 3's */
    return pp_pylayout_from(rt, n, (uint32_t)py_version, flags, out, why, len);
}
