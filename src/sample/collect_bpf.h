/*
 * What sample.bpf.c and collect.c share: a target process's entry, and one
 * sample's ring-buffer record. Fixed sizes, __u types: the same layout on
 * both sides of the kernel boundary.
 */
#ifndef PERFPY_SAMPLE_COLLECT_BPF_H
#define PERFPY_SAMPLE_COLLECT_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PP_BPF_MAX_TARGETS 4096
#define PP_BPF_RING_BYTES (32 << 20)
#define PP_BPF_MAX_THREADS 64       /* threads searched for the sampled one */
/* Python frames read (a power of two): numpy/pandas stacks reach 121, and
 * each costs the sample 64 bytes of ring buffer, not time (the walk stops
 * at the chain's first frame) */
#define PP_BPF_MAX_PY 256
#define PP_BPF_MAX_HOPS 512         /* frames walked, shims included (3.12+: one
                                       per entry frame) */
#define PP_BPF_MAX_KERNEL 64
#define PP_BPF_STACK_PAGES 17       /* 64 KiB from sp, and sp's own page */

enum {
    PP_BPF_USER = 1,                /* the task has user memory: regs and stack */
    PP_BPF_PY_THREAD = 2,           /* its PyThreadState was found */
    PP_BPF_PY_TRUNCATED = 4,        /* deeper than PP_BPF_MAX_PY (or _HOPS): without
                                       it, a thread's chain was read to its first frame */
};

/* pyoffsets.h's fields the kernel side needs (-1: absent). */
struct pp_bpf_offsets {
    __s32 runtime_interpreters_head, interp_threads_head;
    __s32 tstate_next, tstate_thread_id, tstate_frame, tstate_cframe, cframe_current_frame;
    __s32 frame_is_object, frame_previous, frame_code, frame_code_tag_mask, frame_instr;
    __s32 frame_owner, frame_owner_shim_min, frame_is_entry, frame_tlbc_index;
    __s32 code_name, code_filename, code_linetable, code_firstlineno, str_hash;
    __s32 str_length, str_ascii_data;
};

struct pp_bpf_target {
    __u64 runtime;                  /* _PyRuntime's address in the process */
    struct pp_bpf_offsets off;
};

struct pp_bpf_pyframe {
    __u64 code;                     /* the code object */
    __u64 instr;                    /* f_lasti, or the instruction pointer */
    __u64 entry;                    /* 1: the first frame of an evaluation */
    /* what the code object's fields held at the sample: with its address,
     * its identity (pycode.h), so that an object freed and another made at
     * the same address is never named with the first one's name */
    __u64 name, file, table;        /* co_qualname (co_name), co_filename, line table */
    __u64 name_id;                  /* the name's characters: pp_bpf_name_id */
    __u32 firstlineno;
    __s32 tlbc;                     /* free-threaded: the frame's thread's copy of
                                       the bytecode (its tlbc_index), else 0 */
};

/* A name's identity from its characters, computed alike on both sides:
 * the str's own hash once computed (names interned by the compiler have
 * it at once), else its length and up to its first 32 bytes of characters
 * (str_ascii_data on: a name made at run time, code.replace()). */
#define PP_BPF_NAME_BYTES 32

static inline __u64 pp_bpf_name_id(__s64 hash, __u64 length, const __u64 chars[4])
{
    __u64 h = length * 0x9e3779b97f4a7c15ull;

    if (hash != -1)
        return (__u64)hash;
    for (int i = 0; i < 4; i++)
        h = (h ^ chars[i]) * 0x100000001b3ull + (h >> 29);
    return h == (__u64)-1 ? 0 : h;
}

/* A whole-host recording (perfpy record -a, collect.c's pp_collect_host):
 * what the BPF program does beyond its targets. */
enum {
    PP_BPF_HOST_EXEC = 1,           /* every exec makes its process a target (its
                                       Python not yet known) and is told: user
                                       space keeps those that run a CPython */
    PP_BPF_HOST_ALL = 2,            /* processes that are not targets are sampled
                                       too, without Python frames */
};

/* A process being sampled forked, exec'd or ended (the BPF program follows
 * its children and stops at its end; user space updates what it knows). */
enum {
    PP_BPF_EV_FORK = 1,             /* pid is a new process, a child of ppid */
    PP_BPF_EV_EXEC = 2,             /* pid runs another program: no Python frames
                                       read until user space adds it again (with
                                       PP_BPF_HOST_EXEC: any process) */
    PP_BPF_EV_EXIT = 3,             /* pid ended: no longer sampled */
};

struct pp_bpf_event {
    __u32 kind, pid, ppid, pad;
    __u64 time_ns;                  /* when (the samples' clock) */
};

struct pp_bpf_sample {
    __u32 pid, tid;
    __u64 time_ns;
    __u32 flags, npy;
    __u32 nkernel, stack_len;       /* bytes of stack[] read */
    __u32 stack_skip, pad;          /* sp's offset in stack[] */
    char comm[16];
    __u64 regs[17];                 /* x86_64 DWARF order, as sample.h */
    __u64 kips[PP_BPF_MAX_KERNEL];
    struct pp_bpf_pyframe py[PP_BPF_MAX_PY];
    __u8 stack[PP_BPF_STACK_PAGES * 4096];
};

#endif
