/*
 * A code object's name's identity, computed alike by the BPF program at a
 * sample (collect/sample.bpf.c) and by the reader in user space (pyread.c),
 * so that a name read later is known to be the one the sample saw: the
 * str's own hash once computed (names interned by the compiler have it at
 * once), else its length and up to its first 32 bytes of characters
 * (str_ascii_data on: a name made at run time, code.replace()). Plain C
 * that the BPF compiler takes too (linux/types.h).
 */
#ifndef PERFPY_CPYTHON_NAME_ID_H
#define PERFPY_CPYTHON_NAME_ID_H

#ifndef __VMLINUX_H__             /* the BPF compile has the kernel's types */
#include <linux/types.h>
#endif

#define PP_NAME_ID_BYTES 32

static inline __u64 pp_name_id(__s64 hash, __u64 length, const __u64 chars[4])
{
    __u64 h = length * 0x9e3779b97f4a7c15ull;

    if (hash != -1)
        return (__u64)hash;
    for (int i = 0; i < 4; i++)
        h = (h ^ chars[i]) * 0x100000001b3ull + (h >> 29);
    return h == (__u64)-1 ? 0 : h;
}

#endif
