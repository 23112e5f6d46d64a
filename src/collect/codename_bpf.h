/*
 * A code object's name, copied by the BPF program the first time one of
 * its frames is sampled (sample.bpf.c with codename.bpf.h; user space:
 * codename.c). Shared by both sides of the kernel boundary: fixed sizes,
 * __u types.
 *
 * Why: user space names a sampled code object by reading it from the
 * program's memory (pycode.c), some milliseconds after the sample, and a
 * code object made and freed within those milliseconds (code.replace(),
 * exec() of generated source, a lambda made per call) is gone by then: its
 * frames were [unknown]. The BPF program is there while the object lives,
 * so on a frame whose code object it has not seen, it copies what naming
 * needs into a ring of its own, before the sample is submitted:
 *
 *   sample ─► frame ─► (pid, code, name, file, table, name hash, def line)
 *                        in `known` (an LRU hash)? ── yes ──► nothing more
 *                        │ no
 *                        ▼
 *            a pp_bpf_code in the names ring: the name's and the file's
 *            characters (as the str holds them: 1, 2 or 4 bytes each), the
 *            def line, the line table's first PP_BPF_CODE_TABLE_BYTES
 *            bytes; the key put in `known`
 *
 * User space reads the names ring before each sample (collect.c), so the
 * copy is in the cache before the sample that needs it. What is cut: a
 * name longer than PP_BPF_CODE_NAME_BYTES bytes of characters, a file name
 * longer than PP_BPF_CODE_FILE_BYTES, a line table longer than
 * PP_BPF_CODE_TABLE_BYTES (user space reads the whole table from the
 * process when the object still lives; else the lines past the copy are
 * the def line). A copy that does not fit in the ring leaves the key out
 * of `known` (the next sample tries again) and is counted; user space then
 * reads the object as before.
 */
#ifndef PERFPY_COLLECT_CODENAME_BPF_H
#define PERFPY_COLLECT_CODENAME_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PP_BPF_CODE_KNOWN 32768             /* code objects remembered (LRU) */
#define PP_BPF_CODE_RING_BYTES (8 << 20)
#define PP_BPF_CODE_NAME_BYTES 256          /* powers of two: the copies are */
#define PP_BPF_CODE_FILE_BYTES 512          /* bounded by masks the verifier */
#define PP_BPF_CODE_TABLE_BYTES 2048        /* follows */

/* pyoffsets.h's fields the copy needs beyond pp_bpf_offsets (-1: absent). */
struct pp_bpf_code_offsets {
    __s32 str_state, str_ascii_mask, str_compact_mask, str_kind_mask, str_kind_shift;
    __s32 str_ascii_data, str_compact_data, bytes_size, bytes_data;
    __s32 pad;
};

/* A code object as one sampled frame saw it (pycode.h's identity). */
struct pp_bpf_code_key {
    __u32 pid, firstlineno;
    __u64 code, name, file, table, name_id;
};

/* A str's characters as the program holds them. */
struct pp_bpf_code_str {
    __u32 state;                    /* PyASCIIObject.state: its kind, compact, ascii */
    __u32 bytes;                    /* bytes of characters copied */
    __u64 length;                   /* its length in characters */
};

struct pp_bpf_code {
    struct pp_bpf_code_key key;
    struct pp_bpf_code_str name, file;
    __u32 table_len;                /* the line table's length (0: none read) */
    __u32 table_bytes;              /* bytes of it copied */
    __u8 name_chars[PP_BPF_CODE_NAME_BYTES];
    __u8 file_chars[PP_BPF_CODE_FILE_BYTES];
    __u8 table[PP_BPF_CODE_TABLE_BYTES];
};

#endif
