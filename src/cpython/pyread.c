/*
 * A running CPython's objects read from its memory (see pyread.h): a str,
 * a code object's identity, names and line table, where its bytecode
 * starts. Nothing read is trusted: the program's memory changes under the
 * reader, and may hold anything (a pointer stale, a string half-written,
 * a length made up): every read is bounded, a failed read gives an empty
 * answer, never a guess, and no length read is used before it is checked.
 */
#include "pyread.h"
#include "name_id.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define STR_MAX 255          /* characters read of a name or a file */

/* One code point as UTF-8 into out (room for 4); its length. */
static size_t utf8(uint32_t c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (c >> 18 & 0x07));
    out[1] = (char)(0x80 | (c >> 12 & 0x3f));
    out[2] = (char)(0x80 | (c >> 6 & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* The character width a str's state names (1, 2 or 4 when it is one). */
static size_t kind_of(const pp_py_offsets *o, uint32_t state)
{
    if (o->str_kind_mask <= 0)
        return 0;                  /* a table of no use, whoever wrote it */
    return (state & (uint32_t)o->str_kind_mask) >> __builtin_ctz((unsigned)o->str_kind_mask);
}

/* The str's characters as UTF-8 from raw (kind 1, 2 or 4 bytes each, n of them). */
static void utf8_of(const unsigned char *raw, size_t kind, size_t n, char *out, size_t size)
{
    size_t w = 0;

    for (size_t i = 0; i < n && w + 5 <= size; i++) {
        uint32_t c = raw[i];
        uint16_t c2;

        /* a copy's characters sit where another process put them: any alignment */
        if (kind == 2) {
            memcpy(&c2, raw + i * 2, 2);
            c = c2;
        } else if (kind == 4) {
            memcpy(&c, raw + i * 4, 4);
        }

        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            c = 0xfffd;              /* never write what is not UTF-8 */
        w += utf8(c, out + w);
    }
    out[w] = '\0';
}

size_t pp_pyread_chars(const void *chars, size_t n, size_t kind, char *out, size_t size)
{
    if (!size)
        return 0;
    utf8_of(chars, kind, n, out, size);
    return strlen(out);
}

int pp_pyread_is(const pp_mem *m, const pp_py_offsets *o, uint64_t obj, uint64_t type)
{
    uint64_t t = 0;

    return !type || (pp_mem_u64(m, obj, o->object_type, &t) == 0 && t == type);
}

/* A str object (compact, as every name and file name is) as UTF-8; "" when
 * it cannot be read, or is no str (str_type: PyUnicode_Type, 0: unchecked). */
int pp_pyread_str(const pp_mem *m, const pp_py_offsets *o, uint64_t addr, uint64_t str_type,
                  char *out, size_t size)
{
    uint32_t state;
    int64_t length;
    unsigned char raw[STR_MAX * 4];
    size_t kind, n;

    out[0] = '\0';
    if (!pp_pyread_is(m, o, addr, str_type) ||
        pp_mem_read(m, addr + (uint64_t)o->str_state, &state, sizeof(state)) != 0 ||
        pp_mem_read(m, addr + (uint64_t)o->str_length, &length, sizeof(length)) != 0 ||
        !(state & o->str_compact_mask) || length < 0)
        return 0;
    kind = kind_of(o, state);
    if (kind != 1 && kind != 2 && kind != 4)
        return 0;
    n = (size_t)length < STR_MAX ? (size_t)length : STR_MAX;
    if (pp_mem_read(m, addr + (uint64_t)(state & o->str_ascii_mask ? o->str_ascii_data
                                                              : o->str_compact_data),
             raw, n * kind) != 0)
        return 0;
    utf8_of(raw, kind, n, out, size);
    return 1;
}

int pp_pyread_str_copy(const pp_py_offsets *o, const void *copy, size_t n, char *out,
                       size_t size)
{
    const unsigned char *b = copy;
    uint32_t state;
    int64_t length;
    size_t kind, data, have;

    out[0] = '\0';
    if (o->str_state < 0 || o->str_length < 0 || (size_t)o->str_state + 4 > n ||
        (size_t)o->str_length + 8 > n)
        return 0;
    memcpy(&state, b + o->str_state, sizeof(state));
    memcpy(&length, b + o->str_length, sizeof(length));
    kind = kind_of(o, state);
    data = (size_t)(state & o->str_ascii_mask ? o->str_ascii_data : o->str_compact_data);
    if (!(state & o->str_compact_mask) || length < 0 || (kind != 1 && kind != 2 && kind != 4) ||
        data > n)
        return 0;
    have = (n - data) / kind;
    utf8_of(b + data, kind, (size_t)length < have ? (size_t)length : have, out, size);
    return (size_t)length <= have ? 1 : 2;
}

int pp_pyread_code(const pp_mem *m, const pp_py_offsets *o, const pp_pyread_types *types,
                   uint64_t code, pp_pyread_frame *f)
{
    uint64_t name = 0, file = 0;
    int32_t line = 0;

    f->code = code;
    f->qualname[0] = f->file[0] = '\0';
    f->def_line = 0;
    if (!pp_pyread_is(m, o, code, types ? types->code : 0))
        return 0;
    pp_mem_u64(m, code, o->code_qualname >= 0 ? o->code_qualname : o->code_name, &name);
    pp_mem_u64(m, code, o->code_filename, &file);
    pp_mem_read(m, code + (uint64_t)o->code_firstlineno, &line, sizeof(line));
    pp_pyread_str(m, o, name, types ? types->str : 0, f->qualname, sizeof(f->qualname));
    pp_pyread_str(m, o, file, types ? types->str : 0, f->file, sizeof(f->file));
    f->def_line = line;
    return f->qualname[0] != '\0';
}


/* ---- a code object's identity, its line table, a frame's offset ------------- */

int pp_pyread_code_fields(const pp_mem *m, const pp_py_offsets *o, uint64_t code,
                          pp_pyread_fields *id)
{
    uint64_t len = 0;
    __u64 chars[4] = {0, 0, 0, 0};
    int64_t hash = -1;
    size_t n;
    int rc;

    memset(id, 0, sizeof(*id));
    if ((rc = pp_mem_u64(m, code, o->code_qualname >= 0 ? o->code_qualname : o->code_name,
                       &id->name)) != 0 ||
        (rc = pp_mem_u64(m, code, o->code_filename, &id->file)) != 0 ||
        (rc = pp_mem_u64(m, code, o->code_linetable, &id->table)) != 0 ||
        (rc = pp_mem_u64(m, id->name, o->str_hash, (uint64_t *)&hash)) != 0 ||
        (rc = pp_mem_u64(m, id->name, o->str_length, &len)) != 0)
        return rc;
    n = len > PP_NAME_ID_BYTES ? PP_NAME_ID_BYTES : (size_t)len;
    if (n && pp_mem_read(m, id->name + (uint64_t)o->str_ascii_data, chars, n) != 0)
        memset(chars, 0, sizeof(chars));       /* as bpf_probe_read_user leaves it */
    id->name_id = pp_name_id(hash, len, chars);
    id->name_chars = pp_name_id(-1, len, chars);
    return pp_mem_read(m, code + (uint64_t)o->code_firstlineno, &id->def_line,
                       sizeof(id->def_line));
}

long pp_pyread_bytes(const pp_mem *m, const pp_py_offsets *o, uint64_t table, unsigned char *out,
                     size_t cap)
{
    int64_t size = 0;
    int rc;

    if (o->code_linetable < 0)
        return -ENOENT;
    if ((rc = pp_mem_read(m, table + (uint64_t)o->bytes_size, &size, sizeof(size))) != 0)
        return rc;
    if (size < 0)
        return -EINVAL;
    if ((uint64_t)size > cap)
        return -E2BIG;
    if ((rc = pp_mem_read(m, table + (uint64_t)o->bytes_data, out, (size_t)size)) != 0)
        return rc;
    return (long)size;
}

uint64_t pp_pyread_code_start(const pp_mem *m, const pp_py_offsets *o, uint64_t code, int32_t tlbc)
{
    uint64_t array = 0, start = 0;
    int64_t size = 0;

    if (o->code_adaptive < 0)
        return 0;
    if (tlbc <= 0 || o->code_tlbc < 0)
        return code + (uint64_t)o->code_adaptive;
    /* _PyCodeArray: its size, then one pointer per thread's copy */
    if (pp_mem_u64(m, code, o->code_tlbc, &array) != 0 ||
        pp_mem_read(m, array, &size, sizeof(size)) != 0 || tlbc >= size ||
        pp_mem_read(m, array + 8 + 8 * (uint64_t)tlbc, &start, sizeof(start)) != 0)
        return 0;
    return start;
}

int64_t pp_pyread_offset(const pp_py_offsets *o, uint64_t start, uint64_t instr)
{
    if (o->instr_kind == PP_INSTR_POINTER) {
        if (!start || instr < start || instr - start > INT32_MAX)
            return -1;
        return (int64_t)(instr - start);
    }
    return (int64_t)(int32_t)instr * (o->instr_kind == PP_INSTR_LASTI_UNITS ? 2 : 1);
}

