/*
 * Code objects named from the BPF program's copies (see codename.h). The
 * copy is the program's memory as it was at a sample: every length in it
 * is checked against what was copied before it is used.
 */
#include "codename.h"

#include <errno.h>
#include <string.h>

void pp_codename_offsets(const pp_py_offsets *o, struct pp_bpf_code_offsets *co)
{
    memset(co, 0, sizeof(*co));
    co->str_state = o->str_state;
    co->str_ascii_mask = o->str_ascii_mask;
    co->str_compact_mask = o->str_compact_mask;
    co->str_kind_mask = o->str_kind_mask;
    co->str_kind_shift = o->str_kind_mask > 0 ? __builtin_ctz((unsigned)o->str_kind_mask) : -1;
    co->str_ascii_data = o->str_ascii_data;
    co->str_compact_data = o->str_compact_data;
    co->bytes_size = o->bytes_size;
    co->bytes_data = o->bytes_data;
}

int pp_codename_str(const struct pp_bpf_code_str *s, const unsigned char *chars, size_t cap,
                    const pp_py_offsets *o, char *out, size_t size, int *cut)
{
    size_t kind, n, bytes = s->bytes < cap ? s->bytes : cap;

    if (size)
        out[0] = '\0';
    if (!size || o->str_kind_mask <= 0 || !(s->state & (uint32_t)o->str_compact_mask))
        return 0;
    kind = (s->state & (uint32_t)o->str_kind_mask) >> __builtin_ctz((unsigned)o->str_kind_mask);
    if (kind != 1 && kind != 2 && kind != 4)
        return 0;
    n = bytes / kind;
    if (n > s->length)
        n = (size_t)s->length;
    /* each character is at most 4 bytes of UTF-8, and one more for the end */
    if (s->length > n || n * 4 + 1 > size)
        *cut = 1;
    pp_pyread_chars(chars, n, kind, out, size);
    return 1;
}

int pp_codename_take(pp_pycode *c, const pp_mem *m, const struct pp_bpf_code *r, size_t len,
                     const pp_py_offsets *o, const pp_pyread_types *types)
{
    char qualname[PP_BPF_CODE_NAME_BYTES * 4 + 1], file[PP_BPF_CODE_FILE_BYTES * 4 + 1];
    const struct pp_bpf_code_key *k = &r->key;
    pp_pycode_id id = {k->code, {k->name, k->file, k->table, k->name_id, 0,
                                 (int32_t)k->firstlineno}};
    pp_pycode_copy copy = {qualname, file, r->table, 0, 1};
    int cut = 0;

    if (len < sizeof(*r) ||
        !pp_codename_str(&r->name, r->name_chars, sizeof(r->name_chars), o, qualname,
                         sizeof(qualname), &cut) || !qualname[0])
        return -EINVAL;
    pp_codename_str(&r->file, r->file_chars, sizeof(r->file_chars), o, file, sizeof(file), &cut);
    copy.table_len = r->table_bytes < sizeof(r->table) ? r->table_bytes : sizeof(r->table);
    copy.whole = !cut && copy.table_len == r->table_len;
    if (m->pid != (pid_t)k->pid)
        return -EINVAL;
    return pp_pycode_put(c, m, o, types, &id, &copy);
}
