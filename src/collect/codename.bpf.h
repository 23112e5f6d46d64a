/*
 * The BPF half of naming code objects at first sight (codename_bpf.h says
 * why and what is copied): included by sample.bpf.c, which calls
 * pp_code_first_sight for each Python frame it records, reading the
 * program's memory with its read_user (the sampled task's own, or another
 * task's from a sleepable program).
 *
 * Its cost on a frame already seen: one lookup in an LRU hash. On a frame
 * not seen: the record (3 KiB of ring, mostly the line table's room) and
 * five reads of the program's memory, once per code object and process.
 */
#ifndef PERFPY_COLLECT_CODENAME_BPF_IMPL_H
#define PERFPY_COLLECT_CODENAME_BPF_IMPL_H

#include "codename_bpf.h"

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, PP_BPF_CODE_KNOWN);
    __type(key, struct pp_bpf_code_key);
    __type(value, __u32);
} known SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, PP_BPF_CODE_RING_BYTES);
} names SEC(".maps");

/* A str's state, length and up to cap bytes of its characters (cap a
 * power of two: the mask keeps the copy inside dst for the verifier). */
static __always_inline void pp_code_str(struct pp_bpf_code_str *s, __u8 *dst, __u32 cap,
                                        __u64 str, const struct pp_bpf_offsets *o,
                                        const struct pp_bpf_code_offsets *co,
                                        struct task_struct *task, int sleepable)
{
    __u64 len = 0, n;
    __u32 state = 0, kind;
    __s32 data;

    s->state = 0;
    s->bytes = 0;
    s->length = 0;
    if (!str || co->str_state < 0 || o->str_length < 0 || co->str_kind_shift < 0 ||
        co->str_kind_shift > 31)
        return;
    read_user(&state, sizeof(state), str + co->str_state, task, sleepable);
    read_user(&len, sizeof(len), str + o->str_length, task, sleepable);
    if (!(state & (__u32)co->str_compact_mask))
        return;                     /* names are compact: what is not is no name */
    kind = (state & (__u32)co->str_kind_mask) >> co->str_kind_shift;
    data = state & (__u32)co->str_ascii_mask ? co->str_ascii_data : co->str_compact_data;
    if ((kind != 1 && kind != 2 && kind != 4) || data < 0 || len > (1u << 20))
        return;
    n = len * kind;
    if (n > cap)
        n = cap;
    n &= 2 * cap - 1;               /* n <= cap: a bound the verifier keeps */
    if (n > cap)
        return;
    s->state = state;
    s->length = len;
    if (n && read_user(dst, (__u32)n, str + data, task, sleepable) == 0)
        s->bytes = (__u32)n;
}

/* The line table (a bytes object): its length, and its first bytes. */
static __always_inline void pp_code_table(struct pp_bpf_code *r, __u64 table,
                                          const struct pp_bpf_code_offsets *co,
                                          struct task_struct *task, int sleepable)
{
    __s64 size = 0;
    __u64 n;

    r->table_len = 0;
    r->table_bytes = 0;
    if (!table || co->bytes_size < 0 || co->bytes_data < 0)
        return;
    read_user(&size, sizeof(size), table + co->bytes_size, task, sleepable);
    if (size <= 0 || size > (1 << 30))
        return;
    r->table_len = (__u32)size;
    n = (__u64)size > PP_BPF_CODE_TABLE_BYTES ? PP_BPF_CODE_TABLE_BYTES : (__u64)size;
    n &= 2 * PP_BPF_CODE_TABLE_BYTES - 1;
    if (n > PP_BPF_CODE_TABLE_BYTES)
        return;
    if (n && read_user(r->table, (__u32)n, table + co->bytes_data, task, sleepable) == 0)
        r->table_bytes = (__u32)n;
}

/* f, a frame of process pid just recorded: its code object copied to the
 * names ring unless seen before. */
static __always_inline void pp_code_first_sight(const struct pp_bpf_offsets *o,
                                                const struct pp_bpf_code_offsets *co, __u32 pid,
                                                const struct pp_bpf_pyframe *f,
                                                struct task_struct *task, int sleepable)
{
    struct pp_bpf_code_key k = {
        .pid = pid, .firstlineno = f->firstlineno, .code = f->code, .name = f->name,
        .file = f->file, .table = f->table, .name_id = f->name_id,
    };
    struct pp_bpf_code *r;
    __u32 one = 1;

    if (bpf_map_lookup_elem(&known, &k))
        return;
    /* another CPU copying it at the same moment: one copy is enough */
    if (bpf_map_update_elem(&known, &k, &one, BPF_NOEXIST) != 0)
        return;
    if (!(r = bpf_ringbuf_reserve(&names, sizeof(*r), 0))) {
        bpf_map_delete_elem(&known, &k);         /* tried again at its next sample */
        count(PP_BPF_N_LOST_NAMES);
        return;
    }
    r->key = k;
    pp_code_str(&r->name, r->name_chars, PP_BPF_CODE_NAME_BYTES, k.name, o, co, task, sleepable);
    pp_code_str(&r->file, r->file_chars, PP_BPF_CODE_FILE_BYTES, k.file, o, co, task, sleepable);
    pp_code_table(r, k.table, co, task, sleepable);
    /* no wake-up: user space reads this ring before each sample it gets */
    bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

#endif
