/*
 * The one table of per-architecture facts: what the ELF header, the DWARF
 * CFI and the jitdump header must say about the trampoline template.
 * Porting perfpy to aarch64 means a trampoline_aarch64.S and a second block
 * here; nothing else in the engine names an architecture.
 */
#ifndef PERFPY_ARCH_H
#define PERFPY_ARCH_H

#include <stdint.h>

/* Offsets into the template, in bytes, from trampoline_<arch>.S. */
struct pp_template_layout {
    uint32_t push_at;      /* the instruction that saves the frame pointer */
    uint32_t after_push;   /* CFA moves by one word here */
    uint32_t after_mov;    /* the frame pointer is the CFA base from here */
    uint32_t after_call;   /* return address of the call to the evaluator */
    uint32_t after_pop;    /* frame pointer restored; CFA back to the SP */
    uint32_t size;         /* whole template */
};

extern const struct pp_template_layout pp_template_layout;
extern const uint8_t pp_template_start[];
extern const uint8_t pp_template_end[];

#if defined(__x86_64__)
#define PP_ELF_MACHINE       62u  /* EM_X86_64 */
#define PP_DWARF_SP          7u   /* %rsp */
#define PP_DWARF_FP          6u   /* %rbp */
#define PP_DWARF_RA          16u  /* return address column */
#define PP_WORD              8
#define PP_CODE_ALIGN_FACTOR 1u
#define PP_DATA_ALIGN_FACTOR (-8)
#define PP_TRAP_BYTE         0xccu  /* int3: fills slot bytes after the code */
#else
#error "perfpy has a trampoline template for x86-64 only (aarch64 is next)"
#endif

#endif /* PERFPY_ARCH_H */
