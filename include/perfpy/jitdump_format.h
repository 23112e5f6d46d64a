/*
 * The jitdump file format, one struct per record, for the writer
 * (src/engine/jitdump.c), the reader (src/engine/jitdump_read.c), the tests
 * and the fuzzers alike. Field names follow Linux
 * tools/perf/Documentation/jitdump-specification.txt.
 *
 *   file   = jitheader record*
 *   record = jr_prefix payload          (prefix.total_size counts both)
 *
 * For each trampoline perfpy writes, in this order (perf inject attaches an
 * unwinding or debug record to the NEXT code-load record it reads):
 *
 *   JIT_CODE_UNWINDING_INFO  .eh_frame + .eh_frame_hdr for the trampoline
 *   JIT_CODE_DEBUG_INFO      co_filename:co_firstlineno, two entries
 *   JIT_CODE_LOAD            name "py::<qualname>:<filename>\0" + code bytes
 *
 * All values are in the writer's byte order (perf detects a swapped magic).
 * Timestamps are CLOCK_MONOTONIC nanoseconds, matching `perf record -k 1`.
 */
#ifndef PERFPY_JITDUMP_FORMAT_H
#define PERFPY_JITDUMP_FORMAT_H

#include <stdint.h>

#define JITHEADER_MAGIC    0x4A695444u   /* "JiTD" in the writer's order */
#define JITHEADER_MAGIC_SW 0x4454694Au   /* the same, byte-swapped */
#define JITHEADER_VERSION  1u

/* header.flags */
#define JITDUMP_FLAGS_ARCH_TIMESTAMP (1ull << 0)

enum jit_record_type {
    JIT_CODE_LOAD = 0,
    JIT_CODE_MOVE = 1,
    JIT_CODE_DEBUG_INFO = 2,
    JIT_CODE_CLOSE = 3,
    JIT_CODE_UNWINDING_INFO = 4,
    JIT_CODE_MAX
};

struct jitheader {
    uint32_t magic;        /* JITHEADER_MAGIC */
    uint32_t version;      /* JITHEADER_VERSION */
    uint32_t total_size;   /* sizeof(struct jitheader): exactly 40 */
    uint32_t elf_mach;     /* ELF e_machine of the code (EM_X86_64) */
    uint32_t pad1;
    uint32_t pid;
    uint64_t timestamp;
    uint64_t flags;
};

struct jr_prefix {
    uint32_t id;           /* enum jit_record_type */
    uint32_t total_size;   /* prefix + payload, bytes */
    uint64_t timestamp;
};

struct jr_code_load {
    struct jr_prefix p;
    uint32_t pid;
    uint32_t tid;
    uint64_t vma;
    uint64_t code_addr;
    uint64_t code_size;
    uint64_t code_index;   /* unique per process */
    /* char name[];  NUL-terminated, then code_size bytes of code.
     * Never padded: perf takes the code as the record's last bytes. */
};

struct jr_code_move {
    struct jr_prefix p;
    uint32_t pid;
    uint32_t tid;
    uint64_t vma;
    uint64_t old_code_addr;
    uint64_t new_code_addr;
    uint64_t code_size;
    uint64_t code_index;
};

struct jr_code_close {
    struct jr_prefix p;
};

struct debug_entry {
    uint64_t addr;         /* absolute address inside the code */
    int32_t lineno;
    int32_t discrim;
    /* char name[];  NUL-terminated source file name */
};

struct jr_code_debug_info {
    struct jr_prefix p;
    uint64_t code_addr;
    uint64_t nr_entry;
    /* struct debug_entry entries[nr_entry]; */
};

struct jr_code_unwinding_info {
    struct jr_prefix p;
    uint64_t unwinding_size;     /* .eh_frame + .eh_frame_hdr bytes */
    uint64_t eh_frame_hdr_size;  /* the .eh_frame_hdr at the end: 20 */
    uint64_t mapped_size;        /* bytes they occupy after the code; not 0 */
    /* uint8_t unwinding_data[]; then zero padding to 8 bytes */
};

/* The .eh_frame_hdr perfpy emits: one FDE in its search table. */
struct eh_frame_hdr {
    uint8_t version;             /* 1 */
    uint8_t eh_frame_ptr_enc;    /* DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
    uint8_t fde_count_enc;       /* DW_EH_PE_udata4 */
    uint8_t table_enc;           /* DW_EH_PE_datarel | DW_EH_PE_sdata4 */
    int32_t eh_frame_ptr;
    uint32_t fde_count;
    int32_t initial_loc;         /* code start, relative to this header */
    int32_t fde_addr;            /* FDE, relative to this header */
} __attribute__((packed));

_Static_assert(sizeof(struct jitheader) == 40, "jitheader is 40 bytes");
_Static_assert(sizeof(struct jr_prefix) == 16, "record prefix is 16 bytes");
_Static_assert(sizeof(struct jr_code_load) == 56, "code load header");
_Static_assert(sizeof(struct jr_code_move) == 64, "code move header");
_Static_assert(sizeof(struct jr_code_close) == 16, "code close header");
_Static_assert(sizeof(struct debug_entry) == 16, "debug entry header");
_Static_assert(sizeof(struct jr_code_debug_info) == 32, "debug info header");
_Static_assert(sizeof(struct jr_code_unwinding_info) == 40, "unwinding header");
_Static_assert(sizeof(struct eh_frame_hdr) == 20, "eh_frame_hdr is 20 bytes");

#endif /* PERFPY_JITDUMP_FORMAT_H */
